"""Who works where, and what they chose for their own screens."""

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from django_otp.plugins.otp_totp.models import TOTPDevice

from casino_office.triggers import append_only
from machines.models import Casino, tracked


class StaffAssignment(models.Model):
    """Which casino a member of staff works in; every page shows only that casino's data."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="assignment", verbose_name=_("user")
    )
    casino = models.ForeignKey(Casino, on_delete=models.PROTECT, related_name="staff", verbose_name=_("casino"))

    class Meta:
        db_table = "cashdesk_staffassignment"  # kept from when staff lived in cashdesk
        verbose_name = _("staff assignment")
        verbose_name_plural = _("staff assignments")
        # What each role may do (staff.roles gives them to the roles); checked on the server by every view and service.
        permissions = [
            ("operate_desk", "Work a cash-desk shift (cashier)"),
            ("record_receipt", "Record machine receipts (floor attendant)"),
            ("supervise_desk", "Approve reversals and transfers, resolve and void tickets (shift supervisor)"),
            ("decide_hold", "Decide held tickets (shift supervisor, compliance officer)"),
            ("decide_late_hold", "Decide a held ticket after its decision day, with the reason (manager)"),
            ("view_reports", "See ticket and cash-desk reports (manager, supervisor)"),
            ("view_dashboard", "See the floor and cash dashboard (manager, supervisor)"),
            ("view_change_log", "See who changed the configuration, when, before and after (manager, compliance)"),
            ("work_pit", "Work the gaming tables of a casino from the pit (pit supervisor, shift supervisor)"),
            ("record_table_limits", "Record the general director's orders of table limits (manager)"),
            ("drop_boxes", "Remove drop boxes on the drop run (floor attendant, security officer)"),
            ("witness_drop", "Witness a drop run (security officer)"),
            ("count_boxes", "Count drop boxes in the count room (counter, count supervisor)"),
            ("approve_count", "Approve a count of drop boxes into the vault (count supervisor)"),
            ("close_gaming_day", "Close a gaming day and adjust a closed one, with the reason (manager)"),
            ("admit_visitors", "Identify and admit visitors at a casino's entrance (receptionist)"),
            ("override_entry", "Admit a visitor while the self-exclusion list is out of date (shift supervisor)"),
            ("bar_persons", "Bar a person from the casino and lift a bar (manager)"),
        ]

    def __str__(self) -> str:
        return f"{self.user} at {self.casino.code}"


class StaffPreference(models.Model):
    """What a member of staff chose for their own screens: the language (lt or en)."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="preference", verbose_name=_("user")
    )
    language = models.CharField(max_length=8, choices=settings.LANGUAGES, default="lt", verbose_name=_("language"))

    class Meta:
        db_table = "cashdesk_staffpreference"
        verbose_name = _("staff preference")
        verbose_name_plural = _("staff preferences")
        constraints = [
            models.CheckConstraint(
                condition=models.Q(language__in=[code for code, _name in settings.LANGUAGES]),
                name="staffpreference_language_known",
            )
        ]

    def __str__(self) -> str:
        return f"{self.user}: {self.language}"


class LockoutLift(models.Model):
    """A supervisor lifted a login lockout before its cool-off ended: who, what, when (append-only)."""

    class Kind(models.TextChoices):
        ACCOUNT = "account", _("account")
        ADDRESS = "address", _("address")

    kind = models.CharField(max_length=8, choices=Kind.choices, verbose_name=_("kind"))
    value = models.CharField(max_length=255, verbose_name=_("account or address"))
    failures = models.PositiveIntegerField(verbose_name=_("failed logins forgotten"))
    casino = models.ForeignKey(Casino, on_delete=models.PROTECT, related_name="+", verbose_name=_("casino"))
    lifted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+", verbose_name=_("lifted by")
    )
    lifted_at = models.DateTimeField(default=timezone.now, verbose_name=_("lifted at"))

    class Meta:
        triggers = append_only()
        verbose_name = _("lockout lift")
        verbose_name_plural = _("lockout lifts")
        ordering = ["-lifted_at", "-pk"]
        constraints = [
            models.CheckConstraint(condition=models.Q(kind__in=["account", "address"]), name="lockoutlift_kind_known"),
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.value} by {self.lifted_by} at {self.lifted_at:%Y-%m-%d %H:%M}"


# The staff's configuration history (machines.models.history): accounts, their roles and permissions, their
# casino and their second factor. The password's hash and the device's secret are never copied; the device's
# counters move with each login and are not configuration. The tables of Django's auth and of django-otp are
# tracked through proxies here, so that their triggers are installed by this app's migrations.
_User = get_user_model()


class StaffAccount(_User):  # type: ignore[misc,valid-type]
    class Meta:
        proxy = True
        verbose_name = _("staff account")


class StaffRoleLink(_User.groups.through):  # type: ignore[name-defined]
    class Meta:
        proxy = True
        verbose_name = _("staff role")


class StaffPermissionLink(_User.user_permissions.through):  # type: ignore[name-defined]
    class Meta:
        proxy = True
        verbose_name = _("staff permission")


class RolePermissionLink(Group.permissions.through):  # type: ignore[name-defined]
    """What a role may do (staff.roles gives it at every migrate): a permission given to a role by SQL is seen."""

    class Meta:
        proxy = True
        verbose_name = _("role permission")


class SecondFactorDevice(TOTPDevice):
    class Meta:
        proxy = True
        verbose_name = _("second factor device")


UserEvent = tracked(StaffAccount, "UserEvent", exclude=("password", "last_login"))
UserRoleEvent = tracked(StaffRoleLink, "UserRoleEvent")
UserPermissionEvent = tracked(StaffPermissionLink, "UserPermissionEvent")
StaffAssignmentEvent = tracked(StaffAssignment, "StaffAssignmentEvent")
RolePermissionEvent = tracked(RolePermissionLink, "RolePermissionEvent")
SecondFactorEvent = tracked(SecondFactorDevice, "SecondFactorEvent", fields=("id", "user", "name", "confirmed"))

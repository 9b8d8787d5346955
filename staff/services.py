"""Writes for logins: a new member of staff, lifting a lockout, the second factor (enrol, check, reset)."""

import logging
from base64 import b32encode

from axes.models import AccessAttempt
from django.conf import settings
from django.contrib.auth.models import Group, User
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _
from django_otp.plugins.otp_totp.models import TOTPDevice

from machines.models import Casino
from staff.errors import StaffError
from staff.models import LockoutLift, StaffAssignment, StaffPreference
from staff.roles import ROLES
from staff.selectors import own_and_unknown

logger = logging.getLogger(__name__)

_FIELD = {LockoutLift.Kind.ACCOUNT: "username", LockoutLift.Kind.ADDRESS: "ip_address"}


def lockout_lift(*, kind: str, value: str, casino: Casino, lifted_by: User) -> LockoutLift | None:
    """Forget the failed logins that lock an account or an address, and record who did it.

    Only the failures a supervisor of `casino` may see are forgotten (staff.selectors.own_and_unknown):
    of its own staff's accounts and of names of nobody. Refused (`not_yours`) when every failure there
    belongs to another casino's account; None when there is nothing left to lift (it expired, or
    another supervisor lifted it first).
    """
    field = _FIELD[LockoutLift.Kind(kind)]
    with transaction.atomic():
        # Locked in a stable order, so that two supervisors lifting at once forget each failure once.
        rows = list(AccessAttempt.objects.select_for_update().filter(**{field: value}).order_by("pk"))
        names = {row.username or "" for row in rows} | ({value} if kind == LockoutLift.Kind.ACCOUNT else set())
        own, unknown = own_and_unknown(casino, names)
        if kind == LockoutLift.Kind.ACCOUNT and value not in own | unknown:
            raise StaffError("not_yours", _("This account is not of your casino."))
        mine = [row for row in rows if (row.username or "") in own | unknown]
        if rows and not mine:
            raise StaffError("not_yours", _("These failed logins are for another casino's accounts."))
        if not mine:
            return None
        failures = sum(row.failures_since_start for row in mine)
        AccessAttempt.objects.filter(pk__in=[row.pk for row in mine]).delete()
        lift = LockoutLift.objects.create(
            kind=kind, value=value, failures=failures, casino=casino, lifted_by=lifted_by, lifted_at=timezone.now()
        )
    logger.info(
        "login lockout lifted: %s %s, %d failed logins forgotten, by user %s of casino %s",
        kind,
        value,
        failures,
        lifted_by.pk,
        casino.code,
    )
    return lift


def second_factor_device(*, user: User) -> TOTPDevice:
    """The user's confirmed TOTP device, or the one they are enrolling (made once, kept until confirmed)."""
    with transaction.atomic():
        User.objects.select_for_update().filter(pk=user.pk).first()  # one enrolment device, however many tabs
        devices = TOTPDevice.objects.filter(user=user).order_by("-confirmed", "pk")
        device = devices.first()
        if device is None:
            device = TOTPDevice.objects.create(user=user, name="authenticator app", confirmed=False)
    return device


def second_factor_secret(device: TOTPDevice) -> str:
    """The key as an authenticator app asks for it by hand: base32, in groups of four."""
    text = b32encode(device.bin_key).decode()
    return " ".join(text[i : i + 4] for i in range(0, len(text), 4))


def second_factor_check(*, device: TOTPDevice, code: str) -> TOTPDevice:
    """Check a code; the first good code confirms an enrolment. Each wrong code doubles the wait for the next.

    A code is good once: the device remembers the last time step it accepted (django-otp's TOTPDevice).
    """
    refusal: StaffError | None = None
    with transaction.atomic():  # the failure count is saved: a refusal is raised only after the commit
        device = TOTPDevice.objects.select_for_update().get(pk=device.pk)
        allowed, details = device.verify_is_allowed()
        if not allowed:
            until = (details or {}).get("locked_until")
            seconds = max(1, int((until - timezone.now()).total_seconds()) + 1) if until else 1
            refusal = StaffError("wait", _("Too many wrong codes: try again in %(seconds)s s.") % {"seconds": seconds})
        elif not device.verify_token(code):
            logger.info("second factor: wrong code for user %s", device.user_id)
            refusal = StaffError("wrong_code", _("Wrong code. Enter the code your app shows now."))
        elif not device.confirmed:
            device.confirmed = True
            device.save(update_fields=["confirmed"])
            logger.info("second factor: user %s enrolled a device", device.user_id)
    if refusal is not None:
        raise refusal
    return device


def second_factor_reset(*, user: User) -> int:
    """Remove the user's devices (a lost phone): they enrol again at their next login. Returns how many."""
    count, _details = TOTPDevice.objects.filter(user=user).delete()
    logger.info("second factor: %d device(s) of user %s removed", count, user.pk)
    return count


def staff_member_create(*, username: str, password: str, role: str, casino: Casino, language: str = "") -> User:
    """A new member of staff: a login with one role (staff.roles), working in one casino.

    The password must pass the installation's validators (AUTH_PASSWORD_VALIDATORS); roles that approve money
    or read personal data enrol their second factor at the first login (staff.roles.SECOND_FACTOR_ROLES).
    """
    if role not in ROLES:
        raise StaffError(
            "no_role", _("No role %(role)s; the roles are: %(roles)s.") % {"role": role, "roles": ", ".join(ROLES)}
        )
    if language and language not in dict(settings.LANGUAGES):
        raise StaffError("no_language", _("No language %(language)s; choose lt or en.") % {"language": language})
    candidate = User(username=username)
    try:
        User._meta.get_field("username").run_validators(username)
        validate_password(password, user=candidate)
    except ValidationError as refused:
        raise StaffError("refused", " ".join(refused.messages)) from None
    with transaction.atomic():
        if User.objects.filter(username=username).exists():
            raise StaffError("taken", _("A user named %(username)s already exists.") % {"username": username})
        user = User.objects.create_user(username, password=password)
        # The casino before the role: the role's history then goes into that casino's chain alone.
        StaffAssignment.objects.create(user=user, casino=casino)
        user.groups.add(Group.objects.get(name=role))
        if language:
            StaffPreference.objects.create(user=user, language=language)
    logger.info("staff member created: user %s, role %s, casino %s", user.pk, role, casino.code)
    return user

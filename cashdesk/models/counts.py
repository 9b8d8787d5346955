"""Counts that wait for a second person: a hand-over (both cashiers count) and a write-off above the casino's limit.

A count whose difference from the books is larger than the casino's
`count_approval_limit` (per item, EUR) is a request: nothing is posted until a
supervisor other than whoever counted approves it (issue 21, "four eyes").
A hand-over is counted by the outgoing and then by the incoming cashier; the
next shift opens only when both counts agree (and are within the limit) or a
supervisor decides.
"""

from django.conf import settings
from django.db import models
from django.db.models import F, Q
from django.utils.translation import gettext_lazy as _

from cashdesk.models.desks import Shift, ShiftCount
from cashdesk.models.transfers import Transfer
from machines.models import Casino, Place


class CountRequest(models.Model):
    class Status(models.TextChoices):
        COUNTING = "counting", _("Waiting for the incoming cashier's count")
        WAITING = "waiting", _("Waiting for a supervisor")
        APPROVED = "approved", _("Approved")
        REJECTED = "rejected", _("Rejected")
        DONE = "done", _("Handed over")

    class Stands(models.TextChoices):
        OUTGOING = "outgoing", _("The outgoing cashier's count")
        INCOMING = "incoming", _("The incoming cashier's count")

    OPEN = [Status.COUNTING, Status.WAITING]
    DECIDED = [Status.APPROVED, Status.REJECTED]

    casino = models.ForeignKey(Casino, on_delete=models.PROTECT, related_name="+", verbose_name=_("casino"))
    desk = models.ForeignKey(Place, on_delete=models.PROTECT, related_name="count_requests", verbose_name=_("place"))
    kind = models.CharField(max_length=10, choices=ShiftCount.Kind.choices, verbose_name=_("kind"))
    shift = models.ForeignKey(
        Shift, on_delete=models.PROTECT, null=True, blank=True, related_name="count_requests", verbose_name=_("shift")
    )
    transfer = models.OneToOneField(
        Transfer,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="count_request",
        verbose_name=_("kiosk drop"),
    )
    counted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+", verbose_name=_("counted by")
    )
    counted_at = models.DateTimeField(verbose_name=_("counted at"))
    # Item -> EUR, as strings: what was counted, and the book balance at that moment.
    counted = models.JSONField(verbose_name=_("counted"))
    expected = models.JSONField(verbose_name=_("expected"))
    # Who asked a second supervisor: the supervisor who approved a kiosk drop whose count is above the limit.
    asked_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("asked by"),
    )
    next_cashier = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("incoming cashier"),
    )
    next_counted = models.JSONField(null=True, blank=True, verbose_name=_("incoming cashier's count"))
    next_counted_at = models.DateTimeField(null=True, blank=True, verbose_name=_("incoming count at"))
    status = models.CharField(max_length=10, choices=Status.choices, verbose_name=_("status"))
    stands = models.CharField(max_length=10, choices=Stands.choices, blank=True, verbose_name=_("count that stands"))
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("decided by"),
    )
    decided_at = models.DateTimeField(null=True, blank=True, verbose_name=_("decided at"))
    count = models.OneToOneField(
        ShiftCount,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="request",
        verbose_name=_("posted count"),
    )
    successor = models.OneToOneField(
        Shift,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="handed_over_by",
        verbose_name=_("next shift"),
    )
    # The one-time keys of the forms that counted and decided: a repeated submission finds its request.
    operation_key = models.CharField(
        max_length=64, null=True, blank=True, unique=True, editable=False, verbose_name=_("operation key")
    )
    next_operation_key = models.CharField(
        max_length=64, null=True, blank=True, unique=True, editable=False, verbose_name=_("incoming operation key")
    )
    decision_key = models.CharField(
        max_length=64, null=True, blank=True, unique=True, editable=False, verbose_name=_("decision key")
    )

    class Meta:
        verbose_name = _("count request")
        verbose_name_plural = _("count requests")
        ordering = ["counted_at", "id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(status__in=["counting", "waiting", "approved", "rejected", "done"]),
                name="countrequest_status_valid",
            ),
            models.CheckConstraint(
                condition=Q(kind=ShiftCount.Kind.HANDOVER, shift__isnull=False, next_cashier__isnull=False)
                | Q(
                    kind__in=[ShiftCount.Kind.OPENING, ShiftCount.Kind.CLOSING],
                    shift__isnull=False,
                    next_cashier__isnull=True,
                )
                | Q(kind=ShiftCount.Kind.VAULT, shift__isnull=True, next_cashier__isnull=True)
                | Q(
                    kind=ShiftCount.Kind.KIOSK,
                    shift__isnull=True,
                    next_cashier__isnull=True,
                    transfer__isnull=False,
                ),
                name="countrequest_kind_valid",
            ),
            # Approved or rejected: by whom and when; otherwise neither.
            models.CheckConstraint(
                condition=Q(status__in=["approved", "rejected"], decided_by__isnull=False, decided_at__isnull=False)
                | (~Q(status__in=["approved", "rejected"]) & Q(decided_by__isnull=True, decided_at__isnull=True)),
                name="countrequest_decision_recorded",
            ),
            # Four eyes: who decides did not count (nor ask).
            models.CheckConstraint(
                condition=Q(decided_by__isnull=True)
                | (
                    ~Q(decided_by=F("counted_by"))
                    & (Q(next_cashier__isnull=True) | ~Q(decided_by=F("next_cashier")))
                    & (Q(asked_by__isnull=True) | ~Q(decided_by=F("asked_by")))
                ),
                name="countrequest_decider_did_not_count",
            ),
            models.UniqueConstraint(
                fields=["desk"], condition=Q(status__in=["counting", "waiting"]), name="countrequest_one_open_per_place"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} count of {self.desk_id} ({self.status})"

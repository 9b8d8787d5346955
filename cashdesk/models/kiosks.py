"""A kiosk's fills from the vault and drops to it: asked for by one person, approved by a supervisor."""

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from cashdesk.models.books import CashTransaction
from cashdesk.models.desks import ShiftCount
from machines.models import Place


class KioskTransfer(models.Model):
    """A fill of a kiosk's cassettes from the vault, or a drop of all its cash to the vault with its count.

    A fill's `amount` is the cash taken from the vault. A drop's `amount` is
    what was counted out of the kiosk (it may be zero); on approval the count's
    difference from the books goes to over/short and the kiosk is left at zero.
    The approver is never the person who asked (and the transaction's own check
    refuses it too); one request per kiosk waits at a time.
    """

    class Direction(models.TextChoices):
        FILL = "fill", _("Fill from the vault")
        DROP = "drop", _("Drop to the vault")

    kiosk = models.ForeignKey(Place, on_delete=models.PROTECT, related_name="kiosk_transfers", verbose_name=_("kiosk"))
    direction = models.CharField(max_length=4, choices=Direction.choices, verbose_name=_("direction"))
    amount = models.DecimalField(
        max_digits=12,
        decimal_places=2,
        help_text=_("A fill: the cash taken from the vault. A drop: the cash counted out of the kiosk."),
        verbose_name=_("amount"),
    )
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+", verbose_name=_("requested by")
    )
    requested_at = models.DateTimeField(verbose_name=_("requested at"))
    transaction = models.OneToOneField(
        CashTransaction,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="kiosk_transfer",
        verbose_name=_("transaction"),
    )
    count = models.OneToOneField(
        ShiftCount,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="kiosk_transfer",
        verbose_name=_("count"),
    )
    approved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("approved by"),
    )
    approved_at = models.DateTimeField(null=True, blank=True, verbose_name=_("approved at"))
    cancelled_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("cancelled by"),
    )
    cancelled_at = models.DateTimeField(null=True, blank=True, verbose_name=_("cancelled at"))
    operation_key = models.CharField(
        max_length=64, null=True, blank=True, unique=True, editable=False, verbose_name=_("operation key")
    )

    class Meta:
        verbose_name = _("kiosk transfer")
        verbose_name_plural = _("kiosk transfers")
        ordering = ["-requested_at", "-id"]
        constraints = [
            models.CheckConstraint(condition=Q(direction__in=["fill", "drop"]), name="kiosktransfer_direction_valid"),
            models.CheckConstraint(
                condition=Q(direction="fill", amount__gt=0) | Q(direction="drop", amount__gte=0),
                name="kiosktransfer_amount_valid",
            ),
            # Waiting, approved (with its transaction, approver and moment; a drop with its count) or cancelled.
            models.CheckConstraint(
                condition=Q(
                    transaction__isnull=True,
                    approved_by__isnull=True,
                    approved_at__isnull=True,
                    count__isnull=True,
                    cancelled_by__isnull=True,
                    cancelled_at__isnull=True,
                )
                | Q(
                    direction="fill",
                    transaction__isnull=False,
                    approved_by__isnull=False,
                    approved_at__isnull=False,
                    count__isnull=True,
                    cancelled_by__isnull=True,
                    cancelled_at__isnull=True,
                )
                | Q(
                    direction="drop",
                    approved_by__isnull=False,
                    approved_at__isnull=False,
                    count__isnull=False,
                    cancelled_by__isnull=True,
                    cancelled_at__isnull=True,
                )
                | Q(
                    transaction__isnull=True,
                    approved_by__isnull=True,
                    approved_at__isnull=True,
                    count__isnull=True,
                    cancelled_by__isnull=False,
                    cancelled_at__isnull=False,
                ),
                name="kiosktransfer_state_consistent",
            ),
            models.UniqueConstraint(
                fields=["kiosk"],
                condition=Q(approved_at__isnull=True, cancelled_at__isnull=True),
                name="kiosktransfer_one_waiting_per_kiosk",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.get_direction_display()} {self.amount} EUR"

    @property
    def state(self) -> str:
        if self.approved_at is not None:
            return "approved"
        if self.cancelled_at is not None:
            return "cancelled"
        return "requested"

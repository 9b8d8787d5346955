"""Transfers between a place and the vault: a desk's drops and fills, a kiosk's fills and drops (next, a table's tray).

One model for every place that trades with the vault: asked for by one person, approved by another (or
cancelled), with the items it moves in its lines.
"""

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from cashdesk.items import ALL_ITEMS, Item
from cashdesk.models.books import CashTransaction, _value_matches_count
from cashdesk.models.desks import Shift, ShiftCount
from machines.models import Place


class Transfer(models.Model):
    """A drop to the vault or a fill from it, of one place: requested, then approved by someone else, or cancelled.

    It carries any items (its `lines`: cash, value chips, slot tokens); `amount` is their value in EUR.

    A desk's transfer belongs to the cashier's shift; a supervisor approves it. A kiosk's (no shift) is asked
    for by a floor attendant or a supervisor: a fill's `amount` is the cash taken from the vault, a drop's is
    what was counted out of the kiosk (it may be zero, then it has no line); on approval the drop's count
    (`count`) settles the kiosk's books at zero, its difference going to over/short. One kiosk transfer per
    kiosk waits at a time.
    """

    class Direction(models.TextChoices):
        DROP = "drop", _("Drop to the vault")
        FILL = "fill", _("Fill from the vault")

    place = models.ForeignKey(Place, on_delete=models.PROTECT, related_name="transfers", verbose_name=_("place"))
    shift = models.ForeignKey(
        Shift,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="transfers",
        help_text=_("The cashier's shift of a desk's transfer; none for a kiosk's."),
        verbose_name=_("shift"),
    )
    direction = models.CharField(max_length=4, choices=Direction.choices, verbose_name=_("direction"))
    amount = models.DecimalField(max_digits=12, decimal_places=2, verbose_name=_("amount"))
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+", verbose_name=_("requested by")
    )
    requested_at = models.DateTimeField(verbose_name=_("requested at"))
    transaction = models.OneToOneField(
        CashTransaction,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="transfer",
        verbose_name=_("transaction"),
    )
    count = models.OneToOneField(
        ShiftCount,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="transfer",
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
        verbose_name = _("transfer")
        verbose_name_plural = _("transfers")
        constraints = [
            models.CheckConstraint(condition=Q(direction__in=["drop", "fill"]), name="transfer_direction_valid"),
            # A kiosk's drop counts what it takes out, and a kiosk may be empty.
            models.CheckConstraint(
                condition=Q(amount__gt=0) | Q(direction="drop", shift__isnull=True, amount=0),
                name="transfer_amount_valid",
            ),
            # Waiting; approved (when, and by whom: only desk transfers approved before the approver was kept
            # here have it on their transaction alone) with its transaction, and a kiosk's drop with its count
            # instead (a drop counting nothing posts none); or cancelled.
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
                    shift__isnull=False,
                    transaction__isnull=False,
                    approved_at__isnull=False,
                    count__isnull=True,
                    cancelled_by__isnull=True,
                    cancelled_at__isnull=True,
                )
                | Q(
                    shift__isnull=True,
                    direction="fill",
                    transaction__isnull=False,
                    approved_by__isnull=False,
                    approved_at__isnull=False,
                    count__isnull=True,
                    cancelled_by__isnull=True,
                    cancelled_at__isnull=True,
                )
                | Q(
                    shift__isnull=True,
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
                name="transfer_state_consistent",
            ),
            # A place without a shift (a kiosk) has one transfer waiting at a time; a desk's wait with its shift.
            models.UniqueConstraint(
                fields=["place"],
                condition=Q(shift__isnull=True, approved_at__isnull=True, cancelled_at__isnull=True),
                name="transfer_one_waiting_per_kiosk",
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


class TransferLine(models.Model):
    """One item a transfer moves: cash in EUR, chips and tokens in pieces (and their value)."""

    transfer = models.ForeignKey(Transfer, on_delete=models.PROTECT, related_name="lines", verbose_name=_("transfer"))
    item = models.CharField(max_length=10, choices=Item.choices, verbose_name=_("item"))
    count = models.IntegerField(null=True, blank=True, verbose_name=_("count"))
    amount = models.DecimalField(max_digits=12, decimal_places=2, verbose_name=_("amount"))

    class Meta:
        verbose_name = _("transfer line")
        verbose_name_plural = _("transfer lines")
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(fields=["transfer", "item"], name="transferline_one_per_item"),
            models.CheckConstraint(condition=Q(item__in=ALL_ITEMS), name="transferline_item_valid"),
            models.CheckConstraint(condition=Q(amount__gt=0), name="transferline_amount_positive"),
            models.CheckConstraint(condition=_value_matches_count(), name="transferline_value_matches_count"),
        ]

    def __str__(self) -> str:
        return f"{self.item} {self.amount} EUR"

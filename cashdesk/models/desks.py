"""Cash desks, the vault, shifts and their counts."""

from django.conf import settings
from django.db import models
from django.db.models import F, Q
from django.db.models.lookups import Exact
from django.utils.translation import gettext_lazy as _

from cashdesk.items import Item
from casino_office.constraints import in_cents
from casino_office.triggers import append_only
from machines.models import Chained, Place, chain_link_unique


class Shift(models.Model):
    desk = models.ForeignKey(Place, on_delete=models.PROTECT, related_name="shifts", verbose_name=_("desk"))
    cashier = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="shifts", verbose_name=_("cashier")
    )
    opened_at = models.DateTimeField(verbose_name=_("opened at"))
    closed_at = models.DateTimeField(null=True, blank=True, verbose_name=_("closed at"))
    previous = models.OneToOneField(
        "self",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="next",
        help_text=_("Handed over from."),
        verbose_name=_("previous"),
    )

    class Meta:
        verbose_name = _("shift")
        verbose_name_plural = _("shifts")
        ordering = ["-opened_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["desk"], condition=Q(closed_at__isnull=True), name="shift_one_open_per_desk"
            ),
            models.UniqueConstraint(
                fields=["cashier"], condition=Q(closed_at__isnull=True), name="shift_one_open_per_cashier"
            ),
            models.CheckConstraint(
                condition=Q(closed_at__isnull=True) | Q(closed_at__gte=F("opened_at")), name="shift_closes_after_open"
            ),
        ]

    def __str__(self) -> str:
        return f"Shift {self.pk} at {self.desk.name} ({self.cashier})"

    @property
    def is_open(self) -> bool:
        return self.closed_at is None


class CountKind(models.TextChoices):
    """What a count is (as `ShiftCount.Kind`): a shift's, or a place's own (its kind names it: Place.Kind)."""

    OPENING = "opening", _("Opening float")
    HANDOVER = "handover", _("Handover")
    CLOSING = "closing", _("Closing")
    VAULT = Place.Kind.VAULT.value, _("Vault count")
    KIOSK = Place.Kind.KIOSK.value, _("Kiosk drop count")
    TRAY = Place.Kind.TRAY.value, _("Chip tray count")


# A shift's counts, and the counts of a place without shifts (the vault, a kiosk's drop).
SHIFT_COUNT_KINDS: list[str] = [CountKind.OPENING, CountKind.HANDOVER, CountKind.CLOSING]
PLACE_COUNT_KINDS: list[str] = [CountKind.VAULT, CountKind.KIOSK, CountKind.TRAY]


class ShiftCount(Chained):
    """A count of a desk (at opening, handover, closing) or of the vault. Lines hold counted, expected, variance.

    Its differences are posted to the books (`transaction`) so that a place's
    book balance equals its last count. Append-only and chained with its lines
    (machines.chains): a count is never changed, unseen or not.
    """

    Kind = CountKind

    journal = "counts"
    journal_casino = "desk__casino_id"
    journal_fields = ("desk_id", "shift_id", "kind", "counted_by_id", "counted_at", "transaction_id", "operation_key")
    journal_children = {"lines": ("item", "counted_amount", "expected_amount", "variance")}

    desk = models.ForeignKey(Place, on_delete=models.PROTECT, related_name="counts", verbose_name=_("desk"))
    shift = models.ForeignKey(
        Shift, on_delete=models.PROTECT, null=True, blank=True, related_name="counts", verbose_name=_("shift")
    )
    kind = models.CharField(max_length=10, choices=Kind.choices, verbose_name=_("kind"))
    counted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+", verbose_name=_("counted by")
    )
    counted_at = models.DateTimeField(verbose_name=_("counted at"))
    transaction = models.OneToOneField(
        "cashdesk.CashTransaction",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="count",
        help_text=_("The posting of the count's differences, if any."),
        verbose_name=_("transaction"),
    )
    # The one-time key of the form that made the count: the same form again finds it and counts nothing more.
    operation_key = models.CharField(
        max_length=64, null=True, blank=True, unique=True, editable=False, verbose_name=_("operation key")
    )

    class Meta:
        triggers = append_only()
        verbose_name = _("shift count")
        verbose_name_plural = _("shift counts")
        constraints = [
            chain_link_unique("shiftcount"),
            models.UniqueConstraint(
                fields=["shift", "kind"], condition=Q(shift__isnull=False), name="shiftcount_one_per_kind"
            ),
            models.CheckConstraint(
                condition=Q(kind__in=SHIFT_COUNT_KINDS, shift__isnull=False)
                | Q(kind__in=PLACE_COUNT_KINDS, shift__isnull=True),
                name="shiftcount_kind_valid",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} count of {self.desk_id}"


class ShiftCountLine(models.Model):
    count = models.ForeignKey(ShiftCount, on_delete=models.PROTECT, related_name="lines", verbose_name=_("count"))
    item = models.CharField(max_length=10, choices=Item.choices, verbose_name=_("item"))
    counted_amount = models.DecimalField(max_digits=12, decimal_places=2, verbose_name=_("counted amount"))
    expected_amount = models.DecimalField(max_digits=12, decimal_places=2, verbose_name=_("expected amount"))
    variance = models.DecimalField(
        max_digits=12, decimal_places=2, help_text=_("Counted minus expected."), verbose_name=_("variance")
    )

    class Meta:
        triggers = append_only()
        verbose_name = _("shift count line")
        verbose_name_plural = _("shift count lines")
        constraints = [
            models.UniqueConstraint(fields=["count", "item"], name="shiftcountline_one_per_item"),
            models.CheckConstraint(condition=Q(counted_amount__gte=0), name="shiftcountline_counted_not_negative"),
            # In whole cents, exact on SQLite too (casino_office.constraints).
            models.CheckConstraint(
                condition=Exact(in_cents("variance"), in_cents("counted_amount") - in_cents("expected_amount")),
                name="shiftcountline_variance_exact",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.item}: counted {self.counted_amount}, expected {self.expected_amount}"

from decimal import Decimal

from django.conf import settings
from django.db import models
from django.db.models import F, Q
from django.utils.translation import gettext_lazy as _

from cashdesk.items import ALL_ITEMS, DENOMINATIONS, Item
from compliance.models import Person
from machines.models import Casino, Machine


class CashDesk(models.Model):
    """A cash desk of a casino, or the casino's vault (kind=vault, one per casino, no shifts)."""

    class Kind(models.TextChoices):
        DESK = "desk", _("Cash desk")
        VAULT = "vault", _("Vault")

    casino = models.ForeignKey(Casino, on_delete=models.PROTECT, related_name="desks", verbose_name=_("casino"))
    kind = models.CharField(max_length=8, choices=Kind.choices, default=Kind.DESK, verbose_name=_("kind"))
    code = models.CharField(max_length=16, verbose_name=_("code"))
    name = models.CharField(max_length=64, verbose_name=_("name"))
    cash_limit = models.DecimalField(
        max_digits=12,
        decimal_places=2,
        default=Decimal("50000.00"),
        help_text=_("Cash above this goes to the vault."),
        verbose_name=_("cash limit"),
    )
    # Counters behind receipt numbers and the desk's ticket sequence; only
    # services increment them, under a row lock.
    last_receipt_number = models.PositiveIntegerField(default=0, editable=False, verbose_name=_("last receipt number"))
    last_ticket_sequence = models.PositiveIntegerField(
        default=0, editable=False, verbose_name=_("last ticket sequence")
    )

    class Meta:
        verbose_name = _("cash desk")
        verbose_name_plural = _("cash desks")
        ordering = ["casino", "code"]
        permissions = [
            ("operate_desk", "Work a cash-desk shift (cashier)"),
            ("record_receipt", "Record machine receipts (floor attendant)"),
            ("supervise_desk", "Approve reversals and transfers, resolve and void tickets (shift supervisor)"),
            ("decide_hold", "Decide held tickets (shift supervisor, compliance officer)"),
            ("view_reports", "See ticket and cash-desk reports (manager, supervisor)"),
            ("view_dashboard", "See the floor and cash dashboard (manager, supervisor)"),
        ]
        constraints = [
            models.UniqueConstraint(fields=["casino", "code"], name="cashdesk_code_unique_per_casino"),
            models.UniqueConstraint(fields=["casino"], condition=Q(kind="vault"), name="cashdesk_one_vault_per_casino"),
            models.CheckConstraint(condition=Q(kind__in=["desk", "vault"]), name="cashdesk_kind_valid"),
            models.CheckConstraint(condition=Q(cash_limit__gte=0), name="cashdesk_cash_limit_not_negative"),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.casino.code})"


class Shift(models.Model):
    desk = models.ForeignKey(CashDesk, on_delete=models.PROTECT, related_name="shifts", verbose_name=_("desk"))
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
        return f"Shift {self.pk} at {self.desk.code} ({self.cashier})"

    @property
    def is_open(self) -> bool:
        return self.closed_at is None


class ShiftCount(models.Model):
    """A count of the desk: at opening, at handover, at closing. Lines hold counted, expected, variance."""

    class Kind(models.TextChoices):
        OPENING = "opening", _("Opening float")
        HANDOVER = "handover", _("Handover")
        CLOSING = "closing", _("Closing")

    shift = models.ForeignKey(Shift, on_delete=models.PROTECT, related_name="counts", verbose_name=_("shift"))
    kind = models.CharField(max_length=10, choices=Kind.choices, verbose_name=_("kind"))
    counted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+", verbose_name=_("counted by")
    )
    counted_at = models.DateTimeField(verbose_name=_("counted at"))

    class Meta:
        verbose_name = _("shift count")
        verbose_name_plural = _("shift counts")
        constraints = [
            models.UniqueConstraint(fields=["shift", "kind"], name="shiftcount_one_per_kind"),
            models.CheckConstraint(
                condition=Q(kind__in=["opening", "handover", "closing"]), name="shiftcount_kind_valid"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} count of shift {self.shift_id}"


class ShiftCountLine(models.Model):
    count = models.ForeignKey(ShiftCount, on_delete=models.PROTECT, related_name="lines", verbose_name=_("count"))
    item = models.CharField(max_length=10, choices=Item.choices, verbose_name=_("item"))
    counted_amount = models.DecimalField(max_digits=12, decimal_places=2, verbose_name=_("counted amount"))
    expected_amount = models.DecimalField(max_digits=12, decimal_places=2, verbose_name=_("expected amount"))
    variance = models.DecimalField(
        max_digits=12, decimal_places=2, help_text=_("Counted minus expected."), verbose_name=_("variance")
    )

    class Meta:
        verbose_name = _("shift count line")
        verbose_name_plural = _("shift count lines")
        constraints = [
            models.UniqueConstraint(fields=["count", "item"], name="shiftcountline_one_per_item"),
            models.CheckConstraint(condition=Q(counted_amount__gte=0), name="shiftcountline_counted_not_negative"),
            models.CheckConstraint(
                condition=Q(variance=F("counted_amount") - F("expected_amount")), name="shiftcountline_variance_exact"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.item}: counted {self.counted_amount}, expected {self.expected_amount}"


class TransactionKind(models.TextChoices):
    TICKET_PAYOUT = "ticket_payout", _("Ticket payout")
    TICKET_SALE = "ticket_sale", _("Ticket sale")
    CHIPS_BUY = "chips_buy", _("Cash for chips")
    CHIPS_CASHOUT = "chips_cashout", _("Chips for cash")
    TOKENS_BUY = "tokens_buy", _("Cash for tokens")
    TOKENS_CASHOUT = "tokens_cashout", _("Tokens for cash")
    SMARTCARD_PAYOUT = "smartcard_payout", _("Smart card payout")
    RECEIPT_PAYOUT = "receipt_payout", _("Machine receipt payout")
    DROP = "drop", _("Drop to the vault")
    FILL = "fill", _("Fill from the vault")
    REVERSAL = "reversal", _("Reversal")


# Payouts of winnings and purchases over the casino's threshold need the
# person identified (casino rules §1, value chips: strictly more than 1000 EUR).
IDENTITY_KINDS = [
    TransactionKind.TICKET_PAYOUT,
    TransactionKind.RECEIPT_PAYOUT,
    TransactionKind.SMARTCARD_PAYOUT,
    TransactionKind.CHIPS_CASHOUT,
    TransactionKind.CHIPS_BUY,
    TransactionKind.TICKET_SALE,
]


class CashTransaction(models.Model):
    """One cash-desk transaction: its movements, audit and receipt number are written together."""

    casino = models.ForeignKey(
        Casino, on_delete=models.PROTECT, related_name="cash_transactions", verbose_name=_("casino")
    )
    desk = models.ForeignKey(CashDesk, on_delete=models.PROTECT, related_name="transactions", verbose_name=_("desk"))
    shift = models.ForeignKey(
        Shift, on_delete=models.PROTECT, null=True, blank=True, related_name="transactions", verbose_name=_("shift")
    )
    number = models.PositiveIntegerField(help_text=_("Receipt number, per desk."), verbose_name=_("number"))
    kind = models.CharField(max_length=20, choices=TransactionKind.choices, verbose_name=_("kind"))
    amount = models.DecimalField(
        max_digits=12, decimal_places=2, help_text=_("The transaction's value in EUR."), verbose_name=_("amount")
    )
    person = models.ForeignKey(
        Person, on_delete=models.PROTECT, null=True, blank=True, related_name="transactions", verbose_name=_("person")
    )
    # The casino's identity threshold when the transaction was made, so the
    # database itself can refuse an unidentified transaction above it.
    identity_threshold = models.DecimalField(max_digits=12, decimal_places=2, verbose_name=_("identity threshold"))
    ticket = models.ForeignKey(
        "tickets.Ticket",
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="cash_transactions",
        verbose_name=_("ticket"),
    )
    reverses = models.OneToOneField(
        "self", on_delete=models.PROTECT, null=True, blank=True, related_name="reversed_by", verbose_name=_("reverses")
    )
    note = models.CharField(max_length=255, blank=True, verbose_name=_("note"))
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+", verbose_name=_("created by")
    )
    approved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("approved by"),
    )
    created_at = models.DateTimeField(verbose_name=_("created at"))

    class Meta:
        verbose_name = _("cash transaction")
        verbose_name_plural = _("cash transactions")
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["casino", "created_at"], name="cashtx_casino_time_idx")]
        constraints = [
            models.UniqueConstraint(fields=["desk", "number"], name="cashtx_number_unique_per_desk"),
            models.CheckConstraint(condition=Q(kind__in=TransactionKind.values), name="cashtx_kind_valid"),
            models.CheckConstraint(condition=Q(amount__gt=0), name="cashtx_amount_positive"),
            models.CheckConstraint(
                condition=~Q(kind__in=IDENTITY_KINDS)
                | Q(amount__lte=F("identity_threshold"))
                | Q(person__isnull=False),
                name="cashtx_identity_over_threshold",
            ),
            models.CheckConstraint(
                condition=Q(kind="reversal", reverses__isnull=False, approved_by__isnull=False)
                | (~Q(kind="reversal") & Q(reverses__isnull=True)),
                name="cashtx_reversal_links_original",
            ),
            models.CheckConstraint(
                condition=~Q(kind__in=["reversal", "drop", "fill"]) | ~Q(approved_by=F("created_by")),
                name="cashtx_approver_is_not_creator",
            ),
            models.CheckConstraint(
                condition=~Q(kind__in=["ticket_payout", "ticket_sale"]) | Q(ticket__isnull=False),
                name="cashtx_ticket_kinds_have_ticket",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.desk.code}-{self.number:06d} {self.get_kind_display()} {self.amount} EUR"

    @property
    def receipt_number(self) -> str:
        return f"{self.casino.code}-{self.desk.code}-{self.number:06d}"


def _value_matches_count() -> Q:
    """amount = count x denomination for counted items; cash has no count."""
    condition = Q(item=Item.CASH, count__isnull=True)
    for item, value in DENOMINATIONS.items():
        condition |= Q(item=item, count__isnull=False, amount=F("count") * value)
    return condition


class Movement(models.Model):
    """Append-only ledger line: an item moving into (+) or out of (-) a desk or the vault.

    Every balance is the sum of movements; nothing is stored and patched.
    """

    transaction = models.ForeignKey(
        CashTransaction, on_delete=models.PROTECT, related_name="movements", verbose_name=_("transaction")
    )
    desk = models.ForeignKey(CashDesk, on_delete=models.PROTECT, related_name="movements", verbose_name=_("desk"))
    shift = models.ForeignKey(
        Shift, on_delete=models.PROTECT, null=True, blank=True, related_name="movements", verbose_name=_("shift")
    )
    item = models.CharField(max_length=10, choices=Item.choices, verbose_name=_("item"))
    count = models.IntegerField(
        null=True, blank=True, help_text=_("Pieces, for chips and tokens."), verbose_name=_("count")
    )
    amount = models.DecimalField(
        max_digits=12,
        decimal_places=2,
        help_text=_("Value in EUR; + into, - out of the desk."),
        verbose_name=_("amount"),
    )

    class Meta:
        verbose_name = _("movement")
        verbose_name_plural = _("movements")
        indexes = [models.Index(fields=["shift", "item"], name="movement_shift_item_idx")]
        constraints = [
            models.CheckConstraint(condition=Q(item__in=ALL_ITEMS), name="movement_item_valid"),
            models.CheckConstraint(condition=~Q(amount=0), name="movement_amount_not_zero"),
            models.CheckConstraint(condition=_value_matches_count(), name="movement_value_matches_count"),
        ]

    def __str__(self) -> str:
        return f"{self.item} {self.amount:+} EUR"


class Transfer(models.Model):
    """A cash drop to the vault or a fill from it: requested at the desk, approved by a supervisor."""

    class Direction(models.TextChoices):
        DROP = "drop", _("Drop to the vault")
        FILL = "fill", _("Fill from the vault")

    shift = models.ForeignKey(Shift, on_delete=models.PROTECT, related_name="transfers", verbose_name=_("shift"))
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

    class Meta:
        verbose_name = _("transfer")
        verbose_name_plural = _("transfers")
        constraints = [
            models.CheckConstraint(condition=Q(amount__gt=0), name="transfer_amount_positive"),
            models.CheckConstraint(condition=Q(direction__in=["drop", "fill"]), name="transfer_direction_valid"),
        ]

    def __str__(self) -> str:
        return f"{self.get_direction_display()} {self.amount} EUR"


class ReversalRequest(models.Model):
    """A cashier asks to correct a transaction; a supervisor other than the cashier approves."""

    original = models.OneToOneField(
        CashTransaction, on_delete=models.PROTECT, related_name="reversal_request", verbose_name=_("original")
    )
    reason = models.CharField(max_length=255, verbose_name=_("reason"))
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+", verbose_name=_("requested by")
    )
    requested_at = models.DateTimeField(verbose_name=_("requested at"))
    reversal = models.OneToOneField(
        CashTransaction,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="reversal_of_request",
        verbose_name=_("reversal"),
    )

    class Meta:
        verbose_name = _("reversal request")
        verbose_name_plural = _("reversal requests")

    def __str__(self) -> str:
        return f"Reversal of {self.original_id}: {self.reason}"


class MachineReceipt(models.Model):
    """A receipt filled in by a floor attendant when a token machine cannot pay (casino rules §1)."""

    casino = models.ForeignKey(
        Casino, on_delete=models.PROTECT, related_name="machine_receipts", verbose_name=_("casino")
    )
    machine = models.ForeignKey(Machine, on_delete=models.PROTECT, related_name="receipts", verbose_name=_("machine"))
    number = models.PositiveIntegerField(help_text=_("Per casino."), verbose_name=_("number"))
    amount = models.DecimalField(
        max_digits=12, decimal_places=2, help_text=_("Unpaid credits in EUR."), verbose_name=_("amount")
    )
    reason = models.CharField(max_length=255, verbose_name=_("reason"))
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+", verbose_name=_("created by")
    )
    created_at = models.DateTimeField(verbose_name=_("created at"))
    paid_by = models.OneToOneField(
        CashTransaction,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="machine_receipt",
        verbose_name=_("paid by"),
    )

    class Meta:
        verbose_name = _("machine receipt")
        verbose_name_plural = _("machine receipts")
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(fields=["casino", "number"], name="machinereceipt_number_unique_per_casino"),
            models.CheckConstraint(condition=Q(amount__gt=0), name="machinereceipt_amount_positive"),
        ]

    def __str__(self) -> str:
        return f"Receipt {self.casino.code}-{self.number:06d} ({self.amount} EUR)"


class SmartCardRead(models.Model):
    transaction = models.OneToOneField(
        CashTransaction, on_delete=models.PROTECT, related_name="smart_card", verbose_name=_("transaction")
    )
    card_number = models.CharField(max_length=32, verbose_name=_("card number"))
    credits = models.DecimalField(
        max_digits=12, decimal_places=3, help_text=_("As read from the card, in EUR."), verbose_name=_("credits")
    )

    class Meta:
        verbose_name = _("smart card read")
        verbose_name_plural = _("smart card reads")
        constraints = [models.CheckConstraint(condition=Q(credits__gt=0), name="smartcardread_credits_positive")]

    def __str__(self) -> str:
        return f"Card {self.card_number}: {self.credits} EUR"


class HoldCase(models.Model):
    """A suspicious ticket refused at the desk; the decision is due within 14 days (casino rules §1.7)."""

    class Reason(models.TextChoices):
        SUSPECTED_COPY = "suspected_copy", _("Suspected copy")
        FORGERY = "forgery", _("Suspected forgery")
        DAMAGE = "damage", _("Torn, damaged or altered")
        OTHER_OWNER = "other_owner", _("Belongs to someone else")
        ALREADY_PAID = "already_paid", _("Suspected already paid")

    class Decision(models.TextChoices):
        PENDING = "pending", _("Pending")
        PAY = "pay", _("Pay")
        REFUSE = "refuse", _("Refuse")

    ticket = models.ForeignKey(
        "tickets.Ticket", on_delete=models.PROTECT, related_name="hold_cases", verbose_name=_("ticket")
    )
    casino = models.ForeignKey(Casino, on_delete=models.PROTECT, related_name="hold_cases", verbose_name=_("casino"))
    shift = models.ForeignKey(Shift, on_delete=models.PROTECT, related_name="hold_cases", verbose_name=_("shift"))
    reason = models.CharField(max_length=16, choices=Reason.choices, verbose_name=_("reason"))
    note = models.CharField(max_length=255, blank=True, verbose_name=_("note"))
    opened_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+", verbose_name=_("opened by")
    )
    presented_at = models.DateTimeField(verbose_name=_("presented at"))
    decision_due = models.DateField(verbose_name=_("decision due"))
    overdue_since = models.DateTimeField(null=True, blank=True, verbose_name=_("overdue since"))
    decision = models.CharField(
        max_length=8, choices=Decision.choices, default=Decision.PENDING, verbose_name=_("decision")
    )
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("decided by"),
    )
    decided_at = models.DateTimeField(null=True, blank=True, verbose_name=_("decided at"))
    decision_note = models.CharField(max_length=255, blank=True, verbose_name=_("decision note"))

    class Meta:
        verbose_name = _("hold case")
        verbose_name_plural = _("hold cases")
        ordering = ["decision_due", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["ticket"], condition=Q(decision="pending"), name="holdcase_one_pending_per_ticket"
            ),
            models.CheckConstraint(
                condition=Q(decision="pending", decided_by__isnull=True, decided_at__isnull=True)
                | (~Q(decision="pending") & Q(decided_by__isnull=False, decided_at__isnull=False)),
                name="holdcase_decided_fields_match",
            ),
        ]

    def __str__(self) -> str:
        return f"Hold case {self.pk} ({self.get_decision_display()})"


class StaffAssignment(models.Model):
    """Which casino a member of staff works in; every page shows only that casino's data."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="assignment", verbose_name=_("user")
    )
    casino = models.ForeignKey(Casino, on_delete=models.PROTECT, related_name="staff", verbose_name=_("casino"))

    class Meta:
        verbose_name = _("staff assignment")
        verbose_name_plural = _("staff assignments")

    def __str__(self) -> str:
        return f"{self.user} at {self.casino.code}"


class StaffPreference(models.Model):
    """What a member of staff chose for their own screens: the language (lt or en)."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="preference", verbose_name=_("user")
    )
    language = models.CharField(max_length=8, choices=settings.LANGUAGES, default="lt", verbose_name=_("language"))

    class Meta:
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


class LiabilitySnapshot(models.Model):
    """Outstanding ticket liability at the end of a finished gaming day.

    A past moment's liability never changes (every timestamp is the server's
    clock at commit, never backdated), so each day is computed once, by the
    cashdesk.snapshot_liability job, and the dashboard's 30-day trend reads
    these rows instead of aggregating a month of tickets on every page load.
    """

    casino = models.ForeignKey(
        Casino, on_delete=models.PROTECT, related_name="liability_snapshots", verbose_name=_("casino")
    )
    gaming_day = models.DateField(verbose_name=_("gaming day"))
    at = models.DateTimeField(verbose_name=_("at"), help_text=_("The end of the gaming day."))
    amount = models.DecimalField(max_digits=14, decimal_places=3, verbose_name=_("amount"))
    computed_at = models.DateTimeField(auto_now_add=True, verbose_name=_("computed at"))

    class Meta:
        verbose_name = _("liability snapshot")
        verbose_name_plural = _("liability snapshots")
        constraints = [
            models.UniqueConstraint(fields=["casino", "gaming_day"], name="liabilitysnapshot_one_per_day"),
            models.CheckConstraint(condition=Q(amount__gte=0), name="liabilitysnapshot_amount_not_negative"),
        ]

    def __str__(self) -> str:
        return f"{self.casino_id} {self.gaming_day}: {self.amount}"

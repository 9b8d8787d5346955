"""What the desk pays besides tickets: reversals, machine receipts, smart cards, holds."""

import datetime as dt

from django.conf import settings
from django.db import models
from django.db.models import F, Q
from django.utils.translation import gettext_lazy as _

from cashdesk.models.books import CashTransaction
from cashdesk.models.desks import Shift
from cashdesk.receipt_numbers import display_receipt_number
from casino_office.triggers import append_only
from machines.models import Casino, Machine, Place


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
    operation_key = models.CharField(
        max_length=64, null=True, blank=True, unique=True, editable=False, verbose_name=_("operation key")
    )

    class Meta:
        verbose_name = _("reversal request")
        verbose_name_plural = _("reversal requests")

    def __str__(self) -> str:
        return f"Reversal of {self.original_id}: {self.reason}"


# Wrong check codes for one receipt or handpay before it is locked for a supervisor (issue 21).
CHECK_CODE_TRIES = 5


class ReceiptKind(models.TextChoices):
    """What a machine receipt pays (as `MachineReceipt.Kind`): recorded on the floor, or a machine's handpay."""

    FLOOR = "floor", _("Recorded on the floor")
    JACKPOT = "jackpot", _("Jackpot")
    CANCELLED_CREDITS = "cancelled_credits", _("Cancelled credits")


# The kinds a machine asks a handpay for: the API's choices and the receipt's constraint.
HANDPAY_KINDS: tuple[str, ...] = (ReceiptKind.JACKPOT.value, ReceiptKind.CANCELLED_CREDITS.value)


class MachineReceipt(models.Model):
    """A receipt for credits a machine cannot pay (casino rules §1: automato kvitas).

    Written by a floor attendant (source `floor`, confirmed at once), or
    requested by the machine itself as a handpay (source `machine`): an
    attendant confirms it at the machine and prints it, a cashier pays it, or
    a supervisor voids it. requested -> confirmed -> paid, or void.
    """

    class Source(models.TextChoices):
        FLOOR = "floor", _("Floor attendant")
        MACHINE = "machine", _("Machine (handpay)")

    Kind = ReceiptKind

    class State(models.TextChoices):
        REQUESTED = "requested", _("Requested by the machine")
        CONFIRMED = "confirmed", _("Confirmed at the machine")
        PAID = "paid", _("Paid")
        VOID = "void", _("Void")

    casino = models.ForeignKey(
        Casino, on_delete=models.PROTECT, related_name="machine_receipts", verbose_name=_("casino")
    )
    machine = models.ForeignKey(Machine, on_delete=models.PROTECT, related_name="receipts", verbose_name=_("machine"))
    # 12 random digits and a Damm check digit; receipts printed before that
    # keep their short sequence numbers (still valid at the desk).
    number = models.CharField(max_length=20, help_text=_("Per casino."), verbose_name=_("number"))
    # Printed on the paper beside the number: the machine knows the number,
    # only the paper carries the code.
    check_code = models.CharField(max_length=8, verbose_name=_("check code"))
    amount = models.DecimalField(
        max_digits=13, decimal_places=3, help_text=_("Unpaid credits in EUR."), verbose_name=_("amount")
    )
    source = models.CharField(max_length=8, choices=Source.choices, default=Source.FLOOR, verbose_name=_("source"))
    kind = models.CharField(max_length=20, choices=Kind.choices, default=Kind.FLOOR, verbose_name=_("kind"))
    state = models.CharField(max_length=10, choices=State.choices, verbose_name=_("state"))
    reason = models.CharField(max_length=255, blank=True, verbose_name=_("reason"))
    # None on floor receipts: the per-machine unique index then leaves them out.
    request_id = models.CharField(  # noqa: DJ001
        max_length=64, null=True, blank=True, editable=False, verbose_name=_("machine's request id")
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        help_text=_("None when the machine requested it."),
        verbose_name=_("created by"),
    )
    created_at = models.DateTimeField(verbose_name=_("created at"))
    confirmed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("confirmed by"),
    )
    confirmed_at = models.DateTimeField(null=True, blank=True, verbose_name=_("confirmed at"))
    # Four eyes (issue 21): above the casino's receipt confirmation limit a supervisor other than the
    # attendant who wrote or confirmed the receipt confirms it before a cashier may pay it.
    supervisor_confirmed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("confirmed by the supervisor"),
    )
    supervisor_confirmed_at = models.DateTimeField(
        null=True, blank=True, verbose_name=_("confirmed by the supervisor at")
    )
    paid_by = models.OneToOneField(
        CashTransaction,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("paid by"),
    )
    paid_at = models.DateTimeField(null=True, blank=True, verbose_name=_("paid at"))
    voided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("voided by"),
    )
    voided_at = models.DateTimeField(null=True, blank=True, verbose_name=_("voided at"))
    void_reason = models.CharField(max_length=255, blank=True, verbose_name=_("reason for voiding"))
    # The one-time key of the attendant's confirmation form: the same form sent twice confirms once.
    confirm_key = models.CharField(
        max_length=64, null=True, blank=True, unique=True, editable=False, verbose_name=_("confirmation key")
    )
    # Guessing the check code (issue 21): wrong codes typed at a desk since the last unlock; the
    # CHECK_CODE_TRIES-th locks the receipt until a supervisor unlocks it (CheckCodeFailure, CheckCodeUnlock).
    wrong_codes = models.PositiveSmallIntegerField(default=0, editable=False, verbose_name=_("wrong check codes"))
    code_locked_at = models.DateTimeField(
        null=True, blank=True, editable=False, verbose_name=_("locked after wrong check codes at")
    )

    class Meta:
        verbose_name = _("machine receipt")
        verbose_name_plural = _("machine receipts")
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(fields=["casino", "number"], name="machinereceipt_number_unique_per_casino"),
            models.CheckConstraint(condition=Q(amount__gt=0), name="machinereceipt_amount_positive"),
            models.CheckConstraint(condition=Q(number__regex=r"^[0-9]{1,20}$"), name="machinereceipt_number_digits"),
            models.CheckConstraint(
                condition=Q(source="floor", kind=ReceiptKind.FLOOR, request_id__isnull=True, created_by__isnull=False)
                | Q(source="machine", kind__in=list(HANDPAY_KINDS), request_id__isnull=False),
                name="machinereceipt_source_kind_match",
            ),
            models.CheckConstraint(
                condition=Q(state__in=["requested", "confirmed", "paid", "void"]), name="machinereceipt_state_valid"
            ),
            # Each state has exactly the timestamps and people of the steps that led to it.
            models.CheckConstraint(
                condition=(
                    Q(state="requested", source="machine", confirmed_at__isnull=True, confirmed_by__isnull=True)
                    | (Q(state__in=["confirmed", "paid"]) & Q(confirmed_at__isnull=False, confirmed_by__isnull=False))
                    | Q(state="void")
                )
                & (
                    Q(state="paid", paid_by__isnull=False, paid_at__isnull=False)
                    | (~Q(state="paid") & Q(paid_by__isnull=True, paid_at__isnull=True))
                )
                & (
                    Q(state="void", voided_by__isnull=False, voided_at__isnull=False) & ~Q(void_reason="")
                    | (~Q(state="void") & Q(voided_by__isnull=True, voided_at__isnull=True, void_reason=""))
                ),
                name="machinereceipt_state_fields_match",
            ),
            # The supervisor's confirmation comes after the attendant's, from someone else, with its time.
            models.CheckConstraint(
                condition=Q(supervisor_confirmed_by__isnull=True, supervisor_confirmed_at__isnull=True)
                | (
                    Q(supervisor_confirmed_by__isnull=False, supervisor_confirmed_at__isnull=False)
                    & Q(confirmed_by__isnull=False)
                    & ~Q(supervisor_confirmed_by=F("confirmed_by"))
                    & (Q(created_by__isnull=True) | ~Q(supervisor_confirmed_by=F("created_by")))
                ),
                name="machinereceipt_supervisor_not_the_attendant",
            ),
            # Locked exactly when the wrong codes reached the limit.
            models.CheckConstraint(
                condition=Q(code_locked_at__isnull=True, wrong_codes__lt=CHECK_CODE_TRIES)
                | Q(code_locked_at__isnull=False, wrong_codes=CHECK_CODE_TRIES),
                name="machinereceipt_locked_at_the_wrong_code_limit",
            ),
            # A machine has at most one handpay waiting for an attendant.
            models.UniqueConstraint(
                fields=["machine"], condition=Q(state="requested"), name="machinereceipt_one_requested_per_machine"
            ),
            models.UniqueConstraint(
                fields=["machine", "request_id"],
                condition=Q(request_id__isnull=False),
                name="machinereceipt_request_id_unique_per_machine",
            ),
        ]

    def __str__(self) -> str:
        return f"Receipt {self.casino.code}-{self.display_number} ({self.amount} EUR)"

    @property
    def display_number(self) -> str:
        return display_receipt_number(self.number)


class CheckCodeFailure(models.Model):
    """A wrong check code typed at a desk for a machine receipt or handpay: who, at which desk, when (append-only).

    The code typed is not kept: it is a guess at a secret, and a near miss would tell the reader too much.
    """

    receipt = models.ForeignKey(
        MachineReceipt, on_delete=models.PROTECT, related_name="check_code_failures", verbose_name=_("machine receipt")
    )
    desk = models.ForeignKey(Place, on_delete=models.PROTECT, related_name="+", verbose_name=_("desk"))
    tried_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+", verbose_name=_("typed by")
    )
    tried_at = models.DateTimeField(verbose_name=_("typed at"))

    class Meta:
        triggers = append_only()
        verbose_name = _("wrong check code")
        verbose_name_plural = _("wrong check codes")
        ordering = ["tried_at", "pk"]

    def __str__(self) -> str:
        return f"Wrong check code for receipt {self.receipt_id} at {self.tried_at:%Y-%m-%d %H:%M}"


class CheckCodeUnlock(models.Model):
    """A supervisor unlocked a receipt locked after wrong check codes: who, when, how many were forgotten."""

    receipt = models.ForeignKey(
        MachineReceipt, on_delete=models.PROTECT, related_name="check_code_unlocks", verbose_name=_("machine receipt")
    )
    failures = models.PositiveSmallIntegerField(verbose_name=_("wrong check codes forgotten"))
    unlocked_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+", verbose_name=_("unlocked by")
    )
    unlocked_at = models.DateTimeField(verbose_name=_("unlocked at"))
    operation_key = models.CharField(max_length=64, unique=True, editable=False, verbose_name=_("operation key"))

    class Meta:
        triggers = append_only()
        verbose_name = _("check code unlock")
        verbose_name_plural = _("check code unlocks")
        ordering = ["unlocked_at", "pk"]

    def __str__(self) -> str:
        return f"Receipt {self.receipt_id} unlocked by {self.unlocked_by} at {self.unlocked_at:%Y-%m-%d %H:%M}"


class SmartCardRead(models.Model):
    transaction = models.OneToOneField(
        CashTransaction, on_delete=models.PROTECT, related_name="smart_card", verbose_name=_("transaction")
    )
    card_number = models.CharField(max_length=32, verbose_name=_("card number"))
    # The card's own transaction counter: with the card number it identifies
    # one read, and one read is paid once. Reads before counters were kept have none.
    card_counter = models.PositiveIntegerField(null=True, blank=True, verbose_name=_("card counter"))
    credits = models.DecimalField(
        max_digits=12, decimal_places=3, help_text=_("As read from the card, in EUR."), verbose_name=_("credits")
    )

    class Meta:
        verbose_name = _("smart card read")
        verbose_name_plural = _("smart card reads")
        constraints = [
            models.CheckConstraint(condition=Q(credits__gt=0), name="smartcardread_credits_positive"),
            models.UniqueConstraint(
                fields=["card_number", "card_counter"],
                condition=Q(card_counter__isnull=False),
                name="smartcardread_one_per_card_counter",
            ),
        ]

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
    operation_key = models.CharField(
        max_length=64, null=True, blank=True, unique=True, editable=False, verbose_name=_("operation key")
    )

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

    # Casino rules §1.7: the decision is taken no later than the decision day (the 14th after the presentation),
    # in the casino's own time. From the start of that last day the case is due; after its end it is a breach.
    def last_day_starts(self) -> dt.datetime:
        return dt.datetime.combine(self.decision_due, dt.time(0), tzinfo=self.casino.zoneinfo)

    def deadline(self) -> dt.datetime:
        return dt.datetime.combine(self.decision_due + dt.timedelta(days=1), dt.time(0), tzinfo=self.casino.zoneinfo)

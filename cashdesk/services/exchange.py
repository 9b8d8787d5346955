"""Chips, tokens, smart cards and machine receipts."""

from decimal import Decimal

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from cashdesk.errors import CashDeskError
from cashdesk.items import CHIPS, Item
from cashdesk.models import CashTransaction, MachineReceipt, Shift, SmartCardRead, TransactionKind
from cashdesk.services.ledger import Line, cash, lock_shift, pieces, post_transaction
from compliance.models import Person
from machines.models import Casino, Machine
from tickets.money import CENT, MILL, cash_payout


def _chip_lines(chips: dict[str, int], sign: int) -> list[Line]:
    lines = []
    for item, count in chips.items():
        if item not in CHIPS:
            raise CashDeskError(
                "invalid_item",
                _("%(item)r is not a value chip; colour chips are exchanged at their table.") % {"item": item},
            )
        if not isinstance(count, int) or count < 0:
            raise CashDeskError("invalid_count", _("Count whole chips."))
        if count:
            lines.append(pieces(item, sign * count))
    if not lines:
        raise CashDeskError("invalid_count", _("Count at least one chip."))
    return lines


def _exchange(*, shift: Shift, user: User, kind: str, lines: list[Line], person: Person | None) -> CashTransaction:
    """Cash against chips or tokens: the transaction's value is the cash that changes hands."""
    value = abs(sum((line.amount for line in lines if line.item != Item.CASH), Decimal("0")))
    cash_line = cash(value if kind in (TransactionKind.CHIPS_BUY, TransactionKind.TOKENS_BUY) else -value)
    with transaction.atomic():
        shift, desk = lock_shift(shift=shift, user=user)
        return post_transaction(
            shift=shift, desk=desk, kind=kind, amount=value, lines=[cash_line, *lines], user=user, person=person
        )


def chips_buy(*, shift: Shift, user: User, chips: dict[str, int], person: Person | None = None) -> CashTransaction:
    """The player pays cash and receives value chips."""
    return _exchange(
        shift=shift, user=user, kind=TransactionKind.CHIPS_BUY, lines=_chip_lines(chips, -1), person=person
    )


def chips_cashout(*, shift: Shift, user: User, chips: dict[str, int], person: Person | None = None) -> CashTransaction:
    """The player hands in value chips and receives cash."""
    return _exchange(
        shift=shift, user=user, kind=TransactionKind.CHIPS_CASHOUT, lines=_chip_lines(chips, 1), person=person
    )


def _token_count(count: int) -> int:
    if not isinstance(count, int) or count <= 0:
        raise CashDeskError("invalid_count", _("Count at least one whole token."))
    return count


def tokens_buy(*, shift: Shift, user: User, count: int, person: Person | None = None) -> CashTransaction:
    """The player pays cash and receives slot tokens (1 EUR each)."""
    line = pieces(Item.TOKEN, -_token_count(count))
    return _exchange(shift=shift, user=user, kind=TransactionKind.TOKENS_BUY, lines=[line], person=person)


def tokens_cashout(*, shift: Shift, user: User, count: int, person: Person | None = None) -> CashTransaction:
    """The player hands in slot tokens and receives cash."""
    line = pieces(Item.TOKEN, _token_count(count))
    return _exchange(shift=shift, user=user, kind=TransactionKind.TOKENS_CASHOUT, lines=[line], person=person)


def smartcard_payout(
    *, shift: Shift, user: User, card_number: str, credits: Decimal, person: Person | None = None
) -> CashTransaction:
    """Pay the credits read from a smart card, rounded up to the cent like a ticket."""
    card_number = card_number.strip()
    if not card_number or len(card_number) > 32 or not card_number.isalnum():
        raise CashDeskError("invalid_card", _("Enter the card number as printed (letters and digits)."))
    if credits <= 0 or credits != credits.quantize(MILL):
        raise CashDeskError("invalid_amount", _("Enter the credits read from the card, more than zero."))
    payout = cash_payout(credits)
    with transaction.atomic():
        shift, desk = lock_shift(shift=shift, user=user)
        tx = post_transaction(
            shift=shift,
            desk=desk,
            kind=TransactionKind.SMARTCARD_PAYOUT,
            amount=payout,
            lines=[cash(-payout)],
            user=user,
            person=person,
            note=f"card {card_number}",
        )
        SmartCardRead.objects.create(transaction=tx, card_number=card_number, credits=credits)
    return tx


def machine_receipt_record(*, machine: Machine, amount: Decimal, reason: str, user: User) -> MachineReceipt:
    """A floor attendant records the credits a token machine could not pay."""
    if not user.has_perm("cashdesk.record_receipt"):
        raise CashDeskError("forbidden", _("Only floor attendants record machine receipts."))
    if amount <= 0 or amount != amount.quantize(CENT):
        raise CashDeskError("invalid_amount", _("Enter the unpaid credits in euros and cents, more than zero."))
    if not reason.strip():
        raise CashDeskError("reason_required", _("Say why the machine could not pay."))
    with transaction.atomic():
        casino = Casino.objects.select_for_update().get(pk=machine.casino_id)
        last = MachineReceipt.objects.filter(casino=casino).order_by("-number").values_list("number", flat=True).first()
        return MachineReceipt.objects.create(
            casino=casino,
            machine=machine,
            number=(last or 0) + 1,
            amount=amount,
            reason=reason[:255],
            created_by=user,
            created_at=timezone.now(),
        )


def machine_receipt_pay(*, shift: Shift, user: User, number: int, person: Person | None = None) -> CashTransaction:
    """Pay a machine receipt in cash, once."""
    with transaction.atomic():
        receipt = (
            MachineReceipt.objects.select_for_update(of=("self",))
            .filter(casino_id=shift.desk.casino_id, number=number)
            .select_related("paid_by", "paid_by__desk")
            .first()
        )
        if receipt is None:
            raise CashDeskError(
                "not_found", _("No machine receipt number %(number)s in this casino.") % {"number": number}
            )
        if receipt.paid_by is not None:
            paid = receipt.paid_by
            raise CashDeskError(
                "already_paid",
                _("Receipt %(number)s was already paid on %(when)s at %(desk)s (receipt %(receipt)s).")
                % {
                    "number": number,
                    "when": f"{timezone.localtime(paid.created_at):%Y-%m-%d %H:%M}",
                    "desk": paid.desk.name,
                    "receipt": paid.receipt_number,
                },
            )
        shift, desk = lock_shift(shift=shift, user=user)
        tx = post_transaction(
            shift=shift,
            desk=desk,
            kind=TransactionKind.RECEIPT_PAYOUT,
            amount=receipt.amount,
            lines=[cash(-receipt.amount)],
            user=user,
            person=person,
            note=f"machine receipt {number}",
        )
        MachineReceipt.objects.filter(pk=receipt.pk, paid_by__isnull=True).update(paid_by=tx)
    return tx

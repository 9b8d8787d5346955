"""Chips, tokens and smart cards: the player's cash against what is played with (receipts: machine_receipts.py)."""

from decimal import Decimal

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.utils.translation import gettext as _

from cashdesk.errors import CashDeskError
from cashdesk.items import CHIPS, Item
from cashdesk.models import (
    CASH_IN_KINDS,
    CashTransaction,
    Shift,
    SmartCardRead,
    TransactionKind,
)
from cashdesk.services.ledger import (
    Line,
    cash,
    identification_logged,
    lock_shift,
    pieces,
    post_transaction,
)
from cashdesk.services.once import DESK_TRANSACTION
from casino_office.money import CENT, MILL, cash_payout
from compliance.models import Person
from compliance.services import IdentityDetails
from machines.models import Place


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


def _exchange(
    *,
    shift: Shift,
    user: User,
    kind: str,
    lines: list[Line],
    person: Person | None,
    identity: IdentityDetails | None,
    operation_key: str | None,
) -> CashTransaction:
    """Cash against chips or tokens: the transaction's value is the cash that changes hands."""
    value = abs(sum((line.amount for line in lines if line.item != Item.CASH), Decimal("0")))
    cash_line = cash(value if kind in CASH_IN_KINDS else -value)
    with identification_logged(casino=shift.desk.casino, user=user), transaction.atomic():
        shift, desk = lock_shift(shift=shift, user=user)
        return DESK_TRANSACTION.once(
            operation_key,
            user=user,
            run=lambda: post_transaction(
                shift=shift,
                desk=desk,
                kind=kind,
                amount=value,
                lines=[cash_line, *lines],
                user=user,
                person=person,
                identity=identity,
                operation_key=operation_key,
            ),
        )


def chips_buy(
    *,
    shift: Shift,
    user: User,
    chips: dict[str, int],
    person: Person | None = None,
    identity: IdentityDetails | None = None,
    operation_key: str | None = None,
) -> CashTransaction:
    """The player pays cash and receives value chips."""
    return _exchange(
        shift=shift,
        user=user,
        kind=TransactionKind.CHIPS_BUY,
        lines=_chip_lines(chips, -1),
        person=person,
        identity=identity,
        operation_key=operation_key,
    )


def chips_cashout(
    *,
    shift: Shift,
    user: User,
    chips: dict[str, int],
    person: Person | None = None,
    identity: IdentityDetails | None = None,
    operation_key: str | None = None,
) -> CashTransaction:
    """The player hands in value chips and receives cash."""
    return _exchange(
        shift=shift,
        user=user,
        kind=TransactionKind.CHIPS_CASHOUT,
        lines=_chip_lines(chips, 1),
        person=person,
        identity=identity,
        operation_key=operation_key,
    )


def _token_count(count: int) -> int:
    if not isinstance(count, int) or count <= 0 or count > 10_000_000:
        raise CashDeskError("invalid_count", _("Count at least one whole token."))
    return count


def tokens_buy(
    *,
    shift: Shift,
    user: User,
    count: int,
    person: Person | None = None,
    identity: IdentityDetails | None = None,
    operation_key: str | None = None,
) -> CashTransaction:
    """The player pays cash and receives slot tokens (1 EUR each)."""
    line = pieces(Item.TOKEN, -_token_count(count))
    return _exchange(
        shift=shift,
        user=user,
        kind=TransactionKind.TOKENS_BUY,
        lines=[line],
        person=person,
        identity=identity,
        operation_key=operation_key,
    )


def tokens_cashout(
    *,
    shift: Shift,
    user: User,
    count: int,
    person: Person | None = None,
    identity: IdentityDetails | None = None,
    operation_key: str | None = None,
) -> CashTransaction:
    """The player hands in slot tokens and receives cash."""
    line = pieces(Item.TOKEN, _token_count(count))
    return _exchange(
        shift=shift,
        user=user,
        kind=TransactionKind.TOKENS_CASHOUT,
        lines=[line],
        person=person,
        identity=identity,
        operation_key=operation_key,
    )


def _card_read(card_number: str, credits: Decimal, card_counter: int) -> str:
    card_number = card_number.strip().upper()
    if not card_number or len(card_number) > 32 or not (card_number.isascii() and card_number.isalnum()):
        raise CashDeskError("invalid_card", _("Enter the card number as printed (letters and digits)."))
    if credits <= 0 or credits != credits.quantize(MILL) or credits >= Decimal("1000000000"):
        raise CashDeskError("invalid_amount", _("Enter the credits read from the card, more than zero."))
    if not isinstance(card_counter, int) or card_counter < 0 or card_counter > 2_147_483_647:
        raise CashDeskError("invalid_card", _("Enter the card's transaction counter as the reader shows it."))
    return card_number


def _smartcard(
    *,
    shift: Shift,
    user: User,
    kind: str,
    card_number: str,
    credits: Decimal,
    card_counter: int,
    person: Person | None,
    identity: IdentityDetails | None,
    operation_key: str | None,
) -> CashTransaction:
    card_number = _card_read(card_number, credits, card_counter)
    payout = kind == TransactionKind.SMARTCARD_PAYOUT
    amount = cash_payout(credits) if payout else credits
    if not payout and amount != amount.quantize(CENT):
        raise CashDeskError("invalid_amount", _("Enter the amount in euros and cents, more than zero."))
    with identification_logged(casino=shift.desk.casino, user=user), transaction.atomic():
        shift, desk = lock_shift(shift=shift, user=user)
        return DESK_TRANSACTION.once(
            operation_key,
            user=user,
            run=lambda: _settle_card_read(
                shift=shift,
                desk=desk,
                user=user,
                kind=kind,
                read=SmartCardRead(card_number=card_number, credits=credits, card_counter=card_counter),
                amount=amount,
                person=person,
                identity=identity,
                operation_key=operation_key,
            ),
        )


def _settle_card_read(
    *,
    shift: Shift,
    desk: Place,
    user: User,
    kind: str,
    read: SmartCardRead,
    amount: Decimal,
    person: Person | None,
    identity: IdentityDetails | None,
    operation_key: str | None,
) -> CashTransaction:
    """Pay or load a card read, once (card number and the card's own counter): the caller locked the desk."""
    if SmartCardRead.objects.filter(card_number=read.card_number, card_counter=read.card_counter).exists():
        raise CashDeskError(
            "already_paid",
            _("This card read (card %(card)s, counter %(counter)s) was already settled; read the card again.")
            % {"card": read.card_number, "counter": read.card_counter},
        )
    tx = post_transaction(
        shift=shift,
        desk=desk,
        kind=kind,
        amount=amount,
        lines=[cash(-amount if kind == TransactionKind.SMARTCARD_PAYOUT else amount)],
        user=user,
        person=person,
        identity=identity,
        note=f"card {read.card_number}",
        operation_key=operation_key,
    )
    read.transaction = tx
    try:
        with transaction.atomic():
            read.save(force_insert=True)
    except IntegrityError:
        # Another desk settled the same read at the same moment and committed first.
        raise CashDeskError(
            "already_paid", _("This card read was settled at the same moment at another desk.")
        ) from None
    return tx


def smartcard_payout(
    *,
    shift: Shift,
    user: User,
    card_number: str,
    credits: Decimal,
    card_counter: int,
    person: Person | None = None,
    identity: IdentityDetails | None = None,
    operation_key: str | None = None,
) -> CashTransaction:
    """Pay the credits read from a smart card, rounded up to the cent like a ticket."""
    return _smartcard(
        shift=shift,
        user=user,
        kind=TransactionKind.SMARTCARD_PAYOUT,
        card_number=card_number,
        credits=credits,
        card_counter=card_counter,
        person=person,
        identity=identity,
        operation_key=operation_key,
    )


def smartcard_load(
    *,
    shift: Shift,
    user: User,
    card_number: str,
    amount: Decimal,
    card_counter: int,
    person: Person | None = None,
    identity: IdentityDetails | None = None,
    operation_key: str | None = None,
) -> CashTransaction:
    """The player pays cash and the desk's reader loads the credits onto the card."""
    return _smartcard(
        shift=shift,
        user=user,
        kind=TransactionKind.SMARTCARD_LOAD,
        card_number=card_number,
        credits=amount,
        card_counter=card_counter,
        person=person,
        identity=identity,
        operation_key=operation_key,
    )

"""Chips, tokens, smart cards and machine receipts."""

import logging
import secrets
from decimal import Decimal

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from cashdesk.errors import CashDeskError
from cashdesk.items import CHIPS, Item
from cashdesk.models import (
    CASH_IN_KINDS,
    CHECK_CODE_TRIES,
    CashTransaction,
    CheckCodeFailure,
    CheckCodeUnlock,
    MachineReceipt,
    Shift,
    SmartCardRead,
    TransactionKind,
)
from cashdesk.receipt_numbers import display_receipt_number, generate_receipt_number, parse_receipt_number
from cashdesk.selectors import awaiting_supervisor
from cashdesk.services.ledger import (
    Line,
    cash,
    identification_logged,
    lock_shift,
    operation_replay,
    pieces,
    post_transaction,
)
from compliance.models import Person
from compliance.services import IdentityDetails
from machines.models import Machine, Place
from tickets.money import CENT, MILL, cash_payout, format_money

logger = logging.getLogger(__name__)


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
    with identification_logged(shift=shift, user=user), transaction.atomic():
        shift, desk = lock_shift(shift=shift, user=user)
        if (done := operation_replay(operation_key=operation_key, user=user)) is not None:
            return done
        return post_transaction(
            shift=shift,
            desk=desk,
            kind=kind,
            amount=value,
            lines=[cash_line, *lines],
            user=user,
            person=person,
            identity=identity,
            operation_key=operation_key,
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
    with identification_logged(shift=shift, user=user), transaction.atomic():
        shift, desk = lock_shift(shift=shift, user=user)
        if (done := operation_replay(operation_key=operation_key, user=user)) is not None:
            return done
        # One read (card number and the card's own counter) is paid or loaded once.
        if SmartCardRead.objects.filter(card_number=card_number, card_counter=card_counter).exists():
            raise CashDeskError(
                "already_paid",
                _("This card read (card %(card)s, counter %(counter)s) was already settled; read the card again.")
                % {"card": card_number, "counter": card_counter},
            )
        tx = post_transaction(
            shift=shift,
            desk=desk,
            kind=kind,
            amount=amount,
            lines=[cash(-amount if payout else amount)],
            user=user,
            person=person,
            identity=identity,
            note=f"card {card_number}",
            operation_key=operation_key,
        )
        try:
            with transaction.atomic():
                SmartCardRead.objects.create(
                    transaction=tx, card_number=card_number, credits=credits, card_counter=card_counter
                )
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


def _check_code() -> str:
    """Six random digits printed on the receipt: the number alone pays nothing (a machine knows its number)."""
    return f"{secrets.randbelow(1_000_000):06d}"


_NUMBER_ATTEMPTS = 5


def create_with_new_number(**fields: object) -> MachineReceipt:
    """A new receipt under a fresh random number; a number already taken in the casino is drawn again.

    Each attempt runs in a savepoint; any other refusal of the database is
    raised to the caller as it is.
    """
    for attempt in range(_NUMBER_ATTEMPTS):
        try:
            with transaction.atomic():
                return MachineReceipt.objects.create(
                    number=generate_receipt_number(), check_code=_check_code(), **fields
                )
        except IntegrityError as error:
            name = getattr(getattr(error.__cause__, "diag", None), "constraint_name", None)
            if name != "machinereceipt_number_unique_per_casino" or attempt == _NUMBER_ATTEMPTS - 1:
                raise
    raise AssertionError("unreachable")  # pragma: no cover


def machine_receipt_record(*, machine: Machine, amount: Decimal, reason: str, user: User) -> MachineReceipt:
    """A floor attendant records the credits a token machine could not pay: confirmed as it is written."""
    if not user.has_perm("staff.record_receipt"):
        raise CashDeskError("forbidden", _("Only floor attendants record machine receipts."))
    if amount <= 0 or amount != amount.quantize(CENT):
        raise CashDeskError("invalid_amount", _("Enter the unpaid credits in euros and cents, more than zero."))
    if amount > machine.casino.max_receipt_amount:
        raise CashDeskError(
            "over_limit",
            _("A machine receipt may be at most %(limit)s.")
            % {"limit": format_money(machine.casino.max_receipt_amount)},
        )
    if not reason.strip():
        raise CashDeskError("reason_required", _("Say why the machine could not pay."))
    now = timezone.now()
    with transaction.atomic():
        return create_with_new_number(
            casino_id=machine.casino_id,
            machine=machine,
            amount=amount,
            source=MachineReceipt.Source.FLOOR,
            kind=MachineReceipt.Kind.FLOOR,
            state=MachineReceipt.State.CONFIRMED,
            reason=reason[:255],
            created_by=user,
            created_at=now,
            confirmed_by=user,
            confirmed_at=now,
        )


def machine_receipt_supervisor_confirm(*, receipt_id: int, casino_id: int, user: User) -> MachineReceipt:
    """A supervisor, not the attendant who wrote the receipt, confirms it so that a cashier may pay it."""
    if not user.has_perm("staff.supervise_desk"):
        raise CashDeskError("forbidden", _("Only a supervisor confirms a machine receipt."))
    with transaction.atomic():
        receipt = MachineReceipt.objects.select_for_update().filter(pk=receipt_id, casino_id=casino_id).first()
        if receipt is None:
            raise CashDeskError("not_found", _("No such machine receipt in this casino."))
        if receipt.supervisor_confirmed_at is not None:
            raise CashDeskError("already_confirmed", _("This machine receipt is already confirmed by a supervisor."))
        if receipt.state != MachineReceipt.State.CONFIRMED:
            raise CashDeskError(
                "not_confirmable",
                _("Only an unpaid machine receipt can be confirmed; this one is %(state)s.")
                % {"state": receipt.get_state_display().lower()},
            )
        if user.pk in (receipt.created_by_id, receipt.confirmed_by_id):
            raise CashDeskError(
                "same_person", _("A supervisor other than the attendant who wrote the receipt confirms it.")
            )
        MachineReceipt.objects.filter(
            pk=receipt.pk, state=MachineReceipt.State.CONFIRMED, supervisor_confirmed_at__isnull=True
        ).update(supervisor_confirmed_by=user, supervisor_confirmed_at=timezone.now())
        receipt.refresh_from_db()
        return receipt


def _wrong_check_code(*, receipt: MachineReceipt, user: User, desk: Place, shown: str) -> CashDeskError:
    """Record a wrong check code typed for `receipt` (its row locked by the caller); the last try locks it.

    The row lock makes the count exact: cashiers guessing at once at two desks
    are counted one after the other, and none is counted once the receipt is
    locked. Neither the code typed nor the receipt's number goes into the log.
    """
    now = timezone.now()
    CheckCodeFailure.objects.create(receipt=receipt, desk=desk, tried_by=user, tried_at=now)
    wrong = receipt.wrong_codes + 1
    locked = wrong >= CHECK_CODE_TRIES
    MachineReceipt.objects.filter(pk=receipt.pk).update(wrong_codes=wrong, code_locked_at=now if locked else None)
    logger.warning(
        "machine receipt id %s: wrong check code at desk %s by %s (%s of %s)%s",
        receipt.pk,
        desk.code,
        user.get_username(),
        wrong,
        CHECK_CODE_TRIES,
        ", locked" if locked else "",
    )
    if locked:
        return CashDeskError(
            "wrong_check_code",
            _(
                "Wrong check code for receipt %(number)s: that was wrong code %(limit)s of %(limit)s, and the "
                "receipt is now locked until a supervisor unlocks it."
            )
            % {"number": shown, "limit": CHECK_CODE_TRIES},
        )
    return CashDeskError(
        "wrong_check_code",
        _(
            "Wrong check code for receipt %(number)s (%(wrong)s of %(limit)s: at %(limit)s wrong codes the receipt "
            "is locked until a supervisor unlocks it)."
        )
        % {"number": shown, "wrong": wrong, "limit": CHECK_CODE_TRIES},
    )


def machine_receipt_pay(
    *,
    shift: Shift,
    user: User,
    number: str | int,
    check_code: str,
    person: Person | None = None,
    identity: IdentityDetails | None = None,
    operation_key: str | None = None,
) -> CashTransaction:
    """Pay a machine receipt in cash, once: a floor receipt, or a handpay confirmed at the machine.

    The receipt's row is locked alone (no join: after waiting on a lock,
    PostgreSQL re-reads the locked row but not joined ones), then the desk;
    the payout is a compare-and-set on the state whose row count is checked,
    and the database's unique constraint refuses a second payout transaction.
    A wrong check code is recorded and committed before it is refused; a
    receipt locked after CHECK_CODE_TRIES wrong codes is refused whatever code is given.
    """
    stored = parse_receipt_number(number)
    shown = display_receipt_number(stored) if stored else "?"
    with identification_logged(shift=shift, user=user), transaction.atomic():
        receipt = (
            MachineReceipt.objects.select_for_update()
            .filter(casino_id=shift.desk.casino_id, number=stored or "")
            .first()
        )
        if receipt is None:
            raise CashDeskError(
                "not_found",
                _("No machine receipt %(number)s with this check code in this casino.") % {"number": shown},
            )
        shift, desk = lock_shift(shift=shift, user=user)
        if (done := operation_replay(operation_key=operation_key, user=user)) is not None:
            return done
        if receipt.code_locked_at is not None:
            raise CashDeskError(
                "check_code_locked",
                _(
                    "Receipt %(number)s is locked after %(limit)s wrong check codes: it is not paid until a "
                    "supervisor unlocks it (the supervisor's page lists it)."
                )
                % {"number": shown, "limit": CHECK_CODE_TRIES},
            )
        if not secrets.compare_digest(receipt.check_code.encode(), check_code.strip().encode()):
            refusal = _wrong_check_code(receipt=receipt, user=user, desk=desk, shown=shown)
        else:
            return _pay_receipt(
                receipt=receipt,
                shift=shift,
                desk=desk,
                user=user,
                shown=shown,
                person=person,
                identity=identity,
                operation_key=operation_key,
            )
    # Outside the transaction: the wrong code's record is committed, then the cashier is told.
    raise refusal


def _pay_receipt(
    *,
    receipt: MachineReceipt,
    shift: Shift,
    desk: Place,
    user: User,
    shown: str,
    person: Person | None,
    identity: IdentityDetails | None,
    operation_key: str | None,
) -> CashTransaction:
    """The payout of a receipt whose row and desk the caller locked and whose check code matched."""
    if receipt.paid_by_id is not None:
        paid = CashTransaction.objects.select_related("desk", "casino").get(pk=receipt.paid_by_id)
        raise CashDeskError(
            "already_paid",
            _("Receipt %(number)s was already paid on %(when)s at %(desk)s (receipt %(receipt)s).")
            % {
                "number": shown,
                "when": f"{timezone.localtime(paid.created_at):%Y-%m-%d %H:%M}",
                "desk": paid.desk.name,
                "receipt": paid.receipt_number,
            },
        )
    if receipt.state == MachineReceipt.State.REQUESTED:
        raise CashDeskError(
            "not_confirmed",
            _(
                "Handpay %(number)s is not confirmed at the machine yet: a floor attendant must confirm it "
                "and print the receipt first."
            )
            % {"number": shown},
        )
    if receipt.state == MachineReceipt.State.VOID:
        raise CashDeskError(
            "void",
            _("Receipt %(number)s was voided by a supervisor (%(reason)s); it is not paid.")
            % {"number": shown, "reason": receipt.void_reason},
        )
    if MachineReceipt.objects.filter(awaiting_supervisor(desk.casino), pk=receipt.pk).exists():
        raise CashDeskError(
            "supervisor_confirmation_required",
            _(
                "Receipt %(number)s is above %(limit)s: a supervisor must confirm it before it is paid "
                "(the supervisor's dashboard lists it)."
            )
            % {"number": shown, "limit": format_money(desk.casino.receipt_confirmation_limit)},
        )
    payout = cash_payout(receipt.amount)
    tx = post_transaction(
        shift=shift,
        desk=desk,
        kind=TransactionKind.RECEIPT_PAYOUT,
        amount=payout,
        lines=[cash(-payout)],
        user=user,
        person=person,
        identity=identity,
        machine_receipt=receipt,
        note=f"machine receipt {receipt.pk}",
        operation_key=operation_key,
    )
    paid_now = MachineReceipt.objects.filter(
        pk=receipt.pk, paid_by__isnull=True, state=MachineReceipt.State.CONFIRMED
    ).update(paid_by=tx, paid_at=tx.created_at, state=MachineReceipt.State.PAID)
    if paid_now != 1:
        raise CashDeskError("already_paid", _("Receipt %(number)s was already paid.") % {"number": shown})
    return tx


def machine_receipt_unlock(*, receipt_id: int, casino_id: int, user: User, operation_key: str) -> MachineReceipt:
    """A supervisor unlocks a receipt or handpay locked after wrong check codes; recorded with who and when.

    The wrong codes counted so far are forgotten (their records stay); the
    same form sent twice (same one-time key) unlocks once.
    """
    if not user.has_perm("staff.supervise_desk"):
        raise CashDeskError("forbidden", _("Only a supervisor unlocks a machine receipt."))
    with transaction.atomic():
        receipt = MachineReceipt.objects.select_for_update().filter(pk=receipt_id, casino_id=casino_id).first()
        if receipt is None:
            raise CashDeskError("not_found", _("No such machine receipt in this casino."))
        if CheckCodeUnlock.objects.filter(operation_key=operation_key, receipt=receipt, unlocked_by=user).exists():
            return receipt
        if receipt.code_locked_at is None:
            raise CashDeskError("not_locked", _("This machine receipt is not locked."))
        CheckCodeUnlock.objects.create(
            receipt=receipt,
            failures=receipt.wrong_codes,
            unlocked_by=user,
            unlocked_at=timezone.now(),
            operation_key=operation_key,
        )
        MachineReceipt.objects.filter(pk=receipt.pk).update(wrong_codes=0, code_locked_at=None)
        receipt.refresh_from_db()
        return receipt

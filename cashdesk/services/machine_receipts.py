"""Machine receipts at the desk: a floor attendant's receipt, a supervisor's confirmation, and the cashier's payout
of a receipt or of a handpay confirmed at the machine (the machine's side of a handpay is in handpays.py).
"""

import logging
import secrets
from decimal import Decimal

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from cashdesk.errors import CashDeskError
from cashdesk.models import (
    CHECK_CODE_TRIES,
    CashTransaction,
    CheckCodeFailure,
    CheckCodeUnlock,
    MachineReceipt,
    Shift,
    TransactionKind,
)
from cashdesk.receipt_numbers import display_receipt_number, generate_receipt_number, parse_receipt_number
from cashdesk.selectors import awaiting_supervisor
from cashdesk.services.ledger import cash, identification_logged, lock_shift, post_transaction
from cashdesk.services.once import DESK_TRANSACTION, RECEIPT_UNLOCK
from casino_office.money import CENT, cash_payout, format_money
from compliance.models import Person
from compliance.services import IdentityDetails
from machines.history import changed_sealed
from machines.models import Machine, Place

logger = logging.getLogger(__name__)


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
        changed_sealed(MachineReceipt, receipt.pk)
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
    with identification_logged(casino=shift.desk.casino, user=user), transaction.atomic():
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
        paid = DESK_TRANSACTION.once(
            operation_key,
            user=user,
            run=lambda: _check_and_pay(
                receipt=receipt,
                check_code=check_code,
                shift=shift,
                desk=desk,
                user=user,
                shown=shown,
                person=person,
                identity=identity,
                operation_key=operation_key,
            ),
        )
    if isinstance(paid, CashDeskError):
        # Outside the transaction: the wrong code's record is committed, then the cashier is told.
        raise paid
    return paid


def _check_and_pay(
    *,
    receipt: MachineReceipt,
    check_code: str,
    shift: Shift,
    desk: Place,
    user: User,
    shown: str,
    person: Person | None,
    identity: IdentityDetails | None,
    operation_key: str | None,
) -> CashTransaction | CashDeskError:
    """The payout of a receipt whose row and desk the caller locked, or the refusal of a wrong check code (recorded
    here, told once committed)."""
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
        return _wrong_check_code(receipt=receipt, user=user, desk=desk, shown=shown)
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
    _refuse_unpayable(receipt=receipt, desk=desk, shown=shown)
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
    changed_sealed(MachineReceipt, receipt.pk)
    return tx


def _refuse_unpayable(*, receipt: MachineReceipt, desk: Place, shown: str) -> None:
    """A receipt already paid, not confirmed at the machine yet, void, or waiting for a supervisor is not paid."""
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
        if RECEIPT_UNLOCK.earlier(operation_key, user=user, receipt=receipt) is not None:
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

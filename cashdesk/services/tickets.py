"""Tickets at the cash desk: payout, sale, hold and its decision; supervisors' void and resolve.

The ticket's own transitions live in tickets.desk; these services add the
desk's side (the books, the hold case, who may do what) around them. Every
transition locks the ticket row first (then the desk), the same lock a
machine's authorize takes: a cashier and a machine racing for one ticket get
exactly one success.
"""

import datetime as dt
from collections.abc import Iterator
from contextlib import contextmanager
from decimal import Decimal

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from cashdesk.errors import CashDeskError
from cashdesk.models import CashTransaction, HoldCase, Shift, TransactionKind
from cashdesk.services.kiosks import kiosk_payout_settled
from cashdesk.services.ledger import cash, identification_logged, lock_shift, post_transaction
from cashdesk.services.once import DESK_TRANSACTION, HOLD
from casino_office.money import CENT, cash_payout
from compliance.models import Person
from compliance.services import IdentityDetails
from machines.models import Place
from tickets import desk as ticket_rules
from tickets.exceptions import TicketError
from tickets.models import Ticket, TicketState


@contextmanager
def _as_desk_refusal() -> Iterator[None]:
    """A ticket's refusal, shown at the desk as the desk's own."""
    try:
        yield
    except TicketError as refused:
        raise CashDeskError(refused.code, refused.message) from None


def _lock_ticket(*, casino_id: int, validation_number: str) -> Ticket:
    with _as_desk_refusal():
        return ticket_rules.ticket_lock(
            casino_id=casino_id, validation_number=ticket_rules.desk_number(validation_number)
        )


def ticket_payout(
    *,
    shift: Shift,
    user: User,
    validation_number: str,
    person: Person | None = None,
    identity: IdentityDetails | None = None,
    printed_amount: Decimal | None = None,
    operation_key: str | None = None,
) -> CashTransaction:
    """Pay a ticket in cash, rounded up to the cent (casino rules §1.7).

    A refusal is recorded against the ticket before it is raised: a second
    presentation of a paid ticket is how copies are found. If the printed
    amount differs from the system's, the system's amount is paid and the
    mismatch recorded as an exception.
    """
    now = timezone.now()
    with identification_logged(casino=shift.desk.casino, user=user), transaction.atomic():
        ticket = _lock_ticket(casino_id=shift.desk.casino_id, validation_number=validation_number)
        shift, desk = lock_shift(shift=shift, user=user)
        paid = DESK_TRANSACTION.once(
            operation_key,
            user=user,
            run=lambda: _pay_ticket(
                ticket=ticket,
                shift=shift,
                desk=desk,
                user=user,
                person=person,
                identity=identity,
                printed_amount=printed_amount,
                at=now,
                operation_key=operation_key,
            ),
        )
    if isinstance(paid, CashTransaction):
        return paid
    raise CashDeskError(*paid)


def _pay_ticket(
    *,
    ticket: Ticket,
    shift: Shift,
    desk: Place,
    user: User,
    person: Person | None,
    identity: IdentityDetails | None,
    printed_amount: Decimal | None,
    at: dt.datetime,
    operation_key: str | None,
) -> CashTransaction | tuple[str, str]:
    """The payout of a ticket the caller locked with its desk, or the refusal (recorded against the ticket)."""
    refusal = ticket_rules.ticket_cash_refusal(ticket, at)
    if refusal is not None:
        code, _message = refusal
        ticket_rules.ticket_refusal_record(
            ticket=ticket, user=user, code=code, at=at, details={"action": "cash_payout", "desk": desk.code}
        )
        return refusal
    payout = cash_payout(ticket.amount)
    tx = post_transaction(
        shift=shift,
        desk=desk,
        kind=TransactionKind.TICKET_PAYOUT,
        amount=payout,
        lines=[cash(-payout)],
        user=user,
        person=person,
        identity=identity,
        ticket=ticket,
        at=at,
        operation_key=operation_key,
    )
    with _as_desk_refusal():
        ticket_rules.ticket_redeem_in_cash(
            ticket=ticket,
            user=user,
            at=at,
            printed_amount=printed_amount,
            details={"receipt": tx.receipt_number, "payout": str(payout), "desk": desk.code, "desk_name": desk.name},
        )
    return tx


def ticket_sell(
    *,
    shift: Shift,
    user: User,
    amount: Decimal,
    person: Person | None = None,
    identity: IdentityDetails | None = None,
    operation_key: str | None = None,
) -> CashTransaction:
    """Cash in, a new ticket out: issued by the desk, valid at once, printed as a voucher."""
    if amount <= 0 or amount != amount.quantize(CENT):
        raise CashDeskError("invalid_amount", _("Enter the amount in euros and cents, more than zero."))
    now = timezone.now()
    with identification_logged(casino=shift.desk.casino, user=user), transaction.atomic():
        shift, desk = lock_shift(shift=shift, user=user)
        return DESK_TRANSACTION.once(
            operation_key,
            user=user,
            run=lambda: _sell_ticket(
                shift=shift,
                desk=desk,
                user=user,
                amount=amount,
                person=person,
                identity=identity,
                at=now,
                operation_key=operation_key,
            ),
        )


def _sell_ticket(
    *,
    shift: Shift,
    desk: Place,
    user: User,
    amount: Decimal,
    person: Person | None,
    identity: IdentityDetails | None,
    at: dt.datetime,
    operation_key: str | None,
) -> CashTransaction:
    desk.last_ticket_sequence += 1
    Place.objects.filter(pk=desk.pk).update(last_ticket_sequence=desk.last_ticket_sequence)
    with _as_desk_refusal():
        ticket = ticket_rules.ticket_sell_at_desk(
            issuing_desk=desk, sequence=desk.last_ticket_sequence, amount=amount, at=at
        )
    tx = post_transaction(
        shift=shift,
        desk=desk,
        kind=TransactionKind.TICKET_SALE,
        amount=amount,
        lines=[cash(amount)],
        user=user,
        person=person,
        identity=identity,
        ticket=ticket,
        at=at,
        operation_key=operation_key,
    )
    ticket_rules.ticket_sold_event(ticket=ticket, user=user, at=at, receipt=tx.receipt_number)
    return tx


def ticket_hold(
    *,
    shift: Shift,
    user: User,
    validation_number: str,
    reason: str,
    note: str = "",
    operation_key: str | None = None,
) -> HoldCase:
    """Refuse a suspicious ticket: it goes on hold and a case opens, decision due in 14 days.

    Only a ticket that may be paid now is held: a promotional, expired, paid
    or void ticket is refused as it would be at the payout.
    """
    if reason not in HoldCase.Reason.values:
        raise CashDeskError("invalid_reason", _("Choose why the ticket is held."))
    now = timezone.now()
    with transaction.atomic():
        ticket = _lock_ticket(casino_id=shift.desk.casino_id, validation_number=validation_number)
        shift, desk = lock_shift(shift=shift, user=user)
        held = HOLD.once(
            operation_key,
            user=user,
            run=lambda: _hold_ticket(
                ticket=ticket, shift=shift, desk=desk, user=user, reason=reason, note=note, at=now, key=operation_key
            ),
        )
    if isinstance(held, HoldCase):
        return held
    raise CashDeskError(*held)


def _hold_ticket(
    *, ticket: Ticket, shift: Shift, desk: Place, user: User, reason: str, note: str, at: dt.datetime, key: str | None
) -> HoldCase | tuple[str, str]:
    """The hold of a ticket the caller locked with its desk, or the refusal (recorded against the ticket)."""
    casino = desk.casino
    refusal = ticket_rules.ticket_cash_refusal(ticket, at)
    if refusal is not None:
        ticket_rules.ticket_refusal_record(
            ticket=ticket, user=user, code=refusal[0], at=at, details={"action": "hold", "desk": desk.code}
        )
        return refusal
    presented_day = timezone.localtime(at, casino.zoneinfo).date()
    case = HoldCase.objects.create(
        ticket=ticket,
        casino=casino,
        shift=shift,
        reason=reason,
        note=note[:255],
        opened_by=user,
        presented_at=at,
        decision_due=presented_day + dt.timedelta(days=casino.hold_decision_days),
        operation_key=key or None,
    )
    with _as_desk_refusal():
        ticket_rules.ticket_move_to_hold(ticket=ticket, user=user, reason=reason, note=note, at=at, case=case.pk)
    return case


def hold_decide(*, case: HoldCase, user: User, pay: bool, note: str = "") -> HoldCase:
    """A supervisor or compliance officer decides: pay (a cashier then pays it) or refuse (voided).

    After the decision day (casino rules §1.7: within 14 days) only a manager decides, giving the reason,
    and the ticket's event records the decision as late.
    """
    now = timezone.now()
    late = now >= case.deadline()
    if late:
        if not user.has_perm("staff.decide_late_hold"):
            raise CashDeskError(
                "late_decision_manager",
                _(
                    "The decision day of case %(case)s has passed: only a manager decides it now, giving the reason; "
                    "the decision is recorded as late."
                )
                % {"case": case.pk},
            )
        if not note.strip():
            raise CashDeskError(
                "late_reason_required", _("The decision day has passed: give the reason the decision comes late.")
            )
    elif not user.has_perm("staff.decide_hold"):
        raise CashDeskError("forbidden", _("Only a shift supervisor or compliance officer decides held tickets."))
    if not pay and not note.strip():
        raise CashDeskError("reason_required", _("Give the reason for refusing payment."))
    with transaction.atomic():
        ticket = Ticket.objects.select_for_update().get(pk=case.ticket_id)
        decided = HoldCase.objects.filter(pk=case.pk, decision=HoldCase.Decision.PENDING).update(
            decision=HoldCase.Decision.PAY if pay else HoldCase.Decision.REFUSE,
            decided_by=user,
            decided_at=now,
            decision_note=note[:255],
        )
        if decided != 1:
            raise CashDeskError("already_decided", _("This case has already been decided."))
        with _as_desk_refusal():
            ticket_rules.ticket_hold_decided(
                ticket=ticket,
                user=user,
                pay=pay,
                note=note,
                at=now,
                case=case.pk,
                late_after=case.decision_due if late else None,
            )
    return HoldCase.objects.get(pk=case.pk)


def holds_mark_overdue(*, now: dt.datetime | None = None) -> int:
    """Mark pending cases whose decision day has passed (casino rules §1.7: 14 days).

    The mark records when the job saw the breach; what the screens show is read from the decision day itself.
    """
    now = now or timezone.now()
    marked = 0
    for case in HoldCase.objects.filter(decision=HoldCase.Decision.PENDING, overdue_since__isnull=True).select_related(
        "casino"
    ):
        if timezone.localtime(now, case.casino.zoneinfo).date() > case.decision_due:
            marked += HoldCase.objects.filter(pk=case.pk, overdue_since__isnull=True).update(overdue_since=now)
    return marked


def ticket_void(*, ticket: Ticket, user: User, reason: str) -> Ticket:
    """A supervisor voids a ticket that must never be paid (issued or never printed)."""
    if not user.has_perm("staff.supervise_desk"):
        raise CashDeskError("forbidden", _("Only a shift supervisor voids tickets."))
    if not reason.strip():
        raise CashDeskError("reason_required", _("Give the reason for voiding."))
    with transaction.atomic(), _as_desk_refusal():
        locked = Ticket.objects.select_for_update().get(pk=ticket.pk)
        return ticket_rules.ticket_move_to_void(ticket=locked, user=user, reason=reason)


def voucher_print(*, casino_id: int, ticket_id: int, user: User) -> Ticket:
    """The original voucher of a ticket sold at the desk: to its seller alone, while that shift is open.

    Afterwards a shift supervisor reprints it as a copy (voucher_reprint). Every print is in the ticket's history.
    """
    sold = CashTransaction.objects.filter(
        casino_id=casino_id,
        kind=TransactionKind.TICKET_SALE,
        ticket_id=ticket_id,
        created_by=user,
        shift__cashier=user,
        shift__closed_at__isnull=True,
    ).exists()
    if not sold:
        raise CashDeskError("not_found", _("No ticket of yours sold in this open shift."))
    with transaction.atomic(), _as_desk_refusal():
        ticket = Ticket.objects.select_for_update().get(pk=ticket_id)
        return ticket_rules.ticket_voucher_printed(ticket=ticket, user=user)


def voucher_reprint(*, casino_id: int, validation_number: str, user: User, reason: str) -> Ticket:
    """A supervisor reprints a desk-sold voucher (a copy), giving the reason; the reprint is in the ticket's history."""
    if not user.has_perm("staff.supervise_desk"):
        raise CashDeskError("forbidden", _("Only a shift supervisor reprints a ticket."))
    if not reason.strip():
        raise CashDeskError("reason_required", _("Give the reason for the reprint."))
    with transaction.atomic(), _as_desk_refusal():
        number = ticket_rules.desk_number(validation_number)
        ticket = ticket_rules.ticket_lock(casino_id=casino_id, validation_number=number)
        return ticket_rules.ticket_voucher_reprint(ticket=ticket, user=user, reason=reason.strip())


def ticket_resolve_stuck(*, ticket: Ticket, user: User, credits_taken: bool, meter_reading: str, reason: str) -> Ticket:
    """Settle a redemption the machine never committed, from its meters.

    credits_taken: the machine's meters show the credits were added (the
    ticket is redeemed into that machine); otherwise the ticket is valid again.
    """
    if not user.has_perm("staff.supervise_desk"):
        raise CashDeskError("forbidden", _("Only a shift supervisor resolves stuck redemptions."))
    if not reason.strip() or not meter_reading.strip():
        raise CashDeskError("reason_required", _("Give the meter reading and the reason."))
    with transaction.atomic(), _as_desk_refusal():
        locked = Ticket.objects.select_for_update().get(pk=ticket.pk)
        holder = locked.holder_machine
        now = timezone.now()
        if credits_taken and holder is not None and holder.is_kiosk and locked.state == TicketState.REDEEM_PENDING:
            # At a kiosk "credits taken" is cash dispensed: it leaves the kiosk's books with the ticket.
            kiosk_payout_settled(ticket=locked, user=user, at=now)
        return ticket_rules.ticket_settle_stuck(
            ticket=locked, user=user, credits_taken=credits_taken, meter_reading=meter_reading, reason=reason, at=now
        )


def ticket_present(*, shift: Shift, user: User, validation_number: str) -> tuple[Ticket, tuple[str, str] | None]:
    """A ticket scanned at the desk: what the cashier sees, and why it may not be paid.

    A presentation that cannot be paid is recorded at once: it is how copies
    and second presentations are found, even if the cashier goes no further.
    """
    now = timezone.now()
    with transaction.atomic():
        ticket = _lock_ticket(casino_id=shift.desk.casino_id, validation_number=validation_number)
        refusal = ticket_rules.ticket_cash_refusal(ticket, now)
        if refusal is not None:
            ticket_rules.ticket_refusal_record(
                ticket=ticket,
                user=user,
                code=refusal[0],
                at=now,
                details={"action": "presented", "desk": shift.desk.code},
            )
    return ticket, refusal


__all__ = [
    "hold_decide",
    "holds_mark_overdue",
    "ticket_hold",
    "ticket_payout",
    "ticket_present",
    "ticket_resolve_stuck",
    "ticket_sell",
    "ticket_void",
]

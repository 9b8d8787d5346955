"""Tickets at the cash desk: payout, sale, hold and its decision; supervisors' void and resolve.

Every transition locks the ticket row first (then the desk), the same lock a
machine's authorize takes: a cashier and a machine racing for one ticket get
exactly one success.
"""

import datetime as dt
from decimal import Decimal
from typing import Any

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from cashdesk.errors import CashDeskError
from cashdesk.models import CashTransaction, HoldCase, Shift, TransactionKind
from cashdesk.services.ledger import cash, lock_shift, post_transaction
from compliance.models import Person
from machines.models import Casino
from tickets.models import Ticket, TicketEventKind, TicketState, TicketType
from tickets.money import CENT, cash_payout, format_money
from tickets.numbers import InvalidValidationNumber, parse_validation_number
from tickets.services import (
    create_ticket_with_fresh_number,
    record_ticket_event,
    ticket_expiry_for,
    ticket_is_past_expiry,
)


def _number(raw: str) -> str:
    try:
        return parse_validation_number(raw)
    except InvalidValidationNumber:
        raise CashDeskError(
            "invalid_number", _("This is not a valid ticket number (18 digits; the check digit is wrong).")
        ) from None


def _lock_ticket(*, casino: Casino, number: str) -> Ticket:
    ticket = (
        Ticket.objects.select_for_update(of=("self",))
        .select_related("issuing_machine", "issuing_desk", "redeemed_by_machine", "redeemed_by_user")
        .filter(casino=casino, validation_number=number)
        .first()
    )
    if ticket is None:
        raise CashDeskError("not_found", _("No such ticket in this casino. Tickets of other casinos are not paid."))
    return ticket


def _where_paid(ticket: Ticket) -> str:
    when = timezone.localtime(ticket.redeemed_at).strftime("%Y-%m-%d %H:%M:%S") if ticket.redeemed_at else "?"
    if ticket.redeemed_by_machine is not None:
        return _("Already paid on %(when)s into machine %(machine)s.") % {
            "when": when,
            "machine": ticket.redeemed_by_machine.asset_number,
        }
    payout = ticket.cash_transactions.filter(kind=TransactionKind.TICKET_PAYOUT).select_related("desk").first()
    if payout is None:
        return _("Already paid on %(when)s at the cash desk.") % {"when": when}
    return _("Already paid on %(when)s at %(desk)s (receipt %(receipt)s).") % {
        "when": when,
        "desk": payout.desk.name,
        "receipt": payout.receipt_number,
    }


def payout_refusal(ticket: Ticket, now: dt.datetime) -> tuple[str, str] | None:
    """Why the cash desk may not pay this ticket now, in plain words; None if it may."""
    state = ticket.state
    if state == TicketState.REDEEMED:
        return "already_redeemed", _where_paid(ticket)
    if state == TicketState.REDEEM_PENDING:
        holder = ticket.holder_machine.asset_number if ticket.holder_machine else "?"
        return "pending_elsewhere", _("Machine %(machine)s is redeeming this ticket right now.") % {"machine": holder}
    if state == TicketState.VOID:
        return "void", _("The ticket is void and is not paid.")
    if state == TicketState.PENDING_PRINT:
        return "not_printed", _("The machine never confirmed printing this ticket; it is not valid.")
    if state == TicketState.ON_HOLD:
        if ticket.hold_cases.filter(decision=HoldCase.Decision.PAY).exists():
            return None
        return "on_hold", _("The ticket is on hold awaiting a decision; it cannot be paid yet.")
    if state == TicketState.EXPIRED or ticket_is_past_expiry(ticket, now):
        expiry = timezone.localtime(ticket.expires_at).strftime("%Y-%m-%d %H:%M")
        return "expired", _("The ticket expired on %(when)s and is not paid.") % {"when": expiry}
    if ticket.ticket_type != TicketType.CASHABLE:
        return "not_cashable", _("Promotional tickets are played at machines, not paid in cash.")
    return None


def ticket_payout(
    *,
    shift: Shift,
    user: User,
    validation_number: str,
    person: Person | None = None,
    printed_amount: Decimal | None = None,
) -> CashTransaction:
    """Pay a ticket in cash, rounded up to the cent (casino rules §1.7).

    A refusal is recorded against the ticket before it is raised: a second
    presentation of a paid ticket is how copies are found. If the printed
    amount differs from the system's, the system's amount is paid and the
    mismatch recorded as an exception.
    """
    number = _number(validation_number)
    now = timezone.now()
    with transaction.atomic():
        ticket = _lock_ticket(casino=shift.desk.casino, number=number)
        shift, desk = lock_shift(shift=shift, user=user)
        refusal = payout_refusal(ticket, now)
        if refusal is None:
            from_state = ticket.state
            payout = cash_payout(ticket.amount)
            tx = post_transaction(
                shift=shift,
                desk=desk,
                kind=TransactionKind.TICKET_PAYOUT,
                amount=payout,
                lines=[cash(-payout)],
                user=user,
                person=person,
                ticket=ticket,
                at=now,
            )
            ticket.state = TicketState.REDEEMED
            ticket.redeemed_at = now
            ticket.redeemed_by_user = user
            ticket.save(update_fields=["state", "redeemed_at", "redeemed_by_user"])
            details: dict[str, Any] = {"receipt": tx.receipt_number, "payout": str(payout), "desk": desk.code}
            record_ticket_event(
                ticket, TicketEventKind.REDEEMED, at=now, from_state=from_state, user=user, details=details
            )
            if printed_amount is not None and printed_amount != ticket.amount:
                record_ticket_event(
                    ticket,
                    TicketEventKind.AMOUNT_MISMATCH,
                    at=now,
                    from_state=TicketState.REDEEMED,
                    user=user,
                    reason="printed amount differs",
                    details={"printed": str(printed_amount), "system": str(ticket.amount), "paid": str(payout)},
                )
            return tx
        code, message = refusal
        record_ticket_event(
            ticket,
            TicketEventKind.REFUSED,
            at=now,
            from_state=ticket.state,
            user=user,
            reason=code,
            details={"action": "cash_payout", "desk": desk.code},
        )
    raise CashDeskError(code, message)


def ticket_sell(*, shift: Shift, user: User, amount: Decimal, person: Person | None = None) -> CashTransaction:
    """Cash in, a new ticket out: issued by the desk, valid at once, printed as a voucher."""
    if amount <= 0 or amount != amount.quantize(CENT):
        raise CashDeskError("invalid_amount", _("Enter the amount in euros and cents, more than zero."))
    now = timezone.now()
    with transaction.atomic():
        shift, desk = lock_shift(shift=shift, user=user)
        casino = desk.casino
        if amount > casino.max_ticket_amount:
            raise CashDeskError(
                "over_limit",
                _("A ticket may hold at most %(limit)s.") % {"limit": format_money(casino.max_ticket_amount)},
            )
        desk.last_ticket_sequence += 1
        type(desk).objects.filter(pk=desk.pk).update(last_ticket_sequence=desk.last_ticket_sequence)
        ticket = create_ticket_with_fresh_number(
            casino=casino,
            issuing_desk=desk,
            sequence=desk.last_ticket_sequence,
            amount=amount,
            ticket_type=TicketType.CASHABLE,
            state=TicketState.ISSUED,
            issued_at=now,
            printed_at=now,
            expires_at=ticket_expiry_for(casino=casino, issued_at=now),
        )
        tx = post_transaction(
            shift=shift,
            desk=desk,
            kind=TransactionKind.TICKET_SALE,
            amount=amount,
            lines=[cash(amount)],
            user=user,
            person=person,
            ticket=ticket,
            at=now,
        )
        record_ticket_event(ticket, TicketEventKind.SOLD, at=now, user=user, details={"receipt": tx.receipt_number})
    return tx


def ticket_hold(*, shift: Shift, user: User, validation_number: str, reason: str, note: str = "") -> HoldCase:
    """Refuse a suspicious ticket: it goes on hold and a case opens, decision due in 14 days."""
    if reason not in HoldCase.Reason.values:
        raise CashDeskError("invalid_reason", _("Choose why the ticket is held."))
    number = _number(validation_number)
    now = timezone.now()
    with transaction.atomic():
        ticket = _lock_ticket(casino=shift.desk.casino, number=number)
        shift, desk = lock_shift(shift=shift, user=user)
        if ticket.state != TicketState.ISSUED:
            raise CashDeskError(
                "invalid_state",
                _("Only a valid ticket can be put on hold; this one is %(state)s.")
                % {"state": ticket.get_state_display()},
            )
        casino = desk.casino
        ticket.state = TicketState.ON_HOLD
        ticket.save(update_fields=["state"])
        presented_day = timezone.localtime(now, casino.zoneinfo).date()
        case = HoldCase.objects.create(
            ticket=ticket,
            casino=casino,
            shift=shift,
            reason=reason,
            note=note[:255],
            opened_by=user,
            presented_at=now,
            decision_due=presented_day + dt.timedelta(days=casino.hold_decision_days),
        )
        record_ticket_event(
            ticket,
            TicketEventKind.HELD,
            at=now,
            from_state=TicketState.ISSUED,
            user=user,
            reason=reason,
            details={"case": case.pk, "note": note[:255]},
        )
    return case


def hold_decide(*, case: HoldCase, user: User, pay: bool, note: str = "") -> HoldCase:
    """A supervisor or compliance officer decides: pay (a cashier then pays it) or refuse (voided)."""
    if not user.has_perm("cashdesk.decide_hold"):
        raise CashDeskError("forbidden", _("Only a shift supervisor or compliance officer decides held tickets."))
    if not pay and not note.strip():
        raise CashDeskError("reason_required", _("Give the reason for refusing payment."))
    now = timezone.now()
    with transaction.atomic():
        ticket = Ticket.objects.select_for_update().get(pk=case.ticket_id)
        case = HoldCase.objects.select_for_update().get(pk=case.pk)
        if case.decision != HoldCase.Decision.PENDING:
            raise CashDeskError("already_decided", _("This case has already been decided."))
        case.decision = HoldCase.Decision.PAY if pay else HoldCase.Decision.REFUSE
        case.decided_by = user
        case.decided_at = now
        case.decision_note = note[:255]
        case.save(update_fields=["decision", "decided_by", "decided_at", "decision_note"])
        if pay:
            record_ticket_event(
                ticket, TicketEventKind.CLEARED_FOR_PAYMENT, at=now, from_state=ticket.state, user=user, reason=note
            )
        else:
            from_state = ticket.state
            ticket.state = TicketState.VOID
            ticket.voided_at = now
            ticket.save(update_fields=["state", "voided_at"])
            record_ticket_event(
                ticket,
                TicketEventKind.VOIDED,
                at=now,
                from_state=from_state,
                user=user,
                reason=note,
                details={"case": case.pk},
            )
    return case


def holds_mark_overdue(*, now: dt.datetime | None = None) -> int:
    """Mark pending cases whose decision day has passed (casino rules §1.7: 14 days)."""
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
    if not user.has_perm("cashdesk.supervise_desk"):
        raise CashDeskError("forbidden", _("Only a shift supervisor voids tickets."))
    if not reason.strip():
        raise CashDeskError("reason_required", _("Give the reason for voiding."))
    now = timezone.now()
    with transaction.atomic():
        ticket = Ticket.objects.select_for_update().get(pk=ticket.pk)
        if ticket.state not in (TicketState.ISSUED, TicketState.PENDING_PRINT):
            raise CashDeskError(
                "invalid_state",
                _("This ticket is %(state)s; it cannot be voided here.") % {"state": ticket.get_state_display()},
            )
        from_state = ticket.state
        ticket.state = TicketState.VOID
        ticket.voided_at = now
        ticket.save(update_fields=["state", "voided_at"])
        record_ticket_event(ticket, TicketEventKind.VOIDED, at=now, from_state=from_state, user=user, reason=reason)
    return ticket


def ticket_resolve_stuck(*, ticket: Ticket, user: User, credits_taken: bool, meter_reading: str, reason: str) -> Ticket:
    """Settle a redemption the machine never committed, from its meters.

    credits_taken: the machine's meters show the credits were added (the
    ticket is redeemed into that machine); otherwise the ticket is valid again.
    """
    if not user.has_perm("cashdesk.supervise_desk"):
        raise CashDeskError("forbidden", _("Only a shift supervisor resolves stuck redemptions."))
    if not reason.strip() or not meter_reading.strip():
        raise CashDeskError("reason_required", _("Give the meter reading and the reason."))
    now = timezone.now()
    with transaction.atomic():
        ticket = Ticket.objects.select_for_update().get(pk=ticket.pk)
        if ticket.state != TicketState.REDEEM_PENDING:
            raise CashDeskError(
                "invalid_state",
                _("The ticket is %(state)s, not held by a machine.") % {"state": ticket.get_state_display()},
            )
        holder = ticket.holder_machine
        ticket.holder_machine = None
        ticket.authorized_at = None
        ticket.hold_expires_at = None
        if credits_taken:
            ticket.state = TicketState.REDEEMED
            ticket.redeemed_at = now
            ticket.redeemed_by_machine = holder
        else:
            ticket.state = TicketState.ISSUED
        ticket.save()
        record_ticket_event(
            ticket,
            TicketEventKind.RESOLVED,
            at=now,
            from_state=TicketState.REDEEM_PENDING,
            user=user,
            reason=reason,
            details={"holder_machine": holder.pk if holder else None, "meter_reading": meter_reading[:200]},
        )
    return ticket


def ticket_present(*, shift: Shift, user: User, validation_number: str) -> tuple[Ticket, tuple[str, str] | None]:
    """A ticket scanned at the desk: what the cashier sees, and why it may not be paid.

    A presentation that cannot be paid is recorded at once: it is how copies
    and second presentations are found, even if the cashier goes no further.
    """
    number = _number(validation_number)
    now = timezone.now()
    with transaction.atomic():
        ticket = _lock_ticket(casino=shift.desk.casino, number=number)
        refusal = payout_refusal(ticket, now)
        if refusal is not None:
            record_ticket_event(
                ticket,
                TicketEventKind.REFUSED,
                at=now,
                from_state=ticket.state,
                user=user,
                reason=refusal[0],
                details={"action": "presented", "desk": shift.desk.code},
            )
    return ticket, refusal

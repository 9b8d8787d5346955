"""The ticket's transitions at the cash desk: payout, sale, hold, hold decision, void, stuck resolution.

The desk (cashdesk) calls these and never sets a ticket's state itself. One
function says whether a ticket may be paid in cash now; the payout, the hold,
the hold's decision and the supervisor's screens all ask it. Every transition
is a compare-and-set on the state it read under the ticket's row lock, and
its row count is checked.
"""

import datetime as dt
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.utils import timezone
from django.utils.translation import gettext as _

from casino_office.money import cash_payout, format_money
from machines.models import Place
from tickets.exceptions import TicketNotFound, TicketRefused
from tickets.models import FINAL_STATES, Ticket, TicketEvent, TicketEventKind, TicketState, TicketType
from tickets.numbers import InvalidValidationNumber, parse_validation_number
from tickets.offline import reservation_outstanding
from tickets.reconciliation import KioskDispensed, kiosk_dispensed_since_authorize
from tickets.services import create_ticket_with_fresh_number, record_ticket_event, ticket_expiry_for


def desk_number(raw: str) -> str:
    try:
        return parse_validation_number(raw)
    except InvalidValidationNumber:
        raise TicketRefused(
            "invalid_number", _("This is not a valid ticket number (18 digits; the check digit is wrong).")
        ) from None


def ticket_lock(*, casino_id: int, validation_number: str) -> Ticket:
    """The casino's ticket, row-locked without joins (after a wait PostgreSQL re-reads the locked row only)."""
    ticket = Ticket.objects.select_for_update().filter(casino_id=casino_id, validation_number=validation_number).first()
    if ticket is None:
        reservation = reservation_outstanding(casino_id=casino_id, validation_number=validation_number)
        if reservation is not None:
            # Not a ticket yet: the machine printed it offline (or has yet to) and has not reported it.
            raise TicketRefused(
                "not_reported",
                _(
                    "This number was reserved by machine %(machine)s for a ticket printed while it was offline, "
                    "and the machine has not reported that ticket yet. Do not pay it; keep the ticket and ask "
                    "a supervisor to check the machine."
                )
                % {"machine": reservation.machine.asset_number},
            )
        raise TicketNotFound("not_found", _("No such ticket in this casino. Tickets of other casinos are not paid."))
    return ticket


def _where_paid(ticket: Ticket) -> str:
    when = timezone.localtime(ticket.redeemed_at).strftime("%Y-%m-%d %H:%M:%S") if ticket.redeemed_at else "?"
    if ticket.redeemed_by_machine_id is not None:
        machine = ticket.redeemed_by_machine
        if machine is not None and machine.is_kiosk:
            return _("Already paid in cash on %(when)s at kiosk %(machine)s.") % {
                "when": when,
                "machine": machine.asset_number,
            }
        return _("Already paid on %(when)s into machine %(machine)s.") % {
            "when": when,
            "machine": machine.asset_number if machine else "?",
        }
    event = TicketEvent.objects.filter(ticket=ticket, kind=TicketEventKind.REDEEMED).first()
    details = event.details if event is not None else {}
    if not details.get("receipt"):
        return _("Already paid on %(when)s at the cash desk.") % {"when": when}
    return _("Already paid on %(when)s at %(desk)s (receipt %(receipt)s).") % {
        "when": when,
        "desk": details.get("desk_name") or details.get("desk", "?"),
        "receipt": details["receipt"],
    }


def ticket_cash_refusal(ticket: Ticket, now: dt.datetime) -> tuple[str, str] | None:
    """Why the cash desk may not pay this ticket now, in plain words; None if it may.

    The one rule for paying a ticket in cash: the payout, the hold, the hold's
    decision and the supervisor's screens all ask it.
    """
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
    # Promotional credits are played, never paid in cash: on every path, a hold's included.
    if ticket.ticket_type != TicketType.CASHABLE:
        return "not_cashable", _("Promotional tickets are played at machines, not paid in cash.")
    if state == TicketState.ON_HOLD:
        # Presented in time and cleared: paid even after the expiry date (casino rules §1.7).
        if ticket.hold_cleared_at is not None:
            return None
        return "on_hold", _("The ticket is on hold awaiting a decision; it cannot be paid yet.")
    if state == TicketState.EXPIRED or now > ticket.expires_at:
        expiry = timezone.localtime(ticket.expires_at).strftime("%Y-%m-%d %H:%M")
        return "expired", _("The ticket expired on %(when)s and is not paid.") % {"when": expiry}
    return None


def _move(ticket: Ticket, *, to: str, **fields: Any) -> None:
    """Compare-and-set from the state read under the lock; exactly one row must change."""
    if ticket.state in FINAL_STATES:
        raise TicketRefused(
            "invalid_state",
            _("The ticket is %(state)s; it never changes again.") % {"state": ticket.get_state_display()},
        )
    changed = Ticket.objects.filter(pk=ticket.pk, state=ticket.state).update(state=to, **fields)
    if changed != 1:
        raise TicketRefused("invalid_state", _("The ticket changed while this was being done; scan it again."))
    ticket.state = to
    for name, value in fields.items():
        setattr(ticket, name, value)


def ticket_refusal_record(*, ticket: Ticket, user: User, code: str, at: dt.datetime, details: dict[str, Any]) -> None:
    """A refused presentation is recorded: second presentations are how copies are found."""
    record_ticket_event(
        ticket, TicketEventKind.REFUSED, at=at, from_state=ticket.state, user=user, reason=code, details=details
    )


def ticket_redeem_in_cash(
    *, ticket: Ticket, user: User, at: dt.datetime, details: dict[str, Any], printed_amount: Decimal | None = None
) -> None:
    """The desk paid the ticket: redeemed, with its event (and the mismatch, if the paper said otherwise)."""
    refusal = ticket_cash_refusal(ticket, at)
    if refusal is not None:
        raise TicketRefused(refusal[0], refusal[1], ticket)
    from_state = ticket.state
    _move(ticket, to=TicketState.REDEEMED, redeemed_at=at, redeemed_by_user=user)
    record_ticket_event(ticket, TicketEventKind.REDEEMED, at=at, from_state=from_state, user=user, details=details)
    if printed_amount is not None and printed_amount != ticket.amount:
        record_ticket_event(
            ticket,
            TicketEventKind.AMOUNT_MISMATCH,
            at=at,
            from_state=TicketState.REDEEMED,
            user=user,
            reason="printed amount differs",
            details={"printed": str(printed_amount), "system": str(ticket.amount), "paid": details.get("payout")},
        )


def ticket_sell_at_desk(*, issuing_desk: Place, sequence: int, amount: Decimal, at: dt.datetime) -> Ticket:
    """A new ticket sold for cash: issued by the desk and valid at once, printed as a voucher."""
    casino = issuing_desk.casino
    if amount > casino.max_ticket_amount:
        raise TicketRefused(
            "over_limit", _("A ticket may hold at most %(limit)s.") % {"limit": format_money(casino.max_ticket_amount)}
        )
    ticket = create_ticket_with_fresh_number(
        casino=casino,
        issuing_desk=issuing_desk,
        sequence=sequence,
        amount=amount,
        ticket_type=TicketType.CASHABLE,
        state=TicketState.ISSUED,
        issued_at=at,
        printed_at=at,
        expires_at=ticket_expiry_for(casino=casino, issued_at=at),
    )
    return ticket


def ticket_sold_event(*, ticket: Ticket, user: User, at: dt.datetime, receipt: str) -> None:
    record_ticket_event(ticket, TicketEventKind.SOLD, at=at, user=user, details={"receipt": receipt})


def ticket_move_to_hold(*, ticket: Ticket, user: User, reason: str, note: str, at: dt.datetime, case: int) -> None:
    """Put a presented ticket on hold. Only a ticket that may be paid now (or looks payable but is suspected)."""
    refusal = ticket_cash_refusal(ticket, at)
    if refusal is not None:
        raise TicketRefused(refusal[0], refusal[1], ticket)
    from_state = ticket.state
    # A new hold starts a new case: an earlier decision to pay no longer clears the ticket.
    _move(ticket, to=TicketState.ON_HOLD, hold_cleared_at=None)
    record_ticket_event(
        ticket,
        TicketEventKind.HELD,
        at=at,
        from_state=from_state,
        user=user,
        reason=reason,
        details={"case": case, "note": note[:255]},
    )


def ticket_hold_decided(
    *,
    ticket: Ticket,
    user: User,
    pay: bool,
    note: str,
    at: dt.datetime,
    case: int,
    late_after: dt.date | None = None,
) -> None:
    """The decision on a held ticket: cleared for payment at the desk, or void.

    `late_after`: the decision day it came after (casino rules §1.7), recorded with who, when and the reason.
    """
    if ticket.state != TicketState.ON_HOLD:
        raise TicketRefused("invalid_state", _("The ticket is no longer on hold."), ticket)
    details: dict[str, Any] = {"case": case}
    if late_after is not None:
        details.update(late=True, decision_due=late_after.isoformat())
    if pay:
        if ticket.ticket_type != TicketType.CASHABLE:
            raise TicketRefused("not_cashable", _("Promotional tickets are played at machines, not paid in cash."))
        if (
            Ticket.objects.filter(pk=ticket.pk, state=TicketState.ON_HOLD, hold_cleared_at__isnull=True).update(
                hold_cleared_at=at
            )
            != 1
        ):
            raise TicketRefused("invalid_state", _("The ticket changed while this was being done; scan it again."))
        ticket.hold_cleared_at = at
        record_ticket_event(
            ticket,
            TicketEventKind.CLEARED_FOR_PAYMENT,
            at=at,
            from_state=ticket.state,
            user=user,
            reason=note,
            details=details,
        )
        return
    _move(ticket, to=TicketState.VOID, voided_at=at)
    record_ticket_event(
        ticket,
        TicketEventKind.VOIDED,
        at=at,
        from_state=TicketState.ON_HOLD,
        user=user,
        reason=note,
        details=details,
    )


def ticket_move_to_void(*, ticket: Ticket, user: User, reason: str, at: dt.datetime | None = None) -> Ticket:
    """Void a ticket that must never be paid (issued or never printed): a supervisor's act, or a sale reversed."""
    at = at or timezone.now()
    if ticket.state not in (TicketState.ISSUED, TicketState.PENDING_PRINT):
        raise TicketRefused(
            "invalid_state",
            _("This ticket is %(state)s; it cannot be voided here.") % {"state": ticket.get_state_display()},
            ticket,
        )
    from_state = ticket.state
    _move(ticket, to=TicketState.VOID, voided_at=at)
    record_ticket_event(ticket, TicketEventKind.VOIDED, at=at, from_state=from_state, user=user, reason=reason)
    return ticket


def ticket_voucher_printed(*, ticket: Ticket, user: User, at: dt.datetime | None = None) -> Ticket:
    """The seller prints a desk-sold voucher (the original): only while the ticket is valid; every print recorded."""
    at = at or timezone.now()
    if ticket.issuing_desk_id is None or ticket.state != TicketState.ISSUED:
        raise TicketRefused("invalid_state", _("This ticket is not valid: its voucher is not printed."), ticket)
    record_ticket_event(ticket, TicketEventKind.VOUCHER_PRINTED, at=at, user=user, details={"copy": False})
    return ticket


def ticket_voucher_reprint(*, ticket: Ticket, user: User, reason: str, at: dt.datetime | None = None) -> Ticket:
    """A supervisor reprints a desk-sold voucher as a copy: only a valid one, and the copy is recorded."""
    at = at or timezone.now()
    if ticket.issuing_desk_id is None:
        raise TicketRefused("not_desk_sold", _("Only a ticket sold at a cash desk has a voucher to reprint."), ticket)
    if ticket.state != TicketState.ISSUED:
        raise TicketRefused(
            "invalid_state",
            _("This ticket is %(state)s; only a valid ticket is reprinted.") % {"state": ticket.get_state_display()},
            ticket,
        )
    record_ticket_event(ticket, TicketEventKind.REPRINTED, at=at, user=user, reason=reason)
    return ticket


def stuck_resolvable_from(ticket: Ticket) -> dt.datetime | None:
    """When a supervisor may resolve the ticket's redemption: its hold's end plus the grace a commit retry fits in."""
    if ticket.hold_expires_at is None:
        return None
    return ticket.hold_expires_at + dt.timedelta(seconds=settings.STUCK_RESOLUTION_GRACE)


def _not_taken_refusal(ticket: Ticket, dispensed: KioskDispensed | None) -> str:
    """Why a kiosk's held ticket may not be given back as "not taken": its meter is what says no cash went out."""
    if dispensed is None:
        return _(
            "Kiosk %(machine)s has sent no meter reading since its hold on this ticket ran out: its cash-dispensed "
            "meter since the authorization is needed before the ticket is made valid again. Ask for a meter reading."
        ) % {"machine": ticket.holder_machine.asset_number if ticket.holder_machine else "?"}
    if dispensed.unexplained >= cash_payout(ticket.amount):
        return _(
            "The kiosk's meter shows %(amount)s dispensed since the authorization that no other ticket explains: "
            "the cash for this ticket went out. Resolve it as paid."
        ) % {"amount": format_money(dispensed.unexplained)}
    return ""


def ticket_settle_stuck(
    *, ticket: Ticket, user: User, credits_taken: bool, meter_reading: str, reason: str, at: dt.datetime | None = None
) -> Ticket:
    """Settle a redemption the machine never committed, from its meters: redeemed into it, or valid again.

    Only once the hold and the grace have run out: until then the holder's commit (or its retry) is still
    coming, and it is accepted whenever it comes. At a kiosk, "not taken" needs its dispensed-cash meter.
    """
    at = at or timezone.now()
    if ticket.state != TicketState.REDEEM_PENDING:
        raise TicketRefused(
            "invalid_state",
            _("The ticket is %(state)s, not held by a machine.") % {"state": ticket.get_state_display()},
            ticket,
        )
    resolvable_from = stuck_resolvable_from(ticket)
    if resolvable_from is not None and at < resolvable_from:
        raise TicketRefused(
            "hold_running",
            _(
                "The machine's hold on this ticket, and the time its commit may still take, run until %(when)s: "
                "it is resolved only after that."
            )
            % {"when": timezone.localtime(resolvable_from).strftime("%Y-%m-%d %H:%M:%S")},
            ticket,
        )
    holder = ticket.holder_machine
    dispensed = kiosk_dispensed_since_authorize(ticket)
    if not credits_taken and holder is not None and holder.is_kiosk:
        refusal = _not_taken_refusal(ticket, dispensed)
        if refusal:
            raise TicketRefused("meter_required", refusal, ticket)
    holder_id = ticket.holder_machine_id
    release: dict[str, Any] = {"holder_machine": None, "authorized_at": None, "hold_expires_at": None}
    if credits_taken:
        _move(ticket, to=TicketState.REDEEMED, redeemed_at=at, redeemed_by_machine_id=holder_id, **release)
    else:
        _move(ticket, to=TicketState.ISSUED, **release)
    record_ticket_event(
        ticket,
        TicketEventKind.RESOLVED,
        at=at,
        from_state=TicketState.REDEEM_PENDING,
        user=user,
        reason=reason,
        details={
            "holder_machine": holder_id,
            "meter_reading": meter_reading[:200],
            **(dispensed.as_json() if dispensed is not None else {}),
        },
    )
    return ticket


def tickets_collected(*, tickets: list[Ticket], user: User, box: str, at: dt.datetime | None = None) -> None:
    """Redeemed tickets taken out of a machine's drop box at an approved count (issue 25): each gets its one
    `collected` event (the database refuses a second) and stays redeemed. Lock them in id order: two counts of
    boxes holding the same ticket take turns."""
    at = at or timezone.now()
    for ticket in Ticket.objects.select_for_update().filter(pk__in=[t.pk for t in tickets]).order_by("pk"):
        if ticket.state != TicketState.REDEEMED:
            raise TicketRefused("invalid_state", _("Only a redeemed ticket is collected from a drop box."), ticket)
        record_ticket_event(
            ticket, TicketEventKind.COLLECTED, at=at, from_state=ticket.state, user=user, details={"box": box}
        )

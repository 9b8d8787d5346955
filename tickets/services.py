"""Every change of a ticket's state happens here, with its event, in one transaction.

Concurrency: a transition locks the ticket row (SELECT ... FOR UPDATE) and
re-reads its state under the lock, so two machines (or a machine and a
cashier) racing for one ticket get exactly one success on PostgreSQL.

The machine API's statements here go through casino_office.rawsql (plain SQL,
prepared on PostgreSQL; issue 15); the rules stay in this module.
"""

import datetime as dt
import time
from collections.abc import Sequence
from decimal import Decimal
from functools import partial
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.db import connection, transaction
from django.db.models import Q
from django.utils import timezone

from casino_office import rawsql
from casino_office.money import MILL, cash_payout, format_amount
from machines.chains import chain_and_bulk_create, chain_head_update, chain_records, head_attach, head_beside, head_take
from machines.models import Casino, Machine
from tickets import selectors
from tickets.exceptions import TicketNotFound, TicketRefused
from tickets.kiosks import kiosk_cash, kiosk_issue_refusal, kiosk_payout_refusal
from tickets.models import (
    LookupFailure,
    ReservedNumber,
    Ticket,
    TicketEvent,
    TicketEventKind,
    TicketState,
    TicketType,
)
from tickets.numbers import generate_validation_number

_NUMBER_ATTEMPTS = 8

# Why a ticket in a given state cannot be authorized (machine-api.md, authorize refusals).
_AUTHORIZE_REFUSALS = {
    TicketState.REDEEMED: ("already_redeemed", "The ticket has already been redeemed."),
    TicketState.VOID: ("void", "The ticket is void."),
    TicketState.EXPIRED: ("expired", "The ticket has expired."),
    TicketState.PENDING_PRINT: ("not_printed", "The ticket's print has not been confirmed."),
    TicketState.ON_HOLD: ("on_hold", "The ticket is on hold at the cash desk."),
}


def ticket_expiry_for(*, casino: Casino, issued_at: dt.datetime) -> dt.datetime:
    """The end (23:59:59 local) of the last valid day; this is what the ticket prints."""
    tz = casino.zoneinfo
    last_day = issued_at.astimezone(tz).date() + dt.timedelta(days=casino.ticket_validity_days)
    return dt.datetime.combine(last_day, dt.time(23, 59, 59), tzinfo=tz)


def ticket_is_past_expiry(ticket: Ticket, now: dt.datetime) -> bool:
    return now > ticket.expires_at


def record_ticket_event(
    ticket: Ticket,
    kind: str,
    *,
    at: dt.datetime,
    from_state: str = "",
    machine: Machine | None = None,
    user: User | None = None,
    request_id: str = "",
    reason: str = "",
    details: dict[str, Any] | None = None,
    changed: Sequence[str] = (),
) -> TicketEvent:
    """Append the ticket's history; call inside the transaction that made the change.

    `changed` names the ticket's fields this change set and has not saved yet: they are written in the
    same statement as the event.
    """
    event = TicketEvent(
        ticket=ticket,
        kind=kind,
        from_state=from_state,
        to_state=ticket.state,
        machine=machine,
        user=user,
        request_id=request_id,
        reason=reason[:255],
        details=details or {},
        created_at=at,
    )
    chain_records([event], casino_id=ticket.casino_id, head=head_take(ticket))
    head = chain_head_update(event)
    if changed:
        rawsql.update_and_insert(ticket, changed, event, also=head)
    else:
        rawsql.insert(event, also=head)
    return event


def _lock_machine_ticket(*, machine: Machine, validation_number: str) -> Ticket | None:
    """The ticket of the machine's casino, row-locked; a ticket of another casino reads as not found (None).

    With it, in the same statement, its casino's ticket_events head, for its event (machines.chains.head_beside);
    not for a kiosk, whose payout and sale post their cash transaction before the event (the chains' lock order).
    """
    where, params = 't."casino_id" = %s AND t."validation_number" = %s', [machine.casino_id, validation_number]
    if machine.is_kiosk:
        return rawsql.select_one(Ticket, where, params, lock=True)
    ticket, head = rawsql.select_one_locked_beside(Ticket, where, params, head_beside(TicketEvent.journal))
    if ticket is not None:
        head_attach(ticket, head)
    return ticket


# Transitions run inside the API's request transaction; they need no savepoint
# of their own (a failure inside rolls the request back whole), and they raise
# their refusals only after their block, so the refusal's event is kept.
_no_savepoint = partial(transaction.atomic, savepoint=False)
_NOT_FOUND = "No such ticket in this casino."


def _refuse(
    ticket: Ticket, *, code: str, detail: str, machine: Machine, request_id: str, at: dt.datetime, action: str
) -> TicketRefused:
    """Record a refusal against the ticket (second presentations are how copies are found)."""
    record_ticket_event(
        ticket,
        TicketEventKind.REFUSED,
        at=at,
        from_state=ticket.state,
        machine=machine,
        request_id=request_id,
        reason=code,
        details={"action": action},
    )
    return TicketRefused(code, detail, ticket)


def lookup_failure_record(*, machine: Machine, presented_number: str, code: str) -> None:
    """Count a failed lookup; at the casino's limit, block the machine's numbered requests until the window frees."""
    now = timezone.now()
    LookupFailure.objects.create(machine=machine, presented_number=presented_number[:64], code=code, created_at=now)
    until = selectors.machine_lookups_blocked_until(machine=machine, now=now)
    if until is not None:
        Machine.objects.filter(pk=machine.pk).update(lookups_blocked_until=until)
        machine.lookups_blocked_until = until


def ticket_amount_in_credits(*, machine: Machine, amount: Decimal) -> None:
    """A machine's ticket is a whole number of its credits (machine-api.md, addition).

    Casino rules §1.7: the amount printed must match the credits the machine counted; 2.005 EUR is no
    number of 0.01 EUR credits. Handpays are not tickets and keep their own rule (cashdesk.services.handpays).
    """
    credit = machine.credit_value
    if amount % credit != 0:
        raise TicketRefused(
            "amount_not_in_credits",
            f"The amount must be a whole number of this machine's {format_amount(credit)} EUR credits.",
        )


def ticket_issue(*, machine: Machine, amount: Decimal, ticket_type: str, request_id: str) -> Ticket:
    """Cashout step 1: reserve a validation number for a ticket the machine is about to print."""
    casino = machine.casino
    if amount <= 0 or amount != amount.quantize(MILL):
        raise TicketRefused("invalid_amount", "The amount must be greater than zero with at most three decimals.")
    ticket_amount_in_credits(machine=machine, amount=amount)
    if amount > casino.max_ticket_amount:
        raise TicketRefused(
            "over_limit", f"The amount is above the casino's ticket maximum of {casino.max_ticket_amount} EUR."
        )
    if ticket_type not in TicketType.values:
        raise TicketRefused("invalid_request", "ticket_type must be cashable or promo.")
    if machine.is_kiosk and (refused := kiosk_issue_refusal(amount=amount, ticket_type=ticket_type)) is not None:
        raise refused
    now = timezone.now()
    with _no_savepoint():
        # The machine row lock serialises this machine's issues, so its
        # sequence numbers have no gaps and no duplicates.
        sequence = machine_next_sequence(machine_id=machine.pk)
        ticket = create_ticket_with_fresh_number(
            head=True,
            casino=casino,
            issuing_machine=machine,
            sequence=sequence,
            amount=amount,
            ticket_type=ticket_type,
            state=TicketState.PENDING_PRINT,
            issued_at=now,
            expires_at=ticket_expiry_for(casino=casino, issued_at=now),
        )
        record_ticket_event(ticket, TicketEventKind.ISSUED, at=now, machine=machine, request_id=request_id)
    return ticket


# The sequence columns' range (PostgreSQL integer). Past it a machine's ticket sequence wraps back to 1, as SAS and
# G2S ticket sequence numbers wrap (machine-api.md, addition): a machine that reports an offline ticket at the
# maximum must not have every later issue fail.
MAX_TICKET_SEQUENCE = 2_147_483_647
# One statement on the hot path: the counter moves on (its UPDATE takes the machine's row lock) and says whether one
# of the machine's tickets has that number already, which only happens after a wrap or an offline ticket's own.
_NEXT_SEQUENCE_SQL = (
    'UPDATE "machines_machine" SET "last_ticket_sequence" = CASE WHEN "last_ticket_sequence" >= %s THEN 1 '
    'ELSE "last_ticket_sequence" + 1 END WHERE "id" = %s RETURNING "last_ticket_sequence", EXISTS (SELECT 1 FROM '
    '"tickets_ticket" t WHERE t."issuing_machine_id" = "machines_machine"."id" '
    'AND t."sequence" = "machines_machine"."last_ticket_sequence")'
)
# The lowest sequence from a start on that none of the machine's tickets has: the start, or one past a taken one.
_FIRST_FREE_SEQUENCE_SQL = """
SELECT MIN(c.s) FROM (
    SELECT %s AS s
    UNION ALL
    SELECT t."sequence" + 1 FROM "tickets_ticket" t
    WHERE t."issuing_machine_id" = %s AND t."sequence" >= %s AND t."sequence" < %s
) c
WHERE NOT EXISTS (SELECT 1 FROM "tickets_ticket" u WHERE u."issuing_machine_id" = %s AND u."sequence" = c.s)
"""


def machine_next_sequence(*, machine_id: int) -> int:
    """The machine's next ticket sequence, under its row lock: wrapped after the maximum, never one it has."""
    with rawsql.cursor() as cursor:
        cursor.execute(_NEXT_SEQUENCE_SQL, [MAX_TICKET_SEQUENCE, machine_id])
        sequence, taken = cursor.fetchone()
    if not taken:
        return int(sequence)
    for start in (sequence, 1):
        with connection.cursor() as cursor:
            cursor.execute(_FIRST_FREE_SEQUENCE_SQL, [start, machine_id, start, MAX_TICKET_SEQUENCE, machine_id])
            (free,) = cursor.fetchone()
        if free is not None and free <= MAX_TICKET_SEQUENCE:
            Machine.objects.filter(pk=machine_id).update(last_ticket_sequence=free)
            return int(free)
    raise RuntimeError("every ticket sequence of this machine is taken")  # pragma: no cover - 2^31 tickets


# The first key of the transaction-scoped advisory locks on validation numbers (the second is the number's hash).
_NUMBER_LOCK_CLASS = 13_001


def claim_number(number: str) -> None:
    """Lock a freshly drawn number for this transaction before looking for it among tickets and reservations.

    Tickets and reserved numbers live in two tables, so no unique index spans both; whoever draws a number
    for either holds this lock while it checks the other table and inserts, so one number never becomes
    both a ticket and another machine's reservation. (SQLite, the demo, writes one transaction at a time.)
    """
    if connection.vendor == "postgresql":
        with rawsql.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s, hashtext(%s))", [_NUMBER_LOCK_CLASS, number])


def create_ticket_with_fresh_number(*, head: bool = False, **fields: Any) -> Ticket:
    """A new ticket with a number no ticket or reservation has. With `head`, its casino's ticket_events head is
    locked and read in the insert's statement, for the ticket's first event (machines.chains.head_beside): only
    where no cash transaction is posted before that event (a desk's sale posts one)."""
    for _ in range(_NUMBER_ATTEMPTS):
        number = generate_validation_number()
        claim_number(number)
        with rawsql.cursor() as cursor:
            cursor.execute('SELECT 1 FROM "tickets_reservednumber" WHERE "validation_number" = %s', [number])
            if cursor.fetchone() is not None:
                continue  # reserved for a machine's offline tickets: draw again
        ticket = Ticket(validation_number=number, **fields)
        # 10^17 numbers make a collision rare, not impossible: a number already a ticket inserts nothing and is
        # drawn again. Any other integrity error is a bug and must surface.
        if not head:
            if rawsql.insert(ticket, on_conflict="validation_number"):
                return ticket
            continue
        beside = head_beside(TicketEvent.journal, "%s", ticket.casino_id)
        inserted, values = rawsql.insert_locking_beside(ticket, on_conflict="validation_number", beside=beside)
        if inserted:
            head_attach(ticket, values)
            return ticket
    raise RuntimeError("could not draw an unused validation number")


def ticket_confirm_print(
    *, machine: Machine, validation_number: str, printed: bool, reason: str, request_id: str
) -> Ticket:
    """Cashout step 2: the issuing machine reports whether the ticket came out of the printer."""
    now = timezone.now()
    with _no_savepoint():
        ticket = _lock_machine_ticket(machine=machine, validation_number=validation_number)
        if ticket is None or ticket.issuing_machine_id != machine.pk:
            refusal: TicketRefused | TicketNotFound = TicketNotFound(detail="No such ticket issued by this machine.")
        elif ticket.state == TicketState.PENDING_PRINT:
            from_state = ticket.state
            details: dict[str, Any] = {}
            if printed:
                ticket.state = TicketState.ISSUED
                ticket.printed_at = now
                kind = TicketEventKind.PRINTED
                if machine.is_kiosk:
                    details["kiosk_receipt"] = _kiosk_books().book_ticket(machine=machine, ticket=ticket, at=now)
            else:
                ticket.state = TicketState.VOID
                ticket.voided_at = now
                kind = TicketEventKind.PRINT_FAILED
            record_ticket_event(
                ticket,
                kind,
                at=now,
                from_state=from_state,
                machine=machine,
                request_id=request_id,
                reason=reason,
                details=details,
                changed=["state", "printed_at", "voided_at"],
            )
            return ticket
        else:
            refusal = _refuse(
                ticket,
                code="invalid_state",
                detail=f"The ticket is {ticket.state}, not pending_print.",
                machine=machine,
                request_id=request_id,
                at=now,
                action="printed",
            )
    raise refusal


def ticket_authorize(*, machine: Machine, validation_number: str, request_id: str) -> Ticket:
    """Ticket-in step 1: hold the ticket for this machine until it commits."""
    now = timezone.now()
    with _no_savepoint():
        ticket = _lock_machine_ticket(machine=machine, validation_number=validation_number)
        if ticket is None:
            refusal: TicketRefused | TicketNotFound = _not_found_or_not_reported(machine, validation_number)
        else:
            code, detail = _authorize_refusal(ticket, machine=machine, now=now)
            if not code and machine.is_kiosk:
                code, detail = kiosk_payout_refusal(machine=machine, ticket=ticket)
            if not code:
                from_state = ticket.state
                details = {}
                if from_state == TicketState.REDEEM_PENDING:
                    # The holder asks again (its answer was lost and it started a
                    # new request): it keeps the ticket; only one commit can pay.
                    details["repeated"] = True
                ticket.state = TicketState.REDEEM_PENDING
                ticket.holder_machine = machine
                ticket.authorized_at = now
                ticket.hold_expires_at = now + dt.timedelta(seconds=machine.casino.redemption_hold_seconds)
                record_ticket_event(
                    ticket,
                    TicketEventKind.AUTHORIZED,
                    at=now,
                    from_state=from_state,
                    machine=machine,
                    request_id=request_id,
                    details=details,
                    changed=["state", "holder_machine", "authorized_at", "hold_expires_at"],
                )
                return ticket
            refusal = _refuse(
                ticket, code=code, detail=detail, machine=machine, request_id=request_id, at=now, action="authorize"
            )
    raise refusal


def _not_found_or_not_reported(machine: Machine, validation_number: str) -> TicketRefused | TicketNotFound:
    """No ticket: a number reserved for offline cashouts and not reported yet is refused as such (contract v1.1)."""
    if ReservedNumber.objects.filter(
        casino_id=machine.casino_id, validation_number=validation_number, ticket__isnull=True
    ).exists():
        return TicketRefused(
            "not_reported", "This number is reserved for an offline ticket that its machine has not reported yet."
        )
    return TicketNotFound(detail=_NOT_FOUND)


def _authorize_refusal(ticket: Ticket, *, machine: Machine, now: dt.datetime) -> tuple[str, str]:
    if ticket.state in _AUTHORIZE_REFUSALS:
        return _AUTHORIZE_REFUSALS[TicketState(ticket.state)]
    if ticket.state == TicketState.REDEEM_PENDING:
        if ticket.holder_machine_id != machine.pk:
            return "pending_elsewhere", "Another machine is redeeming this ticket."
        return "", ""
    if ticket_is_past_expiry(ticket, now):
        return _AUTHORIZE_REFUSALS[TicketState.EXPIRED]
    return "", ""


def _kiosk_books() -> Any:
    books = kiosk_cash()
    if books is None:  # pragma: no cover - cashdesk registers the books at start-up
        raise RuntimeError("no books are registered for kiosks' cash")
    return books


def _kiosk_payout_book(*, machine: Machine, ticket: Ticket, at: dt.datetime) -> str | TicketRefused:
    """Book a kiosk's payout of the ticket it holds: the receipt number, or why not (and nothing written)."""
    if ticket.ticket_type != TicketType.CASHABLE:  # only if it was held before the machine became a kiosk
        return TicketRefused("not_cashable", "A promo ticket is played in a machine; it is never paid in cash.")
    try:
        receipt: str = _kiosk_books().book_payout(
            machine=machine, ticket=ticket, payout=cash_payout(ticket.amount), at=at
        )
    except TicketRefused as refused:
        return refused
    return receipt


def ticket_commit(
    *,
    machine: Machine,
    validation_number: str,
    accepted: bool,
    reason: str,
    request_id: str,
    dispensed: Decimal | None = None,
) -> Ticket:
    """Ticket-in step 2: the holding machine took the credits (redeemed) or gave the ticket back (issued).

    A late commit from the holder is honoured: the hold is never released by time.
    A kiosk's accepted commit says the cash it `dispensed`, which must be the
    payout; the payout is booked from the kiosk's cash in the same transaction.
    """
    now = timezone.now()
    with _no_savepoint():
        ticket = _lock_machine_ticket(machine=machine, validation_number=validation_number)
        if ticket is None:
            refusal: TicketRefused | TicketNotFound = TicketNotFound(detail=_NOT_FOUND)
        else:
            code, detail, kiosk_receipt = _commit_refusal_or_kiosk_receipt(
                ticket, machine=machine, accepted=accepted, dispensed=dispensed, now=now
            )
            if not code:
                _release_hold(
                    ticket,
                    machine=machine,
                    accepted=accepted,
                    reason=reason,
                    request_id=request_id,
                    now=now,
                    kiosk_receipt=kiosk_receipt,
                )
                return ticket
            # Refused after this block like every refusal, so that its event is kept: raising inside it would
            # break the request's transaction (a 500).
            refusal = _refuse(
                ticket, code=code, detail=detail, machine=machine, request_id=request_id, at=now, action="commit"
            )
    raise refusal


def _commit_refusal_or_kiosk_receipt(
    ticket: Ticket, *, machine: Machine, accepted: bool, dispensed: Decimal | None, now: dt.datetime
) -> tuple[str, str, str | None]:
    """Why the commit is refused (no code if it is not) and, for a kiosk's accepted commit, its payout's receipt.

    The payout is booked before the ticket changes: if the books refuse (a rule changed since authorize, or
    the machine became a kiosk while holding the ticket), they wrote nothing and the ticket stays held.
    """
    if ticket.state != TicketState.REDEEM_PENDING or ticket.holder_machine_id != machine.pk:
        code, detail = _commit_refusal(ticket)
        return code, detail, None
    if not (machine.is_kiosk and accepted):
        return "", "", None
    payout = cash_payout(ticket.amount)
    if dispensed != payout:
        return "invalid_amount", f"'dispensed' must be the payout, {payout}.", None
    booked = _kiosk_payout_book(machine=machine, ticket=ticket, at=now)
    if isinstance(booked, TicketRefused):
        return booked.code, booked.detail, None
    return "", "", booked


def _release_hold(
    ticket: Ticket,
    *,
    machine: Machine,
    accepted: bool,
    reason: str,
    request_id: str,
    now: dt.datetime,
    kiosk_receipt: str | None,
) -> None:
    """The holder's commit: the ticket redeemed (accepted) or issued again (rejected), with its event."""
    from_state = ticket.state
    details: dict[str, Any] = {"late": now > ticket.hold_expires_at} if ticket.hold_expires_at else {}
    if kiosk_receipt is not None:
        details["kiosk_receipt"] = kiosk_receipt
        details["payout"] = str(cash_payout(ticket.amount))
    ticket.holder_machine = None
    ticket.authorized_at = None
    ticket.hold_expires_at = None
    if accepted:
        ticket.state = TicketState.REDEEMED
        ticket.redeemed_at = now
        ticket.redeemed_by_machine = machine
        kind = TicketEventKind.REDEEMED
    else:
        ticket.state = TicketState.ISSUED
        kind = TicketEventKind.REDEEM_REJECTED
    record_ticket_event(
        ticket,
        kind,
        at=now,
        from_state=from_state,
        machine=machine,
        request_id=request_id,
        reason=reason,
        details=details,
        changed=["state", "holder_machine", "authorized_at", "hold_expires_at", "redeemed_at", "redeemed_by_machine"],
    )


def _commit_refusal(ticket: Ticket) -> tuple[str, str]:
    if ticket.state == TicketState.REDEEM_PENDING:
        return "pending_elsewhere", "Another machine holds this ticket."
    if ticket.state in _AUTHORIZE_REFUSALS:
        return _AUTHORIZE_REFUSALS[TicketState(ticket.state)]
    return "invalid_state", f"The ticket is {ticket.state}; authorize it first."


def tickets_expire_due(*, now: dt.datetime | None = None, batch_size: int | None = None) -> int:
    """Expire issued tickets past expires_at, one bounded batch per transaction.

    Rows already locked (a redemption in progress) are skipped and picked up
    on the next run, so the job never waits on, or blocks, a machine for long.
    Idempotent and safe to run twice at once: a row is updated only while
    still `issued`, under its lock, and gets exactly one `expired` event,
    chained in its casino's journal. The batches walk the (expires_at, id)
    index forward from where the last one stopped: restarting from the front
    would rescan the entries of rows already expired (dead until vacuum) and
    make a large run quadratic.
    """
    now = now or timezone.now()
    batch_size = batch_size or settings.TICKET_EXPIRY_BATCH_SIZE
    total = 0
    after = Q()
    while True:
        with transaction.atomic():
            due = list(
                Ticket.objects.select_for_update(skip_locked=True)
                .filter(after, state=TicketState.ISSUED, expires_at__lt=now)
                .order_by("expires_at", "id")[:batch_size]
            )
            if not due:
                return total
            total += _expire_batch(due, now)
        last = due[-1]
        after = Q(expires_at__gt=last.expires_at) | Q(expires_at=last.expires_at, id__gt=last.pk)
        if settings.TICKET_EXPIRY_BATCH_PAUSE_MS:
            time.sleep(settings.TICKET_EXPIRY_BATCH_PAUSE_MS / 1000)


def _expire_batch(due: list[Ticket], now: dt.datetime) -> int:
    """Expire the locked tickets and write their events, chained per casino."""
    Ticket.objects.filter(id__in=[ticket.pk for ticket in due]).update(state=TicketState.EXPIRED, expired_at=now)
    by_casino: dict[int, list[TicketEvent]] = {}
    for ticket in due:
        ticket.state, ticket.expired_at = TicketState.EXPIRED, now
        event = TicketEvent(
            ticket=ticket,
            kind=TicketEventKind.EXPIRED,
            from_state=TicketState.ISSUED,
            to_state=TicketState.EXPIRED,
            details={"job": "expire_due_tickets"},
            created_at=now,
        )
        by_casino.setdefault(ticket.casino_id, []).append(event)
    for casino_id, events in sorted(by_casino.items()):
        chain_and_bulk_create(events, casino_id=casino_id)
    return len(due)


def tickets_report_stuck(*, now: dt.datetime | None = None) -> int:
    """Record a `stuck` event, once per authorization, for each hold past its time.

    The hold is not released: a supervisor resolves it from the machine's meters.
    """
    now = now or timezone.now()
    reported = 0
    with transaction.atomic():
        stuck = list(
            Ticket.objects.select_for_update(skip_locked=True).filter(
                state=TicketState.REDEEM_PENDING, hold_expires_at__lt=now
            )
        )
        for ticket in stuck:
            already = TicketEvent.objects.filter(
                ticket=ticket, kind=TicketEventKind.STUCK, created_at__gte=ticket.authorized_at
            ).exists()
            if already:
                continue
            record_ticket_event(
                ticket,
                TicketEventKind.STUCK,
                at=now,
                from_state=ticket.state,
                details={
                    "holder_machine": ticket.holder_machine_id,
                    "hold_expired_at": ticket.hold_expires_at.isoformat() if ticket.hold_expires_at else None,
                },
            )
            reported += 1
    return reported

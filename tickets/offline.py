"""Offline validation (machine contract v1.1): a machine's pool of reserved numbers, and the tickets it
printed with them while it could not reach the host.

A reserved number is not a ticket. It becomes one when the machine reports the ticket it printed with it:
the reservation is row-locked, the ticket created and the reservation marked reported in one transaction, so
two reports of the same number (at once or one after the other) make exactly one ticket.
"""

import datetime as dt
from decimal import Decimal
from functools import partial

from django.db import IntegrityError, transaction
from django.utils import timezone

from casino_office.money import MILL
from machines.models import Machine
from tickets.exceptions import TicketRefused
from tickets.kiosks import kiosk_cash, kiosk_issue_refusal
from tickets.models import ReservedNumber, Ticket, TicketEventKind, TicketState, TicketType
from tickets.numbers import generate_validation_number
from tickets.services import (
    claim_number,
    machine_next_sequence,
    record_ticket_event,
    ticket_amount_in_credits,
    ticket_expiry_for,
)

_NUMBER_ATTEMPTS = 8
# How far ahead of the host's clock a machine's printed_at may be (machine-api.md v1.1).
PRINTED_AT_TOLERANCE = dt.timedelta(minutes=5)
DEFAULT_POOL_REQUEST = 20
_no_savepoint = partial(transaction.atomic, savepoint=False)


def pool_count(*, machine: Machine, requested: int | None) -> int:
    """The count the pool is topped up to: 1 to the casino's pool size (default 20; above it, the pool size)."""
    pool_size = machine.casino.validation_pool_size
    wanted = DEFAULT_POOL_REQUEST if requested is None else requested
    return max(1, min(wanted, pool_size))


def outstanding_reservations(*, machine: Machine) -> list[ReservedNumber]:
    return list(ReservedNumber.objects.filter(machine=machine, ticket__isnull=True).order_by("reserved_at", "id"))


def validation_pool_top_up(*, machine: Machine, count: int) -> list[ReservedNumber]:
    """Every number reserved for the machine and not yet reported, topped up with fresh ones to `count`."""
    now = timezone.now()
    with _no_savepoint():
        # The machine's row lock serialises its pool requests: two at once do not both top up.
        Machine.objects.select_for_update().only("id").get(pk=machine.pk)
        reserved = outstanding_reservations(machine=machine)
        for _ in range(count - len(reserved)):
            reserved.append(_reserve_fresh_number(machine=machine, at=now))
    return reserved


def _reserve_fresh_number(*, machine: Machine, at: dt.datetime) -> ReservedNumber:
    for _ in range(_NUMBER_ATTEMPTS):
        number = generate_validation_number()
        claim_number(number)
        if Ticket.objects.filter(validation_number=number).exists():
            continue
        try:
            with transaction.atomic():
                return ReservedNumber.objects.create(
                    validation_number=number, casino_id=machine.casino_id, machine=machine, reserved_at=at
                )
        except IntegrityError:
            # 10^17 numbers make a collision rare, not impossible: draw again. Any other error surfaces.
            if not ReservedNumber.objects.filter(validation_number=number).exists():
                raise
    raise RuntimeError("could not draw an unused validation number")


def reservation_outstanding(*, casino_id: int, validation_number: str) -> ReservedNumber | None:
    """The casino's reservation of this number that its machine has not reported yet, if there is one."""
    return (
        ReservedNumber.objects.select_related("machine")
        .filter(casino_id=casino_id, validation_number=validation_number, ticket__isnull=True)
        .first()
    )


def ticket_report_offline(
    *,
    machine: Machine,
    validation_number: str,
    amount: Decimal,
    ticket_type: str,
    printed_at: dt.datetime,
    sequence: int,
    request_id: str,
) -> Ticket:
    """A ticket the machine printed offline with a number of its pool: issued, or expired if already past validity.

    The ticket's issuer is the machine; `printed_at` is both its issue and its print time, and its validity
    is counted from it as for any ticket. The machine's own sequence number is kept on the reservation, and
    on the ticket unless one of the machine's tickets has it already.
    """
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
    if printed_at.tzinfo is None or printed_at > now + PRINTED_AT_TOLERANCE:
        raise TicketRefused("invalid_request", "printed_at must carry an offset and not be in the future.")
    # Refusals are raised after the block: leaving a block without a savepoint by an exception would
    # doom the request's transaction, and the refusal's answer is still to be stored for replay.
    with _no_savepoint():
        reservation = (
            ReservedNumber.objects.select_for_update()
            .filter(casino_id=machine.casino_id, validation_number=validation_number)
            .first()
        )
        if reservation is None or reservation.machine_id != machine.pk:
            refusal = TicketRefused("not_in_pool", "This number was not reserved for this machine.")
        elif reservation.ticket_id is not None:
            refusal = TicketRefused("already_reported", "This number was reported before.")
        else:
            return _ticket_from_reservation(
                reservation,
                machine=machine,
                amount=amount,
                ticket_type=ticket_type,
                printed_at=printed_at,
                sequence=sequence,
                request_id=request_id,
                now=now,
            )
    raise refusal


def _ticket_from_reservation(
    reservation: ReservedNumber,
    *,
    machine: Machine,
    amount: Decimal,
    ticket_type: str,
    printed_at: dt.datetime,
    sequence: int,
    request_id: str,
    now: dt.datetime,
) -> Ticket:
    casino = machine.casino
    # The machine's row lock serialises its sequence numbers with its online issues.
    locked = Machine.objects.select_for_update().only("id", "last_ticket_sequence").get(pk=machine.pk)
    ticket_sequence = sequence
    if Ticket.objects.filter(issuing_machine=machine, sequence=sequence).exists():
        # The machine's offline counter met one the host gave out: the ticket still stands (the player
        # holds it); it takes the host's next number (wrapped past the maximum) and keeps the printed one in
        # its event.
        ticket_sequence = machine_next_sequence(machine_id=machine.pk)
    elif ticket_sequence > locked.last_ticket_sequence:
        Machine.objects.filter(pk=machine.pk).update(last_ticket_sequence=ticket_sequence)
    expires_at = ticket_expiry_for(casino=casino, issued_at=printed_at)
    expired = now > expires_at
    ticket = Ticket.objects.create(
        validation_number=reservation.validation_number,
        casino_id=machine.casino_id,
        issuing_machine=machine,
        sequence=ticket_sequence,
        amount=amount,
        ticket_type=ticket_type,
        state=TicketState.EXPIRED if expired else TicketState.ISSUED,
        issued_at=printed_at,
        printed_at=printed_at,
        expires_at=expires_at,
        expired_at=now if expired else None,
    )
    reservation.ticket = ticket
    reservation.reported_at = now
    reservation.reported_sequence = sequence
    reservation.save(update_fields=["ticket", "reported_at", "reported_sequence"])
    details: dict[str, object] = {"sequence": sequence, "reserved_at": reservation.reserved_at.isoformat()}
    if ticket_sequence != sequence:
        details["sequence_taken"] = True
    if expired:
        details["expired_on_arrival"] = True
    if machine.is_kiosk and (books := kiosk_cash()) is not None:
        # The cash the kiosk took in while offline is in its cassettes: booked when the ticket is reported.
        details["kiosk_receipt"] = books.book_ticket(machine=machine, ticket=ticket, at=now)
    record_ticket_event(
        ticket, TicketEventKind.REPORTED_OFFLINE, at=now, machine=machine, request_id=request_id, details=details
    )
    return ticket

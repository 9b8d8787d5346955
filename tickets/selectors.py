import datetime as dt
import math

from django.db.models import Count, Q, QuerySet
from django.utils import timezone

from machines.models import Casino, Machine
from tickets.exceptions import TicketNotFound
from tickets.models import LookupFailure, ReservedNumber, Ticket, TicketState


def ticket_get_for_machine(*, machine: Machine, validation_number: str) -> Ticket:
    ticket = Ticket.objects.filter(casino_id=machine.casino_id, validation_number=validation_number).first()
    if ticket is None:
        raise TicketNotFound(detail="No such ticket in this casino.")
    return ticket


def machine_lookups_blocked_until(*, machine: Machine, now: dt.datetime) -> dt.datetime | None:
    """When the machine may look up numbers again, or None if it is under its limit.

    The limit is the casino's: N failed lookups (malformed or unknown numbers)
    within a sliding window. Read after each failure (the failure path); the
    answer is kept on the machine's row for the requests that follow.
    """
    casino = machine.casino
    window = dt.timedelta(seconds=casino.lookup_failure_window_seconds)
    recent = list(
        LookupFailure.objects.filter(machine=machine, created_at__gt=now - window)
        .order_by("-created_at")
        .values_list("created_at", flat=True)[: casino.lookup_failure_limit]
    )
    if len(recent) < casino.lookup_failure_limit:
        return None
    # The window frees a slot when the oldest of the last `limit` failures ages out.
    return recent[-1] + window


def machine_lookup_retry_after(*, machine: Machine, now: dt.datetime | None = None) -> int | None:
    """Seconds until the machine may look up numbers again (from its row), or None if it may now."""
    now = now or timezone.now()
    until = machine.lookups_blocked_until
    if until is None or until <= now:
        return None
    return max(1, math.ceil((until - now).total_seconds()))


def stuck_redemptions(*, casino: Casino | None = None, now: dt.datetime | None = None) -> QuerySet[Ticket]:
    """Tickets held by a machine past their hold time: exceptions for supervisors."""
    now = now or timezone.now()
    tickets = Ticket.objects.filter(state=TicketState.REDEEM_PENDING, hold_expires_at__lt=now)
    if casino is not None:
        tickets = tickets.filter(casino=casino)
    return tickets.select_related("holder_machine", "casino").order_by("hold_expires_at")


def offline_validation_by_machine(casino: Casino) -> list[dict[str, object]]:
    """Per machine with any reservation: the numbers reserved and not yet reported, and the tickets it
    reported offline (in all, and those of the last 24 hours); machines by asset number."""
    since = timezone.now() - dt.timedelta(hours=24)
    rows = (
        ReservedNumber.objects.filter(casino=casino)
        .values("machine__asset_number")
        .annotate(
            outstanding=Count("pk", filter=Q(ticket__isnull=True)),
            reported=Count("pk", filter=Q(ticket__isnull=False)),
            reported_recently=Count("pk", filter=Q(ticket__isnull=False, reported_at__gte=since)),
        )
        .order_by("machine__asset_number")
    )
    return [
        {
            "machine": row["machine__asset_number"],
            "outstanding": row["outstanding"],
            "reported": row["reported"],
            "reported_recently": row["reported_recently"],
        }
        for row in rows
    ]

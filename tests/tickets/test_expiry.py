import datetime as dt
import threading

import pytest
from django.db import connection
from django.utils import timezone

from tests.conftest import MachineClient
from tests.factories import MachineFactory
from tickets.models import Ticket, TicketEvent
from tickets.services import tickets_expire_due, tickets_report_stuck
from tickets.tasks import expire_due_tickets, purge_request_records


def _age(number, days):
    """Move a ticket's dates back, as if it had been issued `days` ago."""
    ticket = Ticket.objects.get(validation_number=number)
    shift = dt.timedelta(days=days)
    Ticket.objects.filter(pk=ticket.pk).update(
        issued_at=ticket.issued_at - shift,
        printed_at=ticket.printed_at - shift if ticket.printed_at else None,
        expires_at=ticket.expires_at - shift,
    )


def test_only_issued_tickets_past_expiry_expire(api, make_api):
    due = [api.issued_ticket() for _ in range(3)]
    fresh = api.issued_ticket()
    unprinted = api.issue().json()["validation_number"]
    held = api.issued_ticket()
    redeemed = api.issued_ticket()
    assert make_api(asset_number="2002").authorize(held).status_code == 200
    for number in [*due, unprinted, held, redeemed]:
        _age(number, 40)
    Ticket.objects.filter(validation_number=redeemed).update(
        state="redeemed", redeemed_at=timezone.now(), redeemed_by_machine=api.machine
    )

    assert tickets_expire_due() == 3

    states = dict(Ticket.objects.values_list("validation_number", "state"))
    assert [states[n] for n in due] == ["expired"] * 3
    assert states[fresh] == "issued"
    assert states[unprinted] == "pending_print"
    assert states[held] == "redeem_pending"
    assert states[redeemed] == "redeemed"
    events = TicketEvent.objects.filter(kind="expired")
    assert sorted(events.values_list("ticket__validation_number", flat=True)) == sorted(due)
    assert all(e.machine is None and e.user is None and e.to_state == "expired" for e in events)


def test_running_twice_expires_each_ticket_once(api):
    numbers = [api.issued_ticket() for _ in range(5)]
    for number in numbers:
        _age(number, 31)
    assert tickets_expire_due(batch_size=2) == 5
    assert tickets_expire_due(batch_size=2) == 0
    assert TicketEvent.objects.filter(kind="expired").count() == 5


def test_boundary_is_the_printed_expiry(api):
    number = api.issued_ticket()
    expires_at = Ticket.objects.get(validation_number=number).expires_at
    assert tickets_expire_due(now=expires_at) == 0
    assert tickets_expire_due(now=expires_at + dt.timedelta(microseconds=1)) == 1
    assert Ticket.objects.get(validation_number=number).expired_at == expires_at + dt.timedelta(microseconds=1)


def test_celery_task_runs_the_expiry(api):
    number = api.issued_ticket()
    _age(number, 31)
    assert expire_due_tickets.apply().get() == 1
    assert Ticket.objects.get(validation_number=number).state == "expired"


@pytest.mark.django_db(transaction=True)
def test_two_concurrent_runs_expire_each_ticket_exactly_once(casino):
    api = MachineClient(MachineFactory(casino=casino))
    numbers = [api.issued_ticket() for _ in range(60)]
    for number in numbers:
        _age(number, 31)
    barrier = threading.Barrier(2)
    counts: list[int] = []

    def run() -> None:
        barrier.wait()
        try:
            counts.append(tickets_expire_due(batch_size=7))
        finally:
            connection.close()

    threads = [threading.Thread(target=run) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)

    assert sum(counts) == 60
    assert Ticket.objects.filter(state="expired").count() == 60
    assert TicketEvent.objects.filter(kind="expired").count() == 60


@pytest.mark.django_db(transaction=True)
def test_expiry_skips_a_ticket_locked_by_a_redemption(casino):
    api = MachineClient(MachineFactory(casino=casino))
    locked_number, other_number = api.issued_ticket(), api.issued_ticket()
    _age(locked_number, 31)
    _age(other_number, 31)
    locked = threading.Event()
    release = threading.Event()

    def hold_lock() -> None:
        from django.db import transaction

        try:
            with transaction.atomic():
                Ticket.objects.select_for_update().get(validation_number=locked_number)
                locked.set()
                release.wait(timeout=30)
        finally:
            connection.close()

    holder = threading.Thread(target=hold_lock)
    holder.start()
    locked.wait(timeout=30)
    try:
        assert tickets_expire_due() == 1
    finally:
        release.set()
        holder.join(timeout=30)
    assert Ticket.objects.get(validation_number=other_number).state == "expired"
    assert Ticket.objects.get(validation_number=locked_number).state == "issued"
    assert tickets_expire_due() == 1


def test_stuck_redemptions_are_reported_once_per_hold(api):
    number = api.issued_ticket()
    api.authorize(number)
    ticket = Ticket.objects.get(validation_number=number)
    later = ticket.hold_expires_at + dt.timedelta(seconds=1)

    assert tickets_report_stuck(now=ticket.hold_expires_at) == 0
    assert tickets_report_stuck(now=later) == 1
    assert tickets_report_stuck(now=later + dt.timedelta(minutes=5)) == 0
    assert Ticket.objects.get(pk=ticket.pk).state == "redeem_pending"
    stuck = TicketEvent.objects.get(kind="stuck")
    assert stuck.details["holder_machine"] == api.machine.pk


def test_purge_forgets_old_request_ids(api, settings):
    from tickets.models import LookupFailure, MachineRequest

    api.issue()
    api.authorize("000000000000000000")
    MachineRequest.objects.update(
        created_at=timezone.now() - dt.timedelta(days=settings.IDEMPOTENCY_RETENTION_DAYS + 1)
    )
    assert purge_request_records.apply().get() == {"requests": 2, "lookup_failures": 0}
    LookupFailure.objects.update(
        created_at=timezone.now() - dt.timedelta(days=settings.LOOKUP_FAILURE_RETENTION_DAYS + 1)
    )
    assert purge_request_records.apply().get() == {"requests": 0, "lookup_failures": 1}


def test_stuck_redemptions_are_listed_for_supervisors(api, casino):
    from tickets.selectors import stuck_redemptions

    number = api.issued_ticket()
    api.authorize(number)
    ticket = Ticket.objects.get(validation_number=number)
    assert list(stuck_redemptions(casino=casino, now=ticket.hold_expires_at)) == []
    later = ticket.hold_expires_at + dt.timedelta(seconds=1)
    assert list(stuck_redemptions(casino=casino, now=later)) == [ticket]


def test_batches_expire_each_due_ticket_once_with_its_event_chained(api, casino):
    """The batches walk on from where the last stopped; each expiry's event is chained in the casino's journal."""
    from machines.chains import books_verify

    for _ in range(3):
        api.issued_ticket()
    later = timezone.now() + dt.timedelta(days=400)  # the tickets' dates stay as the events' MACs cover them
    assert tickets_expire_due(now=later, batch_size=2) == 3
    assert tickets_expire_due(now=later, batch_size=2) == 0
    assert TicketEvent.objects.filter(kind="expired").count() == 3
    assert books_verify(casino) == []

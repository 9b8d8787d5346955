"""A Celery worker killed in the middle of the expiry job: the next run completes it, once per ticket."""

import datetime as dt
import signal
import time
import uuid
from decimal import Decimal

import pytest
from django.conf import settings
from django.utils import timezone

from casino_office.celery import app
from tests.factories import MachineFactory
from tests.reliability.processes import current_database_url, service_env, start_worker
from tests.tickets.test_celery_worker import REDIS_URL, _redis_up
from tickets.models import Ticket, TicketEvent, TicketState
from tickets.services import ticket_expiry_for
from tickets.tasks import expire_due_tickets

DUE = 3000


def _due_tickets(casino, machine) -> None:
    """3 000 printed tickets whose expiry passed yesterday (bulk, as the data would stand)."""
    issued = timezone.now() - dt.timedelta(days=40)
    Ticket.objects.bulk_create(
        Ticket(
            validation_number=_number(i),
            casino=casino,
            issuing_machine=machine,
            sequence=i + 1,
            amount=Decimal("5.000"),
            state=TicketState.ISSUED,
            issued_at=issued,
            printed_at=issued,
            expires_at=ticket_expiry_for(casino=casino, issued_at=issued),
        )
        for i in range(DUE)
    )


def _number(i: int) -> str:
    from stdnum import damm

    body = f"9{i:016d}"
    return body + damm.calc_check_digit(body)


def _expired() -> int:
    return Ticket.objects.filter(state=TicketState.EXPIRED).count()


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_killed_worker_leaves_no_ticket_expired_twice_or_not_at_all(casino):
    assert _redis_up(), f"Redis is needed at {REDIS_URL}"
    _due_tickets(casino, MachineFactory(casino=casino))
    env = service_env(
        DATABASE_URL=current_database_url(),
        CELERY_BROKER_URL=REDIS_URL,
        SECRET_KEY=settings.SECRET_KEY,
        TICKET_EXPIRY_BATCH_SIZE="50",
        TICKET_EXPIRY_BATCH_PAUSE_MS="100",
    )
    queue = f"test-{uuid.uuid4().hex}"

    worker = start_worker(env, queue)
    with app.connection_for_write(REDIS_URL) as broker:
        expire_due_tickets.apply_async(connection=broker, queue=queue)
    deadline = time.monotonic() + 60
    while _expired() < 300 and time.monotonic() < deadline:
        time.sleep(0.05)
    worker.send_signal(signal.SIGKILL)
    worker.wait(timeout=30)
    worker.communicate()
    halfway = _expired()
    assert 300 <= halfway < DUE, halfway

    # The next run (beat sends one every minute) finishes the job.
    second = start_worker({**env, "TICKET_EXPIRY_BATCH_PAUSE_MS": "0"}, queue)
    try:
        with app.connection_for_write(REDIS_URL) as broker:
            expire_due_tickets.apply_async(connection=broker, queue=queue)
        deadline = time.monotonic() + 90
        while _expired() < DUE and time.monotonic() < deadline:
            time.sleep(0.2)
    finally:
        second.terminate()
        second.communicate(timeout=30)

    assert _expired() == DUE
    assert TicketEvent.objects.filter(kind="expired").count() == DUE
    assert TicketEvent.objects.filter(kind="expired").values("ticket").distinct().count() == DUE

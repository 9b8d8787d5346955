"""A real Celery worker, against Redis and the test database, expires a ticket."""

import os
import time
import uuid

import pytest
import redis
from django.conf import settings

from casino_office.celery import app
from tests.conftest import MachineClient
from tests.factories import MachineFactory
from tests.reliability.processes import current_database_url, service_env, start_worker
from tests.tickets.test_expiry import _age
from tickets.models import Ticket, TicketEvent
from tickets.tasks import expire_due_tickets

REDIS_URL = os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/15")


def _redis_up() -> bool:
    try:
        return bool(redis.Redis.from_url(REDIS_URL, socket_connect_timeout=1).ping())
    except redis.RedisError:
        return False


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_worker_on_redis_expires_a_due_ticket(casino, tmp_path):
    assert _redis_up(), f"Redis is needed at {REDIS_URL} (make services)"
    api = MachineClient(MachineFactory(casino=casino))
    number = api.issued_ticket()
    _age(number, 31)

    worker = start_worker(
        service_env(
            DATABASE_URL=current_database_url(),
            CELERY_BROKER_URL=REDIS_URL,
            SECRET_KEY=settings.SECRET_KEY,
            CASINO_VAR_DIR=str(tmp_path),
        ),
        queue := f"test-{uuid.uuid4().hex}",
    )
    try:
        with app.connection_for_write(REDIS_URL) as broker:
            expire_due_tickets.apply_async(connection=broker, queue=queue)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and worker.poll() is None:
            if Ticket.objects.get(validation_number=number).state == "expired":
                break
            time.sleep(0.2)
    finally:
        worker.terminate()
        output, _ = worker.communicate(timeout=30)

    assert Ticket.objects.get(validation_number=number).state == "expired", output
    assert TicketEvent.objects.filter(ticket__validation_number=number, kind="expired").count() == 1
    assert "tickets.expire_due_tickets" in output


def test_beat_schedules_the_jobs():
    tasks = {entry["task"] for entry in settings.CELERY_BEAT_SCHEDULE.values()}
    assert tasks == {
        "tickets.expire_due_tickets",
        "tickets.report_stuck_redemptions",
        "tickets.purge_request_records",
        "tickets.reconcile_meters",
        "cashdesk.mark_overdue_holds",
        "cashdesk.snapshot_liability",
        "compliance.pseudonymise_expired_persons",
        "compliance.anchor_register",
        "compliance.verify_books_daily",
        "machines.anchor_books",
        "ops.heartbeat",
    }
    app.loader.import_default_modules()  # what a worker does at start: autodiscover every app's tasks
    assert set(app.tasks) >= tasks

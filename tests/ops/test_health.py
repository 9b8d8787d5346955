"""/health/: the database, the broker with its queue length, and the scheduler's heartbeat."""

import datetime as dt
import json
import uuid
from unittest import mock

import pytest
import redis
import time_machine
from django.db import OperationalError
from django.test import Client
from django.utils import timezone

from casino_office.celery import app
from ops.tasks import heartbeat

REDIS_URL = "redis://127.0.0.1:6379/14"


def _health():
    response = Client().get("/health/")
    return response.status_code, response.json()


@pytest.mark.django_db
def test_without_a_heartbeat_the_scheduler_is_reported_down():
    status, body = _health()
    assert status == 503
    assert body["status"] == "fail"
    assert body["checks"]["database"]["ok"] is True
    assert body["checks"]["broker"]["ok"] is True
    assert body["checks"]["beat"] == {
        "ok": False,
        "detail": "no heartbeat yet: is celery beat running (and a worker)?",
        "data": {},
    }


@pytest.mark.django_db
def test_a_fresh_heartbeat_makes_it_healthy_and_a_stale_one_does_not(settings):
    heartbeat()
    status, body = _health()
    assert status == 200, body
    assert body["status"] == "ok"
    assert body["checks"]["beat"]["data"]["age_seconds"] <= 1
    with time_machine.travel(timezone.now() + dt.timedelta(seconds=settings.HEALTH_MAX_HEARTBEAT_AGE + 5)):
        status, body = _health()
    assert status == 503
    assert "beat or the workers stopped" in body["checks"]["beat"]["detail"]


@pytest.mark.django_db
def test_a_load_balancer_asks_only_what_a_web_node_needs():
    """Without beat (no heartbeat) the full probe fails, but a web node still serves: ?checks=database."""
    assert _health()[0] == 503
    response = Client().get("/health/", {"checks": "database"})
    assert response.status_code == 200
    assert list(response.json()["checks"]) == ["database"]
    refused = Client().get("/health/", {"checks": "database,disk"})
    assert refused.status_code == 400
    assert refused.json()["code"] == "invalid_checks"


@pytest.mark.django_db
def test_database_failure_is_a_503_with_json(settings):
    heartbeat()
    secret = "connection to db1.casino.internal refused for casino_app"
    with mock.patch("ops.health.connection.cursor", side_effect=OperationalError(secret)):
        status, body = _health()
    assert status == 503
    assert body["checks"]["database"] == {"ok": False, "detail": "OperationalError", "data": {}}
    assert "db1" not in json.dumps(body)  # an open probe names the failure, not the hosts


@pytest.mark.django_db
def test_unreachable_broker_is_reported(settings):
    heartbeat()
    settings.CELERY_BROKER_URL = "redis://127.0.0.1:1/0"
    status, body = _health()
    assert status == 503
    assert body["checks"]["broker"]["ok"] is False
    assert "127.0.0.1" not in body["checks"]["broker"]["detail"]
    assert body["checks"]["database"]["ok"] is True


@pytest.mark.django_db
def test_queue_length_is_read_from_redis_and_a_long_queue_fails(settings):
    queue = f"health-{uuid.uuid4().hex}"
    settings.HEALTH_QUEUES = [queue]
    settings.HEALTH_MAX_QUEUE_LENGTH = 2
    heartbeat()
    client = redis.Redis.from_url(REDIS_URL)
    try:
        settings.CELERY_BROKER_URL = REDIS_URL
        status, body = _health()
        assert status == 200, body
        assert body["checks"]["broker"]["data"]["queues"] == {queue: 0}
        with app.connection_for_write(REDIS_URL) as connection:
            for _ in range(3):
                app.send_task("ops.heartbeat", queue=queue, connection=connection)
        status, body = _health()
        assert status == 503
        assert body["checks"]["broker"]["data"]["queues"] == {queue: 3}
        assert "workers are behind or down" in body["checks"]["broker"]["detail"]
    finally:
        client.delete(queue)


# A real beat and worker keeping the heartbeat fresh: tests/ops/test_deploy.py, with the systemd units' commands.


@pytest.mark.django_db
def test_with_no_replica_named_the_replica_check_says_reports_read_the_primary():
    """The replica's lag is checked only where REPORTS_DATABASE_URL names one (tests/ops/test_two_nodes.py)."""
    response = Client().get("/health/", {"checks": "replica"})
    assert response.status_code == 200
    assert response.json()["checks"]["replica"] == {
        "ok": True,
        "detail": "no replica named: reports read the primary",
        "data": {},
    }

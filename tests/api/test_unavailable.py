from decimal import Decimal
from unittest import mock

import pytest
from django.db import OperationalError

from tests.factories import MachineFactory
from tickets import services
from tickets.models import Ticket


def test_database_outage_is_a_json_503_not_a_500(api):
    with mock.patch.object(services, "ticket_issue", side_effect=OperationalError("connection refused")):
        response = api.issue()
    assert response.status_code == 503
    assert response.json()["code"] == "unavailable"
    assert response["Retry-After"] == "2"


def _wsgi_post(path: str, body: dict, key: str) -> tuple[int, dict]:
    """Through Django's WSGI handler as a server runs it: request_started and request_finished fire."""
    import json

    from django.core.handlers.wsgi import WSGIHandler
    from django.test import RequestFactory

    request = RequestFactory().post(
        f"/api/v1/{path}", data=json.dumps(body), content_type="application/json", HTTP_AUTHORIZATION=f"Bearer {key}"
    )
    status: list[str] = []
    response = WSGIHandler()(request.environ, lambda s, headers, exc_info=None: status.append(s))
    content = b"".join(response)
    response.close()  # request_finished: Django drops a connection that had errors and no longer works
    return int(status[0].split()[0]), json.loads(content)


@pytest.mark.django_db(transaction=True)
def test_a_connection_killed_between_requests_answers_503_once_and_the_retry_succeeds():
    """From the adversarial review of issue 15, where a replay ran its handler before the stored answer was found (no
    health check before a machine request: a dead connection is one 503, then a new connection).
    """
    import psycopg
    from django.db import connection

    from tests.factories import CasinoFactory, key_for
    from tests.races import _dsn

    machine = MachineFactory(casino=CasinoFactory(code="TOR"), asset_number="1001")
    key = key_for(machine)
    assert _wsgi_post("tickets/issue", {"request_id": "c-1", "amount": "1.00"}, key)[0] == 201
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        (pid,) = cursor.fetchone()
    with psycopg.connect(_dsn(), autocommit=True) as killer:
        killer.execute("SELECT pg_terminate_backend(%s)", [pid])

    status, body = _wsgi_post("tickets/issue", {"request_id": "c-2", "amount": "2.00"}, key)
    assert (status, body["code"]) == (503, "unavailable")
    retried = _wsgi_post("tickets/issue", {"request_id": "c-2", "amount": "2.00"}, key)
    replayed = _wsgi_post("tickets/issue", {"request_id": "c-2", "amount": "2.00"}, key)

    assert retried[0] == 201
    assert replayed == retried
    assert Ticket.objects.filter(amount=Decimal("2.00")).count() == 1

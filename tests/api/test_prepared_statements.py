"""The machine API keeps its hot statements prepared (issue 15); a migration that changes a column they read
must not turn the running web nodes' requests into 500s."""

import psycopg
import pytest
from django.db import connection

from tests.conftest import MachineClient
from tests.factories import MachineFactory


def _elsewhere(sql: str) -> None:
    params = connection.get_connection_params()
    params.pop("cursor_factory", None)
    params.pop("prepare_threshold", None)
    with psycopg.connect(**params, autocommit=True) as other:
        other.execute(sql)


@pytest.mark.django_db(transaction=True)
def test_a_column_changed_under_a_prepared_statement_is_a_503_once_then_the_retry_works(casino, settings):
    settings.MACHINE_KEPT_SECONDS = 0  # the machine read by its key on every request, as on a node that keeps none
    api = MachineClient(MachineFactory(casino=casino, asset_number="1001"))
    numbers = [api.issued_ticket() for _ in range(6)]  # the key's lookup and the rest are now prepared
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_prepared_statements WHERE statement LIKE '%%\"machines_machine\" t JOIN%%'"
        )
        assert cursor.fetchone()[0] == 1  # the key's lookup
    # As a migration run from another node while this one still serves would do: a new type for a column the
    # prepared key lookup selects. (psycopg forgets its prepared statements after an ALTER on its own
    # connection, so the change must come from another one.) Not a column the configuration's history copies:
    # its triggers depend on those, and PostgreSQL refuses to change their type.
    _elsewhere('ALTER TABLE "machines_machine" ALTER COLUMN "lookups_blocked_until" TYPE timestamp')
    try:
        body = {"request_id": "after-migration"}
        first = api.post(f"tickets/{numbers[0]}/authorize", body)
        assert (first.status_code, first.json()["code"]) == (503, "unavailable")
        assert first["Retry-After"]
        retry = api.post(f"tickets/{numbers[0]}/authorize", body)
        assert (retry.status_code, retry.json()["state"]) == (200, "redeem_pending")
    finally:
        _elsewhere('ALTER TABLE "machines_machine" ALTER COLUMN "lookups_blocked_until" TYPE timestamptz')


@pytest.mark.django_db(transaction=True)
def test_a_column_changed_under_the_kept_machines_check_is_no_500(casino):
    api = MachineClient(MachineFactory(casino=casino, asset_number="1001"))
    numbers = [
        api.issued_ticket() for _ in range(6)
    ]  # the machine kept; the check of it in the answer's insert prepared
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_prepared_statements "
            "WHERE statement LIKE '%%INTO \"tickets_machinerequest\"%%EXISTS%%'"
        )
        assert cursor.fetchone()[0] == 1
    _elsewhere('ALTER TABLE "machines_machine" ALTER COLUMN "lookups_blocked_until" TYPE timestamp')
    try:
        body = {"request_id": "after-migration-kept"}
        first = api.post(f"tickets/{numbers[0]}/authorize", body)
        assert first.status_code in (200, 503), first.content
        if first.status_code == 503:
            first = api.post(f"tickets/{numbers[0]}/authorize", body)
        assert (first.status_code, first.json()["state"]) == (200, "redeem_pending")
    finally:
        _elsewhere('ALTER TABLE "machines_machine" ALTER COLUMN "lookups_blocked_until" TYPE timestamptz')

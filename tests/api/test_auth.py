import pytest
from django.core.management import call_command
from django.test import Client

from machines.models import Machine
from tests.factories import key_for


def _issue(headers):
    return Client(**headers).post(
        "/api/v1/tickets/issue", {"request_id": "r1", "amount": "1.00"}, content_type="application/json"
    )


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"HTTP_AUTHORIZATION": "Bearer"},
        {"HTTP_AUTHORIZATION": "Bearer not-a-key"},
        {"HTTP_AUTHORIZATION": "Token key-TOR-1001"},
        {"HTTP_AUTHORIZATION": "Bearer key-TOR-1001 extra"},
        {"HTTP_AUTHORIZATION": "Basic YWRtaW46YWRtaW4="},
        {"HTTP_AUTHORIZATION": "Bearer \u00e9\u00e9"},
    ],
)
def test_missing_or_unknown_key_is_unauthenticated(machine, headers, table_counts):
    before = table_counts()
    response = _issue(headers)
    assert response.status_code == 401
    assert response.json()["code"] == "unauthenticated"
    assert response["WWW-Authenticate"] == "Bearer"
    assert table_counts() == before


@pytest.mark.parametrize(
    ("status", "enrolled"),
    [("out_of_service", True), ("retired", True), ("active", False)],
)
def test_inactive_or_unenrolled_machine_is_disabled(machine, status, enrolled, table_counts):
    Machine.objects.filter(pk=machine.pk).update(status=status, ticket_enrolled=enrolled)
    before = table_counts()
    response = _issue({"HTTP_AUTHORIZATION": f"Bearer {key_for(machine)}"})
    assert response.status_code == 403
    assert response.json()["code"] == "machine_disabled"
    assert table_counts() == before


def test_key_identifies_the_machine_and_marks_it_seen(machine):
    assert machine.last_seen_at is None
    response = _issue({"HTTP_AUTHORIZATION": f"Bearer {key_for(machine)}"})
    assert response.status_code == 201
    assert response.json()["print"]["machine"] == machine.asset_number
    machine.refresh_from_db()
    assert machine.last_seen_at is not None


def test_rotating_the_key_invalidates_the_old_one(machine, capsys):
    call_command("machine_key", machine.asset_number)
    new_key = capsys.readouterr().out.strip()

    assert new_key.startswith("mk_")
    assert len(new_key) >= 40
    assert _issue({"HTTP_AUTHORIZATION": f"Bearer {key_for(machine)}"}).status_code == 401
    assert _issue({"HTTP_AUTHORIZATION": f"Bearer {new_key}"}).status_code == 201
    machine.refresh_from_db()
    assert new_key not in (machine.api_key_hash or "")
    assert len(machine.api_key_hash or "") == 64


def test_a_key_rotated_or_a_machine_disabled_after_working_is_refused_at_the_next_request(machine, capsys):
    """Issue 15 and the contract's "Authentication": the key and the machine are read on every request, not
    remembered by the process that served the last one."""
    old = {"HTTP_AUTHORIZATION": f"Bearer {key_for(machine)}"}
    client = Client(**old)
    body = {"request_id": "w1", "amount": "1.00"}
    assert client.post("/api/v1/tickets/issue", body, content_type="application/json").status_code == 201

    call_command("machine_key", machine.asset_number)
    new = {"HTTP_AUTHORIZATION": f"Bearer {capsys.readouterr().out.strip()}"}
    refused = client.post("/api/v1/tickets/issue", {**body, "request_id": "w2"}, content_type="application/json")
    assert (refused.status_code, refused.json()["code"]) == (401, "unauthenticated")

    working = Client(**new)
    assert (
        working.post("/api/v1/tickets/issue", {**body, "request_id": "w3"}, content_type="application/json").status_code
        == 201
    )
    Machine.objects.filter(pk=machine.pk).update(status="out_of_service")
    disabled = working.post("/api/v1/tickets/issue", {**body, "request_id": "w4"}, content_type="application/json")
    assert (disabled.status_code, disabled.json()["code"]) == (403, "machine_disabled")


def test_a_key_revoked_and_a_machine_moved_out_of_the_ticket_system_are_refused_at_once(api, machine):
    """From the adversarial review of issue 15, where a replay ran its handler before the stored answer was found
    (authentication read on every request).
    """
    assert api.issue().status_code == 201
    Machine.objects.filter(pk=machine.pk).update(ticket_enrolled=False)
    refused = api.issue()
    assert (refused.status_code, refused.json()["code"]) == (403, "machine_disabled")
    Machine.objects.filter(pk=machine.pk).update(ticket_enrolled=True, api_key_hash="0" * 64)
    unknown = api.issue()
    assert (unknown.status_code, unknown.json()["code"]) == (401, "unauthenticated")

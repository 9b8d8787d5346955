"""Machine contract v1.1: offline validation (POST /api/v1/validation-pool, POST /api/v1/tickets/offline)."""

import datetime as dt

import pytest
import time_machine

from tests.conftest import MachineClient
from tickets.models import MachineRequest, ReservedNumber, Ticket, TicketEvent, TicketState
from tickets.numbers import parse_validation_number

VILNIUS = dt.timezone(dt.timedelta(hours=2))
NOW = dt.datetime(2026, 12, 2, 18, 10, 0, tzinfo=VILNIUS)


def pool(api: MachineClient, count: object = None, **extra: object) -> list[str]:
    body: dict[str, object] = {"request_id": api.next_id(), **extra}
    if count is not None:
        body["count"] = count
    response = api.post("validation-pool", body)
    assert response.status_code == 200, response.json()
    return list(response.json()["validation_numbers"])


def report(api: MachineClient, number: str, **fields: object) -> object:
    body: dict[str, object] = {
        "request_id": api.next_id(),
        "validation_number": number,
        "amount": "25.00",
        "ticket_type": "cashable",
        "printed_at": "2026-12-02T18:04:11+02:00",
        "sequence": 1235,
    }
    body.update(fields)
    return api.post("tickets/offline", body)


def _wrong_check_digit(number: str) -> str:
    return number[:-1] + str((int(number[-1]) + 1) % 10)


# --- validation-pool ---


def test_pool_reserves_numbers_for_the_machine(api, machine):
    response = api.post("validation-pool", {"request_id": "pool-1", "count": 5})

    assert response.status_code == 200
    body = response.json()
    assert body["pool_size"] == 20
    numbers = body["validation_numbers"]
    assert len(numbers) == len(set(numbers)) == 5
    assert all(parse_validation_number(n) == n for n in numbers)
    reserved = ReservedNumber.objects.filter(machine=machine)
    assert sorted(reserved.values_list("validation_number", flat=True)) == sorted(numbers)
    assert {r.casino_id for r in reserved} == {machine.casino_id}
    assert not Ticket.objects.exists()


def test_pool_answers_the_outstanding_numbers_topped_up_to_count(api):
    first = pool(api, 3)
    second = pool(api, 5)
    assert second[:3] == first
    assert len(set(second)) == 5
    # Fewer asked than outstanding: every outstanding number is still answered.
    assert pool(api, 1) == second


def test_pool_count_defaults_to_20_and_is_capped_at_the_pool_size(api, casino, make_api):
    assert len(pool(api)) == 20
    casino.validation_pool_size = 7
    casino.save()
    response = make_api().post("validation-pool", {"request_id": "p", "count": 500})
    assert response.json()["pool_size"] == 7
    assert len(response.json()["validation_numbers"]) == 7


def test_reported_numbers_leave_the_pool_and_are_replaced(api):
    numbers = pool(api, 3)
    assert report(api, numbers[0]).status_code == 201
    again = pool(api, 3)
    assert numbers[0] not in again
    assert again[:2] == numbers[1:]
    assert len(again) == 3


@pytest.mark.parametrize("count", [0, -1, "5", 2.5, True, None])
def test_pool_refuses_a_bad_count(api, count):
    body = {"request_id": "p", "count": count}
    response = api.post("validation-pool", body)
    assert response.status_code == 422
    assert response.json()["code"] == "invalid_request"
    assert not ReservedNumber.objects.exists()


def test_pool_request_is_idempotent(api):
    body = {"request_id": "pool-same", "count": 4}
    first = api.post("validation-pool", body)
    second = api.post("validation-pool", body)
    assert second.content == first.content
    assert ReservedNumber.objects.count() == 4
    reused = api.post("validation-pool", {"request_id": "pool-same", "count": 5})
    assert (reused.status_code, reused.json()["code"]) == (409, "request_id_reused")


def test_a_reserved_number_is_not_a_ticket(api, make_api):
    number = pool(api, 1)[0]

    got = api.get(f"tickets/{number}")
    assert (got.status_code, got.json()["code"]) == (404, "not_found")
    other = make_api()
    refused = other.authorize(number)
    assert (refused.status_code, refused.json()["code"]) == (409, "not_reported")
    own = api.authorize(number)
    assert (own.status_code, own.json()["code"]) == (409, "not_reported")
    assert not Ticket.objects.exists()


def test_a_reserved_number_of_another_casino_is_not_found(api, other_casino):
    from tests.factories import MachineFactory

    number = pool(api, 1)[0]
    stranger = MachineClient(MachineFactory(casino=other_casino))
    response = stranger.authorize(number)
    assert (response.status_code, response.json()["code"]) == (404, "not_found")


def test_fresh_tickets_never_take_a_reserved_number(api, monkeypatch):
    reserved = pool(api, 1)[0]
    drawn = iter([reserved, "004218779312345672"])
    monkeypatch.setattr("tickets.services.generate_validation_number", lambda: next(drawn))
    body = api.issue("5.00").json()
    assert body["validation_number"] == "004218779312345672"


def test_a_reservation_never_takes_a_ticket_number(api, monkeypatch):
    taken = api.issued_ticket()
    drawn = iter([taken, "004218779312345672"])
    monkeypatch.setattr("tickets.offline.generate_validation_number", lambda: next(drawn))
    assert pool(api, 1) == ["004218779312345672"]


# --- tickets/offline ---


@time_machine.travel(NOW, tick=False)
def test_offline_report_makes_an_issued_ticket(api, machine):
    number = pool(api, 2)[0]
    response = report(api, number, request_id="offline-1")

    assert response.status_code == 201
    assert response.json() == {
        "validation_number": number,
        "state": "issued",
        "amount": "25.00",
        "ticket_type": "cashable",
        "issued_at": "2026-12-02T18:04:11+02:00",
        "expires_at": "2027-01-01T23:59:59+02:00",
    }
    assert api.get(f"tickets/{number}").json() == response.json()
    ticket = Ticket.objects.get(validation_number=number)
    assert ticket.issuing_machine == machine
    assert ticket.sequence == 1235
    assert ticket.issued_at == ticket.printed_at == dt.datetime(2026, 12, 2, 18, 4, 11, tzinfo=VILNIUS)
    reservation = ReservedNumber.objects.get(validation_number=number)
    assert reservation.ticket == ticket
    assert reservation.reported_sequence == 1235
    event = TicketEvent.objects.get(ticket=ticket)
    assert (event.kind, event.to_state, event.machine, event.request_id) == (
        "reported_offline",
        "issued",
        machine,
        "offline-1",
    )
    assert event.details["sequence"] == 1235
    # Now it is a ticket like any other: another machine redeems it.
    machine.refresh_from_db()
    assert machine.last_ticket_sequence == 1235


@time_machine.travel(NOW, tick=False)
def test_a_reported_ticket_is_redeemed_like_any_other(api, make_api):
    number = pool(api, 1)[0]
    assert report(api, number).status_code == 201
    player = make_api()
    assert player.authorize(number).status_code == 200
    assert player.commit(number).json()["state"] == "redeemed"


@time_machine.travel(NOW, tick=False)
def test_a_ticket_past_its_validity_is_recorded_expired(api, casino):
    number = pool(api, 1)[0]
    printed = (NOW - dt.timedelta(days=casino.ticket_validity_days + 2)).isoformat()

    response = report(api, number, printed_at=printed)

    assert response.status_code == 201
    assert response.json()["state"] == "expired"
    ticket = Ticket.objects.get(validation_number=number)
    assert ticket.state == TicketState.EXPIRED
    assert ticket.expired_at == NOW
    assert ticket.printed_at == ticket.issued_at
    event = ticket.events.get()
    assert (event.kind, event.to_state, event.details["expired_on_arrival"]) == ("reported_offline", "expired", True)
    refused = api.authorize(number)
    assert (refused.status_code, refused.json()["code"]) == (409, "expired")


@time_machine.travel(NOW, tick=False)
def test_the_same_report_again_is_replayed(api):
    number = pool(api, 1)[0]
    body = {
        "request_id": "off-same",
        "validation_number": number,
        "amount": "25.00",
        "printed_at": "2026-12-02T18:04:11+02:00",
        "sequence": 7,
    }
    first = api.post("tickets/offline", body)
    second = api.post("tickets/offline", body)
    assert (first.status_code, second.content) == (201, first.content)
    assert Ticket.objects.count() == 1
    assert TicketEvent.objects.count() == 1


@time_machine.travel(NOW, tick=False)
def test_the_same_number_reported_with_another_request_id_is_already_reported(api):
    number = pool(api, 1)[0]
    assert report(api, number).status_code == 201
    again = report(api, number, amount="999.00")
    assert (again.status_code, again.json()["code"]) == (409, "already_reported")
    assert Ticket.objects.get().amount == 25


@time_machine.travel(NOW, tick=False)
def test_a_number_of_another_machine_or_never_reserved_is_not_in_pool(api, make_api):
    other = make_api()
    theirs = pool(other, 1)[0]
    response = report(api, theirs)
    assert (response.status_code, response.json()["code"]) == (409, "not_in_pool")
    never = report(api, "004218779312345672")
    assert (never.status_code, never.json()["code"]) == (409, "not_in_pool")
    online = api.issued_ticket()
    assert report(api, online).json()["code"] == "not_in_pool"
    assert Ticket.objects.count() == 1
    assert ReservedNumber.objects.get(validation_number=theirs).ticket is None


@time_machine.travel(NOW, tick=False)
@pytest.mark.parametrize(
    ("fields", "code"),
    [
        ({"amount": 25}, "invalid_amount"),
        ({"amount": "0.00"}, "invalid_amount"),
        ({"amount": "1.0001"}, "invalid_amount"),
        ({"amount": "10000.01"}, "over_limit"),
        ({"validation_number": "123"}, "invalid_number"),
        ({"validation_number": 4218779312345672}, "invalid_number"),
        ({"printed_at": None}, "invalid_request"),
        ({"printed_at": "2026-12-02T18:04:11"}, "invalid_request"),
        ({"printed_at": "2026-12-02"}, "invalid_request"),
        ({"printed_at": "yesterday"}, "invalid_request"),
        ({"printed_at": "2026-12-02T18:15:01+02:00"}, "invalid_request"),
        ({"printed_at": "0001-01-01T00:00:00+02:00"}, "invalid_request"),
        ({"sequence": -1}, "invalid_request"),
        ({"sequence": "12"}, "invalid_request"),
        ({"sequence": None}, "invalid_request"),
        ({"ticket_type": "free"}, "invalid_request"),
    ],
)
def test_bad_reports_are_refused_without_a_ticket(api, fields, code):
    number = pool(api, 1)[0]
    if fields.get("validation_number") == "123":
        fields = {"validation_number": _wrong_check_digit(number)}
    response = report(api, number, **fields)
    assert response.status_code == 422, response.json()
    assert response.json()["code"] == code
    assert not Ticket.objects.exists()
    assert ReservedNumber.objects.get(validation_number=number).ticket is None


@time_machine.travel(NOW, tick=False)
def test_printed_at_up_to_five_minutes_ahead_is_accepted(api):
    number = pool(api, 1)[0]
    response = report(api, number, printed_at="2026-12-02T18:15:00+02:00")
    assert response.status_code == 201


@time_machine.travel(NOW, tick=False)
def test_a_sequence_the_host_gave_out_keeps_the_ticket_and_records_the_printed_one(api, machine):
    api.issued_ticket()  # sequence 1 from the host
    number = pool(api, 1)[0]
    response = report(api, number, sequence=1)
    assert response.status_code == 201
    ticket = Ticket.objects.get(validation_number=number)
    assert ticket.sequence == 2
    assert ticket.events.get().details == {
        "sequence": 1,
        "reserved_at": ticket.reservation.reserved_at.isoformat(),
        "sequence_taken": True,
    }
    assert api.issue().json()["print"]["sequence"] == 3


@time_machine.travel(NOW, tick=False)
def test_refusals_are_remembered_for_replay(api, make_api):
    other = make_api()
    theirs = pool(other, 1)[0]
    body = {
        "request_id": "off-x",
        "validation_number": theirs,
        "amount": "25.00",
        "printed_at": "2026-12-02T18:04:11+02:00",
        "sequence": 1,
    }
    first = api.post("tickets/offline", body)
    assert first.status_code == 409
    assert api.post("tickets/offline", body).content == first.content
    assert MachineRequest.objects.filter(machine=api.machine, request_id="off-x").count() == 1


def test_the_schema_has_the_offline_endpoints(client):
    schema = client.get("/api/v1/schema/", HTTP_ACCEPT="application/json").json()
    assert schema["paths"]["/api/v1/validation-pool"]["post"]["operationId"] == "validation_pool"
    assert schema["paths"]["/api/v1/tickets/offline"]["post"]["operationId"] == "ticket_offline"

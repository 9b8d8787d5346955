"""Offline validation races on PostgreSQL (tests/races.py): every request provably waits on the contested lock."""

from collections import Counter

import pytest
from django.db import connection

from tests.conftest import MachineClient
from tests.factories import MachineFactory
from tests.races import race
from tickets.models import MachineRequest, ReservedNumber, Ticket, TicketEvent

THREADS = 12

pytestmark = pytest.mark.django_db(transaction=True)


def reservation_gate(number: str) -> tuple[str, list[str]]:
    """The reservation's row lock: what every report of the number takes first."""
    return ("SELECT id FROM tickets_reservednumber WHERE validation_number = %s FOR UPDATE", [number])


def machine_gate(machine_id: int) -> tuple[str, list[int]]:
    return ("SELECT id FROM machines_machine WHERE id = %s FOR UPDATE", [machine_id])


def _reserve(api: MachineClient, count: int = 1) -> list[str]:
    response = api.post("validation-pool", {"request_id": api.next_id(), "count": count})
    assert response.status_code == 200
    return list(response.json()["validation_numbers"])


def _report_body(number: str, request_id: str) -> dict[str, object]:
    return {
        "request_id": request_id,
        "validation_number": number,
        "amount": "25.00",
        "printed_at": "2026-12-02T18:04:11+02:00",
        "sequence": 40,
    }


def test_one_number_reported_at_once_under_different_request_ids_makes_one_ticket(casino):
    assert connection.vendor == "postgresql"
    machine = MachineFactory(casino=casino)
    number = _reserve(MachineClient(machine))[0]
    clients = [MachineClient(machine) for _ in range(THREADS)]

    responses = race(
        [lambda c=c, i=i: c.post("tickets/offline", _report_body(number, f"off-{i}")) for i, c in enumerate(clients)],
        gate=reservation_gate(number),
    )

    assert Counter(r.status_code for r in responses) == {201: 1, 409: THREADS - 1}
    assert {r.json()["code"] for r in responses if r.status_code == 409} == {"already_reported"}
    ticket = Ticket.objects.get()
    assert ticket.validation_number == number
    assert TicketEvent.objects.filter(kind="reported_offline").count() == 1
    assert ReservedNumber.objects.get(validation_number=number).ticket == ticket


def test_one_report_replayed_at_once_makes_one_ticket_and_one_answer(casino):
    machine = MachineFactory(casino=casino)
    number = _reserve(MachineClient(machine))[0]
    clients = [MachineClient(machine) for _ in range(THREADS)]
    body = _report_body(number, "off-same")

    responses = race([lambda c=c: c.post("tickets/offline", body) for c in clients], gate=reservation_gate(number))

    assert {r.status_code for r in responses} == {201}
    assert len({r.content for r in responses}) == 1
    assert Ticket.objects.count() == 1
    assert TicketEvent.objects.count() == 1
    assert MachineRequest.objects.filter(request_id="off-same").count() == 1


def test_pool_requests_at_once_top_the_pool_up_once(casino):
    machine = MachineFactory(casino=casino)
    clients = [MachineClient(machine) for _ in range(THREADS)]

    responses = race(
        [
            lambda c=c, i=i: c.post("validation-pool", {"request_id": f"pool-{i}", "count": 5})
            for i, c in enumerate(clients)
        ],
        gate=machine_gate(machine.pk),
    )

    assert {r.status_code for r in responses} == {200}
    assert len({tuple(r.json()["validation_numbers"]) for r in responses}) == 1
    assert ReservedNumber.objects.filter(machine=machine).count() == 5

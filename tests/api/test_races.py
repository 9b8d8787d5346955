"""Races on PostgreSQL through the shared harness (tests/races.py): every request waits on the contested lock."""

from collections import Counter

import pytest
from django.db import connection

from tests.conftest import MachineClient
from tests.factories import MachineFactory
from tests.races import race
from tickets.models import MachineRequest, Ticket, TicketEvent

THREADS = 20

pytestmark = pytest.mark.django_db(transaction=True)


def ticket_gate(number: str) -> tuple[str, list[str]]:
    """The contested ticket's row lock, held by the harness until every request waits on it."""
    return ("SELECT id FROM tickets_ticket WHERE validation_number = %s FOR UPDATE", [number])


def machine_gate(machine_id: int) -> tuple[str, list[int]]:
    """The issuing machine's row lock (it serialises the machine's issues)."""
    return ("SELECT id FROM machines_machine WHERE id = %s FOR UPDATE", [machine_id])


def test_twenty_machines_authorizing_one_ticket_get_exactly_one_hold(casino):
    assert connection.vendor == "postgresql"
    issuer = MachineClient(MachineFactory(casino=casino))
    number = issuer.issued_ticket("250.00")
    players = [MachineClient(MachineFactory(casino=casino)) for _ in range(THREADS)]

    responses = race([lambda p=p: p.authorize(number) for p in players], gate=ticket_gate(number))

    statuses = Counter(r.status_code for r in responses)
    assert statuses == {200: 1, 409: THREADS - 1}
    assert {r.json()["code"] for r in responses if r.status_code == 409} == {"pending_elsewhere"}
    winner = next(p for p, r in zip(players, responses, strict=True) if r.status_code == 200)
    ticket = Ticket.objects.get(validation_number=number)
    assert ticket.holder_machine == winner.machine
    assert ticket.events.filter(kind="authorized").count() == 1
    assert ticket.events.filter(kind="refused", reason="pending_elsewhere").count() == THREADS - 1


def test_twenty_full_redemptions_of_one_ticket_pay_it_once(casino):
    issuer = MachineClient(MachineFactory(casino=casino))
    number = issuer.issued_ticket("99.99")
    players = [MachineClient(MachineFactory(casino=casino)) for _ in range(THREADS)]

    def redeem(player: MachineClient) -> str:
        if player.authorize(number).status_code != 200:
            return "refused"
        return str(player.commit(number).json()["state"])

    outcomes = race([lambda p=p: redeem(p) for p in players], gate=ticket_gate(number))

    assert Counter(outcomes) == {"redeemed": 1, "refused": THREADS - 1}
    ticket = Ticket.objects.get(validation_number=number)
    assert ticket.state == "redeemed"
    assert ticket.events.filter(kind="redeemed").count() == 1


def test_twenty_replays_of_one_issue_request_make_one_ticket(casino):
    machine = MachineFactory(casino=casino)
    clients = [MachineClient(machine) for _ in range(THREADS)]
    body = {"request_id": "cashout-race", "amount": "40.00"}

    responses = race([lambda c=c: c.post("tickets/issue", body) for c in clients], gate=machine_gate(machine.pk))

    assert {r.status_code for r in responses} == {201}
    assert len({r.content for r in responses}) == 1
    assert Ticket.objects.count() == 1
    assert TicketEvent.objects.count() == 1
    assert MachineRequest.objects.count() == 1


def test_twenty_replays_of_one_authorize_request_hold_once(casino):
    issuer = MachineClient(MachineFactory(casino=casino))
    number = issuer.issued_ticket()
    player = MachineFactory(casino=casino)
    clients = [MachineClient(player) for _ in range(THREADS)]
    body = {"request_id": "ticket-in-race"}

    responses = race(
        [lambda c=c: c.post(f"tickets/{number}/authorize", body) for c in clients], gate=ticket_gate(number)
    )

    assert {r.status_code for r in responses} == {200}
    assert len({r.content for r in responses}) == 1
    assert Ticket.objects.get(validation_number=number).events.filter(kind="authorized").count() == 1


def test_concurrent_issues_from_one_machine_get_distinct_sequences(casino):
    machine = MachineFactory(casino=casino)
    clients = [MachineClient(machine) for _ in range(THREADS)]

    responses = race(
        [
            lambda c=c, i=i: c.post("tickets/issue", {"request_id": f"r{i}", "amount": "1.00"})
            for i, c in enumerate(clients)
        ],
        gate=machine_gate(machine.pk),
    )

    assert {r.status_code for r in responses} == {201}
    assert sorted(r.json()["print"]["sequence"] for r in responses) == list(range(1, THREADS + 1))


def test_a_machine_waiting_on_a_ticket_holds_no_chain_head(casino):
    """The machine's lock of a ticket also locks its casino's ticket_events head (issue 23: one round trip less),
    but only once it has the ticket: a desk holding the ticket and waiting for that head would otherwise deadlock
    with it, and every machine of the casino would queue behind one contested ticket."""
    number = MachineClient(MachineFactory(casino=casino)).issued_ticket("20.00")
    player = MachineClient(MachineFactory(casino=casino))
    free = []

    def head_is_free(watcher) -> None:
        with watcher.transaction():
            free.extend(
                watcher.execute(
                    "SELECT id FROM machines_chainhead WHERE casino_id = %s AND journal = 'ticket_events' "
                    "FOR UPDATE NOWAIT",
                    [casino.pk],
                ).fetchall()
            )

    (response,) = race([lambda: player.authorize(number)], gate=ticket_gate(number), while_waiting=head_is_free)

    assert len(free) == 1
    assert response.status_code == 200
    assert Ticket.objects.get(validation_number=number).holder_machine == player.machine

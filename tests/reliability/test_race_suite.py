"""50 machine clients and two cashiers race over 500 tickets, 10 000 attempts, on PostgreSQL."""

import random
import threading
from collections import Counter
from decimal import Decimal

import pytest
from django.db import connection

from cashdesk import services
from cashdesk.errors import CashDeskError
from cashdesk.models import CashTransaction
from casino_office.money import cash_payout
from machines.models import Place
from tests.conftest import MachineClient
from tests.factories import MachineFactory, make_user
from tests.reliability.test_state_machine import ALLOWED
from tickets import services as ticket_services
from tickets.models import Ticket, TicketEvent

TICKETS = 500
MACHINES = 50
ATTEMPTS_PER_MACHINE = 190  # 50 x 190 = 9 500 machine attempts
ATTEMPTS_PER_CASHIER = 250  # 2 x 250 = 500 cash-desk attempts
OPENING_CASH = Decimal("1000000.00")


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_no_ticket_is_paid_twice_under_a_storm_of_attempts(casino):
    assert connection.vendor == "postgresql"
    issuer = MachineFactory(casino=casino, asset_number="ISSUER")
    numbers = []
    rng = random.Random(5)
    for i in range(TICKETS):
        amount = Decimal(rng.randint(1, 900_000)) / 1000
        ticket = ticket_services.ticket_issue(machine=issuer, amount=amount, ticket_type="cashable", request_id=f"i{i}")
        ticket_services.ticket_confirm_print(
            machine=issuer, validation_number=ticket.validation_number, printed=True, reason="", request_id=f"p{i}"
        )
        numbers.append(ticket.validation_number)
    players = [MachineClient(MachineFactory(casino=casino, asset_number=f"P{i}")) for i in range(MACHINES)]
    cashiers = []
    for i in range(2):
        user = make_user(f"storm{i}", "cashier")
        desk = Place.objects.create(casino=casino, code=f"ST{i}", name=f"Storm {i}")
        cashiers.append((user, services.shift_open(desk=desk, cashier=user, counted={"cash": OPENING_CASH})))

    machine_wins: Counter[str] = Counter()
    cashier_wins: Counter[str] = Counter()
    errors: list[BaseException] = []
    barrier = threading.Barrier(MACHINES + len(cashiers))

    def machine_worker(player: MachineClient, seed: int) -> None:
        local = random.Random(seed)
        try:
            barrier.wait()
            for _ in range(ATTEMPTS_PER_MACHINE):
                number = local.choice(numbers)
                authorized = player.authorize(number)
                assert authorized.status_code in (200, 409), authorized.content
                if authorized.status_code == 200:
                    result = "rejected" if local.random() < 0.1 else "accepted"
                    committed = player.commit(number, result=result)
                    assert committed.status_code == 200, committed.content
                    if committed.json()["state"] == "redeemed":
                        machine_wins[number] += 1
        except BaseException as error:
            errors.append(error)
        finally:
            connection.close()

    def cashier_worker(user, shift, seed: int) -> None:
        local = random.Random(seed)
        try:
            barrier.wait()
            for _ in range(ATTEMPTS_PER_CASHIER):
                number = local.choice(numbers)
                try:
                    services.ticket_payout(shift=shift, user=user, validation_number=number)
                except CashDeskError:
                    continue
                cashier_wins[number] += 1
        except BaseException as error:
            errors.append(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=machine_worker, args=(p, i)) for i, p in enumerate(players)]
    threads += [threading.Thread(target=cashier_worker, args=(u, s, 1000 + i)) for i, (u, s) in enumerate(cashiers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=600)

    assert not errors, errors[:3]
    # No ticket paid twice: by the clients' own count and by the database.
    paid = machine_wins + cashier_wins
    assert all(count == 1 for count in paid.values())
    assert Ticket.objects.filter(state="redeemed").count() == len(paid)
    assert TicketEvent.objects.filter(kind="redeemed").count() == len(paid)
    # Every ticket's events tell one story along the contract's arrows.
    for ticket in Ticket.objects.all():
        state = ""
        for event in ticket.events.order_by("id"):
            if event.kind == "refused":
                assert event.from_state == event.to_state == state
                continue
            assert ((event.from_state or ""), event.to_state) in ALLOWED
            assert (event.from_state or "") == state
            state = event.to_state
        assert state == ticket.state
    # Every shift reconciles: opening cash less exactly the payouts it made.
    for user, shift in cashiers:
        payouts = CashTransaction.objects.filter(shift=shift, kind="ticket_payout")
        expected = OPENING_CASH - sum((cash_payout(tx.ticket.amount) for tx in payouts), Decimal("0"))
        assert services.shift_balances(shift)["cash"] == expected
        assert payouts.count() == sum(
            1 for n in cashier_wins if Ticket.objects.get(validation_number=n).redeemed_by_user == user
        )

import itertools
import random
from collections import Counter
from decimal import Decimal

import pytest
from django.db import IntegrityError, connection, transaction

from cashdesk import services
from cashdesk.books import counterparty_balances, place_balances
from cashdesk.errors import CashDeskError
from cashdesk.items import ALL_ITEMS
from cashdesk.models import Leg, Shift
from machines.models import Place
from tests.api.test_races import ticket_gate
from tests.cashdesk.conftest import FLOAT, unbalanced_items
from tests.conftest import MachineClient
from tests.factories import MachineFactory, make_user
from tests.races import race
from tickets.models import Ticket


@pytest.mark.django_db(transaction=True)
def test_cashier_and_machine_racing_for_tickets_never_both_win(casino):
    assert connection.vendor == "postgresql"
    cashier = make_user("race-cashier", "cashier")
    desk = Place.objects.create(casino=casino, code="R1", name="Race desk")
    shift = services.shift_open(desk=desk, cashier=cashier, counted={"cash": Decimal("100000.00")})
    issuer = MachineClient(MachineFactory(casino=casino))
    player = MachineClient(MachineFactory(casino=casino))
    outcomes: Counter[str] = Counter()

    for _ in range(15):
        number = issuer.issued_ticket("10.00")

        def cashier_pays(number: str = number) -> str:
            try:
                services.ticket_payout(shift=shift, user=cashier, validation_number=number)
                return "cashier"
            except CashDeskError as refused:
                return f"cashier refused: {refused.code}"

        def machine_redeems(number: str = number) -> str:
            if player.authorize(number).status_code != 200:
                return "machine refused"
            return "machine" if player.commit(number).json()["state"] == "redeemed" else "machine rejected"

        results = race([cashier_pays, machine_redeems], gate=ticket_gate(number))
        winners = [r for r in results if r in ("cashier", "machine")]
        assert len(winners) == 1, results
        outcomes[winners[0]] += 1
        ticket = Ticket.objects.get(validation_number=number)
        assert ticket.state == "redeemed"
        assert ticket.events.filter(kind="redeemed").count() == 1

    paid_cash = Decimal("10.00") * outcomes["cashier"]
    assert services.shift_balances(shift)["cash"] == Decimal("100000.00") - paid_cash


def test_balances_are_the_opening_plus_every_movement_for_any_sequence(api, shift, cashier, floor, person):
    rng = random.Random(20261202)
    counters = itertools.count(1)
    operations = [
        lambda: services.chips_buy(
            shift=shift, user=cashier, chips={rng.choice(["chip_5", "chip_25", "chip_100"]): rng.randint(1, 4)}
        ),
        lambda: services.chips_cashout(shift=shift, user=cashier, chips={"chip_1": rng.randint(1, 30)}),
        lambda: services.tokens_buy(shift=shift, user=cashier, count=rng.randint(1, 50)),
        lambda: services.tokens_cashout(shift=shift, user=cashier, count=rng.randint(1, 50)),
        lambda: services.ticket_sell(shift=shift, user=cashier, amount=Decimal(rng.randint(1, 300))),
        lambda: services.ticket_payout(
            shift=shift,
            user=cashier,
            validation_number=api.issued_ticket(f"{rng.randint(1, 900)}.{rng.randint(0, 999):03d}"),
        ),
        lambda: services.smartcard_payout(
            shift=shift,
            user=cashier,
            card_number="C1",
            credits=Decimal(rng.randint(1, 9999)) / 100,
            card_counter=next(counters),
        ),
    ]
    for _ in range(60):
        rng.choice(operations)()

    balances = services.shift_balances(shift)
    opening = services.count_amounts(FLOAT)
    for item in ALL_ITEMS:
        legs = Leg.objects.filter(shift=shift, item=item).exclude(transaction__kind__in=["count", "opening_balance"])
        moved = sum((leg.amount for leg in legs), Decimal("0"))
        assert balances[item] == opening[item] + moved

    # Counting exactly what the ledger expects reconciles to the cent.
    counted = {
        item: balances[item] if item == "cash" else int(balances[item] / services.count_amounts({item: 1})[item])
        for item in ALL_ITEMS
    }
    closing = services.shift_close(shift=shift, user=cashier, counted=counted)
    assert {line.variance for line in closing.lines.all()} == {Decimal("0")}


def test_ledger_rows_cannot_be_changed_or_deleted(shift, cashier):
    tx = services.tokens_buy(shift=shift, user=cashier, count=3)
    with pytest.raises(IntegrityError, match="append-only"), transaction.atomic():
        Leg.objects.filter(transaction=tx).update(amount=Decimal("1.00"))
    with pytest.raises(IntegrityError, match="append-only"), transaction.atomic():
        Leg.objects.filter(transaction=tx).delete()
    with pytest.raises(IntegrityError, match="append-only"), transaction.atomic():
        type(tx).objects.filter(pk=tx.pk).update(amount=Decimal("1.00"))


def test_leg_value_must_match_its_count(shift, cashier):
    tx = services.tokens_buy(shift=shift, user=cashier, count=3)
    casino = shift.desk.casino
    with pytest.raises(IntegrityError), transaction.atomic():
        Leg.objects.create(
            transaction=tx, casino=casino, desk=shift.desk, shift=shift, item="chip_100", count=2, amount=Decimal("150")
        )
    with pytest.raises(IntegrityError), transaction.atomic():
        Leg.objects.create(
            transaction=tx, casino=casino, desk=shift.desk, shift=shift, item="cash", count=2, amount=Decimal("2")
        )


def test_the_database_refuses_an_unbalanced_transaction_at_commit(shift, cashier):
    """Written with SQL, around every service: the deferred trigger still refuses it."""
    tx = services.tokens_buy(shift=shift, user=cashier, count=3)
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO cashdesk_leg (transaction_id, casino_id, desk_id, shift_id, counterparty, item, amount)"
            " VALUES (%s, %s, %s, %s, '', 'cash', 5.00)",
            [tx.pk, shift.desk.casino_id, shift.desk_id, shift.pk],
        )
        # What COMMIT would do: run the deferred checks now.
        with pytest.raises(IntegrityError, match="unbalanced in cash"):
            cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        transaction.set_rollback(True)


def test_a_balanced_set_of_legs_written_with_sql_is_accepted(shift, cashier):
    tx = services.tokens_buy(shift=shift, user=cashier, count=3)
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO cashdesk_leg (transaction_id, casino_id, desk_id, shift_id, counterparty, item, amount)"
            " VALUES (%s, %s, %s, %s, '', 'cash', 5.00), (%s, %s, NULL, NULL, 'players', 'cash', -5.00)",
            [tx.pk, shift.desk.casino_id, shift.desk_id, shift.pk, tx.pk, shift.desk.casino_id],
        )
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
    assert Leg.objects.filter(transaction=tx).count() == 6


def test_counterparties_and_places_balance_after_a_mixed_day(api, shift, cashier, supervisor, floor, vault, casino):
    """From the adversarial review of the rebuilt money core: a guard of behaviour that held."""
    services.vault_count(vault=vault, user=supervisor, counted={"cash": Decimal("50000.00")})
    services.ticket_payout(shift=shift, user=cashier, validation_number=api.issued_ticket("12.345"))
    services.chips_buy(shift=shift, user=cashier, chips={"chip_0_50": 3})
    services.smartcard_payout(shift=shift, user=cashier, card_number="Z1", credits=Decimal("3.333"), card_counter=1)
    receipt = services.machine_receipt_record(machine=api.machine, amount=Decimal("7.00"), reason="x", user=floor)
    services.machine_receipt_pay(shift=shift, user=cashier, number=receipt.number, check_code=receipt.check_code)
    waiting = services.shift_close(shift=shift, user=cashier, counted={**FLOAT, "cash": Decimal("19000.00")})
    assert unbalanced_items(casino) == {}
    services.count_request_approve(request=waiting, supervisor=supervisor)  # short by more than the limit
    assert unbalanced_items(casino) == {}
    parties = counterparty_balances(casino)
    assert parties["tickets"]["cash"] == Decimal("12.35")
    assert parties["smartcards"]["cash"] == Decimal("3.34")
    assert place_balances(shift.desk)["cash"] == Decimal("19000.00")
    assert Shift.objects.get(pk=shift.pk).closed_at is not None


def test_a_temporary_table_cannot_stand_in_for_the_books_in_their_guard(shift, cashier):
    """A review found that a session's temporary table of the same name came first in the guard's lookup (an empty
    temp cashdesk_leg let an unbalanced leg through); the guards name their tables with the schema now."""
    tx = services.tokens_buy(shift=shift, user=cashier, count=3)
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("CREATE TEMPORARY TABLE cashdesk_leg (LIKE public.cashdesk_leg) ON COMMIT DROP")
        cursor.execute(
            "INSERT INTO public.cashdesk_leg (transaction_id, casino_id, desk_id, shift_id, counterparty, item, amount)"
            " VALUES (%s, %s, %s, %s, '', 'cash', 5.00)",
            [tx.pk, shift.desk.casino_id, shift.desk_id, shift.pk],
        )
        with pytest.raises(IntegrityError, match="unbalanced in cash"):
            cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        transaction.set_rollback(True)

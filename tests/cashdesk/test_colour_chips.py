"""Colour chips at a roulette table (issue 24): issued for value chips into the tray, one colour one player at a
table, exchanged back only there and never for cash; learning chips rounded up to whole euros in the player's
favour (2 or 78 of them give 1 EUR); the difference is the table's win or loss; the table closes with none out."""

from decimal import Decimal

import pytest
from django.db import IntegrityError, transaction

from cashdesk.books import counterparty_balances, place_balances
from cashdesk.errors import CashDeskError
from cashdesk.models import ColourChips, Counterparty, TablePlaces, TransactionKind
from cashdesk.services.tables import (
    colour_chips_due,
    colour_chips_issue,
    colour_chips_return,
    table_close,
    table_create,
    table_open,
)
from machines.models import TableGame
from tests.cashdesk.test_kiosks import assert_books_balance
from tests.cashdesk.test_table_day import FLOAT

pytestmark = pytest.mark.django_db


@pytest.fixture
def session(table, croupier, pit_supervisor):
    return table_open(table=table, croupier=croupier, pieces=FLOAT, user=pit_supervisor)


def tray_total(table):
    return sum(place_balances(TablePlaces.objects.get(table=table).tray).values(), Decimal("0.00"))


def issue(session, user, colour="red", value="5", pieces=None, seat=2, **kwargs):
    return colour_chips_issue(
        session=session,
        colour=colour,
        value=Decimal(value),
        pieces=pieces or {"chip_25": 4},
        seat=seat,
        user=user,
        **kwargs,
    )


def test_colour_chips_are_issued_for_value_chips_into_the_tray(casino, table, session, pit_supervisor):
    chips = issue(session, pit_supervisor)  # 100 EUR of value chips: 20 red chips of 5
    assert (chips.colour, chips.value, chips.issued, chips.seat) == ("red", Decimal("5.00"), 20, 2)
    assert chips.issue.kind == TransactionKind.TABLE_COLOUR
    assert tray_total(table) == Decimal("2700.00")
    held = counterparty_balances(casino)[Counterparty.COLOUR_CHIPS]
    assert sum(held.values(), Decimal("0")) == Decimal("-100.00")
    assert_books_balance(casino)


def test_exchanged_back_the_difference_is_the_table_s_and_nothing_stays_outstanding(
    casino, table, session, pit_supervisor
):
    chips = issue(session, pit_supervisor)
    # The player won: 26 red chips of 5 come back, 130 EUR in value chips go out.
    back = colour_chips_return(
        chips=chips, returned=26, pieces={"chip_100": 1, "chip_25": 1, "chip_5": 1}, user=pit_supervisor
    )
    assert (back.returned, back.paid, back.returned_by) == (26, Decimal("130.00"), pit_supervisor)
    parties = counterparty_balances(casino)
    assert sum(parties[Counterparty.COLOUR_CHIPS].values(), Decimal("0")) == 0
    assert sum(parties[Counterparty.TABLE_WIN].values(), Decimal("0")) == Decimal("30.00")  # the table lost 30
    assert tray_total(table) == Decimal("2570.00")
    assert_books_balance(casino)


@pytest.mark.parametrize(("returned", "due"), [(2, "1.00"), (78, "1.00"), (100, "1.00"), (101, "2.00"), (0, "0.00")])
def test_learning_chips_are_rounded_up_to_whole_euros_in_the_player_s_favour(session, pit_supervisor, returned, due):
    chips = issue(session, pit_supervisor, colour="blue", value="0.01", pieces={"chip_1": 1})
    assert chips.issued == 100
    assert colour_chips_due(chips, returned) == Decimal(due)


def test_two_learning_chips_give_a_1_eur_chip(casino, table, session, pit_supervisor):
    chips = issue(session, pit_supervisor, colour="blue", value="0.01", pieces={"chip_1": 1})
    with pytest.raises(CashDeskError) as refused:
        colour_chips_return(chips=chips, returned=2, pieces={"chip_0_50": 1}, user=pit_supervisor)
    assert refused.value.code == "chips_not_due"
    assert "1,00" in refused.value.message or "1.00" in refused.value.message
    back = colour_chips_return(chips=chips, returned=2, pieces={"chip_1": 1}, user=pit_supervisor)
    assert back.paid == Decimal("1.00")
    assert_books_balance(casino)


def test_one_colour_is_one_player_s_at_a_table_until_it_comes_back(session, pit_supervisor):
    first = issue(session, pit_supervisor, colour="green")
    with pytest.raises(CashDeskError) as refused:
        issue(session, pit_supervisor, colour="green", seat=5)
    assert refused.value.code == "colour_taken"
    colour_chips_return(chips=first, returned=0, pieces={}, user=pit_supervisor)
    again = issue(session, pit_supervisor, colour="green", seat=5)
    assert again.seat == 5
    with pytest.raises(IntegrityError), transaction.atomic():  # the database keeps it so, whatever the path
        ColourChips.objects.create(
            session=session,
            table=session.table,
            colour="green",
            value=Decimal("5"),
            seat=6,
            issued=1,
            issued_by=pit_supervisor,
            issue=again.issue,
        )


@pytest.mark.parametrize(
    ("kwargs", "code"),
    [
        ({"value": "2"}, "colour_value"),
        ({"colour": "black"}, "colour_invalid"),
        ({"value": "25", "pieces": {"chip_5": 3}}, "colour_not_whole"),
        ({"seat": 12}, "invalid_seat"),
    ],
)
def test_a_bad_issue_is_refused_and_changes_nothing(table, session, pit_supervisor, kwargs, code):
    with pytest.raises(CashDeskError) as refused:
        issue(session, pit_supervisor, **kwargs)
    assert refused.value.code == code
    assert not ColourChips.objects.exists()
    assert tray_total(table) == Decimal("2600.00")


def test_colour_chips_other_than_learning_chips_are_roulette_s(casino, croupier, pit_supervisor):
    poker = table_create(casino=casino, number="TP1", game=TableGame.TEXAS_POKER)
    session = table_open(table=poker, croupier=croupier, pieces=FLOAT, user=pit_supervisor)
    with pytest.raises(CashDeskError) as refused:
        issue(session, pit_supervisor)
    assert refused.value.code == "colour_not_roulette"
    assert issue(session, pit_supervisor, value="0.01", pieces={"chip_1": 2}).issued == 200


def test_the_table_closes_only_with_every_colour_back_and_its_win_counts_them(casino, table, session, pit_supervisor):
    chips = issue(session, pit_supervisor)  # 100 in
    with pytest.raises(CashDeskError) as refused:
        table_close(session=session, pieces=FLOAT, user=pit_supervisor)
    assert refused.value.code == "colour_chips_out"
    colour_chips_return(chips=chips, returned=10, pieces={"chip_25": 2}, user=pit_supervisor)  # 50 back: won 50
    closed = table_close(session=session, pieces={**FLOAT, "chip_25": 42}, user=pit_supervisor)
    assert closed.win == Decimal("50.00")
    assert -sum(counterparty_balances(casino)[Counterparty.TABLE_WIN].values(), Decimal("0")) == closed.win
    assert_books_balance(casino)


def test_the_tray_gives_back_only_what_it_holds(table, session, pit_supervisor):
    chips = issue(session, pit_supervisor, pieces={"chip_100": 5})  # 100 chips of 5
    with pytest.raises(CashDeskError) as refused:
        colour_chips_return(chips=chips, returned=200, pieces={"chip_500": 2}, user=pit_supervisor)
    assert refused.value.code == "insufficient_stock"
    assert ColourChips.objects.get().is_out
    assert tray_total(table) == Decimal("3100.00")


def test_an_exchange_back_happens_once(session, pit_supervisor):
    chips = issue(session, pit_supervisor)
    first = colour_chips_return(
        chips=chips, returned=20, pieces={"chip_100": 1}, user=pit_supervisor, operation_key="d" * 32
    )
    again = colour_chips_return(
        chips=chips, returned=20, pieces={"chip_100": 1}, user=pit_supervisor, operation_key="d" * 32
    )
    assert again.exchange_id == first.exchange_id
    with pytest.raises(CashDeskError) as refused:
        colour_chips_return(chips=chips, returned=20, pieces={"chip_100": 1}, user=pit_supervisor)
    assert refused.value.code == "colour_returned"

"""Two pit terminals on one table at once (issue 24): the table's operations take its tray's row lock in turn, so
two openings make one session, and a buy-in and the closing never both miss each other. The harness proves the
loser waited on the winner's lock."""

from collections import Counter
from decimal import Decimal

import pytest

from cashdesk.books import place_balances
from cashdesk.errors import CashDeskError
from cashdesk.items import Item
from cashdesk.models import ShiftCount, TableBuyIn, TablePlaces, TableSession
from cashdesk.services.tables import table_buy_in, table_close, table_open
from tests.cashdesk.test_kiosks import assert_books_balance
from tests.cashdesk.test_table_day import FLOAT
from tests.races import race

pytestmark = pytest.mark.django_db(transaction=True)


def tray_gate(table):
    tray_id = TablePlaces.objects.get(table=table).tray_id
    return ('SELECT 1 FROM "cashdesk_cashdesk" WHERE "id" = %s FOR UPDATE', [tray_id])


def _outcome(result):
    return result.code if isinstance(result, CashDeskError) else type(result).__name__


def test_two_terminals_opening_one_table_open_it_once(casino, table, croupier, pit_supervisor):
    open_it = [lambda: table_open(table=table, croupier=croupier, pieces=FLOAT, user=pit_supervisor) for _ in range(2)]
    results = race(open_it, gate=tray_gate(table))

    assert Counter(_outcome(result) for result in results) == {"TableSession": 1, "table_open": 1}
    assert TableSession.objects.count() == 1
    assert ShiftCount.objects.count() == 1
    assert_books_balance(casino)


@pytest.mark.parametrize("first", ["buy_in", "close"])
def test_a_buy_in_and_the_closing_at_once_never_miss_each_other(casino, table, croupier, pit_supervisor, first):
    session = table_open(table=table, croupier=croupier, pieces=FLOAT, user=pit_supervisor)
    calls = {
        "buy_in": lambda: table_buy_in(
            session=session, cash=Decimal("100.00"), pieces={"chip_100": 1}, seat=1, user=pit_supervisor
        ),
        "close": lambda: table_close(session=session, pieces={**FLOAT, "chip_100": 9}, user=pit_supervisor),
    }
    order = [first, *(name for name in calls if name != first)]
    results = dict(zip(order, race([calls[name] for name in order], gate=tray_gate(table), ordered=True), strict=True))

    session.refresh_from_db()
    assert not session.is_open
    drop_box = TablePlaces.objects.get(table=table).drop_box
    if first == "buy_in":
        # The closing waited for the buy-in: its drop is in the result, the chips sold are not the table's win.
        assert isinstance(results["buy_in"], TableBuyIn)
        assert (session.drop, session.win) == (Decimal("100.00"), Decimal("0.00"))
    else:
        # The buy-in waited for the closing and found the table closed: nothing sold, nothing dropped.
        assert _outcome(results["buy_in"]) == "table_closed"
        assert (session.drop, session.win) == (Decimal("0.00"), Decimal("-100.00"))
    assert place_balances(drop_box)[Item.CASH] == session.drop
    assert_books_balance(casino)

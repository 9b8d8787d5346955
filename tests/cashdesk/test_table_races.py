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
from machines.models import Casino
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


def _fill_issued(session, desk, cashier, pit_supervisor, pieces, kind="to_table"):
    from cashdesk.services.table_slips import slip_issue, slip_request

    Casino.objects.filter(pk=desk.casino_id).update(table_cage=desk)
    session.table.casino.refresh_from_db()
    slip = slip_request(session=session, kind=kind, pieces=pieces, user=pit_supervisor)
    return slip_issue(slip=slip, user=cashier)


def test_two_fills_confirmed_at_once_never_take_the_desk_below_zero(
    casino, table, croupier, pit_supervisor, shift, cashier
):
    from cashdesk.services.table_slips import slip_confirm

    session = table_open(table=table, croupier=croupier, pieces=FLOAT, user=pit_supervisor)
    held = place_balances(shift.desk)[Item.CHIP_500]  # the desk's 500 chips: each fill takes all of them
    count = int(held / 500)
    slips = [_fill_issued(session, shift.desk, cashier, pit_supervisor, {"chip_500": count}) for _ in range(2)]
    gate = ('SELECT 1 FROM "cashdesk_cashdesk" WHERE "id" = %s FOR UPDATE', [shift.desk.pk])
    results = race([lambda slip=slip: slip_confirm(slip=slip, user=pit_supervisor) for slip in slips], gate=gate)

    assert Counter(_outcome(result) for result in results) == {"TableSlip": 1, "insufficient_stock": 1}
    assert place_balances(shift.desk)[Item.CHIP_500] == 0
    assert_books_balance(casino)


def test_the_same_slip_confirmed_twice_at_once_posts_once(casino, table, croupier, pit_supervisor, shift, cashier):
    from cashdesk.models import TableSlip
    from cashdesk.services.table_slips import slip_confirm

    session = table_open(table=table, croupier=croupier, pieces=FLOAT, user=pit_supervisor)
    slip = _fill_issued(session, shift.desk, cashier, pit_supervisor, {"chip_100": 2})
    gate = ('SELECT 1 FROM "cashdesk_cashdesk" WHERE "id" = %s FOR UPDATE', [shift.desk.pk])
    results = race([lambda: slip_confirm(slip=slip, user=pit_supervisor) for _ in range(2)], gate=gate)

    assert all(isinstance(result, TableSlip) for result in results), results
    assert results[0].transaction_id == results[1].transaction_id
    assert place_balances(TablePlaces.objects.get(table=table).tray)[Item.CHIP_100] == Decimal("1200.00")
    assert_books_balance(casino)


def test_a_buy_in_and_a_credit_at_once_never_take_the_tray_below_zero(
    casino, table, croupier, pit_supervisor, shift, cashier
):
    from cashdesk.services.table_slips import slip_confirm

    session = table_open(table=table, croupier=croupier, pieces=FLOAT, user=pit_supervisor)
    credit = _fill_issued(session, shift.desk, cashier, pit_supervisor, {"chip_100": 10}, kind="to_cage")
    calls = [
        lambda: table_buy_in(
            session=session, cash=Decimal("1000.00"), pieces={"chip_100": 10}, seat=1, user=pit_supervisor
        ),
        lambda: slip_confirm(slip=credit, user=pit_supervisor),
    ]
    results = race(calls, gate=tray_gate(table))

    outcomes = Counter(_outcome(result) for result in results)
    assert "OperationalError" not in outcomes, [str(result) for result in results]
    assert outcomes in ({"TableBuyIn": 1, "insufficient_stock": 1}, {"TableSlip": 1, "insufficient_stock": 1})
    assert place_balances(TablePlaces.objects.get(table=table).tray)[Item.CHIP_100] == 0
    assert_books_balance(casino)

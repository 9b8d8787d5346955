"""Chips bought at a gaming table (issue 24): cash into the drop box, chips out of the tray; over the threshold the
person is identified first and the buy-in goes in the register as its own kind; the alerts see desks and tables
together; the table's result counts the drop."""

import datetime as dt
from decimal import Decimal

import pytest
import time_machine
from django.db import IntegrityError, transaction

from cashdesk import services
from cashdesk.books import counterparty_balances, place_balances
from cashdesk.errors import CashDeskError
from cashdesk.items import Item
from cashdesk.models import CashTransaction, Counterparty, TableBuyIn, TablePlaces, TransactionKind
from cashdesk.services.tables import table_buy_in, table_close, table_open
from compliance.models import Alert, RegisterEntry
from tests.cashdesk.test_kiosks import assert_books_balance
from tests.cashdesk.test_table_day import FLOAT

pytestmark = pytest.mark.django_db

VILNIUS = dt.timezone(dt.timedelta(hours=2))  # December: EET
AT = dt.datetime(2026, 12, 2, 21, 0, tzinfo=VILNIUS)


@pytest.fixture
def session(table, croupier, pit_supervisor):
    with time_machine.travel(AT - dt.timedelta(hours=1), tick=False):
        return table_open(table=table, croupier=croupier, pieces=FLOAT, user=pit_supervisor)


def books_of(table):
    return TablePlaces.objects.select_related("tray", "drop_box").get(table=table)


def buy(session, user, cash, pieces, *, seat=3, at=AT, **kwargs):
    with time_machine.travel(at, tick=False):
        return table_buy_in(session=session, cash=Decimal(cash), pieces=pieces, seat=seat, user=user, **kwargs)


def test_a_buy_in_moves_cash_into_the_drop_box_and_chips_out_of_the_tray(casino, table, session, pit_supervisor):
    buy_in = buy(session, pit_supervisor, "150.00", {"chip_100": 1, "chip_25": 2})

    places = books_of(table)
    assert place_balances(places.drop_box)[Item.CASH] == Decimal("150.00")
    assert place_balances(places.tray)[Item.CHIP_100] == Decimal("900.00")
    assert place_balances(places.tray)[Item.CHIP_25] == Decimal("950.00")
    posting = buy_in.transaction
    assert (posting.kind, posting.amount, posting.created_by, buy_in.seat) == (
        TransactionKind.TABLE_BUY_IN,
        Decimal("150.00"),
        pit_supervisor,
        3,
    )
    assert posting.person is None
    assert not RegisterEntry.objects.exists()
    assert_books_balance(casino)


def test_over_the_threshold_the_person_is_identified_first_and_registered(
    casino, table, session, pit_supervisor, person
):
    with pytest.raises(CashDeskError) as refused:
        buy(session, pit_supervisor, "1025.00", {"chip_100": 10, "chip_25": 1})
    assert refused.value.code == "identity_required"
    assert not CashTransaction.objects.filter(kind=TransactionKind.TABLE_BUY_IN).exists()
    assert place_balances(books_of(table).drop_box)[Item.CASH] == 0

    buy_in = buy(session, pit_supervisor, "1025.00", {"chip_100": 10, "chip_25": 1}, person=person)
    entry = RegisterEntry.objects.get(transaction_id=buy_in.transaction_id)
    assert (entry.kind, entry.amount, entry.person_id) == ("table_buy_in", Decimal("1025.00"), person.pk)
    assert entry.get_kind_display() == "Chips bought at a gaming table"
    assert_books_balance(casino)


def test_the_database_refuses_a_buy_in_over_the_threshold_without_its_register_entry(table, session, pit_supervisor):
    # Past the service's own refusal, the books' constraint stops it.
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("cashdesk.services.ledger._identity_required", lambda **kwargs: False)
        with pytest.raises(IntegrityError), transaction.atomic():
            buy(session, pit_supervisor, "1025.00", {"chip_100": 10, "chip_25": 1})
    assert not TableBuyIn.objects.exists()


def test_a_person_s_day_adds_desk_and_table_purchases(casino, shift, cashier, session, pit_supervisor, person):
    with time_machine.travel(AT - dt.timedelta(minutes=30), tick=False):
        services.chips_buy(shift=shift, user=cashier, chips={"chip_500": 2, "chip_100": 9}, person=person)
    buy(session, pit_supervisor, "1100.00", {"chip_100": 10, "chip_25": 4}, person=person)
    alert = Alert.objects.get(kind="due_diligence", person=person)
    assert alert.amount == Decimal("3000.00")


def test_structuring_across_a_desk_and_a_table_raises_the_casino_s_alert(shift, session, pit_supervisor):
    with time_machine.travel(AT - dt.timedelta(minutes=5), tick=False):
        sale = services.ticket_sell(shift=shift, user=shift.cashier, amount=Decimal("1000.00"))
    buy_in = buy(session, pit_supervisor, "1000.00", {"chip_100": 10})

    alert = Alert.objects.get(kind="structuring_casino")
    assert alert.details["transactions"] == sorted([sale.pk, buy_in.transaction_id])


def test_structuring_across_two_tables_raises_the_alert(casino, session, pit_supervisor, croupier):
    from cashdesk.services.tables import table_create
    from machines.models import TableGame

    other = table_create(casino=casino, number="BJ1", game=TableGame.BLACK_JACK)
    with time_machine.travel(AT - dt.timedelta(hours=1), tick=False):
        second = table_open(table=other, croupier=croupier, pieces=FLOAT, user=pit_supervisor)
    first = buy(session, pit_supervisor, "990.00", {"chip_100": 9, "chip_5": 18})
    again = buy(second, pit_supervisor, "995.00", {"chip_100": 9, "chip_5": 19}, at=AT + dt.timedelta(minutes=4))
    alert = Alert.objects.get(kind="structuring_casino")
    assert alert.details["transactions"] == sorted([first.transaction_id, again.transaction_id])


@pytest.mark.parametrize(
    ("cash", "pieces", "seat", "code"),
    [
        ("100.00", {"chip_25": 3}, 1, "chips_not_cash"),
        ("0.00", {}, 1, "invalid_amount"),
        ("-25.00", {"chip_25": 1}, 1, "invalid_amount"),
        ("25.005", {"chip_25": 1}, 1, "invalid_amount"),
        ("25.00", {"chip_25": 1}, 0, "invalid_seat"),
        ("25.00", {"chip_25": 1}, 11, "invalid_seat"),
        ("5.00", {"token": 5}, 1, "not_a_chip"),
        ("500.00", {"chip_500": 1}, 1, "insufficient_stock"),
    ],
)
def test_a_bad_buy_in_is_refused_and_changes_nothing(casino, session, pit_supervisor, cash, pieces, seat, code):
    with pytest.raises(CashDeskError) as refused:
        buy(session, pit_supervisor, cash, pieces, seat=seat)
    assert refused.value.code == code
    assert not TableBuyIn.objects.exists()
    assert not CashTransaction.objects.filter(kind=TransactionKind.TABLE_BUY_IN).exists()


def test_a_closed_table_sells_no_chips(session, pit_supervisor):
    with time_machine.travel(AT, tick=False):
        table_close(session=session, pieces=FLOAT, user=pit_supervisor)
    with pytest.raises(CashDeskError) as refused:
        buy(session, pit_supervisor, "25.00", {"chip_25": 1}, at=AT + dt.timedelta(minutes=1))
    assert refused.value.code == "table_closed"


def test_the_same_buy_in_form_sent_twice_sells_once(table, session, pit_supervisor):
    first = buy(session, pit_supervisor, "50.00", {"chip_25": 2}, operation_key="c" * 32)
    again = buy(session, pit_supervisor, "50.00", {"chip_25": 2}, operation_key="c" * 32)
    assert again.pk == first.pk
    assert TableBuyIn.objects.count() == 1
    assert place_balances(books_of(table).drop_box)[Item.CASH] == Decimal("50.00")


def test_the_table_s_day_reconciles_to_the_cent(casino, table, session, pit_supervisor):
    buy(session, pit_supervisor, "150.00", {"chip_100": 1, "chip_25": 2})
    buy(session, pit_supervisor, "36.00", {"chip_25": 1, "chip_5": 2, "chip_1": 1})
    # After the buy-ins the tray holds 2414.00 in the books; at the closing it holds 157.00 more: the table's win.
    closing = {"chip_100": 9, "chip_25": 41, "chip_5": 107, "chip_1": 111}
    with time_machine.travel(AT + dt.timedelta(hours=1), tick=False):
        closed = table_close(session=session, pieces=closing, user=pit_supervisor)

    assert (closed.opening, closed.drop, closed.fills, closed.credits) == (Decimal("2600.00"), Decimal("186.00"), 0, 0)
    assert closed.closing == Decimal("2571.00")
    assert closed.win == closed.closing - closed.opening + closed.drop == Decimal("157.00")
    # In the books: the table results hold what the players lost, the players what they bought and took home.
    results = counterparty_balances(casino)[Counterparty.TABLE_WIN]
    assert -sum(results.values(), Decimal("0")) == closed.win
    assert place_balances(books_of(table).drop_box)[Item.CASH] == closed.drop
    assert_books_balance(casino)


def test_a_buy_in_with_chips_is_an_exchange_that_moves_no_value(casino, table, session, pit_supervisor):
    """A 500 chip for five 100s at the table: the tray's denominations change, its value does not; no cash, no drop,
    no register entry, and the table's result is what it would have been."""
    from cashdesk.services.tables import table_exchange, table_exchanges

    books = books_of(table)
    before = place_balances(books.tray)
    with time_machine.travel(AT, tick=False):
        move = table_exchange(
            session=session, handed={"chip_500": 1}, given={"chip_100": 5}, seat=4, user=pit_supervisor
        )
    assert (move.kind, move.amount, move.person_id) == (TransactionKind.TABLE_EXCHANGE, Decimal("500.00"), None)
    after = place_balances(books.tray)
    assert after[Item.CHIP_500] - before[Item.CHIP_500] == Decimal("500.00")
    assert after[Item.CHIP_100] - before[Item.CHIP_100] == Decimal("-500.00")
    assert sum(after.values()) == sum(before.values())
    assert place_balances(books.drop_box)[Item.CASH] == 0
    assert not RegisterEntry.objects.exists()
    assert table_exchanges(session) == [move]
    # Closing on the books' own count: the table won nothing, dropped nothing.
    closed = table_close(
        session=session, pieces={**FLOAT, "chip_500": FLOAT.get("chip_500", 0) + 1, "chip_100": 5}, user=pit_supervisor
    )
    assert (closed.drop, closed.win) == (Decimal("0.00"), Decimal("0.00"))
    assert_books_balance(casino)


@pytest.mark.parametrize(
    ("handed", "given", "code"),
    [
        ({"chip_500": 1}, {"chip_100": 4}, "chips_not_equal"),
        ({}, {}, "invalid_count"),
        ({"chip_100": 1}, {"chip_500": 1}, "chips_not_equal"),
        ({"chip_5": 200}, {"chip_500": 2}, "insufficient_stock"),  # the tray holds no 500s
        ({"cash": 5}, {"chip_5": 1}, "not_a_chip"),
    ],
)
def test_a_bad_exchange_is_refused_and_changes_nothing(table, session, pit_supervisor, handed, given, code):
    from cashdesk.services.tables import table_exchange

    before = place_balances(books_of(table).tray)
    with pytest.raises(CashDeskError) as refused:
        table_exchange(session=session, handed=handed, given=given, seat=1, user=pit_supervisor)
    assert refused.value.code == code
    assert place_balances(books_of(table).tray) == before
    assert not CashTransaction.objects.filter(kind=TransactionKind.TABLE_EXCHANGE).exists()


def test_the_exchange_page_sends_its_form_once(casino, table, session, pit_supervisor):
    from tests.cashdesk.conftest import logged_in_client

    pit = logged_in_client(pit_supervisor, casino)
    form = {"seat": 2, "in_chip_25": 4, "out_chip_5": 20, "operation_key": "e" * 32}
    for _ in range(2):
        assert pit.post(f"/pit/sessions/{session.pk}/exchange/", form).status_code == 302
    assert CashTransaction.objects.filter(kind=TransactionKind.TABLE_EXCHANGE).count() == 1
    page = pit.get(f"/pit/sessions/{session.pk}/").content.decode()
    assert 'id="exchanges"' in page
    refused = pit.post(f"/pit/sessions/{session.pk}/exchange/", {**form, "out_chip_5": 19, "operation_key": "f" * 32})
    assert refused.status_code == 200
    assert "must be worth the chips handed in" in refused.content.decode()

"""A gaming table's day in the books (issue 24): opened with a count of its tray and a croupier named, closed with a
count whose difference from the books is the table's result; the books balance to the cent throughout."""

from decimal import Decimal

import pytest
from django.db import IntegrityError, transaction

from cashdesk.books import counterparty_balances, place_balances
from cashdesk.errors import CashDeskError
from cashdesk.items import CHIPS, Item
from cashdesk.models import CashTransaction, Counterparty, ShiftCount, TablePlaces, TableSession, TransactionKind
from cashdesk.services.tables import table_close, table_open
from machines.models import GamingTable
from staff.models import StaffAssignment
from tests.cashdesk.test_kiosks import assert_books_balance
from tests.factories import make_user

pytestmark = pytest.mark.django_db

FLOAT = {"chip_100": 10, "chip_25": 40, "chip_5": 100, "chip_1": 100}  # 1000 + 1000 + 500 + 100 = 2600


def tray_of(table):
    return TablePlaces.objects.get(table=table).tray


def held(place):
    return sum(place_balances(place).values(), Decimal("0.00"))


def test_the_first_opening_brings_the_tray_s_chips_into_the_books(casino, table, pit_supervisor, croupier):
    session = table_open(table=table, croupier=croupier, pieces=FLOAT, user=pit_supervisor)

    assert (session.croupier, session.opened_by, session.opening) == (croupier, pit_supervisor, Decimal("2600.00"))
    assert session.is_open
    assert GamingTable.objects.get(pk=table.pk).is_open
    count = session.opening_count
    assert (count.desk, count.kind, count.counted_by) == (tray_of(table), ShiftCount.Kind.TRAY, pit_supervisor)
    assert count.transaction.kind == TransactionKind.OPENING_BALANCE
    assert held(tray_of(table)) == Decimal("2600.00")
    assert place_balances(tray_of(table))[Item.CHIP_25] == Decimal("1000.00")
    assert_books_balance(casino)


def test_a_closing_posts_the_table_s_win_and_the_next_opening_its_difference(casino, table, pit_supervisor, croupier):
    session = table_open(table=table, croupier=croupier, pieces=FLOAT, user=pit_supervisor)
    # The players lost 3 chips of 25 and 12 of 5 to the table and won one of 100 from it: the table won 35.
    closing = {**FLOAT, "chip_100": 9, "chip_25": 43, "chip_5": 112}
    closed = table_close(session=session, pieces=closing, user=pit_supervisor)

    assert (closed.closing, closed.fills, closed.credits, closed.drop) == (Decimal("2635.00"), 0, 0, 0)
    assert closed.win == Decimal("35.00")
    assert closed.closed_by == pit_supervisor
    assert not closed.is_open
    assert not GamingTable.objects.get(pk=table.pk).is_open
    result = closed.closing_count.transaction
    assert result.kind == TransactionKind.TABLE_RESULT
    assert counterparty_balances(casino)[Counterparty.TABLE_WIN][Item.CHIP_25] == Decimal("-75.00")
    assert held(tray_of(table)) == Decimal("2635.00")
    assert_books_balance(casino)

    # The next opening finds one chip of 5 missing: over/short, not the table's result.
    short = {**closing, "chip_5": 111}
    reopened = table_open(table=table, croupier=croupier, pieces=short, user=pit_supervisor)
    assert reopened.opening_count.transaction.kind == TransactionKind.COUNT
    assert counterparty_balances(casino)[Counterparty.OVER_SHORT][Item.CHIP_5] == Decimal("5.00")
    assert held(tray_of(table)) == Decimal("2630.00")
    assert_books_balance(casino)


def test_a_table_s_losing_shift_is_a_negative_win(casino, table, pit_supervisor, croupier):
    session = table_open(table=table, croupier=croupier, pieces=FLOAT, user=pit_supervisor)
    closed = table_close(session=session, pieces={**FLOAT, "chip_100": 4}, user=pit_supervisor)
    assert closed.win == Decimal("-600.00")
    assert counterparty_balances(casino)[Counterparty.TABLE_WIN][Item.CHIP_100] == Decimal("600.00")
    assert_books_balance(casino)


def test_a_closing_that_matches_the_books_posts_nothing_and_wins_nothing(table, pit_supervisor, croupier):
    session = table_open(table=table, croupier=croupier, pieces=FLOAT, user=pit_supervisor)
    closed = table_close(session=session, pieces=FLOAT, user=pit_supervisor)
    assert closed.win == 0
    assert closed.closing_count.transaction is None
    assert not CashTransaction.objects.filter(kind=TransactionKind.TABLE_RESULT).exists()


def test_the_croupier_is_another_member_of_the_casino_s_staff(casino, other_casino, table, pit_supervisor):
    stranger = make_user("svetimas")
    StaffAssignment.objects.create(user=stranger, casino=other_casino)
    gone = make_user("išėjęs")
    StaffAssignment.objects.create(user=gone, casino=casino)
    gone.is_active = False
    gone.save()
    for croupier, code in (
        (pit_supervisor, "croupier_is_supervisor"),
        (stranger, "croupier_not_staff"),
        (gone, "croupier_not_staff"),
    ):
        with pytest.raises(CashDeskError) as refused:
            table_open(table=table, croupier=croupier, pieces=FLOAT, user=pit_supervisor)
        assert refused.value.code == code
    assert not TableSession.objects.exists()
    assert not ShiftCount.objects.exists()
    assert not GamingTable.objects.get(pk=table.pk).is_open


def test_a_table_opens_once_and_closes_once(table, pit_supervisor, croupier):
    session = table_open(table=table, croupier=croupier, pieces=FLOAT, user=pit_supervisor)
    with pytest.raises(CashDeskError) as refused:
        table_open(table=table, croupier=croupier, pieces=FLOAT, user=pit_supervisor)
    assert refused.value.code == "table_open"
    table_close(session=session, pieces=FLOAT, user=pit_supervisor)
    with pytest.raises(CashDeskError) as refused:
        table_close(session=session, pieces=FLOAT, user=pit_supervisor)
    assert refused.value.code == "table_closed"
    assert TableSession.objects.count() == 1
    assert ShiftCount.objects.count() == 2


def test_the_same_form_sent_twice_opens_and_closes_once(table, pit_supervisor, croupier):
    first = table_open(table=table, croupier=croupier, pieces=FLOAT, user=pit_supervisor, operation_key="a" * 32)
    again = table_open(table=table, croupier=croupier, pieces=FLOAT, user=pit_supervisor, operation_key="a" * 32)
    assert again.pk == first.pk
    closed = table_close(session=first, pieces=FLOAT, user=pit_supervisor, operation_key="b" * 32)
    closed_again = table_close(session=first, pieces=FLOAT, user=pit_supervisor, operation_key="b" * 32)
    assert closed_again.pk == closed.pk
    assert closed_again.closed_at == closed.closed_at
    assert ShiftCount.objects.count() == 2


@pytest.mark.parametrize("pieces", [{"chip_5": -1}, {"token": 3}, {"cash": 10}])
def test_a_bad_count_is_refused_and_changes_nothing(table, pit_supervisor, croupier, pieces):
    with pytest.raises(CashDeskError):
        table_open(table=table, croupier=croupier, pieces=pieces, user=pit_supervisor)
    assert not TableSession.objects.exists()
    assert not ShiftCount.objects.exists()


def test_the_database_keeps_a_session_whole(table, pit_supervisor, croupier):
    session = table_open(table=table, croupier=croupier, pieces=FLOAT, user=pit_supervisor)
    with pytest.raises(IntegrityError), transaction.atomic():
        TableSession.objects.filter(pk=session.pk).update(croupier=pit_supervisor)
    with pytest.raises(IntegrityError), transaction.atomic():  # closed without its count and result
        TableSession.objects.filter(pk=session.pk).update(closed_at=session.opened_at, closed_by=pit_supervisor)
    with pytest.raises(IntegrityError), transaction.atomic():  # a second open session of the table
        TableSession.objects.create(
            table=table,
            croupier=croupier,
            opened_by=pit_supervisor,
            opened_at=session.opened_at,
            opening_count=ShiftCount.objects.create(
                desk=tray_of(table),
                kind=ShiftCount.Kind.TRAY,
                counted_by=pit_supervisor,
                counted_at=session.opened_at,
                chain=session.opening_count.chain,
                chain_sequence=99,
                chain_key="k",
                chain_mac="0" * 64,
            ),
            opening=0,
        )
    closed = table_close(session=session, pieces={**FLOAT, "chip_1": 90}, user=pit_supervisor)
    with pytest.raises(IntegrityError), transaction.atomic():  # a win that is not its parts
        TableSession.objects.filter(pk=closed.pk).update(win=closed.win + 1)
    assert set(CHIPS) >= set(FLOAT)

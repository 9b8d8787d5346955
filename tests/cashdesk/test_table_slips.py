"""Fills and credits of a table's tray (issue 24): asked for at the table, issued at the cage by another person,
posted when the pit supervisor confirms them; numbered without a gap per casino and year; voided by two people."""

from decimal import Decimal

import pytest
from django.db import IntegrityError, transaction

from cashdesk import services
from cashdesk.books import place_balances
from cashdesk.errors import CashDeskError
from cashdesk.items import Item
from cashdesk.models import TablePlaces, TableSlip, TransactionKind
from cashdesk.services.table_slips import slip_confirm, slip_issue, slip_request, slip_void, slip_void_ask
from cashdesk.services.tables import table_close, table_open
from machines.models import Casino, Place
from tests.cashdesk.test_kiosks import assert_books_balance
from tests.cashdesk.test_table_day import FLOAT

pytestmark = pytest.mark.django_db


@pytest.fixture
def session(table, croupier, pit_supervisor):
    return table_open(table=table, croupier=croupier, pieces=FLOAT, user=pit_supervisor)


def tray(table):
    return TablePlaces.objects.get(table=table).tray


def fill(session, desk, user, pieces=None, kind=TableSlip.Kind.FILL, **kwargs):
    """A slip asked for with `desk` set as the casino's cage of the tables."""
    Casino.objects.filter(pk=desk.casino_id).update(table_cage=desk)
    session.table.casino.refresh_from_db()
    return slip_request(session=session, kind=kind, pieces=pieces or {"chip_100": 5}, user=user, **kwargs)


def test_a_fill_moves_the_chips_when_the_table_confirms_it(casino, table, session, shift, cashier, pit_supervisor):
    slip = fill(session, shift.desk, pit_supervisor)
    assert (slip.state, slip.amount, slip.chips, slip.number) == ("requested", Decimal("500.00"), {"chip_100": 5}, 1)
    desk_chips = place_balances(shift.desk)[Item.CHIP_100]

    issued = slip_issue(slip=slip, user=cashier)
    assert issued.state == "issued"
    assert place_balances(shift.desk)[Item.CHIP_100] == desk_chips  # the books wait for the table

    done = slip_confirm(slip=issued, user=pit_supervisor)
    assert done.state == "confirmed"
    assert done.transaction.kind == TransactionKind.TABLE_FILL
    assert place_balances(shift.desk)[Item.CHIP_100] == desk_chips - 500
    assert place_balances(tray(table))[Item.CHIP_100] == Decimal("1500.00")
    assert services.shift_balances(shift)[Item.CHIP_100] == desk_chips - 500  # in the cashier's shift
    assert_books_balance(casino)


def test_fills_and_credits_are_in_the_table_s_result(casino, table, session, shift, cashier, pit_supervisor):
    slip_confirm(slip=slip_issue(slip=fill(session, shift.desk, pit_supervisor), user=cashier), user=pit_supervisor)
    credit = fill(session, shift.desk, pit_supervisor, pieces={"chip_25": 8}, kind=TableSlip.Kind.CREDIT)
    slip_confirm(slip=slip_issue(slip=credit, user=cashier), user=pit_supervisor)
    # The tray: 2600 + 500 - 200 = 2900 in the books; counted 2950 at the closing.
    closed = table_close(session=session, pieces={**FLOAT, "chip_100": 15, "chip_25": 34}, user=pit_supervisor)
    assert (closed.fills, closed.credits, closed.closing) == (Decimal("500.00"), Decimal("200.00"), Decimal("2950.00"))
    assert closed.win == Decimal("50.00")  # 2950 - 2600 + 200 - 500
    assert_books_balance(casino)


def test_slips_are_numbered_without_a_gap_and_a_void_stays_in_the_series(
    session, shift, cashier, supervisor, pit_supervisor
):
    first = fill(session, shift.desk, pit_supervisor)
    second = fill(session, shift.desk, pit_supervisor)
    asked = slip_void_ask(slip=first, user=pit_supervisor, reason="Asked twice")
    with pytest.raises(CashDeskError) as refused:
        slip_void(slip=asked, user=pit_supervisor)
    assert refused.value.code == "forbidden"  # a pit supervisor is no shift supervisor
    voided = slip_void(slip=asked, user=supervisor)
    assert voided.state == "voided"
    third = fill(session, shift.desk, pit_supervisor)
    assert [slip.number for slip in (first, second, third)] == [1, 2, 3]
    assert TableSlip.objects.count() == 3
    with pytest.raises(CashDeskError) as refused:
        slip_issue(slip=voided, user=cashier)
    assert refused.value.code == "slip_not_waiting"


def test_two_people_sign_each_step(session, shift, cashier, supervisor, pit_supervisor):
    slip = fill(session, shift.desk, pit_supervisor)
    with pytest.raises(CashDeskError) as refused:
        slip_confirm(slip=slip, user=pit_supervisor)
    assert refused.value.code == "slip_not_issued"
    with pytest.raises(CashDeskError) as refused:
        slip_issue(slip=slip, user=supervisor)  # not the cashier of the desk's shift
    assert refused.value.code == "not_the_cage"
    issued = slip_issue(slip=slip, user=cashier)
    with pytest.raises(CashDeskError) as refused:
        slip_confirm(slip=issued, user=cashier)
    assert refused.value.code == "same_person"
    with pytest.raises(IntegrityError), transaction.atomic():  # the database keeps the two names apart too
        TableSlip.objects.filter(pk=slip.pk).update(issued_by=pit_supervisor)


def test_the_cage_and_the_tray_never_go_below_zero(session, shift, cashier, pit_supervisor):
    with pytest.raises(CashDeskError) as refused:
        fill(session, shift.desk, pit_supervisor, pieces={"chip_500": 1}, kind=TableSlip.Kind.CREDIT)
    assert refused.value.code == "insufficient_stock"  # the tray has no 500 chip to give back
    big = fill(session, shift.desk, pit_supervisor, pieces={"chip_500": 1000})
    with pytest.raises(CashDeskError) as refused:
        slip_issue(slip=big, user=cashier)
    assert refused.value.code == "insufficient_stock"
    assert big.state == "requested"


def test_the_vault_issues_through_a_shift_supervisor(casino, table, session, vault, supervisor, pit_supervisor):
    services.vault_count(vault=vault, user=supervisor, counted={"cash": Decimal("1000.00"), "chip_25": 40})
    slip = fill(session, vault, pit_supervisor, pieces={"chip_25": 4})
    done = slip_confirm(slip=slip_issue(slip=slip, user=supervisor), user=pit_supervisor)
    assert done.transaction.desk == vault
    assert place_balances(vault)[Item.CHIP_25] == Decimal("900.00")
    assert place_balances(tray(table))[Item.CHIP_25] == Decimal("1100.00")
    assert_books_balance(casino)


def test_the_same_form_again_does_nothing_more(session, shift, cashier, pit_supervisor):
    slip = fill(session, shift.desk, pit_supervisor, operation_key="e" * 32)
    assert fill(session, shift.desk, pit_supervisor, operation_key="e" * 32).pk == slip.pk
    slip_issue(slip=slip, user=cashier)
    assert slip_issue(slip=slip, user=cashier).state == "issued"
    first = slip_confirm(slip=slip, user=pit_supervisor)
    again = slip_confirm(slip=slip, user=pit_supervisor)
    assert again.transaction_id == first.transaction_id
    assert TableSlip.objects.count() == 1


# The slips through the pages: the pit asks, the desk issues, the pit confirms; a void from the table and the
# supervisor; the slip printed on two parts.


def test_a_fill_through_the_pit_the_desk_and_back(casino, table, session, shift, cashier, supervisor, pit_supervisor):
    from tests.cashdesk.conftest import logged_in_client

    pit = logged_in_client(pit_supervisor, casino)
    desk = logged_in_client(cashier, casino)
    Casino.objects.filter(pk=casino.pk).update(table_cage=shift.desk)
    form = pit.get(f"/pit/sessions/{session.pk}/slip/?kind=to_table")
    assert form.status_code == 200
    assert "(Kasa 1, as the casino sets)" in form.content.decode()
    assert form.context["form"].initial["kind"] == "to_table"
    asked = pit.post(
        f"/pit/sessions/{session.pk}/slip/",
        {"kind": "to_table", "chip_100": 3, "operation_key": "f" * 32},
    )
    assert asked.status_code == 302
    slip = TableSlip.objects.get()
    page = desk.get("/desk/").content.decode()
    assert slip.number_display in page
    assert "Chip 100 € × 3" in page

    assert desk.post(f"/slips/{slip.pk}/issue/").status_code == 302
    assert pit.post(f"/slips/{slip.pk}/confirm/").status_code == 302
    slip.refresh_from_db()
    assert slip.state == "confirmed"
    assert place_balances(tray(table))[Item.CHIP_100] == Decimal("1300.00")
    table_page = pit.get(f"/pit/sessions/{session.pk}/").content.decode()
    assert f"confirmed by {pit_supervisor.username}" in table_page

    pdf = pit.get(f"/slips/{slip.pk}/slip.pdf")
    assert pdf["Content-Type"] == "application/pdf"

    second = fill(session, shift.desk, pit_supervisor)
    assert pit.post(f"/slips/{second.pk}/void-ask/", {"reason": "Asked by mistake"}).status_code == 302
    boss = logged_in_client(supervisor, casino)
    assert second.number_display in boss.get("/supervisor/").content.decode()
    assert boss.post(f"/slips/{second.pk}/void/").status_code == 302
    second.refresh_from_db()
    assert second.state == "voided"
    assert_books_balance(casino)


def test_a_table_closes_only_with_its_issued_slips_confirmed_or_voided(
    session, shift, cashier, supervisor, pit_supervisor
):
    issued = slip_issue(slip=fill(session, shift.desk, pit_supervisor), user=cashier)
    fill(session, shift.desk, pit_supervisor)  # asked for, not issued: nothing moved yet, it does not hold the table
    with pytest.raises(CashDeskError) as refused:
        table_close(session=session, pieces=FLOAT, user=pit_supervisor)
    assert refused.value.code == "slips_open"
    slip_void(slip=slip_void_ask(slip=issued, user=cashier, reason="Not sent"), user=supervisor)
    assert table_close(session=session, pieces=FLOAT, user=pit_supervisor).win == 0


def test_the_casino_sets_its_tables_cage_and_the_vault_serves_until_it_does(
    casino, table, session, vault, desk, other_casino, pit_supervisor
):
    from django.core.exceptions import ValidationError

    from cashdesk.models import TablePlaces as Places

    slip = slip_request(session=session, kind=TableSlip.Kind.FILL, pieces={"chip_100": 1}, user=pit_supervisor)
    assert slip.cage == vault  # no cage set: the vault
    casino.table_cage = desk
    casino.full_clean()
    casino.save()
    session.table.casino.refresh_from_db()
    slip = slip_request(session=session, kind=TableSlip.Kind.FILL, pieces={"chip_100": 1}, user=pit_supervisor)
    assert slip.cage == desk
    # Neither another casino's desk nor a table's own tray can be the cage.
    for place in (Place.objects.create(casino=other_casino, code="X1", name="Kita"), Places.objects.get().tray):
        casino.table_cage = place
        with pytest.raises(ValidationError) as refused:
            casino.full_clean()
        assert "table_cage" in refused.value.message_dict

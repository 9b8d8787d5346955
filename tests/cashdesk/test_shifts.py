from decimal import Decimal

import pytest
from django.db import IntegrityError, transaction

from cashdesk import services
from cashdesk.errors import CashDeskError
from cashdesk.models import Shift, ShiftCount
from tests.cashdesk.conftest import FLOAT
from tickets.models import Ticket


def test_open_records_the_float_as_the_opening_count(shift):
    balances = services.shift_balances(shift)
    assert balances["cash"] == Decimal("20000.00")
    assert balances["chip_500"] == Decimal("10000")
    assert balances["chip_0_50"] == Decimal("100.00")
    assert balances["token"] == Decimal("2000")
    opening = shift.counts.get(kind="opening")
    assert {line.item: line.variance for line in opening.lines.all()} == dict.fromkeys(balances, Decimal("0"))


def test_one_open_shift_per_desk(shift, desk, cashier2):
    with pytest.raises(CashDeskError, match="already has an open shift"):
        services.shift_open(desk=desk, cashier=cashier2, counted=FLOAT)


def test_one_open_shift_per_cashier(shift, casino, cashier):
    from machines.models import Place

    other = Place.objects.create(casino=casino, code="K2", name="Kasa 2")
    with pytest.raises(CashDeskError, match="already have an open shift"):
        services.shift_open(desk=other, cashier=cashier, counted=FLOAT)


def test_database_refuses_a_second_open_shift_behind_the_services_back(shift, cashier2):
    with pytest.raises(IntegrityError), transaction.atomic():
        Shift.objects.create(desk=shift.desk, cashier=cashier2, opened_at=shift.opened_at)


def test_only_cashiers_open_shifts(desk, supervisor):
    with pytest.raises(CashDeskError, match="Only cashiers"):
        services.shift_open(desk=desk, cashier=supervisor, counted=FLOAT)


@pytest.mark.parametrize(
    "counted", [{"cash": Decimal("-1")}, {"chip_5": 2.5}, {"cash": Decimal("1.001")}, {"colour_chip": 3}]
)
def test_bad_counts_are_refused(desk, cashier, counted):
    with pytest.raises(CashDeskError):
        services.shift_open(desk=desk, cashier=cashier, counted=counted)
    assert not Shift.objects.exists()


def test_close_records_the_variance_per_item(shift, cashier):
    services.chips_buy(shift=shift, user=cashier, chips={"chip_100": 3})
    counted = {**FLOAT, "cash": Decimal("20290.00"), "chip_100": 47}

    count = services.shift_close(shift=shift, user=cashier, counted=counted)

    lines = {line.item: line for line in count.lines.all()}
    assert lines["cash"].expected_amount == Decimal("20300.00")
    assert lines["cash"].variance == Decimal("-10.00")
    assert lines["chip_100"].expected_amount == Decimal("4700")
    assert lines["chip_100"].variance == Decimal("0")
    shift.refresh_from_db()
    assert shift.closed_at is not None


def test_closed_shift_takes_no_more_transactions(shift, cashier):
    services.shift_close(shift=shift, user=cashier, counted=FLOAT)
    with pytest.raises(CashDeskError, match="closed"):
        services.tokens_buy(shift=shift, user=cashier, count=5)


def test_only_the_shifts_cashier_works_it(shift, cashier2):
    with pytest.raises(CashDeskError, match="Only the cashier of this shift"):
        services.tokens_buy(shift=shift, user=cashier2, count=5)


def test_handover_closes_with_a_count_and_opens_the_next_shift(shift, cashier, cashier2):
    services.tokens_buy(shift=shift, user=cashier, count=10)
    counted = {**FLOAT, "cash": Decimal("20010.00"), "token": 1990}

    handover = services.shift_handover(shift=shift, user=cashier, counted=counted, next_cashier=cashier2)
    successor = services.handover_take_over(request=handover, user=cashier2, counted=counted).successor

    assert successor.cashier == cashier2
    assert successor.previous == shift
    handover = shift.counts.get(kind=ShiftCount.Kind.HANDOVER)
    assert all(line.variance == 0 for line in handover.lines.all())
    assert services.shift_balances(successor)["cash"] == Decimal("20010.00")
    assert services.shift_balances(successor)["token"] == Decimal("1990")


def test_next_opening_is_compared_with_what_the_last_shift_left(shift, cashier, cashier2, desk):
    services.shift_close(shift=shift, user=cashier, counted=FLOAT)
    reopened = services.shift_open(desk=desk, cashier=cashier2, counted={**FLOAT, "cash": Decimal("19950.00")})
    cash_line = reopened.counts.get(kind="opening").lines.get(item="cash")
    assert cash_line.expected_amount == Decimal("20000.00")
    assert cash_line.variance == Decimal("-50.00")


def test_another_cashier_cannot_work_the_shift_and_a_floor_attendant_cannot_either(
    api, shift, cashier2, floor, supervisor
):
    """From the adversarial review of the rebuilt money core: a guard of behaviour that held."""
    number = api.issued_ticket("10.00")
    with pytest.raises(CashDeskError) as refused:
        services.ticket_payout(shift=shift, user=cashier2, validation_number=number)
    assert refused.value.code == "not_your_shift"
    with pytest.raises(CashDeskError):
        services.chips_buy(shift=shift, user=supervisor, chips={"chip_5": 1})
    with pytest.raises(CashDeskError):
        services.shift_close(shift=shift, user=cashier2, counted=FLOAT)
    with pytest.raises(CashDeskError):
        services.transfer_request(shift=shift, user=floor, direction="drop", amount=Decimal("10.00"))
    assert Ticket.objects.get(validation_number=number).state == "issued"

"""A kiosk's fills and drops: approved by someone who may, for what the kiosk really holds."""

from decimal import Decimal

import pytest

from cashdesk.errors import CashDeskError
from cashdesk.models import Transfer
from cashdesk.services.kiosks import (
    kiosk_place,
    kiosk_transfer_approve,
    kiosk_transfer_cancel,
    kiosk_transfer_request,
)
from machines.models import Place
from tests.cashdesk.test_kiosks import assert_books_balance, fill, kiosk_cash
from tests.factories import make_user


def test_a_fill_waiting_for_approval_is_not_cash_and_a_cancelled_one_changes_nothing(
    api, kiosk, kiosk_api, stocked_vault, floor, supervisor
):
    """From the kiosk attack review of issue 14 (dispensing more than the kiosk holds): one attempt by a fraudster, a
    buggy firmware, a careless supervisor or a race.
    """
    fill(kiosk, floor, supervisor, amount="50.00")
    waiting = kiosk_transfer_request(machine=kiosk, user=floor, direction="fill", amount=Decimal("100.00"))
    big, small = api.issued_ticket("60.00"), api.issued_ticket("50.00")

    assert kiosk_api.authorize(big).json()["code"] == "kiosk_empty"
    assert kiosk_api.authorize(small).status_code == 200
    kiosk_transfer_cancel(transfer=waiting, user=supervisor)  # cancelled between authorize and commit
    assert kiosk_api.commit(small, dispensed="50.00").status_code == 200
    assert kiosk_cash(kiosk) == Decimal("0.00")
    assert kiosk_api.authorize(big).json()["code"] == "kiosk_empty"


def test_a_drop_requested_while_a_ticket_is_held_lets_that_ticket_finish_and_pays_no_other(
    api, casino, kiosk, kiosk_api, stocked_kiosk, floor, supervisor
):
    """From the kiosk attack review of issue 14 (dispensing more than the kiosk holds): one attempt by a fraudster, a
    buggy firmware, a careless supervisor or a race.
    """
    held, other = api.issued_ticket("100.00"), api.issued_ticket("10.00")
    assert kiosk_api.authorize(held).status_code == 200
    drop = kiosk_transfer_request(machine=kiosk, user=floor, direction="drop", amount=Decimal("900.00"))

    again = kiosk_api.authorize(held)  # its answer was lost: it asks again under a new request_id

    assert again.status_code == 200, again.json()
    assert again.json()["payout"] == "100.00"
    assert kiosk_api.authorize(other).json()["code"] == "kiosk_empty"
    with pytest.raises(CashDeskError) as busy:
        kiosk_transfer_approve(transfer=drop, supervisor=supervisor)
    assert busy.value.code == "kiosk_busy"
    assert kiosk_api.commit(held, dispensed="100.00").status_code == 200
    approved = kiosk_transfer_approve(transfer=drop, supervisor=supervisor)
    assert approved.count.lines.get().variance == Decimal("0.00")  # 1000 - 100 paid = 900 counted
    assert kiosk_cash(kiosk) == Decimal("0.00")
    assert kiosk_api.authorize(other).json()["code"] == "kiosk_empty"
    assert_books_balance(casino)


def test_a_fill_above_capacity_at_approval_is_refused_even_if_it_fitted_when_asked(
    casino, kiosk, kiosk_api, stocked_vault, floor, supervisor
):
    """From the kiosk attack review of issue 14 (dispensing more than the kiosk holds): one attempt by a fraudster, a
    buggy firmware, a careless supervisor or a race.
    """
    casino.kiosk_cash_capacity = Decimal("1000.00")
    casino.save()
    fill(kiosk, floor, supervisor, amount="900.00")
    waiting = kiosk_transfer_request(machine=kiosk, user=floor, direction="fill", amount=Decimal("100.00"))
    issued = kiosk_api.issue("20.00")  # a player breaks a note: the kiosk takes 20 in
    kiosk_api.printed(issued.json()["validation_number"])

    with pytest.raises(CashDeskError) as refused:
        kiosk_transfer_approve(transfer=waiting, supervisor=supervisor)

    assert refused.value.code == "over_capacity"
    assert kiosk_cash(kiosk) == Decimal("920.00")


def test_nobody_approves_a_kiosk_transfer_they_asked_for_or_may_not_approve(
    kiosk, stocked_vault, floor, supervisor, cashier
):
    """From the kiosk attack review of issue 14 (fills and drops): one attempt by a fraudster, a buggy firmware, a
    careless supervisor or a race.
    """
    second_floor = make_user("aldona", "floor_attendant")
    with pytest.raises(CashDeskError) as by_cashier:
        kiosk_transfer_request(machine=kiosk, user=cashier, direction="fill", amount=Decimal("10.00"))
    own = kiosk_transfer_request(machine=kiosk, user=supervisor, direction="fill", amount=Decimal("10.00"))

    with pytest.raises(CashDeskError) as by_self:
        kiosk_transfer_approve(transfer=own, supervisor=supervisor)
    with pytest.raises(CashDeskError) as by_floor:
        kiosk_transfer_approve(transfer=own, supervisor=second_floor)
    with pytest.raises(CashDeskError) as cancelled_by_floor:
        kiosk_transfer_cancel(transfer=own, user=second_floor)

    assert [error.value.code for error in (by_cashier, by_self, by_floor, cancelled_by_floor)] == [
        "forbidden",
        "own_request",
        "forbidden",
        "forbidden",
    ]
    kiosk_transfer_cancel(transfer=own, user=supervisor)
    with pytest.raises(CashDeskError) as after_cancel:
        kiosk_transfer_approve(transfer=own, supervisor=make_user("vida", "shift_supervisor"))
    assert after_cancel.value.code == "cancelled"
    assert kiosk_cash(kiosk) == Decimal("0.00")


@pytest.mark.parametrize(
    ("direction", "amount"),
    [
        ("fill", "-10.00"),
        ("fill", "0.00"),
        ("fill", "0.001"),
        ("fill", "100000.01"),
        ("fill", "9999999999.99"),
        ("drop", "-0.01"),
        ("drop", "10.005"),
        ("drop", "100000.01"),
        ("sideways", "10.00"),
    ],
)
def test_a_kiosk_transfer_of_a_wrong_amount_or_direction_is_refused(kiosk, floor, direction, amount):
    """From the kiosk attack review of issue 14 (fills and drops): one attempt by a fraudster, a buggy firmware, a
    careless supervisor or a race.
    """
    with pytest.raises(CashDeskError) as refused:
        kiosk_transfer_request(machine=kiosk, user=floor, direction=direction, amount=Decimal(amount))

    assert refused.value.code in ("invalid_amount", "over_limit", "invalid_direction")
    assert not Transfer.objects.exists()


def test_a_kiosk_gets_its_place_even_when_a_desk_took_its_code(api, casino, kiosk, kiosk_api, floor, supervisor):
    """From the kiosk attack review of issue 14 (fills and drops): one attempt by a fraudster, a buggy firmware, a
    careless supervisor or a race.
    """
    Place.objects.create(casino=casino, code=f"KS{kiosk.pk}", name="A desk named by hand")

    refused = kiosk_api.authorize(api.issued_ticket("10.00"))

    assert refused.json()["code"] == "kiosk_empty"
    place = kiosk_place(kiosk)
    assert (place.kind, place.machine, place.code) == (Place.Kind.KIOSK, kiosk, f"KS{kiosk.pk}-2")

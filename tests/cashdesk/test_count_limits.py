"""The largest counts the desk's forms accept are booked, not a database error (a 500)."""

from decimal import Decimal

import pytest

from cashdesk import forms, services
from cashdesk.errors import CashDeskError
from cashdesk.items import ALL_ITEMS, DENOMINATIONS, Item
from tests.cashdesk.conftest import FLOAT


def test_the_largest_count_the_form_allows_opens_a_shift(desk, cashier):
    largest = {item: field.max_value for item, field in forms.CountForm().fields.items() if item != Item.CASH}
    assert largest[Item.TOKEN] == 10_000_000  # over 2**31 / 500: the check constraint once overflowed on it
    form = forms.CountForm({Item.CASH: "1000.00", **{item: str(n) for item, n in largest.items()}})
    assert form.is_valid(), form.errors
    shift = services.shift_open(desk=desk, cashier=cashier, counted=form.counted())
    balances = services.shift_balances(shift)
    assert balances[Item.TOKEN] == Decimal(10_000_000)
    assert balances[Item.CHIP_500] == Decimal(5_000_000_000)
    assert {item for item in ALL_ITEMS if item != Item.CASH} == set(DENOMINATIONS)


def test_a_huge_count_accepted_by_the_form_is_refused_in_plain_words(shift, cashier):
    """A defect the adversarial review of the rebuilt money core found; this failed (a strict xfail) before its fix."""
    from cashdesk.forms import CountForm

    data = {item: "0" for item in FLOAT}
    data.update({"cash": "9999999999.99", "chip_500": "10000000"})
    form = CountForm(data)
    assert form.is_valid(), form.errors
    with pytest.raises(CashDeskError):
        services.shift_close(shift=shift, user=cashier, counted=form.counted())

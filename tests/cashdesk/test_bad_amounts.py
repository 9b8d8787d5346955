"""Amounts and counts the desk's services and forms refuse."""

from decimal import Decimal

import pytest

from cashdesk import services
from cashdesk.errors import CashDeskError
from cashdesk.models import CashTransaction


@pytest.mark.parametrize("amount", [Decimal("0"), Decimal("-1.00"), Decimal("0.001"), Decimal("1e12")])
def test_bad_sale_amounts_are_refused(shift, cashier, amount):
    """From the adversarial review of the rebuilt money core: a guard of behaviour that held."""
    with pytest.raises(CashDeskError):
        services.ticket_sell(shift=shift, user=cashier, amount=amount)
    assert not CashTransaction.objects.filter(kind="ticket_sale").exists()


@pytest.mark.parametrize("chips", [{"chip_5": -1}, {"chip_5": 0}, {"colour": 3}, {"chip_5": 1.5}, {"chip_5": "2"}])
def test_bad_chip_counts_are_refused(shift, cashier, chips):
    """From the adversarial review of the rebuilt money core: a guard of behaviour that held."""
    with pytest.raises(CashDeskError):
        services.chips_buy(shift=shift, user=cashier, chips=chips)


@pytest.mark.parametrize("count", [0, -3, 10_000_001, 2.0, "5"])
def test_bad_token_counts_are_refused(shift, cashier, count):
    """From the adversarial review of the rebuilt money core: a guard of behaviour that held."""
    with pytest.raises(CashDeskError):
        services.tokens_cashout(shift=shift, user=cashier, count=count)


@pytest.mark.parametrize(
    "value",
    ["١٢٣", "12.345", "-5", "1e3", "12,5,0", "\x0012", "99999999999.00"],
)
def test_desk_forms_refuse_bad_amounts(value):
    """From the adversarial review of the rebuilt money core: a guard of behaviour that held."""
    from cashdesk.forms import SellForm

    form = SellForm({"amount": value, "operation_key": "c" * 32})
    assert not form.is_valid()

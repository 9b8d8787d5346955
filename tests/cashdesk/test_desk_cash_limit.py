"""A desk refuses cash in above its limit (or warns, if it treats the limit as a warning)."""

from decimal import Decimal

import pytest

from cashdesk import services
from cashdesk.errors import CashDeskError
from machines.models import Place


def test_a_fill_cannot_take_the_desk_above_its_limit(shift, cashier, supervisor, vault, desk):
    """From the adversarial review of the rebuilt money core: a guard of behaviour that held."""
    services.vault_count(vault=vault, user=supervisor, counted={"cash": Decimal("50000.00")})
    Place.objects.filter(pk=desk.pk).update(cash_limit=Decimal("20500.00"))
    fill = services.transfer_request(shift=shift, user=cashier, direction="fill", amount=Decimal("600.00"))
    with pytest.raises(CashDeskError) as refused:
        services.transfer_approve(transfer=fill, supervisor=supervisor)
    assert refused.value.code == "over_cash_limit"


def test_a_cash_in_above_the_desk_limit_is_refused_until_a_drop(shift, cashier, supervisor, vault, desk, person):
    # The desk holds 20 000 of a 30 000 limit; reaching the limit is allowed, passing it is not.
    """Money-core defect found by trying the desk as a cashier, a supervisor and an attacker would (the vault going
    negative; the desk above its limit); it failed before the money core was rebuilt.
    """
    Place.objects.filter(pk=desk.pk).update(cash_limit=Decimal("30000.00"))
    services.ticket_sell(shift=shift, user=cashier, amount=Decimal("9000.00"), person=person)
    services.ticket_sell(shift=shift, user=cashier, amount=Decimal("1000.00"))
    with pytest.raises(CashDeskError) as refused:
        services.ticket_sell(shift=shift, user=cashier, amount=Decimal("5.00"))
    assert refused.value.code == "over_cash_limit"
    assert "30" in refused.value.message
    drop = services.transfer_request(shift=shift, user=cashier, direction="drop", amount=Decimal("5000.00"))
    services.transfer_approve(transfer=drop, supervisor=supervisor)
    assert services.ticket_sell(shift=shift, user=cashier, amount=Decimal("5.00")).amount == Decimal("5.00")


def test_a_desk_may_treat_its_limit_as_a_warning(shift, cashier, desk, person):
    """Money-core defect found by trying the desk as a cashier, a supervisor and an attacker would (the vault going
    negative; the desk above its limit); it failed before the money core was rebuilt.
    """
    Place.objects.filter(pk=desk.pk).update(cash_limit=Decimal("30000.00"), cash_limit_enforced=False)
    services.ticket_sell(shift=shift, user=cashier, amount=Decimal("9000.00"), person=person)
    services.ticket_sell(shift=shift, user=cashier, amount=Decimal("1000.00"))
    services.ticket_sell(shift=shift, user=cashier, amount=Decimal("5.00"))
    assert services.shift_balances(shift)["cash"] == Decimal("30005.00")

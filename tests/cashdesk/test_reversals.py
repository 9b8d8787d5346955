"""Reversals: who approves them, what they may reverse, and the limits they respect."""

from decimal import Decimal

import pytest

from cashdesk import services
from cashdesk.books import place_balances
from cashdesk.errors import CashDeskError
from machines.models import Place
from tests.cashdesk.conftest import FLOAT, unbalanced_items
from tests.factories import make_user
from tickets.models import Ticket


def test_a_reversal_cannot_take_the_desk_above_its_cash_limit(shift, cashier, supervisor, desk, person):
    """A defect the adversarial review of the rebuilt money core found; this failed (a strict xfail) before its fix."""
    Place.objects.filter(pk=desk.pk).update(cash_limit=Decimal("21000.00"))
    # Chips for cash: 1 000 leaves the desk (19 000), then 2 000 of ticket sales fill it to its limit.
    cashout = services.chips_cashout(shift=shift, user=cashier, chips={"chip_500": 2})
    services.ticket_sell(shift=shift, user=cashier, amount=Decimal("1000.00"))
    services.ticket_sell(shift=shift, user=cashier, amount=Decimal("1000.00"))
    assert place_balances(desk)["cash"] == Decimal("21000.00")
    request = services.reversal_request(original=cashout, user=cashier, reason="wrong chips")
    with pytest.raises(CashDeskError) as refused:
        services.reversal_approve(request=request, supervisor=supervisor)
    assert refused.value.code == "over_cash_limit"
    assert place_balances(desk)["cash"] <= Decimal("21000.00")


def test_reversals_of_reversals_fills_drops_and_payouts_are_refused(api, shift, cashier, supervisor, vault):
    """From the adversarial review of the rebuilt money core: a guard of behaviour that held."""
    services.vault_count(vault=vault, user=supervisor, counted={"cash": Decimal("50000.00")})
    buy = services.chips_buy(shift=shift, user=cashier, chips={"chip_5": 2})
    request = services.reversal_request(original=buy, user=cashier, reason="mistake")
    reversal = services.reversal_approve(request=request, supervisor=supervisor)
    fill = services.transfer_approve(
        transfer=services.transfer_request(shift=shift, user=cashier, direction="fill", amount=Decimal("100.00")),
        supervisor=supervisor,
    )
    payout = services.ticket_payout(shift=shift, user=cashier, validation_number=api.issued_ticket("5.00"))
    for original in (reversal, fill, payout):
        with pytest.raises(CashDeskError) as refused:
            services.reversal_request(original=original, user=cashier, reason="again")
        assert refused.value.code == "not_reversible"
    with pytest.raises(CashDeskError) as twice:
        services.reversal_approve(request=request, supervisor=make_user("s2", "shift_supervisor"))
    assert twice.value.code == "already_approved"
    with pytest.raises(CashDeskError):
        services.reversal_request(original=buy, user=cashier, reason="once more", operation_key="b" * 32)
    assert unbalanced_items(shift.desk.casino) == {}


def test_a_reversal_after_the_cash_was_dropped_cannot_take_the_desk_below_zero(casino, cashier, supervisor, vault):
    """From the adversarial review of the rebuilt money core: a guard of behaviour that held."""
    desk = Place.objects.create(casino=casino, code="Z1", name="Kasa Z1", cash_limit=Decimal("500000.00"))
    services.vault_count(vault=vault, user=supervisor, counted={"cash": Decimal("0.00")})
    shift = services.shift_open(desk=desk, cashier=cashier, counted={"cash": Decimal("0.00"), "chip_100": 10})
    assert place_balances(desk)["cash"] == 0
    buy = services.chips_buy(shift=shift, user=cashier, chips={"chip_100": 5})
    drop = services.transfer_request(shift=shift, user=cashier, direction="drop", amount=Decimal("500.00"))
    services.transfer_approve(transfer=drop, supervisor=supervisor)
    request = services.reversal_request(original=buy, user=cashier, reason="wrong")
    with pytest.raises(CashDeskError) as refused:
        services.reversal_approve(request=request, supervisor=supervisor)
    assert refused.value.code == "insufficient_stock"
    assert place_balances(desk)["cash"] == 0


def test_a_reversal_is_not_approved_by_its_cashier_nor_a_cashier(shift, cashier, cashier2):
    """From the adversarial review of the rebuilt money core: a guard of behaviour that held."""
    both = make_user("both", "cashier", "shift_supervisor")
    buy = services.chips_buy(shift=shift, user=cashier, chips={"chip_5": 2})
    with pytest.raises(CashDeskError, match="Only the cashier who made"):
        services.reversal_request(original=buy, user=both, reason="x")
    request = services.reversal_request(original=buy, user=cashier, reason="x")
    for approver in (cashier, cashier2):
        with pytest.raises(CashDeskError):
            services.reversal_approve(request=request, supervisor=approver)


def test_a_reversed_sale_voids_its_ticket_and_a_redeemed_one_is_not_reversed(api, make_api, shift, cashier, supervisor):
    """From the adversarial review of the rebuilt money core: a guard of behaviour that held."""
    sale = services.ticket_sell(shift=shift, user=cashier, amount=Decimal("40.00"))
    services.reversal_approve(
        request=services.reversal_request(original=sale, user=cashier, reason="x"), supervisor=supervisor
    )
    assert Ticket.objects.get(pk=sale.ticket_id).state == "void"
    with pytest.raises(CashDeskError):
        services.ticket_payout(shift=shift, user=cashier, validation_number=sale.ticket.validation_number)

    sale2 = services.ticket_sell(shift=shift, user=cashier, amount=Decimal("40.00"))
    machine = make_api(asset_number="1009")
    number = sale2.ticket.validation_number
    assert machine.authorize(number).status_code == 200
    request = services.reversal_request(original=sale2, user=cashier, reason="x")
    with pytest.raises(CashDeskError) as refused:
        services.reversal_approve(request=request, supervisor=supervisor)
    assert refused.value.code == "invalid_state"


def test_a_reversal_is_not_approved_while_its_shift_is_handed_over(shift, cashier, cashier2, supervisor, stocked_vault):
    """Found by the adversarial review of issue 21's first fix (four eyes on write-offs): a fill, drop or reversal
    approved while a hand-over waited was written off to the incoming cashier, unasked.
    """
    sale = services.ticket_sell(shift=shift, user=cashier, amount=Decimal("50.00"))
    reversal = services.reversal_request(original=sale, user=cashier, reason="wrong amount")
    services.shift_handover(
        shift=shift, user=cashier, counted={**FLOAT, "cash": FLOAT["cash"] + Decimal("50.00")}, next_cashier=cashier2
    )

    with pytest.raises(CashDeskError) as refused:
        services.reversal_approve(request=reversal, supervisor=supervisor)

    assert refused.value.code == "count_waiting"

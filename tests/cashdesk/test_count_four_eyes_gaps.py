"""Issue 21, four eyes on write-offs: the gaps an adversarial review found after the first fix.

- a fill or drop approved while a hand-over waited was written off to the incoming cashier, unasked;
- a write-off split into counts each within the limit posted at once, however large the sum;
- the vault count form sent twice posted a second count (its key was kept only when the count waited).
"""

from decimal import Decimal

import pytest

from cashdesk import models, services
from cashdesk.books import counterparty_balances, place_balances
from cashdesk.errors import CashDeskError
from cashdesk.models import Shift, ShiftCount
from tests.cashdesk.conftest import FLOAT, VAULT_CASH
from tests.factories import make_user


@pytest.fixture
def supervisor2(db):
    return make_user("laura", "shift_supervisor")


def test_a_transfer_is_not_approved_while_its_shift_is_handed_over(
    shift, cashier, cashier2, supervisor, casino, desk, stocked_vault
):
    fill = services.transfer_request(shift=shift, user=cashier, direction="fill", amount=Decimal("1000.00"))
    services.shift_handover(shift=shift, user=cashier, counted=FLOAT, next_cashier=cashier2)

    with pytest.raises(CashDeskError) as refused:
        services.transfer_approve(transfer=fill, supervisor=supervisor)

    assert refused.value.code == "count_waiting"
    assert place_balances(desk)["cash"] == FLOAT["cash"]
    request = models.CountRequest.objects.get(shift=shift)
    services.handover_take_over(request=request, user=cashier2, counted=FLOAT)
    assert Shift.objects.filter(cashier=cashier2, closed_at__isnull=True).exists()
    assert counterparty_balances(casino)["over_short"].get("cash", Decimal("0")) == 0


def test_a_reversal_is_not_approved_while_its_shift_is_handed_over(shift, cashier, cashier2, supervisor, stocked_vault):
    sale = services.ticket_sell(shift=shift, user=cashier, amount=Decimal("50.00"))
    reversal = services.reversal_request(original=sale, user=cashier, reason="wrong amount")
    services.shift_handover(
        shift=shift, user=cashier, counted={**FLOAT, "cash": FLOAT["cash"] + Decimal("50.00")}, next_cashier=cashier2
    )

    with pytest.raises(CashDeskError) as refused:
        services.reversal_approve(request=reversal, supervisor=supervisor)

    assert refused.value.code == "count_waiting"


def test_differences_split_into_counts_within_the_limit_wait_once_their_sum_passes_it(
    stocked_vault, supervisor, casino
):
    assert casino.count_approval_limit == Decimal("100.00")
    first = services.vault_count(vault=stocked_vault, user=supervisor, counted={"cash": VAULT_CASH - Decimal("60.00")})
    assert isinstance(first, ShiftCount)

    second = services.vault_count(
        vault=stocked_vault, user=supervisor, counted={"cash": VAULT_CASH - Decimal("120.00")}
    )

    assert isinstance(second, models.CountRequest)
    assert place_balances(stocked_vault)["cash"] == VAULT_CASH - Decimal("60.00")


def test_a_count_approved_by_a_second_supervisor_does_not_count_towards_the_next(
    stocked_vault, supervisor, supervisor2
):
    services.vault_count(vault=stocked_vault, user=supervisor, counted={"cash": VAULT_CASH - Decimal("500.00")})
    services.count_request_approve(request=models.CountRequest.objects.get(status="waiting"), supervisor=supervisor2)

    later = services.vault_count(vault=stocked_vault, user=supervisor, counted={"cash": VAULT_CASH - Decimal("550.00")})

    assert isinstance(later, ShiftCount)


def test_the_vault_count_form_sent_twice_posts_once(stocked_vault, supervisor, supervisor2, shift, cashier):
    key = "k" * 32
    first = services.vault_count(
        vault=stocked_vault, user=supervisor, counted={"cash": VAULT_CASH - Decimal("50.00")}, operation_key=key
    )
    drop = services.transfer_request(shift=shift, user=cashier, direction="drop", amount=Decimal("80.00"))
    services.transfer_approve(transfer=drop, supervisor=supervisor2)

    again = services.vault_count(
        vault=stocked_vault, user=supervisor, counted={"cash": VAULT_CASH - Decimal("50.00")}, operation_key=key
    )

    assert again == first
    assert ShiftCount.objects.filter(desk=stocked_vault, kind="vault").count() == 2  # the stocking and this one
    assert place_balances(stocked_vault)["cash"] == VAULT_CASH - Decimal("50.00") + Decimal("80.00")

"""A transfer is approved only while its shift is open."""

from decimal import Decimal

import pytest
from django.db import connection

from cashdesk import models, services
from cashdesk.books import counterparty_balances, place_balances
from cashdesk.errors import CashDeskError
from cashdesk.models import Leg, Shift
from machines.models import Place
from tests.cashdesk.conftest import FLOAT
from tests.factories import make_user
from tests.races import race


@pytest.mark.django_db(transaction=True)
def test_a_transfer_approved_while_the_shift_closes_is_refused(casino):
    """A defect the adversarial review of the rebuilt money core found; this failed (a strict xfail) before its fix."""
    assert connection.vendor == "postgresql"
    cashier = make_user("tr-cashier", "cashier")
    supervisor = make_user("tr-super", "shift_supervisor")
    desk = Place.objects.create(casino=casino, code="T1", name="Kasa T1", cash_limit=Decimal("500000.00"))
    vault = Place.objects.create(casino=casino, code="TV", name="Vault", kind=Place.Kind.VAULT)
    services.vault_count(vault=vault, user=supervisor, counted={"cash": Decimal("100000.00")})
    shift = services.shift_open(desk=desk, cashier=cashier, counted={"cash": Decimal("1000.00")})
    fill = services.transfer_request(shift=shift, user=cashier, direction="fill", amount=Decimal("5000.00"))

    # The gate is shift_close's transaction: it holds the desk's lock and sets closed_at, then commits
    # once the approval waits on the desk (exactly what shift_close does under lock_shift).
    gate = (
        "WITH closed AS (UPDATE cashdesk_shift SET closed_at = now() WHERE id = %s RETURNING desk_id) "
        "SELECT d.id FROM cashdesk_cashdesk d JOIN closed ON closed.desk_id = d.id FOR UPDATE OF d",
        [shift.pk],
    )
    [result] = race([lambda: services.transfer_approve(transfer=fill, supervisor=supervisor)], gate=gate)

    assert isinstance(result, CashDeskError), result
    assert result.code == "shift_closed"
    assert not Leg.objects.filter(shift=shift, transaction__kind="fill").exists()


def test_a_transfer_of_a_closed_shift_is_not_approved(shift, cashier, supervisor, vault):
    """From the adversarial review of the rebuilt money core: a guard of behaviour that held."""
    services.vault_count(vault=vault, user=supervisor, counted={"cash": Decimal("50000.00")})
    fill = services.transfer_request(shift=shift, user=cashier, direction="fill", amount=Decimal("100.00"))
    services.shift_close(shift=shift, user=cashier, counted=FLOAT)
    with pytest.raises(CashDeskError) as refused:
        services.transfer_approve(transfer=fill, supervisor=supervisor)
    assert refused.value.code == "shift_closed"


def test_a_transfer_is_not_approved_while_its_shift_is_handed_over(
    shift, cashier, cashier2, supervisor, casino, desk, stocked_vault
):
    """Found by the adversarial review of issue 21's first fix (four eyes on write-offs): a fill, drop or reversal
    approved while a hand-over waited was written off to the incoming cashier, unasked.
    """
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

"""Two supervisors approving one waiting count at once: it is posted once, and the loser waited for the winner."""

from decimal import Decimal

import pytest
from django.db import connection

from cashdesk import models, services
from cashdesk.books import place_balances
from cashdesk.errors import CashDeskError
from cashdesk.models import CashTransaction, TransactionKind
from machines.models import Place
from tests.factories import make_user
from tests.races import race


@pytest.mark.django_db(transaction=True)
def test_two_supervisors_approving_one_count_at_once_post_it_once(casino):
    assert connection.vendor == "postgresql"
    counter = make_user("race-counter", "shift_supervisor")
    approvers = [make_user(f"race-approver-{n}", "shift_supervisor") for n in range(2)]
    vault = Place.objects.create(casino=casino, code="V", name="Vault", kind=Place.Kind.VAULT)
    services.vault_count(vault=vault, user=counter, counted={"cash": Decimal("100000.00")})
    services.vault_count(vault=vault, user=counter, counted={"cash": Decimal("100.00")})
    request = models.CountRequest.objects.get(status="waiting")

    def approve(supervisor):
        try:
            services.count_request_approve(request=request, supervisor=supervisor)
            return "approved"
        except CashDeskError as refused:
            return refused.code

    results = race(
        [lambda s=s: approve(s) for s in approvers],
        gate=("SELECT id FROM cashdesk_countrequest WHERE id = %s FOR UPDATE", [request.pk]),
    )

    assert sorted(results) == ["already_decided", "approved"], results
    assert CashTransaction.objects.filter(kind=TransactionKind.COUNT).count() == 1
    assert place_balances(vault)["cash"] == Decimal("100.00")
    request.refresh_from_db()
    assert request.decided_by in approvers

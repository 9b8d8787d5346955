"""A refused count comes back to the cashier still blind: no amount the desk holds."""

from decimal import Decimal

import pytest

from cashdesk import services
from cashdesk.models import Shift
from machines.models import Place
from staff.models import StaffAssignment
from tests.cashdesk.conftest import FLOAT, MONEY, count_form_data
from tests.factories import with_key


@pytest.mark.parametrize("path", ["/desk/close/", "/desk/handover/"])
def test_a_bad_count_comes_back_still_blind(desk_client, path):
    """From the adversarial review of the issue 12 change (blind counts): a probe a careless or hostile user could hit,
    kept as a regression test.
    """
    response = desk_client.post(path, count_form_data(cash="-5", chip_500="abc"))
    assert response.status_code == 200
    html = response.content.decode()
    assert 'id="balances"' not in html
    assert "/documents/shift/" not in html  # no X report link
    assert not MONEY.search(html), "an amount on the blind count's page"
    assert Shift.objects.filter(closed_at__isnull=True).exists()


def test_a_count_the_service_refuses_comes_back_still_blind(desk_client):
    """From the adversarial review of the issue 12 change (blind counts): a probe a careless or hostile user could hit,
    kept as a regression test.
    """
    huge = count_form_data(
        cash="9999999999.99", **dict.fromkeys(["chip_500", "chip_100", "chip_25", "token"], 10_000_000)
    )
    response = desk_client.post("/desk/close/", huge)
    assert response.status_code == 200
    html = response.content.decode()
    assert "too large" in html
    assert 'id="balances"' not in html
    assert not MONEY.search(html)


def test_a_handover_to_a_busy_cashier_comes_back_still_blind(desk_client, cashier2, casino):
    """From the adversarial review of the issue 12 change (blind counts): a probe a careless or hostile user could hit,
    kept as a regression test.
    """
    other = Place.objects.create(casino=casino, code="K2", name="Kasa 2", cash_limit=Decimal("500000.00"))
    services.shift_open(desk=other, cashier=cashier2, counted=FLOAT)
    StaffAssignment.objects.create(user=cashier2, casino=casino)
    response = desk_client.post("/desk/handover/", with_key(count_form_data(next_cashier=cashier2.pk)))
    assert response.status_code == 200
    assert "already has an open shift" in response.content.decode()
    html = response.content.decode()
    assert 'id="balances"' not in html
    assert not MONEY.search(html)

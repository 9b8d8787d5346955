"""The blind count (Casino.blind_count, on by default): the cashier sees no expected balances during a shift.

Issue 21 ("Trust holes"): the desk's side panel showed the cashier's running
cash and chips, so the closing count was not blind. With the setting on, no page
or paper the cashier sees during the shift shows what the desk should hold: not
the side panel, not the X report (a supervisor's mid-shift reading), not a
refusal's wording. Supervisors still see the balances.
"""

import re
from decimal import Decimal

import pytest
from django.test import Client

from cashdesk import services
from cashdesk.errors import CashDeskError
from casino_office.money import format_money
from machines.models import Place
from staff.models import StaffAssignment
from tests.cashdesk.conftest import FLOAT
from tests.factories import with_key

# An amount as the pages write it in English: €20,000.00, 20,000.00, 5 pcs.
AMOUNT = re.compile(r"€\s?\d|\d[\d,]*\.\d\d|\bpcs\b")


def _client(casino, user):
    StaffAssignment.objects.get_or_create(user=user, casino=casino)
    client = Client()
    client.force_login(user)
    client.post("/language/", {"language": "en", "next": "/"})
    return client


def _panel(html: str) -> str:
    found = re.search(r'<aside class="balances".*?</aside>', html, re.S)
    assert found, "the desk's side panel"
    return found.group(0)


@pytest.fixture
def desk_client(casino, cashier, shift):
    return _client(casino, cashier)


def _pages(desk_client, shift, cashier) -> dict[str, str]:
    tx = services.tokens_buy(shift=shift, user=cashier, count=5)
    return {
        path: desk_client.get(path).content.decode()
        for path in ("/desk/", "/desk/chips/", "/desk/sell/", "/desk/transfer/", f"/desk/transactions/{tx.pk}/")
    }


def test_with_the_blind_count_the_cashiers_pages_show_no_balance(desk_client, shift, cashier):
    assert shift.desk.casino.blind_count  # the default
    for path, html in _pages(desk_client, shift, cashier).items():
        panel = _panel(html)
        assert shift.desk.name in panel, path
        assert not AMOUNT.search(panel), (path, panel)
        assert "/documents/shift/" not in html, path  # no X report to print


def test_without_the_blind_count_the_panel_shows_the_running_balances(desk_client, shift, cashier, casino):
    casino.blind_count = False
    casino.save()
    for path, html in _pages(desk_client, shift, cashier).items():
        panel = _panel(html)
        assert "€20,005.00" in panel, path  # the float's cash and the 5 tokens sold
        assert "1995 pcs" in panel, path
        assert f"/documents/shift/{shift.pk}.pdf" in panel, path


def test_over_the_desk_limit_the_blind_panel_says_so_without_the_figure(desk_client, shift):
    Place.objects.filter(pk=shift.desk_id).update(cash_limit=Decimal("10000.00"))
    panel = _panel(desk_client.get("/desk/").content.decode())
    assert "over the desk limit" in panel
    assert not AMOUNT.search(panel), panel


def test_the_cashier_prints_no_x_report_of_an_open_shift_under_the_blind_count(
    casino, desk_client, shift, cashier, supervisor, manager
):
    path = f"/documents/shift/{shift.pk}.pdf"
    assert desk_client.get(path).status_code == 403
    # A supervisor's mid-shift reading, and the manager's.
    assert _client(casino, supervisor).get(path)["Content-Type"] == "application/pdf"
    assert _client(casino, manager).get(path)["Content-Type"] == "application/pdf"
    casino.blind_count = False
    casino.save()
    assert desk_client.get(path)["Content-Type"] == "application/pdf"


def test_after_the_closing_count_the_cashier_prints_the_z_report(casino, desk_client, shift, cashier):
    services.shift_close(shift=shift, user=cashier, counted=FLOAT)
    assert desk_client.get(f"/documents/shift/{shift.pk}.pdf")["Content-Type"] == "application/pdf"


def test_a_sale_of_chips_the_desk_does_not_hold_is_refused_naming_the_shortage(shift, cashier):
    with pytest.raises(CashDeskError) as refused:
        services.chips_buy(shift=shift, user=cashier, chips={"chip_5": 103, "chip_1": 2})
    assert refused.value.code == "insufficient_stock"
    message = refused.value.message
    assert "Chip 5 €" in message
    assert "3 pcs" in message  # the float holds 100: three short
    assert format_money(Decimal("15.00")) in message
    assert format_money(Decimal("500.00")) not in message  # what the desk holds is not told


def test_the_chips_form_shows_the_shortage_and_no_balance(desk_client, shift):
    page = desk_client.post("/desk/chips/", with_key({"direction": "buy", "chip_5": "101"}))
    html = page.content.decode()
    assert page.status_code == 200
    assert "does not hold enough Chip 5 €: 1 pcs (€5.00) short" in html
    assert "€500.00" not in html
    assert not shift.transactions.filter(kind="chips_buy").exists()


def test_a_cash_in_over_the_desk_limit_does_not_tell_the_blind_cashier_what_the_desk_holds(shift, cashier):
    Place.objects.filter(pk=shift.desk_id).update(cash_limit=Decimal("20500.00"))
    with pytest.raises(CashDeskError) as refused:
        services.ticket_sell(shift=shift, user=cashier, amount=Decimal("600.00"))
    assert refused.value.code == "over_cash_limit"
    assert format_money(Decimal("20500.00")) in refused.value.message
    assert format_money(Decimal("20000.00")) not in refused.value.message


def test_without_the_blind_count_the_cash_limit_refusal_tells_what_the_desk_holds(shift, cashier, casino):
    casino.blind_count = False
    casino.save()
    Place.objects.filter(pk=shift.desk_id).update(cash_limit=Decimal("20500.00"))
    with pytest.raises(CashDeskError) as refused:
        services.ticket_sell(shift=shift, user=cashier, amount=Decimal("600.00"))
    assert format_money(Decimal("20000.00")) in refused.value.message


def test_the_open_shifts_summary_offers_its_cashier_no_x_report_under_the_blind_count(
    casino, desk_client, shift, supervisor
):
    path = f"/shifts/{shift.pk}/"
    assert "/documents/shift/" not in desk_client.get(path).content.decode()
    assert f"/documents/shift/{shift.pk}.pdf" in _client(casino, supervisor).get(path).content.decode()
    casino.blind_count = False
    casino.save()
    assert f"/documents/shift/{shift.pk}.pdf" in desk_client.get(path).content.decode()

"""The desk's forms: a one-time key per rendered form, ASCII digits only, the smart-card load."""

import re
from decimal import Decimal

import pytest
from django.test import Client

from cashdesk import services
from cashdesk.books import counterparty_balances
from cashdesk.models import CashTransaction, SmartCardRead
from staff.models import StaffAssignment
from tests.factories import with_key


@pytest.fixture
def desk_client(shift, cashier, casino):
    StaffAssignment.objects.create(user=cashier, casino=casino)
    client = Client()
    client.force_login(cashier)
    return client


def _rendered_key(client, path: str) -> str:
    page = client.get(path).content.decode()
    key = re.search(r'name="operation_key" value="([0-9a-f]+)"', page)
    assert key, "the form carries no operation key"
    return key.group(1)


def test_each_rendering_of_a_form_carries_a_new_key(desk_client):
    assert _rendered_key(desk_client, "/desk/chips/") != _rendered_key(desk_client, "/desk/chips/")


def test_a_form_sent_twice_shows_the_first_receipt_and_writes_once(desk_client):
    key = _rendered_key(desk_client, "/desk/chips/")
    form = {"direction": "buy", "chip_25": "4", "operation_key": key}

    first = desk_client.post("/desk/chips/", form)
    again = desk_client.post("/desk/chips/", form)

    assert first.status_code == again.status_code == 302
    assert first["Location"] == again["Location"]
    assert CashTransaction.objects.filter(kind="chips_buy").count() == 1


def test_a_form_without_its_key_is_refused_and_writes_nothing(desk_client):
    page = desk_client.post("/desk/chips/", {"direction": "buy", "chip_25": "4"})
    assert page.status_code == 200
    assert "This form has expired" in page.content.decode()
    assert not CashTransaction.objects.filter(kind="chips_buy").exists()


@pytest.mark.parametrize("typed", ["١٢٣", "\uff11\uff12", "12e3", "1 000"])
def test_amounts_are_typed_with_ascii_digits_only(desk_client, typed):
    page = desk_client.post("/desk/sell/", with_key({"amount": typed}))
    assert page.status_code == 200
    assert not CashTransaction.objects.filter(kind="ticket_sale").exists()


def test_cash_onto_a_smart_card_is_booked_as_credits_outstanding(desk_client, casino):
    done = desk_client.post(
        "/desk/smartcard/load/", with_key({"card_number": "SC5", "amount": "50.00", "card_counter": "7"})
    )
    assert done.status_code == 302
    read = SmartCardRead.objects.get()
    assert (read.card_number, read.card_counter, read.transaction.kind) == ("SC5", 7, "smartcard_load")
    assert counterparty_balances(casino)["smartcards"]["cash"] == Decimal("-50.00")
    # Paying the card out later settles the credits outstanding.
    services.smartcard_payout(
        shift=read.transaction.shift,
        user=read.transaction.created_by,
        card_number="SC5",
        credits=Decimal("50"),
        card_counter=8,
    )
    assert counterparty_balances(casino)["smartcards"]["cash"] == Decimal("0.00")

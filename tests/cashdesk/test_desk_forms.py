"""The desk's forms: a one-time key per rendered form, ASCII digits only, the smart-card load."""

import re
from decimal import Decimal

import pytest
from django.test import Client

from cashdesk import services
from cashdesk.books import counterparty_balances, place_balances
from cashdesk.errors import CashDeskError
from cashdesk.models import CashTransaction, SmartCardRead
from machines.models import Place
from staff.models import StaffAssignment
from tests.cashdesk.conftest import FLOAT
from tests.factories import make_user, with_key
from tests.races import race


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


def test_a_ticket_form_sent_twice_pays_once_and_a_second_form_is_refused(api, shift, cashier, desk):
    """From the adversarial review of the rebuilt money core: a guard of behaviour that held."""
    number = api.issued_ticket("12.50")
    first = services.ticket_payout(shift=shift, user=cashier, validation_number=number, operation_key="k" * 32)
    again = services.ticket_payout(shift=shift, user=cashier, validation_number=number, operation_key="k" * 32)
    assert again.pk == first.pk
    with pytest.raises(CashDeskError) as refused:
        services.ticket_payout(shift=shift, user=cashier, validation_number=number, operation_key="m" * 32)
    assert refused.value.code == "already_redeemed"
    assert CashTransaction.objects.filter(kind="ticket_payout").count() == 1
    assert place_balances(desk)["cash"] == FLOAT["cash"] - Decimal("12.50")


def test_an_operation_key_of_one_cashier_is_refused_to_another(shift, cashier, cashier2, casino):
    """From the adversarial review of the rebuilt money core: a guard of behaviour that held."""
    desk2 = Place.objects.create(casino=casino, code="K2", name="Kasa 2")
    shift2 = services.shift_open(desk=desk2, cashier=cashier2, counted={"cash": Decimal("1000.00")})
    services.tokens_buy(shift=shift, user=cashier, count=5, operation_key="a" * 32)
    with pytest.raises(CashDeskError) as refused:
        services.tokens_buy(shift=shift2, user=cashier2, count=5, operation_key="a" * 32)
    assert refused.value.code == "operation_key_used"


@pytest.mark.parametrize(
    "operation",
    [
        lambda shift, user, key: services.chips_buy(shift=shift, user=user, chips={"chip_5": 2}, operation_key=key),
        lambda shift, user, key: services.tokens_cashout(shift=shift, user=user, count=7, operation_key=key),
        lambda shift, user, key: services.smartcard_payout(
            shift=shift, user=user, card_number="C9", credits=Decimal("3.5"), card_counter=1, operation_key=key
        ),
        lambda shift, user, key: services.ticket_sell(shift=shift, user=user, amount=Decimal("20"), operation_key=key),
    ],
    ids=["chips", "tokens", "smartcard", "sale"],
)
def test_a_form_submitted_twice_writes_one_transaction_and_shows_the_first(operation, shift, cashier):
    """Money-core defect found by trying the desk as a cashier, a supervisor and an attacker would (a double-submitted
    form writes two transactions); it failed before the money core was rebuilt.
    """
    first = operation(shift, cashier, "form-7f3a")
    again = operation(shift, cashier, "form-7f3a")
    assert again.pk == first.pk
    assert CashTransaction.objects.exclude(kind__in=["count", "opening_balance"]).count() == 1


@pytest.mark.django_db(transaction=True)
def test_a_form_submitted_twice_at_once_writes_one_transaction(casino):
    """Money-core defect found by trying the desk as a cashier, a supervisor and an attacker would (a double-submitted
    form writes two transactions); it failed before the money core was rebuilt.
    """
    cashier = make_user("double-click", "cashier")
    desk = Place.objects.create(casino=casino, code="D1", name="Desk 1")
    shift = services.shift_open(desk=desk, cashier=cashier, counted=FLOAT)

    results = race(
        [lambda: services.chips_buy(shift=shift, user=cashier, chips={"chip_25": 4}, operation_key="same")] * 2,
        gate=("SELECT id FROM cashdesk_cashdesk WHERE id = %s FOR UPDATE", [desk.pk]),
    )

    assert all(isinstance(r, CashTransaction) for r in results), results
    assert results[0].pk == results[1].pk
    assert CashTransaction.objects.filter(kind="chips_buy").count() == 1
    assert services.shift_balances(shift)["cash"] == FLOAT["cash"] + 100


def test_an_operation_key_is_not_shared_between_cashiers(shift, cashier, desk, casino):
    """Money-core defect found by trying the desk as a cashier, a supervisor and an attacker would (a double-submitted
    form writes two transactions); it failed before the money core was rebuilt.
    """
    services.chips_buy(shift=shift, user=cashier, chips={"chip_5": 1}, operation_key="k1")
    other = make_user("other-cashier", "cashier")
    other_shift = services.shift_open(
        desk=Place.objects.create(casino=casino, code="K2", name="Kasa 2"), cashier=other, counted=FLOAT
    )
    with pytest.raises(CashDeskError) as refused:
        services.chips_buy(shift=other_shift, user=other, chips={"chip_5": 1}, operation_key="k1")
    assert refused.value.code == "operation_key_used"

"""A smart-card read is settled once, whatever the case, the desk or the timing."""

from decimal import Decimal

import pytest

from cashdesk import services
from cashdesk.books import place_balances
from cashdesk.errors import CashDeskError
from cashdesk.models import CashTransaction, SmartCardRead
from machines.models import Place
from tests.cashdesk.conftest import FLOAT
from tests.factories import make_user
from tests.races import race


def test_a_card_read_typed_in_lower_case_is_not_paid_a_second_time(shift, cashier):
    """A defect the adversarial review of the rebuilt money core found; this failed (a strict xfail) before its fix."""
    services.smartcard_payout(shift=shift, user=cashier, card_number="SC77", credits=Decimal("40"), card_counter=12)
    with pytest.raises(CashDeskError) as refused:
        services.smartcard_payout(shift=shift, user=cashier, card_number="sc77", credits=Decimal("40"), card_counter=12)
    assert refused.value.code == "already_paid"


@pytest.mark.django_db(transaction=True)
def test_one_card_read_paid_at_two_desks_at_once_is_refused_in_plain_words(casino):
    """A defect the adversarial review of the rebuilt money core found; this failed (a strict xfail) before its fix."""
    cashier = make_user("sc-a", "cashier")
    desk = Place.objects.create(casino=casino, code="S1", name="Kasa S1", cash_limit=Decimal("500000.00"))
    shift = services.shift_open(desk=desk, cashier=cashier, counted={"cash": Decimal("1000.00")})
    opening = CashTransaction.objects.get(shift=shift, kind="opening_balance")
    # The gate is the other desk's payout of the same read (card SC9, counter 5), written but not yet
    # committed; it commits once this desk's payout waits on the unique index.
    gate = (
        "INSERT INTO cashdesk_smartcardread (transaction_id, card_number, card_counter, credits) "
        "VALUES (%s, 'SC9', 5, 40) RETURNING id",
        [opening.pk],
    )
    call = lambda: services.smartcard_payout(  # noqa: E731
        shift=shift, user=cashier, card_number="SC9", credits=Decimal("40"), card_counter=5
    )
    [result] = race([call], gate=gate)
    assert isinstance(result, CashDeskError), repr(result)
    assert result.code == "already_paid"
    assert SmartCardRead.objects.filter(card_number="SC9").count() == 1
    assert place_balances(desk)["cash"] == Decimal("1000.00")


def test_smart_card_load_and_payout_of_one_read_are_settled_once(shift, cashier, desk):
    """From the adversarial review of the rebuilt money core: a guard of behaviour that held."""
    services.smartcard_load(shift=shift, user=cashier, card_number="C1", amount=Decimal("20.00"), card_counter=3)
    with pytest.raises(CashDeskError) as refused:
        services.smartcard_load(shift=shift, user=cashier, card_number=" C1 ", amount=Decimal("20.00"), card_counter=3)
    assert refused.value.code == "already_paid"
    with pytest.raises(CashDeskError):
        services.smartcard_payout(shift=shift, user=cashier, card_number="C1", credits=Decimal("20"), card_counter=3)
    assert place_balances(desk)["cash"] == FLOAT["cash"] + Decimal("20.00")


@pytest.mark.parametrize(
    ("card_number", "credits", "counter"),
    [
        ("C\x001", Decimal("1"), 1),
        ("C\uff11\uff12", Decimal("1"), 1),  # full-width digits
        ("C1", Decimal("0"), 1),
        ("C1", Decimal("-5"), 1),
        ("C1", Decimal("1.0001"), 1),
        ("C1", Decimal("1000000000"), 1),
        ("C1", Decimal("1"), -1),
        ("C1", Decimal("1"), 2**31),
        ("C1", Decimal("1"), "7"),
    ],
)
def test_bad_smart_card_input_is_refused(shift, cashier, card_number, credits, counter):
    """From the adversarial review of the rebuilt money core: a guard of behaviour that held."""
    with pytest.raises(CashDeskError):
        services.smartcard_payout(
            shift=shift, user=cashier, card_number=card_number, credits=credits, card_counter=counter
        )
    assert not SmartCardRead.objects.exists()


def test_the_same_smart_card_read_is_never_paid_twice(shift, cashier):
    """Money-core defect found by trying the desk as a cashier, a supervisor and an attacker would (a smart-card read
    paid twice); it failed before the money core was rebuilt.
    """
    services.smartcard_payout(shift=shift, user=cashier, card_number="SC77", credits=Decimal("40"), card_counter=12)
    with pytest.raises(CashDeskError) as refused:
        services.smartcard_payout(shift=shift, user=cashier, card_number="SC77", credits=Decimal("40"), card_counter=12)
    assert refused.value.code == "already_paid"
    assert SmartCardRead.objects.count() == 1
    services.smartcard_payout(shift=shift, user=cashier, card_number="SC77", credits=Decimal("5"), card_counter=13)

import datetime as dt
from decimal import Decimal

import pytest
import time_machine

from cashdesk import services
from cashdesk.errors import CashDeskError
from cashdesk.models import CashTransaction, HoldCase
from machines.models import Place
from tests.cashdesk.conftest import unbalanced_items
from tests.factories import make_user
from tests.races import race
from tickets.models import Ticket, TicketEvent


def _pay(shift, cashier, number, **kwargs):
    return services.ticket_payout(shift=shift, user=cashier, validation_number=number, **kwargs)


def test_pays_an_issued_ticket_and_moves_the_cash(api, shift, cashier):
    number = api.issued_ticket("123.45")

    tx = _pay(shift, cashier, number)

    assert tx.kind == "ticket_payout"
    assert tx.amount == Decimal("123.45")
    assert list(tx.legs.filter(desk=tx.desk).values_list("item", "amount")) == [("cash", Decimal("-123.45"))]
    ticket = Ticket.objects.get(validation_number=number)
    assert ticket.state == "redeemed"
    assert ticket.redeemed_by_user == cashier
    event = ticket.events.get(kind="redeemed")
    assert event.user == cashier
    assert event.details["receipt"] == tx.receipt_number
    assert services.shift_balances(shift)["cash"] == Decimal("20000.00") - Decimal("123.45")


def test_payout_rounds_up_to_the_cent(api, shift, cashier):
    number = api.issued_ticket("1.001")
    tx = _pay(shift, cashier, number)
    assert tx.amount == Decimal("1.01")


def test_scanner_input_with_groups_is_accepted(api, shift, cashier):
    number = api.issued_ticket()
    assert _pay(shift, cashier, f"{number[:2]}-{number[2:6]} {number[6:10]}-{number[10:14]} {number[14:]}")


def test_second_presentation_says_when_and_where_and_is_recorded(api, shift, cashier, desk):
    number = api.issued_ticket()
    first = _pay(shift, cashier, number)

    with pytest.raises(CashDeskError) as refused:
        _pay(shift, cashier, number)

    assert refused.value.code == "already_redeemed"
    assert desk.name in refused.value.message
    assert first.receipt_number in refused.value.message
    refusal = TicketEvent.objects.get(ticket__validation_number=number, kind="refused")
    assert (refusal.user, refusal.reason) == (cashier, "already_redeemed")
    assert CashTransaction.objects.exclude(kind__in=["count", "opening_balance"]).count() == 1


def test_ticket_redeemed_at_a_machine_names_the_machine(api, make_api, shift, cashier):
    number = api.issued_ticket()
    player = make_api(asset_number="2002")
    player.authorize(number)
    player.commit(number)
    with pytest.raises(CashDeskError, match="into machine 2002"):
        _pay(shift, cashier, number)


@pytest.mark.parametrize(
    ("setup", "code"),
    [
        ("pending_print", "not_printed"),
        ("void", "void"),
        ("held_by_machine", "pending_elsewhere"),
        ("promo", "not_cashable"),
        ("expired_job_not_run", "expired"),
    ],
)
def test_refusals_change_nothing_but_are_recorded(api, make_api, shift, cashier, setup, code):
    if setup == "pending_print":
        number = api.issue().json()["validation_number"]
    elif setup == "void":
        number = api.issue().json()["validation_number"]
        api.printed(number, result="failed")
    elif setup == "promo":
        number = api.issued_ticket(ticket_type="promo")
    else:
        number = api.issued_ticket()
        if setup == "held_by_machine":
            make_api(asset_number="2002").authorize(number)
    before = Ticket.objects.filter(validation_number=number).values().get()
    travel = before["expires_at"] + dt.timedelta(seconds=1) if setup == "expired_job_not_run" else None

    with time_machine.travel(travel or before["issued_at"], tick=False), pytest.raises(CashDeskError) as refused:
        _pay(shift, cashier, number)

    assert refused.value.code == code
    assert refused.value.message
    assert Ticket.objects.filter(validation_number=number).values().get() == before
    assert TicketEvent.objects.filter(ticket__validation_number=number, kind="refused", reason=code).count() == 1
    assert not CashTransaction.objects.exclude(kind__in=["count", "opening_balance"]).exists()


def test_ticket_of_another_casino_is_not_paid(make_api, other_casino, shift, cashier):
    number = make_api(casino=other_casino, asset_number="9").issued_ticket()
    with pytest.raises(CashDeskError, match="other casinos are not paid"):
        _pay(shift, cashier, number)


def test_bad_check_digit_is_refused_plainly(shift, cashier):
    with pytest.raises(CashDeskError, match="check digit"):
        _pay(shift, cashier, "123456789012345678")


def test_printed_amount_mismatch_pays_the_systems_amount_and_is_an_exception(api, shift, cashier):
    number = api.issued_ticket("50.00")

    tx = _pay(shift, cashier, number, printed_amount=Decimal("500.00"))

    assert tx.amount == Decimal("50.00")
    mismatch = TicketEvent.objects.get(ticket__validation_number=number, kind="amount_mismatch")
    assert mismatch.details == {"printed": "500.00", "system": "50.000", "paid": "50.00"}


def test_matching_printed_amount_is_not_an_exception(api, shift, cashier):
    number = api.issued_ticket("50.00")
    _pay(shift, cashier, number, printed_amount=Decimal("50.00"))
    assert not TicketEvent.objects.filter(kind="amount_mismatch").exists()


def test_desk_cannot_pay_more_cash_than_it_holds(api, shift, cashier, person):
    # The float holds 20 000.00 EUR in cash.
    first, second, third = api.issued_ticket("9000.00"), api.issued_ticket("9000.00"), api.issued_ticket("2500.00")
    _pay(shift, cashier, first, person=person)
    _pay(shift, cashier, second, person=person)
    with pytest.raises(CashDeskError) as refused:
        _pay(shift, cashier, third, person=person)
    assert refused.value.code == "insufficient_stock"
    assert Ticket.objects.get(validation_number=third).state == "issued"


@pytest.mark.django_db(transaction=True)
def test_one_ticket_paid_and_held_at_two_desks_at_once_has_one_outcome(casino, make_api):
    """From the adversarial review of the rebuilt money core: a guard of behaviour that held."""
    api = make_api(asset_number="7001")
    number = api.issued_ticket("80.00")
    ticket = Ticket.objects.get(validation_number=number)
    cashiers = [make_user("t-a", "cashier"), make_user("t-b", "cashier"), make_user("t-c", "cashier")]
    desks = [Place.objects.create(casino=casino, code=f"P{i}", name=f"P{i}") for i in range(3)]
    shifts = [
        services.shift_open(desk=d, cashier=c, counted={"cash": Decimal("1000.00")})
        for d, c in zip(desks, cashiers, strict=True)
    ]
    calls = [
        lambda: services.ticket_payout(shift=shifts[0], user=cashiers[0], validation_number=number),
        lambda: services.ticket_payout(shift=shifts[1], user=cashiers[1], validation_number=number),
        lambda: services.ticket_hold(shift=shifts[2], user=cashiers[2], validation_number=number, reason="damage"),
    ]
    results = race(calls, gate=("SELECT id FROM tickets_ticket WHERE id = %s FOR UPDATE", [ticket.pk]))
    wins = [r for r in results if not isinstance(r, Exception)]
    assert len(wins) == 1, results
    assert all(isinstance(r, CashDeskError) for r in results if r not in wins), results
    assert CashTransaction.objects.filter(kind="ticket_payout").count() <= 1
    assert unbalanced_items(casino) == {}


def test_a_ticket_of_another_casino_is_not_paid(shift, cashier, other_casino):
    """From the adversarial review of the rebuilt money core: a guard of behaviour that held."""
    from tests.conftest import MachineClient
    from tests.factories import MachineFactory

    foreign = MachineClient(MachineFactory(casino=other_casino, asset_number="9001"))
    number = foreign.issued_ticket("20.00")
    with pytest.raises(CashDeskError) as refused:
        services.ticket_payout(shift=shift, user=cashier, validation_number=number)
    assert refused.value.code == "not_found"
    with pytest.raises(CashDeskError):
        services.ticket_hold(shift=shift, user=cashier, validation_number=number, reason="damage")
    assert Ticket.objects.get(validation_number=number).state == "issued"


def test_a_ticket_number_in_other_scripts_digits_is_not_read(api, shift, cashier):
    """From the adversarial review of the rebuilt money core: a guard of behaviour that held."""
    number = api.issued_ticket("20.00")
    arabic = "".join(chr(ord(c) - ord("0") + 0x0660) for c in number)
    with pytest.raises(CashDeskError) as refused:
        services.ticket_payout(shift=shift, user=cashier, validation_number=arabic)
    assert refused.value.code == "invalid_number"


def test_a_ticket_being_redeemed_by_a_machine_is_neither_held_nor_paid(api, make_api, shift, cashier):
    """From the adversarial review of the rebuilt money core: a guard of behaviour that held."""
    number = api.issued_ticket("30.00")
    other = make_api(asset_number="1002")
    assert other.authorize(number).status_code == 200
    for action in (
        lambda: services.ticket_hold(shift=shift, user=cashier, validation_number=number, reason="damage"),
        lambda: services.ticket_payout(shift=shift, user=cashier, validation_number=number),
    ):
        with pytest.raises(CashDeskError) as refused:
            action()
        assert refused.value.code == "pending_elsewhere"
    assert not HoldCase.objects.exists()

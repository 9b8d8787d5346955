import datetime as dt
from decimal import Decimal

import pytest
import time_machine
from django.utils import timezone

from cashdesk import services
from cashdesk.errors import CashDeskError
from cashdesk.models import CashTransaction, MachineReceipt
from tickets.models import Ticket


def test_chips_buy_takes_cash_and_gives_chips(shift, cashier):
    tx = services.chips_buy(shift=shift, user=cashier, chips={"chip_100": 2, "chip_5": 3, "chip_0_50": 1})
    assert tx.amount == Decimal("215.50")
    moves = {m.item: (m.count, m.amount) for m in tx.legs.filter(desk=tx.desk)}
    assert moves == {
        "cash": (None, Decimal("215.50")),
        "chip_100": (-2, Decimal("-200.00")),
        "chip_5": (-3, Decimal("-15.00")),
        "chip_0_50": (-1, Decimal("-0.50")),
    }


def test_chips_cashout_takes_chips_and_pays_cash(shift, cashier):
    tx = services.chips_cashout(shift=shift, user=cashier, chips={"chip_25": 4})
    assert tx.amount == Decimal("100.00")
    assert services.shift_balances(shift)["cash"] == Decimal("19900.00")


@pytest.mark.parametrize("chips", [{"colour_red": 5}, {"chip_5": -1}, {"chip_5": 0}, {}, {"cash": 5}, {"chip_5": 1.5}])
def test_only_value_chips_in_whole_pieces(shift, cashier, chips):
    with pytest.raises(CashDeskError):
        services.chips_buy(shift=shift, user=cashier, chips=chips)
    assert not CashTransaction.objects.exclude(kind__in=["count", "opening_balance"]).exists()


def test_tokens_both_ways(shift, cashier):
    services.tokens_buy(shift=shift, user=cashier, count=40)
    services.tokens_cashout(shift=shift, user=cashier, count=15)
    balances = services.shift_balances(shift)
    assert balances["token"] == Decimal("1975")
    assert balances["cash"] == Decimal("20025.00")


def test_smart_card_credits_are_paid_rounded_up(shift, cashier):
    tx = services.smartcard_payout(
        shift=shift, user=cashier, card_number="SC0042", credits=Decimal("12.345"), card_counter=1
    )
    assert tx.amount == Decimal("12.35")
    assert tx.smart_card.card_number == "SC0042"
    assert tx.smart_card.credits == Decimal("12.345")


def test_machine_receipt_is_paid_once(api, shift, cashier, floor):
    receipt = services.machine_receipt_record(
        machine=api.machine, amount=Decimal("87.00"), reason="hopper empty", user=floor
    )
    tx = services.machine_receipt_pay(shift=shift, user=cashier, number=receipt.number, check_code=receipt.check_code)
    assert MachineReceipt.objects.get(pk=receipt.pk).paid_by == tx
    with pytest.raises(CashDeskError) as refused:
        services.machine_receipt_pay(shift=shift, user=cashier, number=receipt.number, check_code=receipt.check_code)
    assert refused.value.code == "already_paid"
    assert tx.receipt_number in refused.value.message


def test_only_floor_attendants_record_receipts(api, cashier):
    with pytest.raises(CashDeskError, match="floor attendants"):
        services.machine_receipt_record(machine=api.machine, amount=Decimal("5.00"), reason="x", user=cashier)


def test_ticket_sale_issues_a_valid_desk_ticket(shift, cashier, desk):
    tx = services.ticket_sell(shift=shift, user=cashier, amount=Decimal("50.00"))
    ticket = tx.ticket
    assert ticket.state == "issued"
    assert ticket.issuing_desk == desk
    assert ticket.issuing_machine is None
    assert ticket.sequence == 1
    assert ticket.printed_at == ticket.issued_at
    assert ticket.events.get().kind == "sold"
    assert services.ticket_sell(shift=shift, user=cashier, amount=Decimal("5.00")).ticket.sequence == 2


def test_sold_ticket_is_redeemable_at_a_machine(shift, cashier, api):
    number = services.ticket_sell(shift=shift, user=cashier, amount=Decimal("20.00")).ticket.validation_number
    assert api.authorize(number).status_code == 200
    assert api.commit(number).json()["state"] == "redeemed"


def test_drop_to_the_vault_needs_another_persons_approval(shift, cashier, supervisor, vault):
    transfer = services.transfer_request(shift=shift, user=cashier, direction="drop", amount=Decimal("15000.00"))
    assert services.shift_balances(shift)["cash"] == Decimal("20000.00")

    tx = services.transfer_approve(transfer=transfer, supervisor=supervisor)

    assert tx.approved_by == supervisor
    assert services.shift_balances(shift)["cash"] == Decimal("5000.00")
    assert services.vault_balance(vault)["cash"] == Decimal("15000.00")
    with pytest.raises(CashDeskError, match="already been approved"):
        services.transfer_approve(transfer=transfer, supervisor=supervisor)


def test_fill_from_the_vault(shift, cashier, supervisor, vault):
    services.vault_count(vault=vault, user=supervisor, counted={"cash": Decimal("50000.00")})
    transfer = services.transfer_request(shift=shift, user=cashier, direction="fill", amount=Decimal("2000.00"))
    services.transfer_approve(transfer=transfer, supervisor=supervisor)
    assert services.shift_balances(shift)["cash"] == Decimal("22000.00")
    assert services.vault_balance(vault)["cash"] == Decimal("48000.00")


def test_a_cashier_cannot_approve_transfers(shift, cashier, vault):
    transfer = services.transfer_request(shift=shift, user=cashier, direction="drop", amount=Decimal("1.00"))
    with pytest.raises(CashDeskError, match="Only a shift supervisor"):
        services.transfer_approve(transfer=transfer, supervisor=cashier)


def test_reversal_negates_every_movement_once_approved_by_someone_else(shift, cashier, supervisor):
    original = services.chips_buy(shift=shift, user=cashier, chips={"chip_100": 5})
    request = services.reversal_request(original=original, user=cashier, reason="wrong denomination")

    reversal = services.reversal_approve(request=request, supervisor=supervisor)

    assert reversal.reverses == original
    assert sorted((m.item, m.amount) for m in reversal.legs.filter(desk=reversal.desk)) == [
        ("cash", Decimal("-500.00")),
        ("chip_100", Decimal("500.00")),
    ]
    assert services.shift_balances(shift)["cash"] == Decimal("20000.00")


def test_nobody_approves_their_own_reversal(shift, cashier, supervisor, db):
    from tests.factories import make_user

    both = make_user("dual", "cashier", "shift_supervisor")
    from machines.models import Place

    other_desk = Place.objects.create(casino=shift.desk.casino, code="K9", name="Kasa 9")
    their_shift = services.shift_open(desk=other_desk, cashier=both, counted={"cash": Decimal("100.00")})
    original = services.tokens_cashout(shift=their_shift, user=both, count=5)
    request = services.reversal_request(original=original, user=both, reason="typo")
    with pytest.raises(CashDeskError, match="someone other than the cashier"):
        services.reversal_approve(request=request, supervisor=both)


def test_reversing_a_sale_voids_the_ticket(shift, cashier, supervisor):
    sale = services.ticket_sell(shift=shift, user=cashier, amount=Decimal("40.00"))
    services.reversal_approve(
        request=services.reversal_request(original=sale, user=cashier, reason="customer changed mind"),
        supervisor=supervisor,
    )
    assert Ticket.objects.get(pk=sale.ticket_id).state == "void"


def test_ticket_payouts_are_not_reversible(api, shift, cashier):
    tx = services.ticket_payout(shift=shift, user=cashier, validation_number=api.issued_ticket())
    with pytest.raises(CashDeskError, match="cannot be reversed"):
        services.reversal_request(original=tx, user=cashier, reason="oops")


# A stuck redemption is resolved once its hold (15 s) and the commit retry's grace (30 s) have run out.
AFTER_HOLD_AND_GRACE = dt.timedelta(minutes=1)


def test_supervisor_resolves_a_stuck_redemption_from_the_meters(api, make_api, supervisor):
    number = api.issued_ticket()
    holder = make_api(asset_number="2002")
    holder.authorize(number)
    ticket = Ticket.objects.get(validation_number=number)

    with time_machine.travel(timezone.now() + AFTER_HOLD_AND_GRACE):
        services.ticket_resolve_stuck(
            ticket=ticket,
            user=supervisor,
            credits_taken=True,
            meter_reading="credit meter +1250",
            reason="meters show credits",
        )

    ticket.refresh_from_db()
    assert (ticket.state, ticket.redeemed_by_machine) == ("redeemed", holder.machine)
    event = ticket.events.get(kind="resolved")
    assert event.user == supervisor
    assert event.details["meter_reading"] == "credit meter +1250"


def test_supervisor_returns_a_stuck_ticket_to_valid(api, supervisor):
    number = api.issued_ticket()
    api.authorize(number)
    ticket = Ticket.objects.get(validation_number=number)
    with time_machine.travel(timezone.now() + AFTER_HOLD_AND_GRACE):
        services.ticket_resolve_stuck(
            ticket=ticket, user=supervisor, credits_taken=False, meter_reading="no change", reason="jam"
        )
    assert Ticket.objects.get(pk=ticket.pk).state == "issued"


def test_supervisor_voids_a_ticket(api, supervisor, cashier):
    ticket = Ticket.objects.get(validation_number=api.issued_ticket())
    with pytest.raises(CashDeskError):
        services.ticket_void(ticket=ticket, user=cashier, reason="x")
    services.ticket_void(ticket=ticket, user=supervisor, reason="printer misfeed duplicate")
    assert Ticket.objects.get(pk=ticket.pk).state == "void"

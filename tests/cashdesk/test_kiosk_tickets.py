"""A ticket at a kiosk: paid once and only where it is held, never what the kiosk may not pay, whatever the
firmware sends; the tickets a kiosk prints book their cash once."""

from decimal import Decimal

import pytest

from cashdesk import services
from cashdesk.errors import CashDeskError
from cashdesk.models import CashTransaction, TransactionKind
from machines.models import Machine, Place
from tests.api.test_offline_validation import pool, report
from tests.cashdesk.kiosk_helpers import other_kiosk, payouts, refusals, state
from tests.cashdesk.test_kiosks import assert_books_balance, fill, kiosk_cash, redeem
from tests.conftest import MachineClient
from tests.factories import MachineFactory, make_user
from tickets.models import Ticket, TicketState


def test_a_ticket_authorized_at_one_kiosk_is_committed_only_there(api, casino, kiosk, kiosk_api, stocked_kiosk):
    """From the kiosk attack review of issue 14 (paying one ticket twice): one attempt by a fraudster, a buggy firmware,
    a careless supervisor or a race.
    """
    fill(second := other_kiosk(casino).machine, make_user("f2", "floor_attendant"), make_user("s2", "shift_supervisor"))
    thief = MachineClient(second)
    number = api.issued_ticket("50.00")
    assert kiosk_api.authorize(number).status_code == 200

    assert thief.authorize(number).json()["code"] == "pending_elsewhere"
    refused = thief.commit(number, dispensed="50.00")

    assert refused.status_code == 409
    assert refused.json()["code"] == "pending_elsewhere"
    assert kiosk_api.commit(number, dispensed="50.00").status_code == 200
    assert thief.commit(number, dispensed="50.00").json()["code"] == "already_redeemed"
    assert payouts(number) == [(TransactionKind.KIOSK_PAYOUT, kiosk.pk)]
    assert kiosk_cash(second) == Decimal("5000.00")
    assert kiosk_cash(kiosk) == Decimal("950.00")


def test_a_commit_replayed_with_other_request_ids_or_another_dispensed_pays_once(api, kiosk, kiosk_api, stocked_kiosk):
    """From the kiosk attack review of issue 14 (paying one ticket twice): one attempt by a fraudster, a buggy firmware,
    a careless supervisor or a race.
    """
    number = api.issued_ticket("20.005")
    assert kiosk_api.authorize(number).json()["payout"] == "20.01"
    assert kiosk_api.authorize(number).status_code == 200  # the holder asks again under a new request_id
    body = {"request_id": "commit-once", "result": "accepted", "dispensed": "20.01"}
    first = kiosk_api.post(f"tickets/{number}/commit", body)

    replay = kiosk_api.post(f"tickets/{number}/commit", body)
    other_amount = kiosk_api.post(f"tickets/{number}/commit", {**body, "dispensed": "40.02"})
    new_id = kiosk_api.commit(number, dispensed="20.01")

    assert first.status_code == replay.status_code == 200
    assert replay.content == first.content
    assert other_amount.json()["code"] == "request_id_reused"
    assert new_id.json()["code"] == "already_redeemed"
    assert payouts(number) == [(TransactionKind.KIOSK_PAYOUT, kiosk.pk)]
    assert kiosk_cash(kiosk) == Decimal("979.99")


def test_a_repeated_authorize_sets_the_cash_aside_once(api, kiosk, kiosk_api, stocked_vault, floor, supervisor):
    """From the kiosk attack review of issue 14 (paying one ticket twice): one attempt by a fraudster, a buggy firmware,
    a careless supervisor or a race.
    """
    fill(kiosk, floor, supervisor, amount="100.00")
    held, rest = api.issued_ticket("60.00"), api.issued_ticket("40.00")
    for _ in range(3):
        assert kiosk_api.authorize(held).status_code == 200

    assert kiosk_api.authorize(rest).status_code == 200  # 60 + 40: all it holds, the 60 counted once
    assert kiosk_api.commit(held, dispensed="60.00").status_code == 200
    assert kiosk_api.commit(rest, dispensed="40.00").status_code == 200
    assert kiosk_cash(kiosk) == Decimal("0.00")


def test_kiosk_desk_and_slot_each_refuse_a_ticket_another_holds_or_paid(
    api, make_api, kiosk, kiosk_api, stocked_kiosk, shift, cashier
):
    """From the kiosk attack review of issue 14 (paying one ticket twice): one attempt by a fraudster, a buggy firmware,
    a careless supervisor or a race.
    """
    slot = make_api(asset_number="2002")
    held_by_kiosk, held_by_slot, paid_at_desk = (api.issued_ticket("30.00") for _ in range(3))
    assert kiosk_api.authorize(held_by_kiosk).status_code == 200
    assert slot.authorize(held_by_slot).status_code == 200
    services.ticket_payout(shift=shift, user=cashier, validation_number=paid_at_desk)

    with pytest.raises(CashDeskError) as at_desk:
        services.ticket_payout(shift=shift, user=cashier, validation_number=held_by_kiosk)

    assert at_desk.value.code == "pending_elsewhere"
    assert slot.authorize(held_by_kiosk).json()["code"] == "pending_elsewhere"
    assert kiosk_api.authorize(held_by_slot).json()["code"] == "pending_elsewhere"
    assert kiosk_api.commit(held_by_slot, dispensed="30.00").json()["code"] == "pending_elsewhere"
    assert kiosk_api.authorize(paid_at_desk).json()["code"] == "already_redeemed"
    assert slot.commit(held_by_slot).status_code == 200
    assert kiosk_api.authorize(held_by_slot).json()["code"] == "already_redeemed"
    assert payouts(held_by_slot) == []
    assert payouts(paid_at_desk) == [(TransactionKind.TICKET_PAYOUT, None)]
    assert kiosk_cash(kiosk) == Decimal("1000.00")  # 30 set aside, nothing paid yet
    assert kiosk_api.commit(held_by_kiosk, dispensed="30.00").status_code == 200
    assert kiosk_cash(kiosk) == Decimal("970.00")


def test_a_ticket_of_another_casino_is_not_found_at_a_kiosk(other_casino, kiosk_api, stocked_kiosk):
    """From the kiosk attack review of issue 14 (paying one ticket twice): one attempt by a fraudster, a buggy firmware,
    a careless supervisor or a race.
    """
    foreign = MachineClient(MachineFactory(casino=other_casino, asset_number="9001"))
    number = foreign.issued_ticket("10.00")

    assert kiosk_api.authorize(number).status_code == 404
    assert kiosk_api.commit(number, dispensed="10.00").status_code == 404
    assert state(number) == TicketState.ISSUED
    assert payouts(number) == []


def test_a_promo_ticket_is_never_paid_at_a_kiosk_however_much_it_holds(api, kiosk, kiosk_api, stocked_kiosk):
    """From the kiosk attack review of issue 14 (what a kiosk may not pay): one attempt by a fraudster, a buggy
    firmware, a careless supervisor or a race.
    """
    number = api.issued_ticket("10.00", ticket_type="promo")

    refused = kiosk_api.authorize(number)

    assert refused.status_code == 409
    assert refused.json()["code"] == "not_cashable"
    assert kiosk_api.commit(number, dispensed="10.00").json()["code"] == "invalid_state"
    assert state(number) == TicketState.ISSUED
    assert refusals(number) == ["not_cashable", "invalid_state"]
    assert payouts(number) == []


@pytest.mark.parametrize(
    ("amount", "payout"),
    [("999.995", "1000.00"), ("1000.00", "1000.00"), ("1000.001", None), ("1000.01", None), ("9999.99", None)],
)
def test_the_kiosk_limit_holds_to_the_mill(api, kiosk, kiosk_api, stocked_kiosk, amount, payout):
    """From the kiosk attack review of issue 14 (what a kiosk may not pay): one attempt by a fraudster, a buggy
    firmware, a careless supervisor or a race.
    """
    number = api.issued_ticket(amount)

    answer = kiosk_api.authorize(number)

    if payout is None:
        assert answer.json()["code"] == "over_kiosk_limit"
        assert state(number) == TicketState.ISSUED
    else:
        assert answer.json()["payout"] == payout
        assert kiosk_api.commit(number, dispensed=payout).status_code == 200
        assert kiosk_cash(kiosk) == Decimal("1000.00") - Decimal(payout)


def test_an_identity_threshold_lowered_mid_redemption_is_a_refused_commit_not_a_500(
    api, casino, kiosk, kiosk_api, stocked_kiosk, supervisor
):
    """From the kiosk attack review of issue 14 (what a kiosk may not pay): one attempt by a fraudster, a buggy
    firmware, a careless supervisor or a race.
    """
    number = api.issued_ticket("900.00")
    assert kiosk_api.authorize(number).status_code == 200
    casino.identity_threshold = casino.kiosk_payout_limit = Decimal("500.00")
    casino.save()

    committed = kiosk_api.commit(number, dispensed="900.00")

    assert committed.status_code == 409
    assert committed.json()["code"] == "over_kiosk_limit"
    assert state(number) == TicketState.REDEEM_PENDING  # a stuck redemption for a supervisor
    assert refusals(number) == ["over_kiosk_limit"]
    assert kiosk_cash(kiosk) == Decimal("1000.00")
    # Settling it as paid would pay above the threshold without a person: refused, never written.
    with pytest.raises(CashDeskError) as settle:
        services.ticket_resolve_stuck(
            ticket=Ticket.objects.get(validation_number=number),
            user=supervisor,
            credits_taken=True,
            meter_reading="cash out 900.00",
            reason="no commit",
        )
    assert settle.value.code == "identity_required"
    assert payouts(number) == []


def test_a_machine_made_a_kiosk_while_holding_a_ticket_pays_no_promo_and_no_cash_it_did_not_set_aside(
    api, casino, stocked_vault, floor, supervisor
):
    """From the kiosk attack review of issue 14 (what a kiosk may not pay): one attempt by a fraudster, a buggy
    firmware, a careless supervisor or a race.
    """
    became_kiosk = MachineFactory(casino=casino, asset_number="SW-1")
    promo, cashable = api.issued_ticket("10.00", ticket_type="promo"), api.issued_ticket("30.00")
    client = MachineClient(became_kiosk)  # the API reads the machine, and its kind, on every request
    assert client.authorize(promo).status_code == 200
    assert client.authorize(cashable).status_code == 200
    Machine.objects.filter(pk=became_kiosk.pk).update(kind=Machine.Kind.KIOSK)

    promo_commit = client.commit(promo, dispensed="10.00")
    empty_commit = client.commit(cashable, dispensed="30.00")

    assert promo_commit.status_code == empty_commit.status_code == 409
    assert promo_commit.json()["code"] == "not_cashable"
    assert empty_commit.json()["code"] == "kiosk_empty"
    assert state(promo) == state(cashable) == TicketState.REDEEM_PENDING
    assert payouts(promo) == payouts(cashable) == []
    assert client.commit(promo, result="rejected").json()["state"] == TicketState.ISSUED


ARABIC_TEN = "\u0661\u0660.\u0660\u0660"  # "10.00" in Arabic-Indic digits: Python's Decimal reads it


BAD_DISPENSED = (None, 10, 10.0, True, [], {}, "", "0", "0.00", "-10.00", "+10.00", "1e1", "10.00 ", "10,00")


@pytest.mark.parametrize("dispensed", [*BAD_DISPENSED, "9.99", "10.001", ARABIC_TEN, "9" * 5000])
def test_a_commit_with_a_bad_dispensed_is_422_and_the_ticket_stays_held(
    api, kiosk, kiosk_api, stocked_kiosk, dispensed
):
    """From the kiosk attack review of issue 14 (what the firmware sends): one attempt by a fraudster, a buggy firmware,
    a careless supervisor or a race.
    """
    number = api.issued_ticket("10.00")
    assert kiosk_api.authorize(number).status_code == 200
    body = {"request_id": "c-1", "result": "accepted", "dispensed": dispensed}

    refused = kiosk_api.post(f"tickets/{number}/commit", body)

    assert refused.status_code == 422
    assert refused.json()["code"] == "invalid_amount"
    assert state(number) == TicketState.REDEEM_PENDING
    assert payouts(number) == []
    # A 422 is not remembered: the same request_id with the payout goes through.
    assert kiosk_api.post(f"tickets/{number}/commit", {**body, "dispensed": "10.000"}).status_code == 200
    assert kiosk_cash(kiosk) == Decimal("990.00")


def test_a_kiosk_omitting_dispensed_is_refused_and_a_rejection_needs_none(api, kiosk, kiosk_api, stocked_kiosk):
    """From the kiosk attack review of issue 14 (what the firmware sends): one attempt by a fraudster, a buggy firmware,
    a careless supervisor or a race.
    """
    number = api.issued_ticket("10.00")
    assert kiosk_api.authorize(number).status_code == 200

    assert kiosk_api.commit(number).json()["code"] == "invalid_amount"
    assert kiosk_api.commit(number, result="rejected", dispensed="nonsense").json()["state"] == TicketState.ISSUED
    assert payouts(number) == []
    assert kiosk_cash(kiosk) == Decimal("1000.00")


def test_a_slot_machine_sending_dispensed_moves_no_cash(api, casino, make_api, kiosk, stocked_kiosk):
    """From the kiosk attack review of issue 14 (what the firmware sends): one attempt by a fraudster, a buggy firmware,
    a careless supervisor or a race.
    """
    slot = make_api(asset_number="2002")
    number = api.issued_ticket("10.00")
    assert "payout" not in slot.authorize(number).json()

    committed = slot.commit(number, dispensed="10.00")

    assert committed.json()["state"] == TicketState.REDEEMED
    assert payouts(number) == []
    assert CashTransaction.objects.filter(machine=slot.machine).count() == 0
    assert not Place.objects.filter(machine=slot.machine).exists()
    assert_books_balance(casino)


def test_a_dispensed_on_a_ticket_the_kiosk_does_not_hold_gets_the_state_refusal(api, kiosk_api, stocked_kiosk):
    """From the kiosk attack review of issue 14 (what the firmware sends): one attempt by a fraudster, a buggy firmware,
    a careless supervisor or a race.
    """
    number = api.issued_ticket("10.00")

    assert kiosk_api.commit(number, dispensed="999.00").json()["code"] == "invalid_state"
    assert state(number) == TicketState.ISSUED


def test_a_kiosk_printed_ticket_books_its_cash_once_whatever_the_firmware_replays(
    casino, kiosk, kiosk_api, shift, cashier
):
    """From the kiosk attack review of issue 14 (tickets a kiosk prints): one attempt by a fraudster, a buggy firmware,
    a careless supervisor or a race.
    """
    body = {"request_id": "issue-1", "amount": "20.00"}
    issued = kiosk_api.post("tickets/issue", body)
    number = issued.json()["validation_number"]
    assert kiosk_api.post("tickets/issue", body).content == issued.content  # one ticket
    printed = {"request_id": "printed-1", "result": "printed"}
    assert kiosk_api.post(f"tickets/{number}/printed", printed).status_code == 200

    assert kiosk_api.post(f"tickets/{number}/printed", printed).status_code == 200
    assert kiosk_api.printed(number).json()["code"] == "invalid_state"
    assert kiosk_api.printed(number, result="failed").json()["code"] == "invalid_state"

    assert state(number) == TicketState.ISSUED
    assert CashTransaction.objects.filter(kind=TransactionKind.KIOSK_TICKET).count() == 1
    assert kiosk_cash(kiosk) == Decimal("20.00")
    services.ticket_payout(shift=shift, user=cashier, validation_number=number)  # cashed at the desk
    assert kiosk_api.authorize(number).json()["code"] == "already_redeemed"
    assert kiosk_cash(kiosk) == Decimal("20.00")
    assert_books_balance(casino)


def test_a_kiosk_redeems_a_ticket_it_printed_and_its_books_net_to_nothing(api, casino, kiosk, kiosk_api):
    """From the kiosk attack review of issue 14 (tickets a kiosk prints): one attempt by a fraudster, a buggy firmware,
    a careless supervisor or a race.
    """
    number = kiosk_api.issued_ticket("35.50")

    redeem(kiosk_api, number)

    assert kiosk_cash(kiosk) == Decimal("0.00")
    assert kiosk_api.authorize(api.issued_ticket("0.01")).json()["code"] == "kiosk_empty"
    assert_books_balance(casino)


@pytest.mark.parametrize(
    ("fields", "code"),
    [
        ({"amount": "20.005"}, "invalid_amount"),
        ({"amount": "0.001"}, "invalid_amount"),
        ({"amount": "20.00", "ticket_type": "promo"}, "invalid_request"),
        ({"amount": "-20.00"}, "invalid_amount"),
        ({"amount": "999999.00"}, "over_limit"),
    ],
)
def test_a_kiosk_prints_no_ticket_it_could_not_have_taken_cash_for(kiosk, kiosk_api, fields, code):
    """From the kiosk attack review of issue 14 (tickets a kiosk prints): one attempt by a fraudster, a buggy firmware,
    a careless supervisor or a race.
    """
    refused = kiosk_api.post("tickets/issue", {"request_id": "i-1", **fields})

    assert refused.status_code == 422
    assert refused.json()["code"] == code
    assert not Ticket.objects.filter(issuing_machine=kiosk).exists()
    assert kiosk_cash(kiosk) == Decimal("0.00")


def test_an_offline_kiosk_ticket_books_its_cash_once_and_no_promo(casino, kiosk, kiosk_api):
    """From the kiosk attack review of issue 14 (tickets a kiosk prints): one attempt by a fraudster, a buggy firmware,
    a careless supervisor or a race.
    """
    number, promo_number = pool(kiosk_api, 2)
    body = {
        "request_id": "offline-1",
        "validation_number": number,
        "amount": "15.00",
        "ticket_type": "cashable",
        "printed_at": "2026-12-02T18:04:11+02:00",
        "sequence": 7,
    }
    first = kiosk_api.post("tickets/offline", body)

    replay = kiosk_api.post("tickets/offline", body)
    again = kiosk_api.post("tickets/offline", {**body, "request_id": "offline-2"})
    promo = report(kiosk_api, promo_number, ticket_type="promo")

    assert first.status_code == replay.status_code == 201
    assert again.json()["code"] == "already_reported"
    assert promo.json()["code"] == "invalid_request"
    assert kiosk_cash(kiosk) == Decimal("15.00")
    assert kiosk_api.authorize(promo_number).json()["code"] == "not_reported"
    assert_books_balance(casino)

"""Kiosks under attack (issue 14): a fraudster, a buggy firmware, a careless supervisor, a race.

Each test is one attempt to pay a ticket twice, to pay cash a kiosk does not
hold, to pay what a kiosk may not pay, or to get a 500; it states what the
system guarantees instead.
"""

import datetime as dt
from decimal import Decimal

import pytest
import time_machine
from django.db import connection
from django.utils import timezone

from cashdesk import services
from cashdesk.books import place_balances
from cashdesk.errors import CashDeskError
from cashdesk.items import Item
from cashdesk.models import CashTransaction, KioskTransfer, TransactionKind
from cashdesk.services.kiosks import (
    kiosk_place,
    kiosk_transfer_approve,
    kiosk_transfer_cancel,
    kiosk_transfer_request,
)
from machines.models import Machine, Place
from tests.api.test_offline_validation import pool, report
from tests.api.test_races import ticket_gate
from tests.cashdesk.conftest import VAULT_CASH
from tests.cashdesk.test_kiosks import assert_books_balance, fill, kiosk_cash, redeem
from tests.conftest import MachineClient
from tests.factories import MachineFactory, make_user
from tests.races import race
from tickets.models import Ticket, TicketEvent, TicketState


@pytest.fixture
def kiosk(casino) -> Machine:
    return MachineFactory(casino=casino, asset_number="K-01", kind=Machine.Kind.KIOSK)


@pytest.fixture
def kiosk_api(kiosk) -> MachineClient:
    return MachineClient(kiosk)


@pytest.fixture
def stocked_kiosk(kiosk, stocked_vault, floor, supervisor) -> Machine:
    fill(kiosk, floor, supervisor, amount="1000.00")
    return kiosk


def other_kiosk(casino, asset: str = "K-02") -> MachineClient:
    return MachineClient(MachineFactory(casino=casino, asset_number=asset, kind=Machine.Kind.KIOSK))


def payouts(number: str) -> list[tuple[str, int | None]]:
    """Every cash payout of the ticket: its kind and the kiosk that paid it (None at a desk)."""
    return list(
        CashTransaction.objects.filter(
            ticket__validation_number=number, kind__in=[TransactionKind.KIOSK_PAYOUT, TransactionKind.TICKET_PAYOUT]
        ).values_list("kind", "machine_id")
    )


def state(number: str) -> str:
    return Ticket.objects.get(validation_number=number).state


def refusals(number: str) -> list[str]:
    return list(
        TicketEvent.objects.filter(ticket__validation_number=number, kind="refused")
        .order_by("pk")
        .values_list("reason", flat=True)
    )


# Paying one ticket twice


def test_a_ticket_authorized_at_one_kiosk_is_committed_only_there(api, casino, kiosk, kiosk_api, stocked_kiosk):
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
    foreign = MachineClient(MachineFactory(casino=other_casino, asset_number="9001"))
    number = foreign.issued_ticket("10.00")

    assert kiosk_api.authorize(number).status_code == 404
    assert kiosk_api.commit(number, dispensed="10.00").status_code == 404
    assert state(number) == TicketState.ISSUED
    assert payouts(number) == []


# Dispensing more than the kiosk holds


def test_a_fill_waiting_for_approval_is_not_cash_and_a_cancelled_one_changes_nothing(
    api, kiosk, kiosk_api, stocked_vault, floor, supervisor
):
    fill(kiosk, floor, supervisor, amount="50.00")
    waiting = kiosk_transfer_request(machine=kiosk, user=floor, direction="fill", amount=Decimal("100.00"))
    big, small = api.issued_ticket("60.00"), api.issued_ticket("50.00")

    assert kiosk_api.authorize(big).json()["code"] == "kiosk_empty"
    assert kiosk_api.authorize(small).status_code == 200
    kiosk_transfer_cancel(transfer=waiting, user=supervisor)  # cancelled between authorize and commit
    assert kiosk_api.commit(small, dispensed="50.00").status_code == 200
    assert kiosk_cash(kiosk) == Decimal("0.00")
    assert kiosk_api.authorize(big).json()["code"] == "kiosk_empty"


def test_a_drop_requested_while_a_ticket_is_held_lets_that_ticket_finish_and_pays_no_other(
    api, casino, kiosk, kiosk_api, stocked_kiosk, floor, supervisor
):
    held, other = api.issued_ticket("100.00"), api.issued_ticket("10.00")
    assert kiosk_api.authorize(held).status_code == 200
    drop = kiosk_transfer_request(machine=kiosk, user=floor, direction="drop", amount=Decimal("900.00"))

    again = kiosk_api.authorize(held)  # its answer was lost: it asks again under a new request_id

    assert again.status_code == 200, again.json()
    assert again.json()["payout"] == "100.00"
    assert kiosk_api.authorize(other).json()["code"] == "kiosk_empty"
    with pytest.raises(CashDeskError) as busy:
        kiosk_transfer_approve(transfer=drop, supervisor=supervisor)
    assert busy.value.code == "kiosk_busy"
    assert kiosk_api.commit(held, dispensed="100.00").status_code == 200
    approved = kiosk_transfer_approve(transfer=drop, supervisor=supervisor)
    assert approved.count.lines.get().variance == Decimal("0.00")  # 1000 - 100 paid = 900 counted
    assert kiosk_cash(kiosk) == Decimal("0.00")
    assert kiosk_api.authorize(other).json()["code"] == "kiosk_empty"
    assert_books_balance(casino)


def test_a_fill_above_capacity_at_approval_is_refused_even_if_it_fitted_when_asked(
    casino, kiosk, kiosk_api, stocked_vault, floor, supervisor
):
    casino.kiosk_cash_capacity = Decimal("1000.00")
    casino.save()
    fill(kiosk, floor, supervisor, amount="900.00")
    waiting = kiosk_transfer_request(machine=kiosk, user=floor, direction="fill", amount=Decimal("100.00"))
    issued = kiosk_api.issue("20.00")  # a player breaks a note: the kiosk takes 20 in
    kiosk_api.printed(issued.json()["validation_number"])

    with pytest.raises(CashDeskError) as refused:
        kiosk_transfer_approve(transfer=waiting, supervisor=supervisor)

    assert refused.value.code == "over_capacity"
    assert kiosk_cash(kiosk) == Decimal("920.00")


# What a kiosk may not pay


def test_a_promo_ticket_is_never_paid_at_a_kiosk_however_much_it_holds(api, kiosk, kiosk_api, stocked_kiosk):
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


# What the firmware sends


ARABIC_TEN = "\u0661\u0660.\u0660\u0660"  # "10.00" in Arabic-Indic digits: Python's Decimal reads it
BAD_DISPENSED = (None, 10, 10.0, True, [], {}, "", "0", "0.00", "-10.00", "+10.00", "1e1", "10.00 ", "10,00")


@pytest.mark.parametrize("dispensed", [*BAD_DISPENSED, "9.99", "10.001", ARABIC_TEN, "9" * 5000])
def test_a_commit_with_a_bad_dispensed_is_422_and_the_ticket_stays_held(
    api, kiosk, kiosk_api, stocked_kiosk, dispensed
):
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
    number = api.issued_ticket("10.00")
    assert kiosk_api.authorize(number).status_code == 200

    assert kiosk_api.commit(number).json()["code"] == "invalid_amount"
    assert kiosk_api.commit(number, result="rejected", dispensed="nonsense").json()["state"] == TicketState.ISSUED
    assert payouts(number) == []
    assert kiosk_cash(kiosk) == Decimal("1000.00")


def test_a_slot_machine_sending_dispensed_moves_no_cash(api, casino, make_api, kiosk, stocked_kiosk):
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
    number = api.issued_ticket("10.00")

    assert kiosk_api.commit(number, dispensed="999.00").json()["code"] == "invalid_state"
    assert state(number) == TicketState.ISSUED


# Tickets a kiosk prints


def test_a_kiosk_printed_ticket_books_its_cash_once_whatever_the_firmware_replays(
    casino, kiosk, kiosk_api, shift, cashier
):
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
    refused = kiosk_api.post("tickets/issue", {"request_id": "i-1", **fields})

    assert refused.status_code == 422
    assert refused.json()["code"] == code
    assert not Ticket.objects.filter(issuing_machine=kiosk).exists()
    assert kiosk_cash(kiosk) == Decimal("0.00")


def test_an_offline_kiosk_ticket_books_its_cash_once_and_no_promo(casino, kiosk, kiosk_api):
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


# Fills and drops


def test_nobody_approves_a_kiosk_transfer_they_asked_for_or_may_not_approve(
    kiosk, stocked_vault, floor, supervisor, cashier
):
    second_floor = make_user("aldona", "floor_attendant")
    with pytest.raises(CashDeskError) as by_cashier:
        kiosk_transfer_request(machine=kiosk, user=cashier, direction="fill", amount=Decimal("10.00"))
    own = kiosk_transfer_request(machine=kiosk, user=supervisor, direction="fill", amount=Decimal("10.00"))

    with pytest.raises(CashDeskError) as by_self:
        kiosk_transfer_approve(transfer=own, supervisor=supervisor)
    with pytest.raises(CashDeskError) as by_floor:
        kiosk_transfer_approve(transfer=own, supervisor=second_floor)
    with pytest.raises(CashDeskError) as cancelled_by_floor:
        kiosk_transfer_cancel(transfer=own, user=second_floor)

    assert [error.value.code for error in (by_cashier, by_self, by_floor, cancelled_by_floor)] == [
        "forbidden",
        "own_request",
        "forbidden",
        "forbidden",
    ]
    kiosk_transfer_cancel(transfer=own, user=supervisor)
    with pytest.raises(CashDeskError) as after_cancel:
        kiosk_transfer_approve(transfer=own, supervisor=make_user("vida", "shift_supervisor"))
    assert after_cancel.value.code == "cancelled"
    assert kiosk_cash(kiosk) == Decimal("0.00")


@pytest.mark.parametrize(
    ("direction", "amount"),
    [
        ("fill", "-10.00"),
        ("fill", "0.00"),
        ("fill", "0.001"),
        ("fill", "100000.01"),
        ("fill", "9999999999.99"),
        ("drop", "-0.01"),
        ("drop", "10.005"),
        ("drop", "100000.01"),
        ("sideways", "10.00"),
    ],
)
def test_a_kiosk_transfer_of_a_wrong_amount_or_direction_is_refused(kiosk, floor, direction, amount):
    with pytest.raises(CashDeskError) as refused:
        kiosk_transfer_request(machine=kiosk, user=floor, direction=direction, amount=Decimal(amount))

    assert refused.value.code in ("invalid_amount", "over_limit", "invalid_direction")
    assert not KioskTransfer.objects.exists()


def test_a_kiosk_gets_its_place_even_when_a_desk_took_its_code(api, casino, kiosk, kiosk_api, floor, supervisor):
    Place.objects.create(casino=casino, code=f"KS{kiosk.pk}", name="A desk named by hand")

    refused = kiosk_api.authorize(api.issued_ticket("10.00"))

    assert refused.json()["code"] == "kiosk_empty"
    place = kiosk_place(kiosk)
    assert (place.kind, place.machine, place.code) == (Place.Kind.KIOSK, kiosk, f"KS{kiosk.pk}-2")


# Races


def _kiosk_with_cash(casino, asset: str, amount: str, vault: Place | None = None) -> MachineClient:
    supervisor = make_user(f"sup-{asset}", "shift_supervisor")
    if vault is None:
        vault = Place.objects.create(casino=casino, code="V", name="Vault", kind=Place.Kind.VAULT)
        services.vault_count(vault=vault, user=supervisor, counted={"cash": VAULT_CASH})
    machine = MachineFactory(casino=casino, asset_number=asset, kind=Machine.Kind.KIOSK)
    transfer = kiosk_transfer_request(
        machine=machine, user=make_user(f"att-{asset}", "floor_attendant"), direction="fill", amount=Decimal(amount)
    )
    kiosk_transfer_approve(transfer=transfer, supervisor=supervisor)
    return MachineClient(machine)


def _redeem(client: MachineClient, number: str) -> str:
    authorized = client.authorize(number)
    if authorized.status_code != 200:
        return authorized.json()["code"]
    payout = {"dispensed": authorized.json()["payout"]} if client.machine.is_kiosk else {}
    return str(client.commit(number, **payout).json()["state"])


@pytest.mark.django_db(transaction=True)
def test_two_kiosks_and_a_slot_racing_for_one_ticket_pay_it_once(casino):
    assert connection.vendor == "postgresql"
    first = _kiosk_with_cash(casino, "K-A", "500.00")
    vault = Place.objects.get(casino=casino, kind=Place.Kind.VAULT)
    second = _kiosk_with_cash(casino, "K-B", "500.00", vault=vault)
    slot = MachineClient(MachineFactory(casino=casino, asset_number="S-1"))
    issuer = MachineClient(MachineFactory(casino=casino, asset_number="P-1"))
    number = issuer.issued_ticket("25.00")

    results = race([lambda c=c: _redeem(c, number) for c in (first, second, slot)], gate=ticket_gate(number))

    # One holds it and redeems it; the others find it held, or already redeemed if they came after.
    assert results.count("redeemed") == 1, results
    assert set(results) - {"redeemed"} <= {"pending_elsewhere", "already_redeemed"}, results
    assert Ticket.objects.get(validation_number=number).state == TicketState.REDEEMED
    assert len(payouts(number)) <= 1
    total = kiosk_cash(first.machine) + kiosk_cash(second.machine)
    assert total == Decimal("1000.00") - Decimal("25.00") * len(payouts(number))


@pytest.mark.django_db(transaction=True)
def test_a_firmware_committing_twice_at_once_under_two_request_ids_is_paid_once(casino):
    kiosk = _kiosk_with_cash(casino, "K-A", "500.00")
    issuer = MachineClient(MachineFactory(casino=casino, asset_number="P-1"))
    number = issuer.issued_ticket("40.00")
    assert kiosk.authorize(number).status_code == 200

    results = race([lambda: kiosk.commit(number, dispensed="40.00").json() for _ in range(3)], gate=ticket_gate(number))

    assert sorted(result.get("state") or result["code"] for result in results) == [
        "already_redeemed",
        "already_redeemed",
        "redeemed",
    ], results
    assert payouts(number) == [(TransactionKind.KIOSK_PAYOUT, kiosk.machine.pk)]
    assert kiosk_cash(kiosk.machine) == Decimal("460.00")


@pytest.mark.django_db(transaction=True)
def test_five_tickets_authorized_at_once_never_promise_more_than_the_kiosk_holds(casino):
    kiosk = _kiosk_with_cash(casino, "K-A", "100.00")
    place = kiosk_place(kiosk.machine)
    issuer = MachineClient(MachineFactory(casino=casino, asset_number="P-1"))
    numbers = [issuer.issued_ticket("30.00") for _ in range(5)]

    results = race(
        [lambda n=n: kiosk.authorize(n).status_code for n in numbers],
        gate=("SELECT id FROM cashdesk_cashdesk WHERE id = %s FOR UPDATE", [place.pk]),
    )

    assert sorted(results) == [200, 200, 200, 409, 409], results
    for number in Ticket.objects.filter(state=TicketState.REDEEM_PENDING).values_list("validation_number", flat=True):
        assert kiosk.commit(number, dispensed="30.00").status_code == 200
    assert place_balances(place)[Item.CASH] == Decimal("10.00")


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("commit_first", [True, False])
def test_a_drop_approved_against_a_commit_counts_what_is_really_left(casino, commit_first):
    kiosk = _kiosk_with_cash(casino, "K-A", "500.00")
    place = kiosk_place(kiosk.machine)
    issuer = MachineClient(MachineFactory(casino=casino, asset_number="P-1"))
    number = issuer.issued_ticket("120.00")
    assert kiosk.authorize(number).status_code == 200
    drop = kiosk_transfer_request(
        machine=kiosk.machine, user=make_user("dropper", "floor_attendant"), direction="drop", amount=Decimal("380.00")
    )
    approver = make_user("approver", "shift_supervisor")

    def approve() -> str:
        try:
            kiosk_transfer_approve(transfer=drop, supervisor=approver)
            return "approved"
        except CashDeskError as refused:
            return refused.code

    calls = [lambda: kiosk.commit(number, dispensed="120.00").status_code, approve]
    results = race(
        calls if commit_first else calls[::-1],
        gate=("SELECT id FROM cashdesk_cashdesk WHERE id = %s FOR UPDATE", [place.pk]),
        ordered=True,
    )

    assert sorted(map(str, results)) == (["200", "approved"] if commit_first else ["200", "kiosk_busy"]), results
    assert Ticket.objects.get(validation_number=number).state == TicketState.REDEEMED
    if commit_first:
        drop.refresh_from_db()
        assert drop.count.lines.get().variance == Decimal("0.00")
        assert place_balances(place)[Item.CASH] == Decimal("0.00")
    else:
        assert place_balances(place)[Item.CASH] == Decimal("380.00")
        assert approve() == "approved"
    assert_books_balance(casino)


@pytest.mark.django_db(transaction=True)
def test_fills_drops_redemptions_and_desk_transfers_at_once_do_not_deadlock(casino):
    """Ticket, then kiosk place, then vault, everywhere: a fill waits on the vault holding its kiosk, an
    authorize at that kiosk waits on the fill, a drop of another kiosk and a desk's transfer wait on the vault."""
    filled = _kiosk_with_cash(casino, "K-A", "100.00")
    vault = Place.objects.get(casino=casino, kind=Place.Kind.VAULT)
    dropped = _kiosk_with_cash(casino, "K-B", "300.00", vault=vault)
    attendant, approver = make_user("att", "floor_attendant"), make_user("sup", "shift_supervisor")
    cashier = make_user("cash", "cashier")
    desk = Place.objects.create(casino=casino, code="D1", name="Desk 1", cash_limit=Decimal("500000.00"))
    shift = services.shift_open(desk=desk, cashier=cashier, counted={"cash": Decimal("1000.00")})
    fill_request = kiosk_transfer_request(
        machine=filled.machine, user=attendant, direction="fill", amount=Decimal("200.00")
    )
    drop_request = kiosk_transfer_request(
        machine=dropped.machine, user=attendant, direction="drop", amount=Decimal("300.00")
    )
    desk_drop = services.transfer_request(shift=shift, user=cashier, direction="drop", amount=Decimal("100.00"))
    number = MachineClient(MachineFactory(casino=casino, asset_number="P-1")).issued_ticket("250.00")
    vault_before = place_balances(vault)[Item.CASH]

    results = race(
        [
            lambda: kiosk_transfer_approve(transfer=fill_request, supervisor=approver).approved_at is not None,
            lambda: filled.authorize(number).status_code,
            lambda: kiosk_transfer_approve(transfer=drop_request, supervisor=approver).approved_at is not None,
            lambda: services.transfer_approve(transfer=desk_drop, supervisor=approver).amount,
        ],
        gate=("SELECT id FROM cashdesk_cashdesk WHERE id = %s FOR UPDATE", [vault.pk]),
        ordered=True,
    )

    assert results == [True, 200, True, Decimal("100.00")], results  # the authorize saw the fill's 300
    assert kiosk_cash(dropped.machine) == Decimal("0.00")
    assert kiosk_cash(filled.machine) == Decimal("300.00")
    assert place_balances(vault)[Item.CASH] == vault_before - Decimal("200.00") + Decimal("300.00") + Decimal("100.00")
    assert_books_balance(casino)


@pytest.mark.django_db(transaction=True)
def test_two_supervisors_approving_one_fill_at_once_move_the_cash_once(casino):
    kiosk = _kiosk_with_cash(casino, "K-A", "100.00")
    fill_request = kiosk_transfer_request(
        machine=kiosk.machine, user=make_user("att", "floor_attendant"), direction="fill", amount=Decimal("50.00")
    )
    supervisors = [make_user(f"sup{i}", "shift_supervisor") for i in range(2)]

    def approve(supervisor) -> str:
        try:
            kiosk_transfer_approve(transfer=fill_request, supervisor=supervisor)
            return "approved"
        except CashDeskError as refused:
            return refused.code

    results = race(
        [lambda s=s: approve(s) for s in supervisors],
        gate=("SELECT id FROM cashdesk_kiosktransfer WHERE id = %s FOR UPDATE", [fill_request.pk]),
    )

    assert sorted(results) == ["already_approved", "approved"], results
    assert kiosk_cash(kiosk.machine) == Decimal("150.00")
    assert CashTransaction.objects.filter(kind=TransactionKind.FILL).count() == 2  # the set-up fill and this one


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("supervisor_first", [True, False])
def test_a_supervisor_settling_a_kiosk_redemption_as_it_commits_books_the_cash_once(casino, supervisor_first):
    kiosk = _kiosk_with_cash(casino, "K-A", "200.00")
    number = MachineClient(MachineFactory(casino=casino, asset_number="P-1")).issued_ticket("75.00")
    assert kiosk.authorize(number).status_code == 200
    ticket = Ticket.objects.get(validation_number=number)
    supervisor = make_user("careless", "shift_supervisor")

    def settle() -> str:
        try:
            services.ticket_resolve_stuck(
                ticket=ticket, user=supervisor, credits_taken=True, meter_reading="cash out 75.00", reason="stuck"
            )
            return "settled"
        except CashDeskError as refused:
            return refused.code

    def commit() -> str:
        answer = kiosk.commit(number, dispensed="75.00").json()
        return str(answer.get("state") or answer["code"])

    with time_machine.travel(timezone.now() + dt.timedelta(minutes=1)):  # past the hold and its grace
        results = race(
            [settle, commit] if supervisor_first else [commit, settle], gate=ticket_gate(number), ordered=True
        )

    # Whoever comes second finds the ticket redeemed: the commit is refused, the settling too.
    assert results == (["settled", "already_redeemed"] if supervisor_first else ["redeemed", "invalid_state"])
    assert payouts(number) == [(TransactionKind.KIOSK_PAYOUT, kiosk.machine.pk)]
    assert kiosk_cash(kiosk.machine) == Decimal("125.00")

"""Kiosks (machine contract v1.1, "Kiosks"; issue 14): the API's kiosk lines, the kiosk's cash in the books."""

import datetime as dt
from decimal import Decimal

import pytest
import time_machine
from django.db import IntegrityError, transaction
from django.utils import timezone

from cashdesk import services
from cashdesk.books import counterparty_balances, physical_balances, place_balances
from cashdesk.errors import CashDeskError
from cashdesk.items import ALL_ITEMS, Item
from cashdesk.models import CashTransaction, ShiftCount, TransactionKind, Transfer
from cashdesk.services.kiosks import (
    kiosk_place,
    kiosk_transfer_approve,
    kiosk_transfer_cancel,
    kiosk_transfer_request,
)
from machines.models import Machine, Place
from tests.cashdesk.conftest import VAULT_CASH
from tests.cashdesk.test_kiosk_meters import KioskMeters
from tests.conftest import MachineClient
from tests.factories import MachineFactory
from tickets.models import Ticket, TicketEvent, TicketState


@pytest.fixture
def kiosk(casino) -> Machine:
    return MachineFactory(casino=casino, asset_number="K-01", kind=Machine.Kind.KIOSK, manufacturer="Kiosk Co")


@pytest.fixture
def kiosk_api(kiosk) -> MachineClient:
    return MachineClient(kiosk)


def fill(kiosk, floor, supervisor, amount="5000.00") -> Transfer:
    transfer = kiosk_transfer_request(machine=kiosk, user=floor, direction="fill", amount=Decimal(amount))
    return kiosk_transfer_approve(transfer=transfer, supervisor=supervisor)


def kiosk_cash(kiosk) -> Decimal:
    return place_balances(kiosk_place(kiosk))[Item.CASH]


def assert_books_balance(casino) -> None:
    """Every item's places and counterparties sum to zero, and no physical place holds less than nothing."""
    places = physical_balances(casino)
    parties = counterparty_balances(casino)
    for item in ALL_ITEMS:
        total = sum(held[item] for held in places.values()) + sum(side[item] for side in parties.values())
        assert total == 0, item
    assert all(held[item] >= 0 for held in places.values() for item in ALL_ITEMS)


def redeem(kiosk_api, number):
    authorized = kiosk_api.authorize(number)
    assert authorized.status_code == 200, authorized.json()
    payout = authorized.json()["payout"]
    committed = kiosk_api.commit(number, dispensed=payout)
    assert committed.status_code == 200, committed.json()
    return payout


# The contract's lines


def test_authorize_at_a_kiosk_answers_the_payout_rounded_up_to_the_cent(
    api, kiosk, kiosk_api, stocked_vault, floor, supervisor
):
    fill(kiosk, floor, supervisor)
    number = api.issued_ticket("12.341")

    response = kiosk_api.authorize(number)

    assert response.status_code == 200
    body = response.json()
    assert body["state"] == "redeem_pending"
    assert body["amount"] == "12.341"
    assert body["payout"] == "12.35"


def test_a_slot_machines_authorize_has_no_payout(api, make_api):
    number = api.issued_ticket("12.341")
    assert "payout" not in make_api(asset_number="2002").authorize(number).json()


def test_commit_with_the_payout_redeems_and_books_the_cash_out_of_the_kiosk(
    api, casino, kiosk, kiosk_api, stocked_vault, floor, supervisor
):
    fill(kiosk, floor, supervisor)
    number = api.issued_ticket("12.341")
    kiosk_api.authorize(number)

    response = kiosk_api.commit(number, dispensed="12.35")

    assert response.status_code == 200
    assert response.json() == {"validation_number": number, "state": "redeemed"}
    ticket = Ticket.objects.get(validation_number=number)
    assert ticket.redeemed_by_machine == kiosk
    assert kiosk_cash(kiosk) == Decimal("4987.65")
    tx = CashTransaction.objects.get(kind=TransactionKind.KIOSK_PAYOUT)
    assert (tx.ticket, tx.machine, tx.created_by, tx.amount) == (ticket, kiosk, None, Decimal("12.35"))
    event = ticket.events.get(kind="redeemed")
    assert event.details["payout"] == "12.35"
    assert event.details["kiosk_receipt"] == tx.receipt_number
    assert_books_balance(casino)


@pytest.mark.parametrize("dispensed", ["12.34", "12.36", "12.341", None, 12.35, "abc"])
def test_commit_with_another_dispensed_amount_is_422_and_changes_nothing(
    api, kiosk, kiosk_api, stocked_vault, floor, supervisor, dispensed
):
    fill(kiosk, floor, supervisor)
    number = api.issued_ticket("12.341")
    kiosk_api.authorize(number)
    extra = {} if dispensed is None else {"dispensed": dispensed}

    response = kiosk_api.commit(number, **extra)

    assert response.status_code == 422
    assert response.json()["code"] == "invalid_amount"
    assert Ticket.objects.get(validation_number=number).state == TicketState.REDEEM_PENDING
    assert kiosk_cash(kiosk) == Decimal("5000.00")
    assert not CashTransaction.objects.filter(kind=TransactionKind.KIOSK_PAYOUT).exists()
    # and the kiosk can still commit with the right amount
    assert kiosk_api.commit(number, dispensed="12.35").status_code == 200


def test_a_rejected_commit_returns_the_ticket_to_issued_and_moves_no_cash(
    api, kiosk, kiosk_api, stocked_vault, floor, supervisor
):
    fill(kiosk, floor, supervisor)
    number = api.issued_ticket("40.00")
    kiosk_api.authorize(number)

    response = kiosk_api.commit(number, result="rejected", reason="dispenser jam")

    assert response.status_code == 200
    assert response.json()["state"] == "issued"
    assert kiosk_cash(kiosk) == Decimal("5000.00")
    assert not CashTransaction.objects.filter(kind=TransactionKind.KIOSK_PAYOUT).exists()


# Each refusal


@pytest.mark.parametrize(
    ("setup", "code"),
    [
        ("promo", "not_cashable"),
        ("over_limit", "over_kiosk_limit"),
        ("empty", "kiosk_empty"),
    ],
)
def test_kiosk_refusals_are_409_recorded_and_change_nothing(
    api, casino, kiosk, kiosk_api, stocked_vault, floor, supervisor, setup, code
):
    if setup != "empty":
        fill(kiosk, floor, supervisor)
    amount = {"promo": "20.00", "over_limit": "1000.001", "empty": "20.00"}[setup]
    number = api.issued_ticket(amount, ticket_type="promo" if setup == "promo" else "cashable")

    response = kiosk_api.authorize(number)

    assert response.status_code == 409
    assert response.json()["code"] == code
    ticket = Ticket.objects.get(validation_number=number)
    assert ticket.state == TicketState.ISSUED
    assert ticket.holder_machine is None
    refusal = ticket.events.get(kind="refused")
    assert (refusal.reason, refusal.machine) == (code, kiosk)


def test_the_kiosk_limit_is_a_casino_setting_and_exactly_the_limit_is_paid(
    api, casino, kiosk, kiosk_api, stocked_vault, floor, supervisor
):
    casino.kiosk_payout_limit = Decimal("500.00")
    casino.save()
    fill(kiosk, floor, supervisor)
    assert kiosk_api.authorize(api.issued_ticket("500.001")).json()["code"] == "over_kiosk_limit"
    assert redeem(kiosk_api, api.issued_ticket("500.00")) == "500.00"


def test_a_kiosk_never_pays_above_the_identity_threshold_whatever_its_limit(
    api, casino, kiosk, kiosk_api, stocked_vault, floor, supervisor
):
    casino.identity_threshold = Decimal("300.00")
    casino.save()
    fill(kiosk, floor, supervisor)
    assert kiosk_api.authorize(api.issued_ticket("300.01")).json()["code"] == "over_kiosk_limit"


def test_the_database_refuses_a_kiosk_payout_above_the_identity_threshold(casino, kiosk, api):
    place = kiosk_place(kiosk)
    ticket = Ticket.objects.get(validation_number=api.issued_ticket("1500.00"))
    with pytest.raises(IntegrityError), transaction.atomic():
        CashTransaction.objects.create(
            casino=casino,
            desk=place,
            number=1,
            kind=TransactionKind.KIOSK_PAYOUT,
            amount=Decimal("1500.00"),
            identity_threshold=casino.identity_threshold,
            ticket=ticket,
            machine=kiosk,
            created_at=ticket.issued_at,
        )


def test_a_kiosk_that_would_go_below_zero_refuses_and_the_player_goes_to_the_desk(
    api, kiosk, kiosk_api, stocked_vault, floor, supervisor
):
    fill(kiosk, floor, supervisor, amount="100.00")
    first = api.issued_ticket("60.00")
    second = api.issued_ticket("40.01")
    exact = api.issued_ticket("40.00")
    kiosk_api.authorize(first)  # 60 set aside, not committed yet

    refused = kiosk_api.authorize(second)

    assert refused.status_code == 409
    assert refused.json()["code"] == "kiosk_empty"
    assert kiosk_api.authorize(exact).status_code == 200  # 60 + 40 = all it holds
    assert kiosk_api.commit(first, dispensed="60.00").status_code == 200
    assert kiosk_api.commit(exact, dispensed="40.00").status_code == 200
    assert kiosk_cash(kiosk) == Decimal("0.00")
    assert kiosk_api.authorize(second).json()["code"] == "kiosk_empty"


def test_a_kiosk_with_a_drop_waiting_pays_nothing(api, kiosk, kiosk_api, stocked_vault, floor, supervisor):
    fill(kiosk, floor, supervisor)
    kiosk_transfer_request(machine=kiosk, user=floor, direction="drop", amount=Decimal("5000.00"))
    assert kiosk_api.authorize(api.issued_ticket("10.00")).json()["code"] == "kiosk_empty"


def test_the_usual_refusals_still_come_first_at_a_kiosk(api, kiosk, kiosk_api, stocked_vault, floor, supervisor):
    fill(kiosk, floor, supervisor)
    number = api.issued_ticket("10.00")
    redeem(kiosk_api, number)
    assert kiosk_api.authorize(number).json()["code"] == "already_redeemed"


# Tickets a kiosk prints


def test_a_kiosk_printed_ticket_books_the_cash_taken_in(casino, kiosk, kiosk_api):
    number = kiosk_api.issued_ticket("35.00")

    ticket = Ticket.objects.get(validation_number=number)
    assert ticket.issuing_machine == kiosk
    assert kiosk_cash(kiosk) == Decimal("35.00")
    tx = CashTransaction.objects.get(kind=TransactionKind.KIOSK_TICKET)
    assert (tx.ticket, tx.machine, tx.amount) == (ticket, kiosk, Decimal("35.00"))
    assert_books_balance(casino)


def test_a_failed_print_at_a_kiosk_books_nothing(kiosk, kiosk_api):
    number = kiosk_api.issue("35.00").json()["validation_number"]
    assert kiosk_api.printed(number, result="failed").json()["state"] == "void"
    assert not Place.objects.filter(machine=kiosk).exists() or kiosk_cash(kiosk) == 0


@pytest.mark.parametrize(
    ("extra", "code"), [({"amount": "10.005"}, "invalid_amount"), ({"ticket_type": "promo"}, "invalid_request")]
)
def test_a_kiosk_prints_cashable_tickets_in_whole_cents(kiosk_api, extra, code):
    body = {"amount": "10.00", **extra}
    response = kiosk_api.issue(body.pop("amount"), **body)
    assert response.status_code == 422
    assert response.json()["code"] == code
    assert not Ticket.objects.exists()


def test_a_replayed_print_confirmation_books_the_cash_once(kiosk, kiosk_api):
    number = kiosk_api.issue("35.00").json()["validation_number"]
    body = {"request_id": "print-1", "result": "printed"}
    first = kiosk_api.post(f"tickets/{number}/printed", body)
    again = kiosk_api.post(f"tickets/{number}/printed", body)
    assert first.status_code == again.status_code == 200
    assert first.content == again.content
    assert CashTransaction.objects.filter(kind=TransactionKind.KIOSK_TICKET).count() == 1


def test_a_replayed_commit_books_the_payout_once(api, kiosk, kiosk_api, stocked_vault, floor, supervisor):
    fill(kiosk, floor, supervisor)
    number = api.issued_ticket("25.00")
    kiosk_api.authorize(number)
    body = {"request_id": "commit-1", "result": "accepted", "dispensed": "25.00"}
    first = kiosk_api.post(f"tickets/{number}/commit", body)
    again = kiosk_api.post(f"tickets/{number}/commit", body)
    assert first.content == again.content
    assert CashTransaction.objects.filter(kind=TransactionKind.KIOSK_PAYOUT).count() == 1
    assert kiosk_cash(kiosk) == Decimal("4975.00")


def test_the_database_refuses_a_second_cash_payout_of_one_ticket(
    api, casino, kiosk, kiosk_api, stocked_vault, floor, supervisor
):
    fill(kiosk, floor, supervisor)
    number = api.issued_ticket("25.00")
    redeem(kiosk_api, number)
    paid = CashTransaction.objects.get(kind=TransactionKind.KIOSK_PAYOUT)
    with pytest.raises(IntegrityError), transaction.atomic():
        CashTransaction.objects.create(
            casino=casino,
            desk=paid.desk,
            number=paid.number + 1,
            kind=TransactionKind.KIOSK_PAYOUT,
            amount=paid.amount,
            identity_threshold=paid.identity_threshold,
            ticket=paid.ticket,
            machine=kiosk,
            created_at=paid.created_at,
        )


# Fills and drops


def test_a_fill_moves_cash_from_the_vault_to_the_kiosk_once_approved(kiosk, stocked_vault, floor, supervisor):
    transfer = kiosk_transfer_request(machine=kiosk, user=floor, direction="fill", amount=Decimal("5000.00"))
    assert kiosk_cash(kiosk) == 0  # requested only

    kiosk_transfer_approve(transfer=transfer, supervisor=supervisor)

    assert kiosk_cash(kiosk) == Decimal("5000.00")
    assert place_balances(stocked_vault)[Item.CASH] == VAULT_CASH - Decimal("5000.00")
    transfer.refresh_from_db()
    assert transfer.transaction.kind == TransactionKind.FILL
    assert (transfer.transaction.created_by, transfer.transaction.approved_by) == (floor, supervisor)


def test_a_drop_with_its_count_sends_the_difference_to_over_short_and_leaves_the_kiosk_at_zero(
    api, casino, kiosk, kiosk_api, stocked_vault, floor, supervisor
):
    fill(kiosk, floor, supervisor)
    for amount in ("100.00", "50.505", "20.00"):
        redeem(kiosk_api, api.issued_ticket(amount))
    kiosk_api.issued_ticket("30.00")  # a printed ticket: cash in
    expected = Decimal("5000.00") - Decimal("170.51") + Decimal("30.00")

    transfer = kiosk_transfer_request(machine=kiosk, user=floor, direction="drop", amount=Decimal("4850.00"))
    kiosk_transfer_approve(transfer=transfer, supervisor=supervisor)

    transfer.refresh_from_db()
    line = transfer.count.lines.get()
    assert (line.counted_amount, line.expected_amount, line.variance) == (
        Decimal("4850.00"),
        expected,
        Decimal("4850.00") - expected,
    )
    assert transfer.count.kind == ShiftCount.Kind.KIOSK
    assert kiosk_cash(kiosk) == 0
    assert place_balances(stocked_vault)[Item.CASH] == VAULT_CASH - Decimal("5000.00") + Decimal("4850.00")
    assert counterparty_balances(casino)["over_short"][Item.CASH] == expected - Decimal("4850.00")
    assert_books_balance(casino)


def test_a_drop_counting_nothing_writes_the_count_and_the_shortage(kiosk, stocked_vault, floor, supervisor, casino):
    fill(kiosk, floor, supervisor, amount="100.00")
    transfer = kiosk_transfer_request(machine=kiosk, user=floor, direction="drop", amount=Decimal("0"))
    kiosk_transfer_approve(transfer=transfer, supervisor=supervisor)
    transfer.refresh_from_db()
    assert transfer.transaction is None
    assert transfer.count.lines.get().variance == Decimal("-100.00")
    assert kiosk_cash(kiosk) == 0
    assert_books_balance(casino)


def test_fills_and_drops_are_approved_by_a_supervisor_other_than_who_asked(kiosk, stocked_vault, floor, supervisor):
    from tests.factories import make_user

    own = kiosk_transfer_request(machine=kiosk, user=supervisor, direction="fill", amount=Decimal("100.00"))
    with pytest.raises(CashDeskError) as refused:
        kiosk_transfer_approve(transfer=own, supervisor=supervisor)
    assert refused.value.code == "own_request"
    with pytest.raises(CashDeskError) as not_supervisor:
        kiosk_transfer_approve(transfer=own, supervisor=floor)
    assert not_supervisor.value.code == "forbidden"
    cashier = make_user("kasininke", "cashier")
    with pytest.raises(CashDeskError) as cashier_refused:
        kiosk_transfer_request(machine=kiosk, user=cashier, direction="fill", amount=Decimal("1.00"))
    assert cashier_refused.value.code == "forbidden"
    assert kiosk_cash(kiosk) == 0


def test_one_request_waits_per_kiosk_and_a_cancelled_one_moves_nothing(kiosk, stocked_vault, floor, supervisor):
    first = kiosk_transfer_request(machine=kiosk, user=floor, direction="fill", amount=Decimal("100.00"))
    with pytest.raises(CashDeskError) as waiting:
        kiosk_transfer_request(machine=kiosk, user=floor, direction="fill", amount=Decimal("200.00"))
    assert waiting.value.code == "transfer_waiting"
    kiosk_transfer_cancel(transfer=first, user=floor)
    with pytest.raises(CashDeskError) as cancelled:
        kiosk_transfer_approve(transfer=first, supervisor=supervisor)
    assert cancelled.value.code == "cancelled"
    assert kiosk_cash(kiosk) == 0


def test_a_fill_may_not_take_the_kiosk_above_its_capacity(casino, kiosk, stocked_vault, floor, supervisor):
    casino.kiosk_cash_capacity = Decimal("8000.00")
    casino.save()
    fill(kiosk, floor, supervisor, amount="5000.00")
    with pytest.raises(CashDeskError) as refused:
        kiosk_transfer_request(machine=kiosk, user=floor, direction="fill", amount=Decimal("3000.01"))
    assert refused.value.code == "over_capacity"
    fill(kiosk, floor, supervisor, amount="3000.00")
    assert kiosk_cash(kiosk) == Decimal("8000.00")


def test_a_fill_the_vault_cannot_cover_is_refused(kiosk, vault, floor, supervisor):
    transfer = kiosk_transfer_request(machine=kiosk, user=floor, direction="fill", amount=Decimal("100.00"))
    with pytest.raises(CashDeskError) as refused:
        kiosk_transfer_approve(transfer=transfer, supervisor=supervisor)
    assert refused.value.code == "insufficient_stock"
    assert kiosk_cash(kiosk) == 0


def test_no_fill_or_drop_is_approved_while_the_kiosk_is_paying(api, kiosk, kiosk_api, stocked_vault, floor, supervisor):
    fill(kiosk, floor, supervisor)
    number = api.issued_ticket("10.00")
    kiosk_api.authorize(number)
    # the drop is asked for after the authorization (a waiting drop would have refused it)
    transfer = kiosk_transfer_request(machine=kiosk, user=floor, direction="drop", amount=Decimal("4990.00"))
    with pytest.raises(CashDeskError) as busy:
        kiosk_transfer_approve(transfer=transfer, supervisor=supervisor)
    assert busy.value.code == "kiosk_busy"
    assert kiosk_api.commit(number, dispensed="10.00").status_code == 200
    kiosk_transfer_approve(transfer=transfer, supervisor=supervisor)
    assert kiosk_cash(kiosk) == 0


def test_every_kiosk_change_is_recorded_with_who_and_when(api, kiosk, kiosk_api, stocked_vault, floor, supervisor):
    transfer = fill(kiosk, floor, supervisor)
    number = api.issued_ticket("10.00")
    redeem(kiosk_api, number)
    assert (transfer.requested_by, transfer.approved_by) == (floor, supervisor)
    assert transfer.requested_at <= transfer.approved_at
    events = list(TicketEvent.objects.filter(ticket__validation_number=number).values_list("kind", "machine"))
    assert events[-2:] == [("authorized", kiosk.pk), ("redeemed", kiosk.pk)]


def test_a_ticket_a_kiosk_printed_offline_books_its_cash_when_reported(casino, kiosk, kiosk_api):
    from tests.api.test_offline_validation import pool, report

    number = pool(kiosk_api, 1)[0]
    response = report(kiosk_api, number, amount="45.00")

    assert response.status_code == 201, response.json()
    ticket = Ticket.objects.get(validation_number=number)
    assert kiosk_cash(kiosk) == Decimal("45.00")
    assert CashTransaction.objects.get(kind=TransactionKind.KIOSK_TICKET).ticket == ticket
    assert report(kiosk_api, pool(kiosk_api, 1)[0], amount="45.005").json()["code"] == "invalid_amount"
    assert_books_balance(casino)


@pytest.mark.parametrize("credits_taken", [True, False])
def test_a_stuck_kiosk_redemption_settled_from_its_meters_books_the_cash_only_if_it_went_out(
    api, casino, kiosk, kiosk_api, stocked_vault, floor, supervisor, credits_taken
):
    fill(kiosk, floor, supervisor, amount="100.00")
    meters = KioskMeters(kiosk_api)
    meters.send(timezone.now())
    number = api.issued_ticket("30.005")
    kiosk_api.authorize(number)  # the kiosk never commits
    ticket = Ticket.objects.get(validation_number=number)

    with time_machine.travel(timezone.now() + dt.timedelta(minutes=1)):
        meters.add("cash_dispensed_amount", "30.01" if credits_taken else "0")
        meters.send(timezone.now())
        services.ticket_resolve_stuck(
            ticket=ticket,
            user=supervisor,
            credits_taken=credits_taken,
            meter_reading="cash out 1234.56",
            reason="no commit",
        )

    ticket.refresh_from_db()
    assert ticket.state == (TicketState.REDEEMED if credits_taken else TicketState.ISSUED)
    assert kiosk_cash(kiosk) == (Decimal("69.99") if credits_taken else Decimal("100.00"))
    payouts = CashTransaction.objects.filter(kind=TransactionKind.KIOSK_PAYOUT)
    assert [(tx.created_by, tx.machine) for tx in payouts] == ([(supervisor, kiosk)] if credits_taken else [])
    assert_books_balance(casino)


def test_the_database_refuses_a_kiosk_transaction_without_its_kiosk(casino, kiosk, api, supervisor):
    place = kiosk_place(kiosk)
    ticket = Ticket.objects.get(validation_number=api.issued_ticket("15.00"))
    with pytest.raises(IntegrityError), transaction.atomic():
        CashTransaction.objects.create(
            casino=casino,
            desk=place,
            number=1,
            kind=TransactionKind.KIOSK_TICKET,
            amount=Decimal("15.00"),
            identity_threshold=casino.identity_threshold,
            ticket=ticket,
            created_by=supervisor,
            created_at=ticket.issued_at,
        )


def test_a_ticket_paid_at_a_kiosk_is_refused_at_the_desk_saying_where(
    api, kiosk, kiosk_api, stocked_vault, floor, supervisor, shift, cashier
):
    fill(kiosk, floor, supervisor)
    number = api.issued_ticket("10.00")
    redeem(kiosk_api, number)
    with pytest.raises(CashDeskError) as refused:
        services.ticket_payout(shift=shift, user=cashier, validation_number=number)
    assert refused.value.code == "already_redeemed"
    assert "K-01" in refused.value.message
    assert "kiosk" in refused.value.message.lower()


@pytest.mark.parametrize("kind", [TransactionKind.KIOSK_PAYOUT, TransactionKind.TICKET_PAYOUT])
def test_the_database_refuses_paying_a_promo_ticket_in_cash(casino, kiosk, api, kind, shift, cashier):
    ticket = Ticket.objects.get(validation_number=api.issued_ticket("15.00", ticket_type="promo"))
    kiosk_fields = {"machine": kiosk, "desk": kiosk_place(kiosk)}
    desk_fields = {"created_by": cashier, "desk": shift.desk, "shift": shift}
    with pytest.raises(IntegrityError, match="promotional"), transaction.atomic():
        CashTransaction.objects.create(
            casino=casino,
            number=999,
            kind=kind,
            amount=Decimal("15.00"),
            identity_threshold=casino.identity_threshold,
            ticket=ticket,
            created_at=ticket.issued_at,
            **(kiosk_fields if kind == TransactionKind.KIOSK_PAYOUT else desk_fields),
        )

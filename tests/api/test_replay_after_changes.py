"""A replay after the world moved on gets its first answer, byte for byte, and changes nothing.

Each test replays a request after something changed since its first answer (staff acted, a limit was
reached, a setting changed) and checks the contract's "Idempotency": the first answer again, byte for
byte, and nothing changed; the same request_id with another body is 409 request_id_reused, changing
nothing.
"""

import datetime as dt
from decimal import Decimal

import pytest
from django.utils import timezone
from stdnum import damm

from cashdesk import services
from cashdesk.models import CashTransaction, MachineReceipt
from cashdesk.services.handpays import handpay_confirm, handpay_void
from cashdesk.services.kiosks import kiosk_transfer_approve, kiosk_transfer_request
from machines.models import Machine, MeterReading, Place
from tests.cashdesk.conftest import FLOAT
from tests.conftest import MachineClient
from tests.factories import MachineFactory, make_person, make_user
from tickets.models import LookupFailure, MachineRequest, ReservedNumber, Ticket, TicketEvent, TicketState


def _unknown_number(i: int = 7) -> str:
    body = f"{i:017d}"
    return body + damm.calc_check_digit(body)


def _everything() -> dict[str, int]:
    return {
        "tickets": Ticket.objects.count(),
        "events": TicketEvent.objects.count(),
        "requests": MachineRequest.objects.count(),
        "lookup_failures": LookupFailure.objects.count(),
        "reservations": ReservedNumber.objects.count(),
        "readings": MeterReading.objects.count(),
        "receipts": MachineReceipt.objects.count(),
        "cash_transactions": CashTransaction.objects.count(),
    }


@pytest.fixture
def floor(db):
    return make_user("tomas", "floor_attendant")


@pytest.fixture
def supervisor(db):
    return make_user("rasa", "shift_supervisor")


@pytest.fixture
def cashier(db):
    return make_user("ona", "cashier")


@pytest.fixture
def shift(casino, cashier):
    desk = Place.objects.create(casino=casino, code="K1", name="Kasa 1", cash_limit=Decimal("500000.00"))
    return services.shift_open(desk=desk, cashier=cashier, counted=FLOAT)


@pytest.fixture
def kiosk_api(casino, supervisor) -> MachineClient:
    vault = Place.objects.create(casino=casino, code="V", name="Vault", kind=Place.Kind.VAULT)
    services.vault_count(vault=vault, user=supervisor, counted={"cash": Decimal("100000.00")})
    return MachineClient(
        MachineFactory(casino=casino, asset_number="K-01", kind=Machine.Kind.KIOSK, manufacturer="Kiosk Co")
    )


def _fill(kiosk: Machine, floor, supervisor, amount: str = "5000.00") -> None:
    transfer = kiosk_transfer_request(machine=kiosk, user=floor, direction="fill", amount=Decimal(amount))
    kiosk_transfer_approve(transfer=transfer, supervisor=supervisor)


def test_a_replayed_not_found_adds_no_lookup_failure_and_no_block(api, casino):
    """The replay's attempt counts a failure and reaches the limit; rolled back, it blocks nothing.

    From the adversarial review of issue 15, where a replay ran its handler before the stored answer was found (replays
    after the world moved on).
    """
    casino.lookup_failure_limit = 2
    casino.save(update_fields=["lookup_failure_limit"])
    body = {"request_id": "guess-1"}
    first = api.post(f"tickets/{_unknown_number()}/authorize", body)
    assert first.status_code == 404
    before = _everything()

    again = api.post(f"tickets/{_unknown_number()}/authorize", body)

    assert (again.status_code, again.content) == (404, first.content)
    assert _everything() == before
    assert Machine.objects.get(pk=api.machine.pk).lookups_blocked_until is None
    assert api.authorize(api.issued_ticket()).status_code == 200  # not rate limited


def test_a_replay_while_the_machine_is_rate_limited_gets_its_first_answer(api):
    """From the adversarial review of issue 15, where a replay ran its handler before the stored answer was found
    (replays after the world moved on).
    """
    number = api.issued_ticket()
    body = {"request_id": "auth-1"}
    first = api.post(f"tickets/{number}/authorize", body)
    assert first.status_code == 200
    Machine.objects.filter(pk=api.machine.pk).update(lookups_blocked_until=timezone.now() + dt.timedelta(minutes=1))
    assert api.authorize(number).status_code == 429
    before = _everything()

    again = api.post(f"tickets/{number}/authorize", body)

    assert (again.status_code, again.content) == (200, first.content)
    assert _everything() == before


def test_a_replayed_rejected_commit_after_the_ticket_was_paid_at_the_desk(api, shift, cashier):
    """From the adversarial review of issue 15, where a replay ran its handler before the stored answer was found
    (replays after the world moved on).
    """
    number = api.issued_ticket()
    api.authorize(number)
    body = {"request_id": "commit-1", "result": "rejected"}
    first = api.post(f"tickets/{number}/commit", body)
    assert first.json()["state"] == "issued"
    services.ticket_payout(shift=shift, user=cashier, validation_number=number)
    before = _everything()

    again = api.post(f"tickets/{number}/commit", body)
    authorize_again = api.post(f"tickets/{number}/authorize", {"request_id": "commit-1"})

    assert (again.status_code, again.content) == (200, first.content)
    assert authorize_again.json()["code"] == "request_id_reused"
    assert _everything() == before
    assert Ticket.objects.get(validation_number=number).state == TicketState.REDEEMED


def test_a_replayed_issue_after_the_casino_lowered_its_maximum(api, casino):
    """From the adversarial review of issue 15, where a replay ran its handler before the stored answer was found
    (replays after the world moved on).
    """
    body = {"request_id": "cashout-1", "amount": "500.00"}
    first = api.post("tickets/issue", body)
    assert first.status_code == 201
    casino.max_ticket_amount = Decimal("100.00")
    casino.save(update_fields=["max_ticket_amount"])
    before = _everything()
    sequence = Machine.objects.get(pk=api.machine.pk).last_ticket_sequence

    again = api.post("tickets/issue", body)

    assert (again.status_code, again.content) == (201, first.content)
    assert _everything() == before
    assert Machine.objects.get(pk=api.machine.pk).last_ticket_sequence == sequence


def test_a_replayed_printed_after_the_ticket_expired(api):
    """From the adversarial review of issue 15, where a replay ran its handler before the stored answer was found
    (replays after the world moved on).
    """
    number = api.issue().json()["validation_number"]
    body = {"request_id": "print-1", "result": "printed"}
    first = api.post(f"tickets/{number}/printed", body)
    Ticket.objects.filter(validation_number=number).update(
        state=TicketState.EXPIRED, expired_at=timezone.now(), expires_at=timezone.now()
    )
    before = _everything()

    again = api.post(f"tickets/{number}/printed", body)

    assert (again.status_code, again.content) == (200, first.content)
    assert _everything() == before


@pytest.mark.parametrize("then", ["confirmed_and_paid", "voided", "voided_and_another_requested"])
def test_a_replayed_handpay_after_staff_acted(api, casino, floor, shift, cashier, then):
    """From the adversarial review of issue 15, where a replay ran its handler before the stored answer was found
    (replays after the world moved on).
    """
    body = {"request_id": "hp-1", "amount": "300.00", "kind": "jackpot"}
    first = api.post("handpays", body)
    assert first.status_code == 201
    receipt = MachineReceipt.objects.get(number=first.json()["receipt_number"])
    if then == "confirmed_and_paid":
        handpay_confirm(receipt_id=receipt.pk, casino_id=casino.pk, user=floor, operation_key="c" * 32)
        services.machine_receipt_pay(
            shift=shift, user=cashier, number=receipt.number, check_code=receipt.check_code, person=make_person()
        )
    else:
        handpay_void(receipt_id=receipt.pk, casino_id=casino.pk, user=make_user("rasa", "shift_supervisor"), reason="x")
        if then == "voided_and_another_requested":
            assert api.post("handpays", {**body, "request_id": "hp-2"}).status_code == 201
    before = _everything()

    again = api.post("handpays", body)
    other_body = api.post("handpays", {**body, "amount": "301.00"})

    assert (again.status_code, again.content) == (201, first.content)
    assert (other_body.status_code, other_body.json()["code"]) == (409, "request_id_reused")
    assert _everything() == before


def test_a_replayed_kiosk_commit_after_a_drop_books_nothing_twice(api, kiosk_api, floor, supervisor):
    """From the adversarial review of issue 15, where a replay ran its handler before the stored answer was found
    (replays after the world moved on).
    """
    kiosk = kiosk_api.machine
    _fill(kiosk, floor, supervisor)
    number = api.issued_ticket("12.341")
    assert kiosk_api.authorize(number).status_code == 200
    body = {"request_id": "kc-1", "result": "accepted", "dispensed": "12.35"}
    first = kiosk_api.post(f"tickets/{number}/commit", body)
    assert first.status_code == 200
    before = _everything()

    again = kiosk_api.post(f"tickets/{number}/commit", body)

    assert (again.status_code, again.content) == (200, first.content)
    assert _everything() == before


def test_a_kiosk_printed_with_a_reused_request_id_books_no_cash(kiosk_api, floor, supervisor):
    """The same request_id on another pending ticket: the attempt would book its cash; it must not stay.

    From the adversarial review of issue 15, where a replay ran its handler before the stored answer was found (replays
    after the world moved on).
    """
    kiosk = kiosk_api.machine
    _fill(kiosk, floor, supervisor)
    one = kiosk_api.issue("20.00").json()["validation_number"]
    two = kiosk_api.issue("30.00").json()["validation_number"]
    first = kiosk_api.post(f"tickets/{one}/printed", {"request_id": "kp-1", "result": "printed"})
    assert first.status_code == 200
    before = _everything()

    reused = kiosk_api.post(f"tickets/{two}/printed", {"request_id": "kp-1", "result": "printed"})

    assert (reused.status_code, reused.json()["code"]) == (409, "request_id_reused")
    assert _everything() == before
    assert Ticket.objects.get(validation_number=two).state == TicketState.PENDING_PRINT


def test_a_replayed_pool_request_reserves_nothing_more(api, casino):
    """From the adversarial review of issue 15, where a replay ran its handler before the stored answer was found
    (replays after the world moved on).
    """
    body = {"request_id": "pool-1", "count": 5}
    first = api.post("validation-pool", body)
    assert first.status_code == 200
    numbers = first.json()["validation_numbers"]
    reported = api.post(
        "tickets/offline",
        {
            "request_id": "off-1",
            "validation_number": numbers[0],
            "amount": "10.00",
            "printed_at": timezone.now().isoformat(timespec="seconds"),
            "sequence": 1,
        },
    )
    assert reported.status_code == 201
    before = _everything()

    again = api.post("validation-pool", body)

    assert (again.status_code, again.content) == (200, first.content)
    assert _everything() == before


def test_a_replayed_offline_report_after_the_ticket_was_redeemed(api, make_api):
    """From the adversarial review of issue 15, where a replay ran its handler before the stored answer was found
    (replays after the world moved on).
    """
    number = api.post("validation-pool", {"request_id": "pool-1", "count": 1}).json()["validation_numbers"][0]
    body = {
        "request_id": "off-1",
        "validation_number": number,
        "amount": "10.00",
        "printed_at": timezone.now().isoformat(timespec="seconds"),
        "sequence": 1,
    }
    first = api.post("tickets/offline", body)
    assert first.status_code == 201
    other = make_api(asset_number="2002")
    other.authorize(number)
    other.commit(number)
    before = _everything()

    again = api.post("tickets/offline", body)

    assert (again.status_code, again.content) == (201, first.content)
    assert _everything() == before


def test_a_replayed_meter_reading_after_a_later_one(api):
    """From the adversarial review of issue 15, where a replay ran its handler before the stored answer was found
    (replays after the world moved on).
    """
    meters = {"ticket_out_count": 1, "ticket_out_amount": "1.00", "ticket_in_count": 1, "ticket_in_amount": "1.00"}
    read_at = timezone.now().replace(microsecond=0)
    body = {"request_id": "m-1", "read_at": read_at.isoformat(), "meters": meters}
    first = api.post("meters", body)
    assert first.status_code == 201
    later = {**meters, "ticket_out_count": 0}  # a reset
    assert (
        api.post(
            "meters", {"request_id": "m-2", "read_at": (read_at + dt.timedelta(minutes=1)).isoformat(), "meters": later}
        ).status_code
        == 201
    )
    before = _everything()

    again = api.post("meters", body)
    reused = api.post("meters", {**body, "meters": later})

    assert (again.status_code, again.content) == (201, first.content)
    assert (reused.status_code, reused.json()["code"]) == (409, "request_id_reused")
    assert _everything() == before


def test_a_reused_request_id_with_a_malformed_number_is_reused_and_counts_no_failure(api):
    """From the adversarial review of issue 15, where a replay ran its handler before the stored answer was found
    (replays after the world moved on).
    """
    number = api.issued_ticket()
    api.post(f"tickets/{number}/authorize", {"request_id": "auth-1"})
    before = _everything()

    response = api.post("tickets/12345/authorize", {"request_id": "auth-1"})

    assert (response.status_code, response.json()["code"]) == (409, "request_id_reused")
    assert _everything() == before

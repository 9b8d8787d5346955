"""Machine contract v1.1: POST /api/v1/handpays and GET /api/v1/handpays/{receipt_number}."""

from collections import Counter
from decimal import Decimal

import pytest
from stdnum import damm

from cashdesk import services
from cashdesk.models import MachineReceipt
from cashdesk.services.handpays import handpay_confirm, handpay_void
from tests.conftest import MachineClient
from tests.factories import MachineFactory, make_user
from tests.races import race
from tickets.models import MachineRequest


def _ask(api, amount="12500.00", kind="jackpot", request_id=None):
    return api.post("handpays", {"request_id": request_id or api.next_id(), "amount": amount, "kind": kind})


def test_a_machine_asks_for_a_handpay(api):
    response = _ask(api, request_id="hp-1")
    assert response.status_code == 201
    body = response.json()
    assert set(body) == {"receipt_number", "state", "amount", "kind", "requested_at"}
    assert (body["state"], body["amount"], body["kind"]) == ("requested", "12500.00", "jackpot")
    number = body["receipt_number"]
    assert len(number) == 13
    assert number.isdigit()
    assert damm.is_valid(number)
    receipt = MachineReceipt.objects.get(number=number)
    assert (receipt.machine, receipt.source, receipt.request_id, receipt.created_by) == (
        api.machine,
        "machine",
        "hp-1",
        None,
    )
    assert "check_code" not in response.content.decode()  # the code is only on the paper the attendant prints


def test_no_casino_maximum_applies_to_a_win(api, casino):
    amount = Decimal("250000.00")
    assert amount > casino.max_ticket_amount
    assert amount > casino.max_receipt_amount
    assert _ask(api, amount="250000.00").status_code == 201


def test_cancelled_credits_with_a_fraction_of_a_cent(api):
    body = _ask(api, amount="1.001", kind="cancelled_credits").json()
    assert (body["amount"], body["kind"]) == ("1.001", "cancelled_credits")


@pytest.mark.parametrize("amount", [12.5, "0", "0.00", "-1.00", "1.0001", "1e3", "NaN", " 1.00", "1,00", "", None])
def test_a_bad_amount_is_invalid_amount(api, amount):
    response = api.post("handpays", {"request_id": "x", "amount": amount, "kind": "jackpot"})
    assert (response.status_code, response.json()["code"]) == (422, "invalid_amount")
    assert MachineReceipt.objects.count() == 0


@pytest.mark.parametrize(
    "body",
    [
        {"request_id": "x", "amount": "1.00", "kind": "bonus"},
        {"request_id": "x", "amount": "1.00"},
        {"amount": "1.00", "kind": "jackpot"},
        {"request_id": "", "amount": "1.00", "kind": "jackpot"},
        {"request_id": "x" * 65, "amount": "1.00", "kind": "jackpot"},
        ["not", "an", "object"],
    ],
)
def test_a_bad_request_is_invalid_request(api, body):
    response = api.post("handpays", body)
    assert (response.status_code, response.json()["code"]) == (422, "invalid_request")
    assert MachineReceipt.objects.count() == 0


def test_an_amount_too_large_to_keep_is_invalid_amount_not_a_crash(api):
    response = _ask(api, amount="999999999999.999")
    assert (response.status_code, response.json()["code"]) == (422, "invalid_amount")


def test_a_second_handpay_while_one_is_requested_is_handpay_pending(api):
    _ask(api)
    response = _ask(api, amount="5.00")
    assert (response.status_code, response.json()["code"]) == (409, "handpay_pending")
    assert MachineReceipt.objects.count() == 1


def test_another_machine_may_ask_at_the_same_time(api, make_api):
    _ask(api)
    assert _ask(make_api(asset_number="2002")).status_code == 201


def test_a_replayed_request_returns_the_first_answer_and_changes_nothing(api, table_counts):
    first = _ask(api, request_id="hp-7")
    counts = table_counts()
    again = _ask(api, request_id="hp-7")
    assert again.status_code == 201
    assert again.content == first.content
    assert table_counts() == counts


def test_a_replay_after_the_handpay_was_confirmed_still_returns_the_first_answer(api, casino, table_counts):
    """The machine's answer was lost and it retries after the attendant confirmed: nothing new, the same answer.

    (A request now runs before its request_id is looked up; the retry's attempt meets the unique request id of
    the handpay itself, and must be rolled back and answered from the stored answer, not fail.)
    """
    first = _ask(api, request_id="hp-9")
    receipt = MachineReceipt.objects.get(number=first.json()["receipt_number"])
    handpay_confirm(
        receipt_id=receipt.pk, casino_id=casino.pk, user=make_user("tomas", "floor_attendant"), operation_key="c" * 32
    )
    counts = table_counts()
    again = _ask(api, request_id="hp-9")
    assert (again.status_code, again.content) == (201, first.content)
    assert table_counts() == counts


def test_the_same_request_id_with_another_body_is_reused(api):
    _ask(api, request_id="hp-7")
    response = _ask(api, amount="1.00", request_id="hp-7")
    assert (response.status_code, response.json()["code"]) == (409, "request_id_reused")
    assert MachineReceipt.objects.count() == 1


def test_the_machine_follows_its_handpay_to_paid(api, casino):
    from machines.models import Place
    from tests.cashdesk.conftest import FLOAT
    from tests.factories import make_person

    number = _ask(api, amount="300.00").json()["receipt_number"]
    body = api.get(f"handpays/{number}").json()
    assert body["state"] == "requested"
    assert set(body) == {"receipt_number", "state", "amount", "kind", "requested_at", "confirmed_at", "paid_at"}
    assert (body["confirmed_at"], body["paid_at"]) == (None, None)

    receipt = MachineReceipt.objects.get(number=number)
    floor = make_user("tomas", "floor_attendant")
    handpay_confirm(receipt_id=receipt.pk, casino_id=casino.pk, user=floor, operation_key="k" * 32)
    body = api.get(f"handpays/{number}").json()
    assert body["state"] == "confirmed"
    assert body["confirmed_at"] is not None
    assert body["paid_at"] is None

    cashier = make_user("ona", "cashier")
    desk = Place.objects.create(casino=casino, code="K1", name="Kasa 1", cash_limit=Decimal("500000.00"))
    shift = services.shift_open(desk=desk, cashier=cashier, counted=FLOAT)
    services.machine_receipt_pay(
        shift=shift, user=cashier, number=number, check_code=receipt.check_code, person=make_person()
    )
    body = api.get(f"handpays/{number}").json()
    assert body["state"] == "paid"
    assert body["paid_at"] is not None
    assert body["requested_at"].endswith(("+02:00", "+03:00"))  # in the casino's time, like tickets


def test_a_void_handpay_shows_void_and_frees_the_machine(api, casino):
    number = _ask(api).json()["receipt_number"]
    receipt = MachineReceipt.objects.get(number=number)
    handpay_void(receipt_id=receipt.pk, casino_id=casino.pk, user=make_user("rasa", "shift_supervisor"), reason="test")
    assert api.get(f"handpays/{number}").json()["state"] == "void"
    assert _ask(api).status_code == 201


def test_another_machines_handpay_is_not_found(api, make_api):
    number = _ask(api).json()["receipt_number"]
    response = make_api(asset_number="2002").get(f"handpays/{number}")
    assert (response.status_code, response.json()["code"]) == (404, "not_found")


def test_a_floor_receipt_of_the_same_machine_is_not_a_handpay(api):
    floor = make_user("tomas", "floor_attendant")
    receipt = services.machine_receipt_record(machine=api.machine, amount=Decimal("5.00"), reason="r", user=floor)
    assert api.get(f"handpays/{receipt.number}").status_code == 404
    assert api.get("handpays/nonsense").status_code == 404


def test_without_a_key_is_unauthenticated(client, db):
    response = client.post("/api/v1/handpays", {}, content_type="application/json")
    assert (response.status_code, response.json()["code"]) == (401, "unauthenticated")


def test_a_disabled_machine_is_refused(make_api):
    response = _ask(make_api(asset_number="3003", ticket_enrolled=False))
    assert (response.status_code, response.json()["code"]) == (403, "machine_disabled")


def test_handpays_are_in_the_schema(client, db):
    schema = client.get("/api/v1/schema/", HTTP_ACCEPT="application/json").json()
    assert "post" in schema["paths"]["/api/v1/handpays"]
    assert "get" in schema["paths"]["/api/v1/handpays/{receipt_number}"]


@pytest.mark.django_db(transaction=True)
def test_two_requests_of_one_machine_at_once_make_one_handpay_and_one_handpay_pending(casino):
    machine = MachineFactory(casino=casino)
    clients = [MachineClient(machine) for _ in range(2)]

    responses = race(
        [lambda c=c, i=i: _ask(c, request_id=f"race-{i}") for i, c in enumerate(clients)],
        gate=("SELECT id FROM machines_machine WHERE id = %s FOR UPDATE", [machine.pk]),
    )

    assert Counter(r.status_code for r in responses) == {201: 1, 409: 1}
    assert {r.json()["code"] for r in responses if r.status_code == 409} == {"handpay_pending"}
    assert MachineReceipt.objects.filter(machine=machine, state="requested").count() == 1
    assert MachineRequest.objects.filter(machine=machine).count() == 2

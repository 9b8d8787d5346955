"""No value the contract accepts breaks a later request (issue 21, "one offline report bricks a machine").

`POST /api/v1/tickets/offline` with `"sequence": 2147483647`, the documented maximum, answered 201, and every
`issue` from that machine afterwards was a 500 (`integer out of range`): the host's counter could not go past
it. A machine's ticket sequence wraps back to 1 after the maximum (SAS and G2S ticket sequence numbers wrap),
skipping any number one of the machine's tickets still has.
"""

import datetime as dt
from decimal import Decimal
from typing import Any

import pytest
import time_machine

from machines.models import Machine
from tests.api.test_offline_validation import pool, report
from tests.conftest import MachineClient
from tickets.models import Ticket
from tickets.services import MAX_TICKET_SEQUENCE

VILNIUS = dt.timezone(dt.timedelta(hours=2))
NOW = dt.datetime(2026, 12, 2, 18, 10, 0, tzinfo=VILNIUS)
MAX_INT = 2_147_483_647
AMOUNT_MAX = "999999999999.999"  # the longest amount "Money and numbers" accepts
METER_MAX = "999999999999999.999"  # a lifetime counter's column: 18 digits, 3 decimals
METERS = ("ticket_out_count", "ticket_in_count", "handpay_count", "games_played")
AMOUNT_METERS = (
    "ticket_out_amount",
    "ticket_in_amount",
    "handpay_amount",
    "bills_in_amount",
    "coin_in_amount",
    "coin_out_amount",
    "cash_dispensed_amount",
)


def test_the_sequence_maximum_is_the_columns():
    assert MAX_TICKET_SEQUENCE == MAX_INT


@time_machine.travel(NOW, tick=False)
def test_issue_after_an_offline_ticket_at_the_maximum_wraps_to_one(api, machine):
    number = pool(api, 1)[0]
    assert report(api, number, sequence=MAX_INT).status_code == 201

    first = api.issue("5.00")
    second = api.issue("6.00")

    assert first.status_code == 201, first.content
    assert first.json()["print"]["sequence"] == 1
    assert second.json()["print"]["sequence"] == 2
    machine.refresh_from_db()
    assert machine.last_ticket_sequence == 2


@time_machine.travel(NOW, tick=False)
def test_the_wrapped_sequence_skips_numbers_the_machines_tickets_still_have(api, machine):
    for _ in range(3):
        api.issued_ticket()  # sequences 1, 2, 3
    number = pool(api, 1)[0]
    assert report(api, number, sequence=MAX_INT).status_code == 201

    response = api.issue("5.00")

    assert response.status_code == 201, response.content
    assert response.json()["print"]["sequence"] == 4
    assert sorted(Ticket.objects.filter(issuing_machine=machine).values_list("sequence", flat=True)) == [
        1,
        2,
        3,
        4,
        MAX_INT,
    ]


@time_machine.travel(NOW, tick=False)
def test_an_offline_ticket_whose_sequence_is_taken_at_the_maximum_wraps_too(api, machine):
    Machine.objects.filter(pk=machine.pk).update(last_ticket_sequence=MAX_INT)
    first, second = pool(api, 2)
    assert report(api, first, sequence=MAX_INT).status_code == 201  # not taken: it keeps its own

    response = report(api, second, sequence=MAX_INT)  # taken: it gets the host's next, past the maximum

    assert response.status_code == 201, response.content
    assert Ticket.objects.get(validation_number=second).sequence == 1
    assert api.issue("5.00").json()["print"]["sequence"] == 2


def _extremes(api: MachineClient) -> list[tuple[str, Any, set[int]]]:
    """Every number field of every endpoint at and just past its limits, with the answers it may get."""
    sent: list[tuple[str, Any, set[int]]] = []

    def send(path: str, body: dict[str, Any], allowed: set[int]) -> Any:
        response = api.post(path, {"request_id": api.next_id(), **body})
        sent.append((path, body, allowed))
        assert response.status_code in allowed, (path, body, response.status_code, response.content)
        return response

    for amount, allowed in (("0.001", {201}), ("10000.00", {201}), ("10000.001", {422}), (AMOUNT_MAX, {422})):
        send("tickets/issue", {"amount": amount}, allowed)
    for count, allowed in (
        (0, {422}),
        (1, {200}),
        (MAX_INT, {200}),
        (MAX_INT + 1, {422}),
        (-1, {422}),
        (10**40, {422}),
    ):
        send("validation-pool", {"count": count}, allowed)
    numbers = pool(api, 20)
    for sequence, allowed in ((0, {201}), (MAX_INT, {201}), (MAX_INT + 1, {422}), (-1, {422}), (10**40, {422})):
        send("tickets/offline", _offline(numbers.pop(), sequence=sequence), allowed)
    for amount, allowed in (("0.001", {201}), ("10000.00", {201}), (AMOUNT_MAX, {422})):
        send("tickets/offline", _offline(numbers.pop(), amount=amount), allowed)
    big_meters: dict[str, Any] = {name: 2**63 - 1 for name in METERS}
    big_meters |= {name: METER_MAX for name in AMOUNT_METERS}
    zero_meters: dict[str, Any] = {name: 0 for name in METERS} | {name: "0" for name in AMOUNT_METERS}
    send("meters", {"read_at": "2026-12-02T18:00:00+02:00", "meters": zero_meters}, {201})
    send("meters", {"read_at": "2026-12-02T18:01:00+02:00", "meters": big_meters}, {201})
    for name in METERS:
        send("meters", {"read_at": "2026-12-02T18:02:00+02:00", "meters": {**big_meters, name: 2**63}}, {422})
        send("meters", {"read_at": "2026-12-02T18:02:00+02:00", "meters": {**big_meters, name: -1}}, {422})
    for name in AMOUNT_METERS:
        send("meters", {"read_at": "2026-12-02T18:02:00+02:00", "meters": {**big_meters, name: "1" + "0" * 15}}, {422})
    for amount, allowed in ((AMOUNT_MAX, {422}), ("9999999999.999", {201}), ("0.001", {409})):
        send("handpays", {"amount": amount, "kind": "jackpot"}, allowed)
    return sent


def _offline(number: str, **fields: Any) -> dict[str, Any]:
    body = {
        "validation_number": number,
        "amount": "25.00",
        "ticket_type": "cashable",
        "printed_at": "2026-12-02T18:04:11+02:00",
        "sequence": 1235,
    }
    return body | fields


@time_machine.travel(NOW, tick=False)
def test_the_extremes_of_every_number_field_leave_the_machine_working(api, make_api, machine):
    _extremes(api)
    player = make_api(asset_number="2002")

    # A whole life cycle on that machine, after all that.
    issued = api.issue("12.50")
    assert issued.status_code == 201, issued.content
    number = issued.json()["validation_number"]
    assert api.printed(number).status_code == 200
    assert api.get(f"tickets/{number}").json()["state"] == "issued"
    assert player.authorize(number).status_code == 200
    assert player.commit(number).json()["state"] == "redeemed"
    failed = api.issue("3.00").json()["validation_number"]
    assert api.printed(failed, result="failed", reason="paper_out").json()["state"] == "void"
    assert report(api, pool(api, 1)[0], sequence=7).status_code == 201
    meters = {name: 2**63 - 1 for name in METERS} | {name: METER_MAX for name in AMOUNT_METERS}
    reading = {"request_id": api.next_id(), "read_at": "2026-12-02T18:09:00+02:00", "meters": meters}
    assert api.post("meters", reading).status_code == 201
    assert api.post("handpays", {"request_id": api.next_id(), "amount": "1.00", "kind": "jackpot"}).status_code == 409
    assert Ticket.objects.filter(issuing_machine=machine).count() >= 9
    assert Ticket.objects.get(validation_number=number).amount == Decimal("12.50")


@time_machine.travel(NOW, tick=False)
def test_a_kiosks_dispensed_at_its_extremes_is_a_refusal_not_an_error(api, make_api):
    kiosk = make_api(asset_number="9001", kind=Machine.Kind.KIOSK)
    number = api.issued_ticket()
    for dispensed, status in (("0.001", 409), (AMOUNT_MAX, 409), ("1" + "0" * 12, 422), ("-1", 422)):
        response = kiosk.commit(number, dispensed=dispensed)
        assert response.status_code == status, (dispensed, response.content)
    assert kiosk.get(f"tickets/{number}").json()["state"] == "issued"
    assert api.issue("1.00").status_code == 201


@pytest.mark.parametrize("sequence", [MAX_INT - 1, MAX_INT])
@time_machine.travel(NOW, tick=False)
def test_issues_go_on_across_the_maximum(api, machine, sequence):
    Machine.objects.filter(pk=machine.pk).update(last_ticket_sequence=sequence)
    sequences = [api.issue().json()["print"]["sequence"] for _ in range(3)]
    assert sequences == ([MAX_INT, 1, 2] if sequence < MAX_INT else [1, 2, 3])

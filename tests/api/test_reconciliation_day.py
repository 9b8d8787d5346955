"""A day on the floor through the v1.1 API, reconciled exactly: tickets printed and played in, an offline ticket
reported late, a handpay confirmed by the attendant, a RAM clear inside the day and a machine that stayed silent."""

import datetime as dt
from decimal import Decimal

import pytest
import time_machine

from cashdesk.models import MachineReceipt
from cashdesk.services.handpays import handpay_confirm
from tests.conftest import MachineClient
from tests.factories import MachineFactory, make_user
from tickets.reconciliation import reconcile_window

START = dt.datetime(2026, 12, 2, 10, 0, tzinfo=dt.UTC)


class Meters:
    """A machine's lifetime counters, kept as a real machine keeps them and sent as readings."""

    def __init__(self, api: MachineClient, out: tuple[int, str], into: tuple[int, str]) -> None:
        self.api = api
        self.values = {
            "ticket_out_count": out[0],
            "ticket_out_amount": Decimal(out[1]),
            "ticket_in_count": into[0],
            "ticket_in_amount": Decimal(into[1]),
            "handpay_count": 0,
            "handpay_amount": Decimal("0"),
        }

    def add(self, kind: str, amount: str) -> None:
        self.values[f"{kind}_count"] += 1
        self.values[f"{kind}_amount"] += Decimal(amount)

    def clear(self) -> None:  # RAM clear: every counter back to zero
        self.values = {name: type(value)(0) for name, value in self.values.items()}

    def send(self, at: dt.datetime) -> bool:
        meters = {name: str(value) if isinstance(value, Decimal) else value for name, value in self.values.items()}
        body = {"request_id": self.api.next_id(), "read_at": at.isoformat(), "meters": meters}
        response = self.api.post("meters", body)
        assert response.status_code == 201, response.json()
        return bool(response.json()["reset"])


def _cashout(api: MachineClient, meters: Meters, amount: str) -> str:
    number = api.issued_ticket(amount)
    meters.add("ticket_out", amount)
    return number


def _ticket_in(api: MachineClient, meters: Meters, number: str, amount: str) -> None:
    assert api.authorize(number).status_code == 200
    assert api.commit(number).json()["state"] == "redeemed"
    meters.add("ticket_in", amount)


@pytest.mark.django_db
def test_a_day_through_the_api_reconciles_to_zero_and_a_lost_print_shows_exactly(casino):
    a_machine = MachineFactory(casino=casino, asset_number="A1")
    b_machine = MachineFactory(casino=casino, asset_number="B2")
    MachineFactory(casino=casino, asset_number="C3")  # stays silent all day
    a, b = MachineClient(a_machine), MachineClient(b_machine)
    a_meters, b_meters = Meters(a, (500, "5000.00"), (300, "3000.00")), Meters(b, (10, "100.00"), (20, "200.00"))
    attendant = make_user("tomas", "floor_attendant")

    with time_machine.travel(START - dt.timedelta(minutes=5), tick=False) as clock:
        a_meters.send(START - dt.timedelta(minutes=5))  # the day's starting points
        b_meters.send(START - dt.timedelta(minutes=5))
        clock.move_to(START + dt.timedelta(minutes=10))
        first = _cashout(a, a_meters, "25.00")
        _ticket_in(b, b_meters, first, "25.00")
        pool = a.post("validation-pool", {"request_id": a.next_id(), "count": 2}).json()["validation_numbers"]
        clock.move_to(START + dt.timedelta(minutes=20))
        a_meters.add("ticket_out", "7.25")  # printed offline with a pooled number, reported when back
        a_meters.send(START + dt.timedelta(minutes=20))
        a_meters.clear()  # RAM clear: the next reading counts again from zero
        clock.move_to(START + dt.timedelta(minutes=30))
        assert a_meters.send(START + dt.timedelta(minutes=30)) is True
        second = _cashout(a, a_meters, "100.001")
        clock.move_to(START + dt.timedelta(minutes=40))
        handpay = a.post("handpays", {"request_id": a.next_id(), "amount": "12500.00", "kind": "jackpot"})
        assert handpay.status_code == 201
        receipt_number = handpay.json()["receipt_number"]
        receipt = MachineReceipt.objects.get(machine=a_machine, number=receipt_number)
        handpay_confirm(receipt_id=receipt.pk, casino_id=casino.pk, user=attendant, operation_key="c" * 32)
        a_meters.add("handpay", "12500.00")  # the machine counts it when it is reset at the machine
        offline = a.post(
            "tickets/offline",
            {
                "request_id": a.next_id(),
                "validation_number": pool[0],
                "amount": "7.25",
                "printed_at": (START + dt.timedelta(minutes=15)).isoformat(),
                "sequence": 9001,
            },
        )
        assert offline.status_code == 201, offline.json()
        _ticket_in(b, b_meters, second, "100.001")
        clock.move_to(START + dt.timedelta(minutes=50))
        a_meters.send(START + dt.timedelta(minutes=50))
        b_meters.send(START + dt.timedelta(minutes=50))

    finish = START + dt.timedelta(hours=1)
    days = {entry.machine.asset_number: entry for entry in reconcile_window(casino, START, finish)}
    assert days["A1"].status == "matched", [(line.meter, line.difference) for line in days["A1"].lines]
    assert days["B2"].status == "matched", [(line.meter, line.difference) for line in days["B2"].lines]
    a_lines = {line.meter: (line.change, line.system, line.difference) for line in days["A1"].lines}
    assert a_lines["ticket_out_count"] == (3, 3, 0)  # two online, one offline; the reset bridged
    assert a_lines["ticket_out_amount"][:2] == (Decimal("132.251"), Decimal("132.251"))
    assert a_lines["handpay_count"] == (1, 1, 0)
    assert a_lines["handpay_amount"][:2] == (Decimal("12500.00"), Decimal("12500.00"))
    b_lines = {line.meter: (line.change, line.system, line.difference) for line in days["B2"].lines}
    assert b_lines["ticket_in_count"] == (2, 2, 0)
    assert b_lines["ticket_in_amount"][:2] == (Decimal("125.001"), Decimal("125.001"))
    assert days["C3"].status == "no_reading"  # listed, as silent

    # A print the host never heard of (the machine counted it, the report was lost): exactly that difference.
    with time_machine.travel(START + dt.timedelta(minutes=55), tick=False):
        a_meters.add("ticket_out", "40.00")
        a_meters.send(START + dt.timedelta(minutes=55))
    again = {entry.machine.asset_number: entry for entry in reconcile_window(casino, START, finish)}
    a_lines = {line.meter: line.difference for line in again["A1"].lines}
    assert again["A1"].status == "difference"
    assert a_lines["ticket_out_count"] == 1
    assert a_lines["ticket_out_amount"] == Decimal("40.00")
    assert all(not difference for meter, difference in a_lines.items() if not meter.startswith("ticket_out"))

"""A kiosk's gaming day reconciled (issue 14): its cash meters against its books, through the v1.1 API.

`cash_dispensed_amount` is compared with the cash its books paid out for tickets (each payout the ticket's
amount rounded up to the cent) and `bills_in_amount` with the cash booked in for the tickets it printed. Fills,
drops and their counts move cash too, but no ticket: they are not in either figure.
"""

import datetime as dt
from decimal import Decimal

import pytest
import time_machine

from cashdesk import services
from cashdesk.services.kiosks import kiosk_transfer_approve, kiosk_transfer_request
from machines.models import Machine, MeterReconciliation
from tests.conftest import MachineClient
from tests.factories import MachineFactory
from tickets.reconciliation import reconcile_day, reconciliation_store

DAY = dt.date(2026, 12, 2)  # gaming day 06:00 to 06:00 the next morning, Vilnius time
START = dt.datetime(2026, 12, 2, 6, 0, tzinfo=dt.timezone(dt.timedelta(hours=2)))  # the day's start
KIOSK_METERS = ("cash_dispensed_amount", "bills_in_amount")


class KioskMeters:
    """A kiosk's lifetime counters, kept as the kiosk keeps them and sent as readings."""

    def __init__(self, api: MachineClient) -> None:
        self.api = api
        self.values: dict[str, int | Decimal] = {
            "ticket_out_count": 120,
            "ticket_out_amount": Decimal("8150.00"),
            "ticket_in_count": 900,
            "ticket_in_amount": Decimal("61234.567"),
            "cash_dispensed_amount": Decimal("61240.12"),
            "bills_in_amount": Decimal("8150.00"),
        }

    def add(self, meter: str, value: int | str) -> None:
        self.values[meter] += Decimal(value) if isinstance(value, str) else value

    def send(self, at: dt.datetime) -> None:
        meters = {name: str(value) if isinstance(value, Decimal) else value for name, value in self.values.items()}
        response = self.api.post(
            "meters", {"request_id": self.api.next_id(), "read_at": at.isoformat(), "meters": meters}
        )
        assert response.status_code == 201, response.json()


@pytest.fixture
def kiosk(casino) -> Machine:
    return MachineFactory(casino=casino, asset_number="K-01", kind=Machine.Kind.KIOSK, manufacturer="Kiosk Co")


def _day(kiosk, floor, supervisor, vault, api, *, dispensed_extra: str = "0") -> None:
    """The kiosk's day: filled, pays two tickets (one with a fraction of a cent), prints one for notes, is
    dropped with a count 5.00 short; its meters count what it did (and `dispensed_extra` more cash out)."""
    kiosk_api = MachineClient(kiosk)
    meters = KioskMeters(kiosk_api)
    with time_machine.travel(START - dt.timedelta(minutes=10), tick=False) as clock:
        services.vault_count(vault=vault, user=supervisor, counted={"cash": Decimal("50000.00")})
        meters.send(START - dt.timedelta(minutes=10))  # the day's starting point
        clock.move_to(START + dt.timedelta(hours=4))
        fill = kiosk_transfer_request(machine=kiosk, user=floor, direction="fill", amount=Decimal("3000.00"))
        kiosk_transfer_approve(transfer=fill, supervisor=supervisor)
        for amount in ("12.341", "40.00"):
            number = api.issued_ticket(amount)
            payout = kiosk_api.authorize(number).json()["payout"]
            assert kiosk_api.commit(number, dispensed=payout).status_code == 200
            meters.add("ticket_in_count", 1)
            meters.add("ticket_in_amount", amount)
            meters.add("cash_dispensed_amount", payout)
        kiosk_api.issued_ticket("35.00")  # notes in, a ticket out
        meters.add("ticket_out_count", 1)
        meters.add("ticket_out_amount", "35.00")
        meters.add("bills_in_amount", "35.00")
        meters.add("cash_dispensed_amount", dispensed_extra)
        clock.move_to(START + dt.timedelta(hours=5))
        # 3000.00 - 12.35 - 40.00 + 35.00 = 2982.65 in the books; 2977.65 counted
        drop = kiosk_transfer_request(machine=kiosk, user=floor, direction="drop", amount=Decimal("2977.65"))
        kiosk_transfer_approve(transfer=drop, supervisor=supervisor)
        clock.move_to(START + dt.timedelta(hours=6))
        meters.send(START + dt.timedelta(hours=6))


def _lines(entry) -> dict[str, tuple]:
    return {line.meter: (line.change, line.system, line.difference) for line in entry.lines}


def test_a_kiosk_whose_meters_match_its_books_is_matched_with_its_cash_lines(
    casino, kiosk, floor, supervisor, vault, api
):
    _day(kiosk, floor, supervisor, vault, api)

    days = {entry.machine.asset_number: entry for entry in reconcile_day(casino, DAY)}

    entry = days["K-01"]
    found = _lines(entry)
    assert entry.status == MeterReconciliation.Status.MATCHED, found
    assert found["cash_dispensed_amount"] == (Decimal("52.35"), Decimal("52.35"), 0)  # 12.35 + 40.00: rounded up
    assert found["bills_in_amount"] == (Decimal("35.00"), Decimal("35.00"), 0)  # the fill and the drop are not in
    assert found["ticket_in_count"] == (2, 2, 0)
    assert found["ticket_in_amount"] == (Decimal("52.341"), Decimal("52.341"), 0)  # the tickets, not the cash
    assert found["ticket_out_count"] == (1, 1, 0)
    assert found["ticket_out_amount"][2] == 0
    assert not any(line.meter in KIOSK_METERS for line in days[api.machine.asset_number].lines)  # a slot has none

    reconciliation_store(casino, DAY)
    stored = MeterReconciliation.objects.get(machine=kiosk, gaming_day=DAY)
    assert stored.status == MeterReconciliation.Status.MATCHED
    stored_lines = {line["meter"]: line for line in stored.lines}
    assert {key: Decimal(value) for key, value in stored_lines["cash_dispensed_amount"].items() if key != "meter"} == {
        "change": Decimal("52.35"),
        "system": Decimal("52.35"),
        "difference": 0,
    }
    assert Decimal(stored_lines["bills_in_amount"]["system"]) == Decimal("35.00")


def test_a_kiosk_that_dispensed_more_than_its_books_shows_that_difference(casino, kiosk, floor, supervisor, vault, api):
    _day(kiosk, floor, supervisor, vault, api, dispensed_extra="10.00")  # a note too many came out

    entry = next(entry for entry in reconcile_day(casino, DAY) if entry.machine == kiosk)

    found = _lines(entry)
    assert entry.status == MeterReconciliation.Status.DIFFERENCE
    assert entry.differences == 1
    assert found["cash_dispensed_amount"] == (Decimal("62.35"), Decimal("52.35"), Decimal("10.00"))
    assert found["bills_in_amount"][2] == 0
    assert all(
        difference == 0
        for meter, (*_, difference) in found.items()
        if meter != "cash_dispensed_amount" and difference is not None
    )

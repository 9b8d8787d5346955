"""The daily reconciliation: each machine's meters over a gaming day against the tickets (contract v1.1)."""

import datetime as dt
import itertools
import zoneinfo
from decimal import Decimal

import pytest

from machines.models import Machine, MeterReconciliation
from tests.factories import MachineFactory
from tickets import reconciliation
from tickets.api.meters import meter_reading_record
from tickets.models import Ticket
from tickets.reconciliation import reconcile_day, reconcile_finished_days, reconciliation_store
from tickets.tasks import reconcile_meters

VILNIUS = zoneinfo.ZoneInfo("Europe/Vilnius")
DAY = dt.date(2026, 11, 30)  # gaming day: 2026-11-30 06:00 to 2026-12-01 06:00, Vilnius time
_numbers = itertools.count(1)
_sequences = itertools.count(1)


def at(day: int, hour: int, minute: int = 0) -> dt.datetime:
    return dt.datetime(2026, 11 if day > 2 else 12, day, hour, minute, tzinfo=VILNIUS)


def reading(machine: Machine, moment: dt.datetime, out: tuple[int, str], into: tuple[int, str], **more):
    values = {
        "ticket_out_count": out[0],
        "ticket_out_amount": Decimal(out[1]),
        "ticket_in_count": into[0],
        "ticket_in_amount": Decimal(into[1]),
        **more,
    }
    return meter_reading_record(machine=machine, read_at=moment, values=values, request_id=f"r-{next(_numbers)}")


def printed(machine: Machine, amount: str, moment: dt.datetime, redeemed_at: Machine | None = None, when=None):
    fields = {}
    if redeemed_at is not None:
        fields = {"state": "redeemed", "redeemed_at": when, "redeemed_by_machine": redeemed_at}
    return Ticket.objects.create(
        validation_number=f"{next(_numbers):018d}",
        casino=machine.casino,
        issuing_machine=machine,
        sequence=next(_sequences),
        amount=Decimal(amount),
        state=fields.pop("state", "issued"),
        issued_at=moment,
        printed_at=moment,
        expires_at=moment + dt.timedelta(days=30),
        **fields,
    )


@pytest.fixture
def floor(casino):
    a = MachineFactory(casino=casino, asset_number="A1")
    silent = MachineFactory(casino=casino, asset_number="B2")
    MachineFactory(casino=casino, asset_number="Z9", status=Machine.Status.RETIRED, ticket_enrolled=False)
    other = MachineFactory(casino=casino, asset_number="C3")

    reading(a, at(30, 1), (90, "900.00"), (40, "400.00"))  # older than the day's starting point
    reading(a, at(30, 5, 50), (100, "1000.00"), (50, "500.00"))  # the starting point
    reading(a, at(30, 10), (102, "1030.00"), (51, "512.50"))
    reset = reading(a, at(30, 14), (1, "5.00"), (0, "0.00"))  # RAM clear inside the day
    assert reset.reset
    reading(a, at(30, 20), (2, "12.00"), (1, "7.50"))
    reading(a, at(1, 6, 30), (10, "99.00"), (9, "90.00"))  # after the day's end

    printed(a, "3.00", at(30, 5))  # before the day
    printed(a, "10.00", at(30, 8))
    printed(a, "20.00", at(30, 9))
    printed(a, "5.00", at(30, 15))
    printed(a, "7.00", at(30, 19))
    printed(a, "8.00", at(1, 7))  # after the day
    # Played in at A: the 12.50 recorded, the 7.50 the meters show is not.
    printed(other, "12.50", at(30, 7), redeemed_at=a, when=at(30, 9, 30))
    printed(silent, "4.00", at(30, 12))
    return {"a": a, "silent": silent, "other": other}


def lines(entry):
    return {line.meter: (line.change, line.system, line.difference) for line in entry.lines}


def test_a_day_with_a_reset_is_bridged_and_compared_exactly(floor, casino):
    result = {entry.machine.asset_number: entry for entry in reconcile_day(casino, DAY)}

    assert list(result) == ["A1", "B2", "C3"]  # the retired machine is not listed
    a = lines(result["A1"])
    assert a["ticket_out_count"] == (4, 4, 0)
    assert a["ticket_out_amount"] == (Decimal("42.00"), Decimal("42.000"), 0)
    assert a["ticket_in_count"] == (2, 1, 1)
    assert a["ticket_in_amount"] == (Decimal("20.00"), Decimal("12.500"), Decimal("7.50"))
    assert result["A1"].differences == 2
    assert result["A1"].status == "difference"
    assert result["A1"].has_start_reading


def test_handpays_without_a_source_have_no_system_figure(floor, casino, monkeypatch):
    monkeypatch.setattr(reconciliation.HANDPAY_SOURCES, "_provided", [])
    a = lines(next(e for e in reconcile_day(casino, DAY) if e.machine.asset_number == "A1"))
    assert a["handpay_count"] == (None, None, None)  # not sent by the machine, no figure from the system


def test_handpays_from_a_registered_source_are_compared(floor, casino, monkeypatch):
    monkeypatch.setattr(reconciliation.HANDPAY_SOURCES, "_provided", [])
    a = floor["a"]
    reading(a, at(30, 21), (2, "12.00"), (1, "7.50"), handpay_count=3, handpay_amount=Decimal("100.00"))
    reading(a, at(30, 23), (2, "12.00"), (1, "7.50"), handpay_count=4, handpay_amount=Decimal("2600.00"))
    reconciliation.HANDPAY_SOURCES.provide(lambda casino, ids, begin, finish: {a.pk: (1, Decimal("2500.00"))})
    found = lines(next(e for e in reconcile_day(casino, DAY) if e.machine == a))
    assert found["handpay_count"] == (1, 1, 0)
    assert found["handpay_amount"] == (Decimal("2500.00"), Decimal("2500.00"), 0)


def test_machine_receipts_without_a_source_have_no_system_figure(floor, casino, monkeypatch):
    monkeypatch.setattr(reconciliation.RECEIPT_SOURCES, "_provided", [])
    a = floor["a"]
    reading(a, at(30, 21), (2, "12.00"), (1, "7.50"), attendant_paid_count=1, attendant_paid_amount=Decimal("5"))
    found = lines(next(e for e in reconcile_day(casino, DAY) if e.machine == a))
    assert found["attendant_paid_count"][1:] == (None, None)


def test_machine_receipts_from_a_registered_source_are_compared_with_the_attendant_paid_meter(
    floor, casino, monkeypatch
):
    """Issue 21: a floor receipt rested on the attendant's word; the machine's attendant-paid meter now checks it."""
    monkeypatch.setattr(reconciliation.RECEIPT_SOURCES, "_provided", [])
    a = floor["a"]
    reading(a, at(30, 21), (2, "12.00"), (1, "7.50"), attendant_paid_count=3, attendant_paid_amount=Decimal("40.00"))
    reading(a, at(30, 23), (2, "12.00"), (1, "7.50"), attendant_paid_count=4, attendant_paid_amount=Decimal("90.00"))
    reconciliation.RECEIPT_SOURCES.provide(lambda casino, ids, begin, finish: {a.pk: (2, Decimal("150.00"))})
    entry = next(e for e in reconcile_day(casino, DAY) if e.machine == a)
    found = lines(entry)
    assert found["attendant_paid_count"] == (1, 2, -1)
    assert found["attendant_paid_amount"] == (Decimal("50.00"), Decimal("150.00"), Decimal("-100.00"))
    assert entry.status == "difference"


def test_a_silent_machine_is_listed_as_such_with_the_systems_figures(floor, casino):
    silent = next(e for e in reconcile_day(casino, DAY) if e.machine.asset_number == "B2")
    assert silent.status == "no_reading"
    assert silent.readings == 0
    assert lines(silent)["ticket_out_count"] == (None, 1, None)
    assert lines(silent)["ticket_out_amount"] == (None, Decimal("4.000"), None)


def test_a_machine_whose_only_reading_is_before_the_day_sent_none_in_it(floor, casino):
    other = next(e for e in reconcile_day(casino, DAY + dt.timedelta(days=1)) if e.machine.asset_number == "A1")
    # Day 2026-12-01: A's 06:30 reading is inside; its starting point is the 20:00 reading the day before.
    assert lines(other)["ticket_out_count"] == (8, 1, 7)


def test_without_a_reading_before_the_day_the_first_in_it_is_the_start(casino):
    machine = MachineFactory(casino=casino, asset_number="N1")
    reading(machine, at(30, 7), (0, "0"), (0, "0"))
    reading(machine, at(30, 8), (1, "10.00"), (0, "0"))
    printed(machine, "10.00", at(30, 7, 30))
    entry = reconcile_day(casino, DAY)[0]
    assert not entry.has_start_reading
    assert lines(entry)["ticket_out_amount"] == (Decimal("10.00"), Decimal("10.000"), 0)
    assert entry.status == "matched"


def test_the_result_is_stored_once_per_machine_and_day(floor, casino):
    assert reconciliation_store(casino, DAY) == 3
    assert reconciliation_store(casino, DAY) == 3
    assert MeterReconciliation.objects.count() == 3
    stored = MeterReconciliation.objects.get(machine=floor["a"], gaming_day=DAY)
    assert stored.status == "difference"
    assert stored.differences == 2
    line = next(line for line in stored.lines if line["meter"] == "ticket_in_amount")
    assert line == {"meter": "ticket_in_amount", "change": "20.000", "system": "12.500", "difference": "7.500"}
    assert MeterReconciliation.objects.get(machine=floor["silent"]).status == "no_reading"


def test_the_beat_job_reconciles_the_last_finished_gaming_day(floor, casino, monkeypatch):
    reconcile_finished_days(now=at(1, 10))  # gaming day 2026-12-01 is running: 2026-11-30 is finished
    assert set(MeterReconciliation.objects.values_list("gaming_day", flat=True)) == {DAY}
    assert reconcile_meters.name == "tickets.reconcile_meters"


def test_the_job_is_in_the_beat_schedule(settings):
    tasks = {entry["task"] for entry in settings.CELERY_BEAT_SCHEDULE.values()}
    assert "tickets.reconcile_meters" in tasks

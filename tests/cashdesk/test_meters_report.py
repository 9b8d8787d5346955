"""The meters report (issue 13): /reports/?report=meters&day=YYYY-MM-DD, its CSV, who may see it, the dashboard."""

import csv
import datetime as dt
import io
import zoneinfo
from decimal import Decimal

import pytest
from django.test import Client

from machines.models import MeterReconciliation
from staff.models import StaffAssignment
from tests.factories import MachineFactory, make_user
from tickets.api.meters import meter_reading_record
from tickets.models import Ticket
from tickets.reconciliation import reconciliation_store

VILNIUS = zoneinfo.ZoneInfo("Europe/Vilnius")
DAY = dt.date(2026, 11, 30)


def _login(user, casino) -> Client:
    StaffAssignment.objects.create(user=user, casino=casino)
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def floor_day(casino):
    a = MachineFactory(casino=casino, asset_number="A1")
    MachineFactory(casino=casino, asset_number="B2")  # silent
    for n, (hour, out, amount) in enumerate([(5, 10, "100.00"), (12, 12, "130.500"), (20, 12, "130.500")]):
        meter_reading_record(
            machine=a,
            read_at=dt.datetime(2026, 11, 30, hour, tzinfo=VILNIUS),
            values={
                "ticket_out_count": out,
                "ticket_out_amount": Decimal(amount),
                "ticket_in_count": 0,
                "ticket_in_amount": Decimal("0"),
            },
            request_id=f"r{n}",
        )
    moment = dt.datetime(2026, 11, 30, 9, tzinfo=VILNIUS)
    Ticket.objects.create(
        validation_number="000000000000000001",
        casino=casino,
        issuing_machine=a,
        sequence=1,
        amount=Decimal("30.500"),
        state="issued",
        issued_at=moment,
        printed_at=moment,
        expires_at=moment + dt.timedelta(days=30),
    )
    return a


def _rows(response) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(response.content.decode())))


def test_the_manager_sees_each_meter_against_the_system(floor_day, casino):
    client = _login(make_user("vadove", "manager"), casino)
    page = client.get("/reports/", {"report": "meters", "day": "2026-11-30"})
    assert page.status_code == 200
    html = page.content.decode()
    assert "A1" in html
    assert "B2" in html
    assert 'name="day" value="2026-11-30"' in html
    assert "?report=meters&amp;day=" in html  # among the report tabs
    assert "kind=meters" not in html


def test_csv_amounts_to_three_places_counts_whole_and_silent_machines_said(floor_day, casino):
    client = _login(make_user("vadove", "manager"), casino)
    response = client.get("/reports/", {"report": "meters", "day": "2026-11-30", "format": "csv", "_lang": "en"})
    assert response["Content-Type"].startswith("text/csv")
    rows = _rows(response)
    a = {row["meter"]: row for row in rows if row["machine"] == "A1"}
    assert (a["ticket_out_count"]["meter_change"], a["ticket_out_count"]["system"]) == ("2", "1")
    assert a["ticket_out_count"]["difference"] == "1"
    assert a["ticket_out_amount"]["meter_change"] == "30.500"
    assert a["ticket_out_amount"]["system"] == "30.500"
    assert a["ticket_out_amount"]["difference"] == "0.000"
    assert a["handpay_count"]["system"] == "0"  # the cash desk's handpays (none confirmed at A1 that day)
    silent = [row for row in rows if row["machine"] == "B2"]
    assert silent
    assert all(row["meter_change"] == "" for row in silent)
    assert all(row["note"] for row in silent)


def test_the_old_kind_meters_address_redirects_to_report_meters(floor_day, casino):
    """Issue 21: the meters report was `?kind=meters&day=`, every other report `?report=`; old bookmarks still work."""
    client = _login(make_user("vadove", "manager"), casino)
    response = client.get("/reports/", {"kind": "meters", "day": "2026-11-30", "format": "csv"})
    assert response.status_code == 301
    assert response["Location"] == "/reports/?report=meters&day=2026-11-30&format=csv"
    assert client.get(response["Location"])["Content-Type"].startswith("text/csv")


def test_the_old_address_keeps_asking_for_a_role(floor_day, casino):
    client = _login(make_user("kasininke", "cashier"), casino)
    assert client.get("/reports/", {"kind": "meters", "day": "2026-11-30"}).status_code == 403


@pytest.mark.parametrize("day", ["2026-02-30", "yesterday", "30.11.2026", "1999-12-31", "2026-11-30T00:00"])
def test_a_bad_day_is_400_not_500(casino, day):
    client = _login(make_user("vadove", "manager"), casino)
    response = client.get("/reports/", {"report": "meters", "day": day})
    assert response.status_code == 400


def test_a_cashier_may_not_see_it(floor_day, casino):
    client = _login(make_user("kasininke", "cashier"), casino)
    assert client.get("/reports/", {"report": "meters", "day": "2026-11-30"}).status_code == 403
    assert client.get("/reports/", {"report": "meters", "day": "2026-11-30", "format": "csv"}).status_code == 403


def test_stored_differences_are_exceptions_in_the_report_and_on_the_dashboard(floor_day, casino, monkeypatch):
    reconciliation_store(casino, DAY)
    assert MeterReconciliation.objects.filter(status="difference").count() == 1
    client = _login(make_user("vadove", "manager"), casino)
    response = client.get(
        "/reports/", {"report": "exceptions", "start": "2026-11-30", "end": "2026-11-30", "format": "csv"}
    )
    where = {row["where"]: row for row in _rows(response)}
    assert where["A1"]["detail"] == "Tickets out (count): 1"
    assert "B2" in where

    from cashdesk import dashboard

    counts = dashboard.open_exceptions(casino, now=dt.datetime(2026, 12, 1, 12, tzinfo=VILNIUS))
    assert (counts.meters_day, counts.meter_differences, counts.meters_silent) == (DAY, 1, 1)
    page = client.get("/dashboard/")
    assert page.status_code == 200
    assert "?report=meters&amp;day=" in page.content.decode()


def test_floor_receipts_are_compared_with_the_attendant_paid_meter_on_the_page_and_in_the_csv(floor_day, casino):
    """Issue 21: a machine receipt rested on one person's word; the machine's attendant-paid meter now checks it.

    Only receipts written on the floor count there: a handpay the machine asked for is on its handpay meters.
    """
    import uuid

    from cashdesk.models import MachineReceipt
    from cashdesk.selectors import receipts_at_machines
    from cashdesk.services import machine_receipt_record
    from cashdesk.services.handpays import handpay_confirm, handpay_request
    from tickets import reconciliation

    assert receipts_at_machines in reconciliation.receipt_sources()  # registered by the cash desk at start
    attendant = make_user("tomas", "floor_attendant")
    receipt = machine_receipt_record(machine=floor_day, amount=Decimal("60.00"), reason="hopper empty", user=attendant)
    handpay = handpay_request(machine=floor_day, amount=Decimal("700.00"), kind="jackpot", request_id="hp")
    handpay_confirm(receipt_id=handpay.pk, casino_id=casino.pk, user=attendant, operation_key=uuid.uuid4().hex)
    moment = dt.datetime(2026, 11, 30, 13, tzinfo=VILNIUS)
    MachineReceipt.objects.filter(pk__in=[receipt.pk, handpay.pk]).update(created_at=moment, confirmed_at=moment)
    for n, (hour, paid, amount) in enumerate([(14, 0, "0"), (21, 1, "50.00")]):
        meter_reading_record(
            machine=floor_day,
            read_at=dt.datetime(2026, 11, 30, hour, tzinfo=VILNIUS),
            values={
                "ticket_out_count": 12,
                "ticket_out_amount": Decimal("130.500"),
                "ticket_in_count": 0,
                "ticket_in_amount": Decimal("0"),
                "attendant_paid_count": paid,
                "attendant_paid_amount": Decimal(amount),
            },
            request_id=f"paid-{n}",
        )
    client = _login(make_user("vadove", "manager"), casino)
    response = client.get("/reports/", {"report": "meters", "day": "2026-11-30", "format": "csv", "_lang": "en"})
    a = {row["meter"]: row for row in _rows(response) if row["machine"] == "A1"}
    assert (a["attendant_paid_count"]["meter_change"], a["attendant_paid_count"]["system"]) == ("1", "1")
    assert a["attendant_paid_count"]["difference"] == "0"
    assert (a["attendant_paid_amount"]["meter_change"], a["attendant_paid_amount"]["system"]) == ("50.000", "60.000")
    assert a["attendant_paid_amount"]["difference"] == "-10.000"
    assert a["attendant_paid_amount"]["note"] == "Difference"
    assert a["handpay_amount"]["system"] == "700.000"  # the handpay is on its own meters, not the receipts'
    page = client.get("/reports/", {"report": "meters", "day": "2026-11-30", "_lang": "en"}).content.decode()
    assert "Machine receipts paid by an attendant (amount)" in page
    assert "machine receipts" in page

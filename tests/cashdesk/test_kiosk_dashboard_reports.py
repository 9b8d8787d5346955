"""Kiosks on the dashboard and in the reports (issue 14): cash against capacity, the low tile, the kiosks report."""

import csv
import datetime as dt
import io
import re
from decimal import Decimal
from html import unescape

import pytest
import time_machine
from django.test import Client
from django.utils import timezone

from cashdesk import reports, services
from cashdesk.dashboard import tickets_per_hour
from cashdesk.services.kiosks import kiosk_place, kiosk_transfer_approve, kiosk_transfer_request
from cashdesk.views.reports import _written
from machines.models import Machine
from staff.models import StaffAssignment
from tests.conftest import MachineClient
from tests.factories import MachineFactory, make_user

DAY = dt.date(2026, 11, 30)
HEADER = [
    "kiosk",
    "paid_count",
    "paid_amount",
    "printed_count",
    "printed_amount",
    "fill_count",
    "fill_amount",
    "drop_count",
    "drop_counted",
    "variance",
    "cash_end",
]


def _client(user, casino) -> Client:
    StaffAssignment.objects.get_or_create(user=user, casino=casino)
    client = Client(raise_request_exception=False)
    client.force_login(user)
    client.cookies["django_language"] = "en"
    return client


def _at(casino, hours: float, day: dt.date = DAY) -> dt.datetime:
    begin, _ = casino.gaming_day_bounds(day)
    return begin + dt.timedelta(hours=hours)


def _fill(kiosk, floor, supervisor, amount: str):
    transfer = kiosk_transfer_request(machine=kiosk, user=floor, direction="fill", amount=Decimal(amount))
    return kiosk_transfer_approve(transfer=transfer, supervisor=supervisor)


def _redeem(kiosk_api: MachineClient, number: str) -> None:
    authorized = kiosk_api.authorize(number)
    assert authorized.status_code == 200, authorized.json()
    committed = kiosk_api.commit(number, dispensed=authorized.json()["payout"])
    assert committed.status_code == 200, committed.json()


@pytest.fixture
def stocked_vault(vault, supervisor):
    with time_machine.travel(_at(vault.casino, 0.5, DAY - dt.timedelta(days=1)), tick=False):
        services.vault_count(vault=vault, user=supervisor, counted={"cash": Decimal("100000.00")})
    return vault


@pytest.fixture
def kiosk(casino) -> Machine:
    return MachineFactory(casino=casino, asset_number="K-01", kind=Machine.Kind.KIOSK)


@pytest.fixture
def kiosk_day(api, make_api, casino, kiosk, stocked_vault, floor, supervisor):
    """A gaming day at kiosk K-01, and K-02 with a fill waiting.

    K-01: filled 5 000.00; pays three slot tickets (100.00, 50.505 paid 50.51, 20.00); prints a 30.00 ticket;
    dropped with 4 850.00 counted against 4 859.49 in the books (9.49 short); filled again with 800.00.
    A slot machine's ticket is played into another slot machine. K-02 is asked for a 2 000.00 fill.
    """
    kiosk_api = MachineClient(kiosk)
    with time_machine.travel(_at(casino, 1), tick=False):
        _fill(kiosk, floor, supervisor, "5000.00")
    with time_machine.travel(_at(casino, 2), tick=False):
        for amount in ("100.00", "50.505", "20.00"):
            _redeem(kiosk_api, api.issued_ticket(amount))
        played = api.issued_ticket("7.50")
        player = make_api(asset_number="2002")
        assert player.authorize(played).status_code == 200
        assert player.commit(played).status_code == 200
    with time_machine.travel(_at(casino, 3), tick=False):
        kiosk_api.issued_ticket("30.00")
    with time_machine.travel(_at(casino, 4), tick=False):
        drop = kiosk_transfer_request(machine=kiosk, user=floor, direction="drop", amount=Decimal("4850.00"))
        kiosk_transfer_approve(transfer=drop, supervisor=supervisor)
    with time_machine.travel(_at(casino, 5), tick=False):
        _fill(kiosk, floor, supervisor, "800.00")
        other = MachineFactory(casino=casino, asset_number="K-02", kind=Machine.Kind.KIOSK)
        kiosk_transfer_request(machine=other, user=floor, direction="fill", amount=Decimal("2000.00"))
    return kiosk_api


def _dashboard(user, casino, hours: float = 6) -> str:
    with time_machine.travel(_at(casino, hours), tick=False):
        response = _client(user, casino).get("/dashboard/")
    assert response.status_code == 200
    return unescape(response.content.decode())


def _section(page: str, start: str, end: str) -> str:
    return page.split(start, 1)[1].split(end, 1)[0]


def _rows(table: str) -> dict[str, list[str]]:
    """The table's rows by their first cell, each cell's text without tags or extra spaces."""
    rows = {}
    for row in re.findall(r"<tr[^>]*>(.*?)</tr>", table, re.S):
        cells = [" ".join(re.sub(r"<[^>]+>", " ", cell).split()) for cell in re.findall(r"<td[^>]*>(.*?)</td>", row)]
        if cells:
            rows[cells[0].split()[0]] = cells
    return rows


# The dashboard


def test_the_dashboard_shows_each_kiosks_cash_capacity_last_drop_and_what_waits(kiosk_day, casino, supervisor, manager):
    page = _dashboard(supervisor, casino)

    table = _section(page, '<table id="kiosk-cash">', "</table>")
    rows = _rows(table)
    assert list(rows) == ["K-01", "K-02"]
    assert rows["K-01"][:7] == [
        "K-01",
        "€800.00",
        "€30,000.00",
        "3 %",  # 800 of 30 000
        "11/30/2026 10 a.m.",  # the day starts at 06:00
        "-€9.49",
        "",
    ]
    assert rows["K-02"][1:4] == ["€0.00", "€30,000.00", "0 %"]
    assert rows["K-02"][4] == "none yet"
    assert rows["K-02"][6] == "fill of €2,000.00, asked for by tomas"
    assert 'value="800.00"' in table
    assert 'low="1000.00"' in table
    assert 'max="30000.00"' in table
    # A supervisor is led to the kiosks' page to fill one; a manager (who may not) is not.
    assert '<a href="/kiosks/">Fill, drop and count the kiosks</a>' in _section(page, '<h2 id="kiosks">', "<table")
    assert 'href="/kiosks/"' not in _dashboard(manager, casino)
    # Kiosks are not cash desks: the desks' table and chart do not list them.
    assert "K-01" not in _section(page, '<table id="desk-cash">', "</table>")
    assert "K-01" not in _section(page, '<figure id="desk-chart">', "</figure>")


def test_the_low_tile_names_the_kiosks_below_the_largest_ticket_they_pay(kiosk_day, casino, supervisor):
    page = _dashboard(supervisor, casino)

    tile = _section(page, '<a class="tile warn" id="kiosks-low"', "</a>")
    text = " ".join(re.sub(r"<[^>]+>", " ", tile.split(">", 1)[1]).split())
    assert text == "2 kiosks low on cash, below €1,000.00: K-01 , K-02"
    rows = _rows(_section(page, '<table id="kiosk-cash">', "</table>"))
    assert rows["K-01"][-1] == rows["K-02"][-1] == "low on cash"


def test_no_low_tile_when_every_kiosk_holds_a_ticket_at_the_limit(casino, kiosk, stocked_vault, floor, supervisor):
    with time_machine.travel(_at(casino, 1), tick=False):
        _fill(kiosk, floor, supervisor, "1000.00")  # exactly the limit: it can pay a ticket at the limit
    page = _dashboard(supervisor, casino)
    assert 'id="kiosks-low"' not in page
    assert _rows(_section(page, '<table id="kiosk-cash">', "</table>"))["K-01"][-1] == ""

    casino.identity_threshold = Decimal("1500.00")
    casino.kiosk_payout_limit = Decimal("1000.01")  # a cent more than it holds: low
    casino.save()
    page = _dashboard(supervisor, casino)
    tile = _section(page, '<a class="tile warn" id="kiosks-low"', "</a>")
    assert " ".join(re.sub(r"<[^>]+>", " ", tile.split(">", 1)[1]).split()) == (
        "1 kiosk low on cash, below €1,000.01: K-01"
    )


def test_a_kiosk_out_of_service_is_listed_but_not_low(casino, kiosk, supervisor):
    kiosk.status = Machine.Status.OUT_OF_SERVICE
    kiosk.save()
    MachineFactory(casino=casino, asset_number="K-09", kind=Machine.Kind.KIOSK, status=Machine.Status.RETIRED)
    page = _dashboard(supervisor, casino)
    rows = _rows(_section(page, '<table id="kiosk-cash">', "</table>"))
    assert list(rows) == ["K-01"]  # the retired kiosk without a place in the books is not listed
    assert rows["K-01"][0] == "K-01 (Out of service)"
    assert 'id="kiosks-low"' not in page


def test_a_casino_without_kiosks_has_no_kiosk_section(casino, supervisor, desk):
    page = _dashboard(supervisor, casino)
    assert 'id="kiosk-cash"' not in page
    assert 'id="kiosks-low"' not in page
    assert 'id="kiosk-tickets"' not in page


def test_tickets_paid_and_printed_at_kiosks_are_not_machine_tickets(kiosk_day, casino, manager):
    hours = tickets_per_hour(casino, DAY)
    assert (hours[2].machine_in_count, hours[2].machine_in_amount) == (1, Decimal("7.50"))  # the slot machine only
    assert (hours[2].kiosk_paid_count, hours[2].kiosk_paid_amount) == (3, Decimal("170.505"))
    assert (hours[2].desk_paid_count, hours[3].machine_out_count) == (0, 0)
    assert (hours[3].kiosk_printed_count, hours[3].kiosk_printed_amount) == (1, Decimal("30.00"))
    assert (hours[2].machine_out_count, hours[2].machine_out_amount) == (4, Decimal("178.005"))

    page = _dashboard(manager, casino)
    machines = " ".join(re.search(r'<p id="machine-tickets">(.*?)</p>', page, re.S).group(1).split())
    kiosks = " ".join(re.search(r'<p id="kiosk-tickets">(.*?)</p>', page, re.S).group(1).split())
    assert machines == ("Machine tickets today: 4 printed by machines (€178.005), 1 played into machines (€7.50).")
    assert kiosks == "Kiosk tickets today: 3 paid at kiosks (€170.505), 1 printed by kiosks (€30.00)."
    flow = _section(page, '<figure id="flow-chart">', "</figure>")
    assert sum(int(v) for v in re.findall(r'class="in"[^>]*data-value="(\d+)"', flow)) == 1
    assert sum(int(v) for v in re.findall(r'class="out"[^>]*data-value="(\d+)"', flow)) == 4


# The kiosks report


def test_the_kiosks_report_figures_per_kiosk_with_totals(kiosk_day, casino):
    rows = reports.kiosks(casino, DAY, DAY)
    assert rows[0] == {
        "kiosk": "K-01",
        "paid_count": 3,
        "paid_amount": Decimal("170.51"),  # the cash: 50.505 paid as 50.51
        "printed_count": 1,
        "printed_amount": Decimal("30.00"),
        "fill_count": 2,
        "fill_amount": Decimal("5800.00"),
        "drop_count": 1,
        "drop_counted": Decimal("4850.00"),
        "variance": Decimal("-9.49"),
        "cash_end": Decimal("800.00"),
    }
    assert rows[1]["kiosk"] == "K-02"
    assert rows[1]["fill_count"] == 0  # asked for, not approved
    assert [row["kiosk"] for row in rows] == ["K-01", "K-02", "Total"]
    assert rows[2]["_total"] is True


def test_the_kiosks_report_csv_rows_exactly(kiosk_day, api, casino, kiosk, floor, supervisor, manager):
    # The next gaming day: a payout and a drop that the day's report leaves out; the cash at its end stays.
    next_day = DAY + dt.timedelta(days=1)
    with time_machine.travel(_at(casino, 1, next_day), tick=False):
        _redeem(kiosk_day, api.issued_ticket("10.00"))
        drop = kiosk_transfer_request(machine=kiosk, user=floor, direction="drop", amount=Decimal("790.00"))
        kiosk_transfer_approve(transfer=drop, supervisor=supervisor)

    response = _client(manager, casino).get(
        "/reports/", {"report": "kiosks", "start": DAY, "end": DAY, "format": "csv"}
    )

    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/csv")
    assert f"{casino.code}-kiosks-{DAY}-{DAY}.csv" in response["Content-Disposition"]
    assert list(csv.reader(io.StringIO(response.content.decode()))) == [
        HEADER,
        ["K-01", "3", "170.51", "1", "30.00", "2", "5800.00", "1", "4850.00", "-9.49", "800.00"],
        ["K-02", "0", "0.00", "0", "0.00", "0", "0.00", "0", "0.00", "0.00", "0.00"],
        ["Total", "3", "170.51", "1", "30.00", "2", "5800.00", "1", "4850.00", "-9.49", "800.00"],
    ]
    both = _client(manager, casino).get(
        "/reports/", {"report": "kiosks", "start": DAY, "end": next_day, "format": "csv"}
    )
    assert list(csv.reader(io.StringIO(both.content.decode())))[1] == [
        "K-01", "4", "180.51", "1", "30.00", "2", "5800.00", "2", "5640.00", "-9.49", "0.00"
    ]  # fmt: skip


def test_the_kiosks_report_page_has_its_tab_and_a_totals_row(kiosk_day, casino, supervisor):
    response = _client(supervisor, casino).get("/reports/", {"report": "kiosks", "start": DAY, "end": DAY})
    assert response.status_code == 200
    page = unescape(response.content.decode())
    current = re.findall(r'<a[^>]*aria-current="page"[^>]*>', page)
    assert len(current) == 1
    assert "report=kiosks&" in current[0]
    assert '<input type="hidden" name="report" value="kiosks">' in page
    table = page.split("<table>")[1].split("</table>")[0]
    assert "<th>Kiosk</th>" in table
    assert '<th class="num">Cash at the end</th>' in table
    rows = _rows(table)
    assert rows["K-01"][1:4] == ["3", "€170.51", "1"]
    assert rows["K-01"][9:] == ["-€9.49", "€800.00"]
    assert re.search(r'<tr class="total"><td>Total</td>', table)
    # The other reports link to it with their period.
    other = unescape(_client(supervisor, casino).get("/reports/", {"report": "desks"}).content.decode())
    assert "?report=kiosks&start=" in other


@pytest.mark.parametrize("role", ["cashier", "floor_attendant"])
def test_the_kiosks_report_is_not_for_cashiers_or_the_floor(casino, kiosk, role):
    client = _client(make_user(f"x-{role}", role), casino)
    assert client.get("/reports/", {"report": "kiosks"}).status_code == 403
    assert client.get("/reports/", {"report": "kiosks", "format": "csv"}).status_code == 403


def test_a_csv_nil_is_never_written_minus_zero():
    assert _written(Decimal("-0.00"), 2) == "0.00"
    assert _written(Decimal("-0.004"), 2) == "0.00"
    assert _written(Decimal("-0.006"), 2) == "-0.01"


# Kiosks among the places


def test_the_desks_report_lists_cash_desks_not_kiosks(kiosk_day, casino, shift, cashier, api, manager):
    services.ticket_payout(shift=shift, user=cashier, validation_number=api.issued_ticket("5.00"))
    today = casino.gaming_day(shift.opened_at)
    place = kiosk_place(Machine.objects.get(asset_number="K-01"))
    for day in (DAY, today):
        rows = reports.per_desk(casino, day, day)
        assert place.name not in {row["desk"] for row in rows}
    assert {row["desk"] for row in reports.per_desk(casino, today, today)} >= {"Kasa 1"}
    exported = _client(manager, casino).get("/reports/", {"report": "desks", "start": DAY, "end": DAY, "format": "csv"})
    assert "Kiosk" not in exported.content.decode()
    # ...and its cash is not a desk's over/short: the shifts' report has no kiosk in it.
    assert all(row["desk"] != place.name for row in reports.over_short(casino, DAY, DAY))


def test_the_books_list_each_kiosk_as_a_place_after_the_desks(kiosk_day, casino, desk, shift):
    rows = reports.books(casino, timezone.now())
    places = [row["place"] for row in rows if row["item"] == "cash"]
    k01 = kiosk_place(Machine.objects.get(asset_number="K-01")).name
    assert places.index("Vault") < places.index("Kasa 1") < places.index(k01)
    held = {row["place"]: row["amount"] for row in rows if row["item"] == "cash"}
    assert held[k01] == Decimal("800.00")
    assert held["Over/short"] == Decimal("9.49")  # the kiosk's shortage
    assert sum(amount for place, amount in held.items() if not place.startswith("Total")) == 0

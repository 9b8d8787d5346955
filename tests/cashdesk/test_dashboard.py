"""The manager's and supervisor's dashboard: figures checked against the reports, charts checked as SVG."""

import datetime as dt
import re
import xml.etree.ElementTree as ET
from decimal import Decimal
from html import unescape

import pytest
import time_machine
from django.test import Client
from django.utils import timezone

from cashdesk import charts, services
from cashdesk.dashboard import cash_per_desk, liability_trend, open_exceptions, snapshot_liability, tickets_per_hour
from cashdesk.models import HoldCase, LiabilitySnapshot
from cashdesk.reports import outstanding_liability
from cashdesk.tasks import snapshot_liability as snapshot_liability_task
from machines.models import Place
from staff.models import StaffAssignment
from tests.cashdesk.conftest import FLOAT, logged_in_client
from tests.factories import make_user, with_key
from tickets.models import Ticket
from tickets.services import tickets_expire_due

SVG = "{http://www.w3.org/2000/svg}"


def _history(api, casino, supervisor, days=12):
    """Tickets printed, redeemed, expired and voided over the last `days` gaming days."""
    casino.ticket_validity_days = 3
    casino.save()
    start = timezone.now() - dt.timedelta(days=days)
    numbers = []
    for day in range(days):
        with time_machine.travel(start + dt.timedelta(days=day, hours=1), tick=False):
            for cents in range(3):
                numbers.append(api.issued_ticket(f"{10 + day}.{cents}5"))
            # One of yesterday's is played into a machine today, one is voided.
            if len(numbers) > 4:
                played = numbers[-5]
                assert api.authorize(played).status_code == 200
                assert api.commit(played).status_code == 200
                services.ticket_void(
                    ticket=Ticket.objects.get(validation_number=numbers[-4]), user=supervisor, reason="test"
                )
            tickets_expire_due()
    return numbers


def test_liability_trend_matches_the_liability_report_at_every_point(api, casino, supervisor):
    _history(api, casino, supervisor)
    now = timezone.now()
    trend = liability_trend(casino, now)
    assert len(trend) == 31
    assert trend[-1].at == now
    amounts = set()
    for point in trend:
        expected = outstanding_liability(casino, point.at)["amount"]
        assert point.amount == expected, (point.day, point.amount, expected)
        amounts.add(point.amount)
    assert len(amounts) > 5  # the history moved the liability; the comparison above saw real changes
    assert trend[0].amount == Decimal("0")  # before the first ticket
    # Points are the ends of consecutive gaming days.
    days = [point.day for point in trend]
    assert days == sorted(days)
    assert len(set(days[:-1])) == 30


def test_finished_days_are_snapshotted_once_and_the_trend_reads_them(api, casino, supervisor):
    _history(api, casino, supervisor)
    now = timezone.now()
    assert snapshot_liability_task() == 30
    assert snapshot_liability(casino, now) == 0  # once per day
    snapshots = LiabilitySnapshot.objects.filter(casino=casino).order_by("gaming_day")
    assert snapshots.count() == 30
    for snapshot in snapshots:
        assert snapshot.amount == outstanding_liability(casino, snapshot.at)["amount"], snapshot.gaming_day
    walked = [point.amount for point in liability_trend(casino, now)]

    # The trend reads the stored days: a changed row shows (which proves it is not recomputed)...
    marked = snapshots[10]
    LiabilitySnapshot.objects.filter(pk=marked.pk).update(amount=Decimal("123456.000"))
    trend = liability_trend(casino, now)
    assert trend[10].day == marked.gaming_day
    assert trend[10].amount == Decimal("123456.000")
    # ...and days not stored yet are walked back from now, as before.
    LiabilitySnapshot.objects.filter(pk=marked.pk).update(amount=walked[10])
    LiabilitySnapshot.objects.filter(casino=casino, gaming_day__gte=snapshots[27].gaming_day).delete()
    assert [point.amount for point in liability_trend(casino, now)] == walked


def test_tickets_per_hour_counts_out_and_in_in_the_right_hour(api, casino):
    day_start, _ = casino.gaming_day_bounds(casino.gaming_day(timezone.now()))
    at = day_start + dt.timedelta(hours=3, minutes=20)
    with time_machine.travel(at, tick=False):
        first = api.issued_ticket("5.00")
        api.issued_ticket("7.50")
    with time_machine.travel(at + dt.timedelta(hours=2), tick=False):
        assert api.authorize(first).status_code == 200
        assert api.commit(first).status_code == 200
    hours = tickets_per_hour(casino, casino.gaming_day(at))
    assert len(hours) == 24
    assert hours[0].hour.hour == casino.gaming_day_start_hour
    assert (hours[3].machine_out_count, hours[3].machine_out_amount) == (2, Decimal("12.50"))
    assert (hours[5].machine_in_count, hours[5].machine_in_amount) == (1, Decimal("5.00"))
    assert sum(row.machine_out_count for row in hours) == 2
    assert sum(row.machine_in_count for row in hours) == 1


def test_cash_per_desk_follows_the_ledger_and_flags_the_limit(api, casino, desk, shift, cashier):
    number = api.issued_ticket("100.005")
    services.ticket_payout(shift=shift, user=cashier, validation_number=number)
    rows = {row.desk.code: row for row in cash_per_desk(casino)}
    assert rows["K1"].cash == FLOAT["cash"] - Decimal("100.01")  # paid rounded up
    assert rows["K1"].shift == shift
    assert not rows["K1"].over_limit
    desk.cash_limit = Decimal("15000.00")
    desk.save()
    assert cash_per_desk(casino)[0].over_limit


def test_open_exceptions_count_holds_and_stuck_redemptions(api, casino, shift, cashier):
    number = api.issued_ticket("20.00")
    services.ticket_hold(shift=shift, user=cashier, validation_number=number, reason=HoldCase.Reason.SUSPECTED_COPY)
    stuck = api.issued_ticket("30.00")
    assert api.authorize(stuck).status_code == 200
    later = timezone.now() + dt.timedelta(minutes=5)
    found = open_exceptions(casino, later)
    assert (found.holds, found.overdue_holds, found.stuck) == (1, 0, 1)


def test_the_page_draws_the_charts_for_a_supervisor(api, casino, supervisor, desk, shift):
    StaffAssignment.objects.create(user=supervisor, casino=casino)
    api.issued_ticket("12.00")
    client = Client()
    client.force_login(supervisor)
    response = client.get("/dashboard/")
    assert response.status_code == 200
    page = response.content.decode()
    for chart in ("flow-chart", "trend-chart", "desk-chart"):
        assert f'<figure id="{chart}"><svg' in page
    assert "http://" not in page.replace('xmlns="http://www.w3.org/2000/svg"', "")  # nothing fetched from outside
    flow = page.split('<figure id="flow-chart">')[1].split("</figure>")[0]
    bars = ET.fromstring(flow).iter(f"{SVG}rect")
    assert sum(int(bar.get("data-value", 0)) for bar in bars if bar.get("class") == "out") == 1


def test_grouped_bars_are_proportional_and_escaped():
    svg = charts.grouped_bars(
        ["06", "07", "<b>"],
        [charts.Series("out <script>", [0, 5, 10], "out"), charts.Series("in", [10, 0, 2], "in")],
        "label & more",
    )
    root = ET.fromstring(str(svg))  # well-formed: labels were escaped
    assert root.get("aria-label") == "label & more"
    heights = {
        (rect.get("class"), rect.get("data-value")): float(rect.get("height"))
        for rect in root.iter(f"{SVG}rect")
        if rect.get("data-value") is not None
    }
    assert heights[("out", "10")] == pytest.approx(2 * heights[("out", "5")], abs=0.2)
    assert heights[("out", "0")] == 0
    assert "<script>" not in str(svg)


def test_limit_bars_mark_a_desk_over_its_limit():
    svg = charts.limit_bars([("K1", Decimal("500"), Decimal("1000")), ("K2", Decimal("1500"), Decimal("1000"))], "x")
    rects = [r for r in ET.fromstring(str(svg)).iter(f"{SVG}rect")]
    assert [r.get("class") for r in rects] == ["cash", "over"]
    assert float(rects[1].get("width")) == pytest.approx(3 * float(rects[0].get("width")), abs=0.2)


def test_nice_ceiling():
    assert [charts.nice_ceiling(v) for v in (0, 0.3, 1, 7, 12, 26, 4100)] == [1, 0.5, 1, 10, 20, 50, 5000]


@pytest.mark.parametrize("hour", [0, 6, 23])
def test_the_dashboard_answers_at_any_start_hour_with_no_shift_and_no_ticket(manager, casino, hour):
    """From the adversarial review of the issue 12 change (the dashboard): a probe a careless or hostile user could hit,
    kept as a regression test.
    """
    casino.gaming_day_start_hour = hour
    casino.save()
    Place.objects.create(casino=casino, code="K1", name="Kasa 1", cash_limit=Decimal("500000.00"))
    response = logged_in_client(manager, casino).get("/dashboard/")
    assert response.status_code == 200
    html = unescape(response.content.decode())
    assert "no shift" in html
    assert f"the casino's day starts at {hour:02d}:00" in html


@pytest.mark.parametrize("role", ["cashier", "floor_attendant", "compliance_officer"])
def test_the_dashboard_with_names_on_shift_is_for_managers_and_supervisors(casino, shift, role):
    """From the adversarial review of the issue 12 change (the dashboard): a probe a careless or hostile user could hit,
    kept as a regression test.
    """
    response = logged_in_client(make_user(f"x-{role}", role), casino).get("/dashboard/")
    assert response.status_code in (302, 403)
    # The cashier's username as a word of its own (a CSRF token on the page may hold the letters by chance).
    assert not re.search(r"(?<![A-Za-z0-9])ona(?![A-Za-z0-9])", response.content.decode())


def test_the_dashboard_shows_the_cashiers_name_and_no_customer(manager, casino, shift, cashier, person):
    """From the adversarial review of the issue 12 change (the dashboard): a probe a careless or hostile user could hit,
    kept as a regression test.
    """
    cashier.first_name, cashier.last_name = "Ona", "Onaitė"
    cashier.save()
    services.ticket_sell(shift=shift, user=cashier, amount=Decimal("1500.00"), person=person)
    html = logged_in_client(manager, casino).get("/dashboard/").content.decode()
    assert "Ona Onaitė" in html
    assert person.surnames not in html


def test_a_ticket_sold_and_paid_at_the_desk_is_counted_at_the_desk_not_the_machine(
    manager, casino, shift, cashier, desk_client
):
    """From the adversarial review of the issue 12 change (the dashboard): a probe a careless or hostile user could hit,
    kept as a regression test.
    """
    sold = services.ticket_sell(shift=shift, user=cashier, amount=Decimal("40.00"))
    paid = desk_client.post("/desk/ticket/pay/", with_key({"number": sold.ticket.validation_number}))
    assert paid.status_code == 302
    html = logged_in_client(manager, casino).get("/dashboard/").content.decode()
    assert "Desk tickets today: 1 sold (€40.00), 1 paid (€40.00)." in html
    assert "Machine tickets today: 0 printed by machines (€0.00), 0 played into machines (€0.00)." in html


def test_the_dashboard_shows_the_last_verification_of_the_books(manager, casino, api, settings, tmp_path):
    """Issue 23: the daily verification's outcome is a tile; a broken record turns it into a warning."""
    from compliance.tasks import verify_books_daily
    from tests.machines.test_chains import tamper

    settings.REGISTER_ANCHOR_DIR = tmp_path
    client = logged_in_client(manager, casino)

    def tile() -> str:
        html = unescape(client.get("/dashboard/").content.decode())
        return re.search(r'<span class="tile[^"]*" id="books-tile">.*?</span>\n', html, re.S).group(0)

    assert "books not verified yet" in tile()
    api.issued_ticket("7.00")
    verify_books_daily()
    assert "every chain intact" in tile()
    assert "warn" not in tile()
    number = api.issued_ticket("8.00")  # written after the run: the next run walks on over it
    tamper("UPDATE tickets_ticket SET amount = 700 WHERE validation_number = %s", [number])
    verify_books_daily()
    assert "found a broken record" in tile()
    assert 'class="tile warn" id="books-tile"' in tile()

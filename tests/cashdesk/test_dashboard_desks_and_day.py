"""The dashboard (issue 12): machine tickets apart from desk tickets, who is on shift, the gaming day explained."""

import datetime as dt
import re
from decimal import Decimal

import pytest
import time_machine
from django.test import Client

from cashdesk import services
from cashdesk.dashboard import tickets_per_hour
from machines.models import Place
from staff.models import StaffAssignment
from tests.cashdesk.conftest import FLOAT


def _client(user, casino, language: str = "en") -> Client:
    StaffAssignment.objects.get_or_create(user=user, casino=casino)
    client = Client(raise_request_exception=False)
    client.force_login(user)
    client.cookies["django_language"] = language
    return client


def test_machine_tickets_are_counted_apart_from_desk_tickets(api, casino, shift, cashier):
    day_start, _ = casino.gaming_day_bounds(casino.gaming_day(dt.datetime.now(dt.UTC)))
    at = day_start + dt.timedelta(hours=2, minutes=10)
    with time_machine.travel(at, tick=False):
        played = api.issued_ticket("5.00")  # machine out
        paid = api.issued_ticket("7.505")  # machine out
        assert api.authorize(played).status_code == 200
        assert api.commit(played).status_code == 200  # machine in
        services.ticket_payout(shift=shift, user=cashier, validation_number=paid)  # desk paid
        services.ticket_sell(shift=shift, user=cashier, amount=Decimal("20.00"))  # desk sold
    hours = tickets_per_hour(casino, casino.gaming_day(at))
    row = hours[2]
    assert (row.machine_out_count, row.machine_out_amount) == (2, Decimal("12.505"))
    assert (row.machine_in_count, row.machine_in_amount) == (1, Decimal("5.00"))
    assert (row.desk_sold_count, row.desk_sold_amount) == (1, Decimal("20.00"))
    assert (row.desk_paid_count, row.desk_paid_amount) == (1, Decimal("7.505"))
    assert sum(r.machine_out_count for r in hours) == 2
    assert sum(r.desk_sold_count for r in hours) == 1


def test_the_page_shows_machine_and_desk_tickets_on_separate_lines(api, casino, shift, cashier, manager):
    number = api.issued_ticket("7.50")
    services.ticket_payout(shift=shift, user=cashier, validation_number=number)
    services.ticket_sell(shift=shift, user=cashier, amount=Decimal("20.00"))
    page = _client(manager, casino).get("/dashboard/").content.decode()
    machines = re.search(r'<p id="machine-tickets">(.*?)</p>', page, re.S).group(1)
    desks = re.search(r'<p id="desk-tickets">(.*?)</p>', page, re.S).group(1)
    assert "1 printed by machines" in machines, machines
    assert "0 played into machines" in machines, machines
    assert "1 sold" in desks, desks
    assert "1 paid" in desks, desks
    # The chart of machine tickets counts only the machine's ticket.
    flow = page.split('<figure id="flow-chart">')[1].split("</figure>")[0]
    assert sum(int(v) for v in re.findall(r'class="out"[^>]*data-value="(\d+)"', flow)) == 1
    assert sum(int(v) for v in re.findall(r'class="in"[^>]*data-value="(\d+)"', flow)) == 0


def test_each_desk_shows_who_is_on_shift(casino, desk, shift, cashier, manager):
    cashier.first_name, cashier.last_name = "Ona", "Onaitė"
    cashier.save()
    Place.objects.create(casino=casino, code="K2", name="Kasa 2")
    page = _client(manager, casino).get("/dashboard/").content.decode()
    table = page.split('<table id="desk-cash">')[1].split("</table>")[0]
    rows = {m.group(1): m.group(2) for m in re.finditer(r"<tr[^>]*><td>([^<]+)</td><td>([^<]*)</td>", table)}
    assert rows["Kasa 1"] == "Ona Onaitė"
    assert rows["Kasa 2"] == "no shift"


def test_a_cashier_without_a_full_name_is_shown_by_username(casino, desk, shift, manager):
    page = _client(manager, casino).get("/dashboard/").content.decode()
    table = page.split('<table id="desk-cash">')[1].split("</table>")[0]
    assert "<td>Kasa 1</td><td>ona</td>" in table


def test_a_desk_whose_shift_was_handed_over_shows_the_new_cashier(casino, desk, shift, cashier, cashier2, manager):
    handover = services.shift_handover(shift=shift, user=cashier, counted=FLOAT, next_cashier=cashier2)
    services.handover_take_over(request=handover, user=cashier2, counted=FLOAT)
    page = _client(manager, casino).get("/dashboard/").content.decode()
    assert "<td>Kasa 1</td><td>jonas</td>" in page


@pytest.mark.parametrize(
    ("language", "expected"),
    [
        (
            "en",
            "Gaming day 12/02/2026: it runs from 06:00 on 12/02/2026 to 06:00 on 12/03/2026 "
            "(the casino's day starts at 06:00).",
        ),
    ],
)
def test_the_gaming_day_is_explained_in_one_line(casino, manager, language, expected):
    casino.time_zone = "Europe/Vilnius"
    casino.gaming_day_start_hour = 6
    casino.save()
    moment = dt.datetime(2026, 12, 3, 5, 47, tzinfo=casino.zoneinfo)
    with time_machine.travel(moment, tick=False):
        page = _client(manager, casino, language).get("/dashboard/").content.decode()
    line = re.search(r'<p id="gaming-day">(.*?)</p>', page, re.S).group(1)
    assert " ".join(line.split()).replace("&#x27;", "'") == expected


def test_the_gaming_day_follows_the_casinos_hour(casino, manager):
    casino.gaming_day_start_hour = 8
    casino.save()
    moment = dt.datetime(2026, 12, 3, 7, 59, tzinfo=casino.zoneinfo)
    with time_machine.travel(moment, tick=False):
        page = _client(manager, casino).get("/dashboard/").content.decode()
    line = re.search(r'<p id="gaming-day">(.*?)</p>', page, re.S).group(1)
    for part in ("12/02/2026", "08:00", "12/03/2026"):
        assert part in line, line


def test_the_gaming_day_line_in_lithuanian_writes_yyyy_mm_dd(casino, manager):
    moment = dt.datetime(2026, 12, 3, 5, 47, tzinfo=casino.zoneinfo)
    with time_machine.travel(moment, tick=False):
        page = _client(manager, casino, "lt").get("/dashboard/").content.decode()
    line = re.search(r'<p id="gaming-day">(.*?)</p>', page, re.S).group(1)
    for part in ("2026-12-02", "06:00", "2026-12-03"):
        assert part in line, line

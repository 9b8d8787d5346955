"""The tables in the reports and on the dashboard (issue 24): per table and gaming day, per game and in total; the
dashboard's tile of tables open and today's win; the books list trays and drop boxes as places."""

import csv
import datetime as dt
import io
from decimal import Decimal

import pytest
import time_machine

from cashdesk.services.tables import table_buy_in, table_close, table_create, table_open
from machines.models import TableGame
from tests.cashdesk.conftest import logged_in_client
from tests.cashdesk.test_table_day import FLOAT

pytestmark = pytest.mark.django_db

VILNIUS = dt.timezone(dt.timedelta(hours=2))  # December: EET
DAY = dt.date(2026, 12, 2)
AT = dt.datetime(2026, 12, 2, 20, 0, tzinfo=VILNIUS)


def _day_at(table, croupier, user, *, buy_in, closing, at=AT):
    with time_machine.travel(at, tick=False):
        session = table_open(table=table, croupier=croupier, pieces=FLOAT, user=user)
    with time_machine.travel(at + dt.timedelta(minutes=30), tick=False):
        table_buy_in(session=session, cash=Decimal(buy_in[0]), pieces=buy_in[1], seat=1, user=user)
    with time_machine.travel(at + dt.timedelta(hours=2), tick=False):
        return table_close(session=session, pieces=closing, user=user)


@pytest.fixture
def two_tables(casino, table, croupier, pit_supervisor):
    poker = table_create(casino=casino, number="TP1", game=TableGame.TEXAS_POKER)
    roulette = _day_at(
        table, croupier, pit_supervisor, buy_in=("200.00", {"chip_100": 2}), closing={**FLOAT, "chip_100": 9}
    )  # 2600 → 2500 with 200 dropped: won 100
    card = _day_at(
        poker, croupier, pit_supervisor, buy_in=("50.00", {"chip_25": 2}), closing={**FLOAT, "chip_25": 36}
    )  # 2600 → 2500 with 50 dropped: lost 50
    return roulette, card


def test_the_tables_report_per_table_per_game_and_in_total(casino, manager, two_tables):
    client = logged_in_client(manager, casino)
    response = client.get(
        "/reports/", {"report": "tables", "start": "2026-12-01", "end": "2026-12-03", "format": "csv"}
    )
    assert response.status_code == 200
    rows = list(csv.DictReader(io.StringIO(response.content.decode("utf-8-sig"))))
    by_table = {row["table"]: row for row in rows if row["table"]}
    assert by_table["AR1"]["day"] == "2026-12-02"
    assert (by_table["AR1"]["opening"], by_table["AR1"]["drop"], by_table["AR1"]["closing"]) == (
        "2600.00",
        "200.00",
        "2500.00",
    )
    assert (by_table["AR1"]["win"], by_table["AR1"]["hold"], by_table["AR1"]["buy_ins"]) == ("100.00", "50.0", "1")
    assert (by_table["TP1"]["win"], by_table["TP1"]["hold"]) == ("-50.00", "-100.0")
    games = {row["game"]: row for row in rows if not row["table"] and row["game"]}
    assert set(games) == {"American roulette", "Texas Poker"}
    total = rows[-1]
    assert (total["win"], total["drop"], total["hold"]) == ("50.00", "250.00", "20.0")

    page = client.get("/reports/", {"report": "tables", "start": "2026-12-01", "end": "2026-12-03"})
    assert page.status_code == 200
    assert "50,0 %" in page.content.decode() or "50.0 %" in page.content.decode()


def test_the_dashboard_shows_tables_open_and_today_s_win(casino, manager, table, croupier, pit_supervisor, two_tables):
    with time_machine.travel(AT + dt.timedelta(hours=3), tick=False):
        table_open(table=table, croupier=croupier, pieces={**FLOAT, "chip_100": 9}, user=pit_supervisor)
        page = logged_in_client(manager, casino).get("/dashboard/")
    tile = page.context["tables"]
    assert (tile.open, tile.tables, tile.win) == (1, 2, Decimal("50.00"))
    assert 'id="tables-tile"' in page.content.decode()


def test_the_books_report_lists_trays_drop_boxes_and_the_table_results(casino, manager, two_tables):
    page = logged_in_client(manager, casino).get("/reports/", {"report": "books", "format": "csv"})
    text = page.content.decode("utf-8-sig")
    assert "Chip tray AR1" in text
    assert "Drop box TP1" in text
    assert "Table results" in text


def test_a_tray_off_its_last_closing_beyond_the_tolerance_is_an_exception(
    casino, manager, supervisor, table, croupier, pit_supervisor
):
    first = _day_at(table, croupier, pit_supervisor, buy_in=("100.00", {"chip_100": 1}), closing=FLOAT)
    reopen_at = AT + dt.timedelta(hours=3)
    with time_machine.travel(reopen_at, tick=False):
        # 25.00 short: at the tolerance, not beyond it.
        second = table_open(table=table, croupier=croupier, pieces={**FLOAT, "chip_25": 39}, user=pit_supervisor)
        table_close(session=second, pieces={**FLOAT, "chip_25": 39}, user=pit_supervisor)
    with time_machine.travel(reopen_at + dt.timedelta(hours=1), tick=False):
        # 26.00 short: beyond it.
        table_open(table=table, croupier=croupier, pieces={**FLOAT, "chip_25": 38, "chip_1": 99}, user=pit_supervisor)
        # The shift supervisor sees it the same gaming day, on the supervision page.
        seen = logged_in_client(supervisor, casino).get("/supervisor/")
    assert [(row["where"], row["amount"]) for row in seen.context["tray_differences"]] == [("AR1", Decimal("-26.00"))]
    assert 'id="tray-differences"' in seen.content.decode()
    assert first.win == Decimal("100.00")

    client = logged_in_client(manager, casino)
    response = client.get(
        "/reports/", {"report": "exceptions", "start": "2026-12-01", "end": "2026-12-03", "format": "csv"}
    )
    rows = [row for row in csv.DictReader(io.StringIO(response.content.decode("utf-8-sig"))) if row["where"] == "AR1"]
    assert [(row["amount"], row["kind"]) for row in rows] == [("-26.000", "Table's tray off its last closing")]
    assert "Croupier: krupjė" in rows[0]["detail"]
    assert "Tolerance: 25.00" in rows[0]["detail"]

    casino.table_count_tolerance = Decimal("30.00")
    casino.save()
    response = client.get(
        "/reports/", {"report": "exceptions", "start": "2026-12-01", "end": "2026-12-03", "format": "csv"}
    )
    assert "AR1" not in response.content.decode("utf-8-sig")


def test_a_table_whose_hold_is_outside_its_game_s_band_is_flagged(casino, manager, table, croupier, pit_supervisor):
    poker = table_create(casino=casino, number="TP1", game=TableGame.TEXAS_POKER)
    # Roulette: 50 won on 200 dropped, 25 % (inside 15-35 %); poker: 50 lost on 50 dropped, -100 %.
    _day_at(
        table,
        croupier,
        pit_supervisor,
        buy_in=("200.00", {"chip_100": 2}),
        closing={**FLOAT, "chip_100": 8, "chip_25": 42},
    )
    _day_at(poker, croupier, pit_supervisor, buy_in=("50.00", {"chip_25": 2}), closing={**FLOAT, "chip_25": 36})
    with time_machine.travel(AT + dt.timedelta(hours=3), tick=False):
        page = logged_in_client(manager, casino).get("/dashboard/")
    flagged = page.context["tables"].off_band
    assert [(row.table, row.hold, row.low, row.high) for row in flagged] == [
        ("TP1", Decimal("-100.0"), Decimal("10"), Decimal("30"))
    ]
    assert 'id="hold-tile"' in page.content.decode()

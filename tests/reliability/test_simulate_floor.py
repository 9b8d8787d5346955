"""The floor simulator (issue 13): simulated machines through the real API on gunicorn and PostgreSQL.

A short simulated day with no injected fault reconciles to zero on every machine; with `--faults` the
reconciliation shows exactly the lost prints and meter jumps the run injected, and nothing else. Kiosks
(issue 14) play on the same floor: their cash meters reconcile with their books, which balance. The day ends at the
tables and in the count room (issue 25): every machine's and table's box holds what it did, and the gaming day's
statement is what the books say.
"""

import datetime as dt
import json
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import psycopg
import pytest
from django.db import connections

from machines.models import Machine
from tests.factories import MachineFactory
from tests.reliability.processes import (
    ADMIN_URL,
    ROOT,
    free_port,
    gunicorn,
    migrate_fresh,
    run,
    service_env,
    wait_for_port,
)
from tickets.api.meters import meter_reading_record
from tickets.management.commands.simulate_floor import Api
from tickets.models import Ticket
from tickets.reconciliation import reconcile_day, reconcile_window

# The floor simulator against servers it starts (gunicorn, a throwaway PostgreSQL, a local HTTP server).
pytestmark = pytest.mark.slow

DATABASE = "casino_simulate_floor"

# --- reconcile_window, which the simulator reconciles its run with ----------------------------------------------


def _reading(machine: Machine, moment: dt.datetime, out: tuple[int, str], request_id: str) -> None:
    values = {
        "ticket_out_count": out[0],
        "ticket_out_amount": Decimal(out[1]),
        "ticket_in_count": 0,
        "ticket_in_amount": Decimal("0"),
    }
    meter_reading_record(machine=machine, read_at=moment, values=values, request_id=request_id)


def _printed(machine: Machine, amount: str, moment: dt.datetime, number: str, sequence: int) -> None:
    Ticket.objects.create(
        validation_number=number,
        casino=machine.casino,
        issuing_machine=machine,
        sequence=sequence,
        amount=Decimal(amount),
        state="issued",
        issued_at=moment,
        printed_at=moment,
        expires_at=moment + dt.timedelta(days=30),
    )


@pytest.fixture
def window_floor(casino: Any) -> dict[str, Any]:
    machine = MachineFactory(casino=casino, asset_number="S1")
    noon = dt.datetime(2026, 11, 30, 12, tzinfo=casino.zoneinfo)
    _reading(machine, noon - dt.timedelta(hours=2), (10, "100.00"), "r1")  # the day's start
    _printed(machine, "5.00", noon - dt.timedelta(hours=1), f"{1:018d}", 1)  # before the window
    _reading(machine, noon, (11, "105.00"), "r2")  # the window's start
    _printed(machine, "7.00", noon + dt.timedelta(minutes=10), f"{2:018d}", 2)
    _reading(machine, noon + dt.timedelta(minutes=20), (13, "120.00"), "r3")  # a ticket more than the system has
    return {"machine": machine, "begin": noon, "finish": noon + dt.timedelta(minutes=20, microseconds=1)}


def _lines(entry: Any) -> dict[str, Any]:
    return {line.meter: (line.change, line.system, line.difference) for line in entry.lines}


def test_a_window_counts_from_the_last_reading_at_its_start_and_only_its_tickets(casino, window_floor):
    entry = next(
        e
        for e in reconcile_window(casino, window_floor["begin"], window_floor["finish"])
        if e.machine == window_floor["machine"]
    )
    found = _lines(entry)
    assert found["ticket_out_count"] == (2, 1, 1)
    assert found["ticket_out_amount"] == (Decimal("15.00"), Decimal("7.00"), Decimal("8.00"))
    assert entry.has_start_reading
    assert entry.readings == 1
    assert entry.day == dt.date(2026, 11, 30)


def test_the_day_is_the_window_of_its_bounds(casino, window_floor):
    day = dt.date(2026, 11, 30)
    by_day = _lines(reconcile_day(casino, day)[0])
    assert by_day == _lines(reconcile_window(casino, *casino.gaming_day_bounds(day))[0])
    assert by_day["ticket_out_count"] == (3, 2, 1)


def test_without_distinct_on_the_starting_readings_are_the_same(casino, window_floor, monkeypatch):
    """SQLite (`make run`) has no DISTINCT ON: the portable query finds the same starting reading."""
    expected = _lines(reconcile_window(casino, window_floor["begin"], window_floor["finish"])[0])
    monkeypatch.setattr(connections["default"].features, "can_distinct_on_fields", False)
    assert _lines(reconcile_window(casino, window_floor["begin"], window_floor["finish"])[0]) == expected


# --- A machine's retries -------------------------------------------------------------------------------------------


class _Busy(BaseHTTPRequestHandler):
    """Answers 503 `unavailable` (Retry-After: 0) to the first two requests, then 201; remembers each body."""

    bodies: list[bytes] = []

    def do_POST(self) -> None:
        self.bodies.append(self.rfile.read(int(self.headers["Content-Length"])))
        busy = len(self.bodies) <= 2
        body = b'{"code":"unavailable","detail":"retry"}' if busy else b'{"state":"issued"}'
        self.send_response(503 if busy else 201)
        self.send_header("Content-Type", "application/json")
        if busy:
            self.send_header("Retry-After", "0")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


def test_a_machine_retries_a_503_with_the_same_request_id():
    """The contract's 503 `unavailable` is retried as a machine would, the same request again; the README's
    fault simulation crashed on the first 503 (the demo's SQLite was busy with the beat's jobs)."""
    _Busy.bodies = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Busy)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        api = Api(f"http://127.0.0.1:{server.server_address[1]}", "key")
        status, payload = api.post("tickets/issue", {"amount": "1.00"})
    finally:
        server.shutdown()
        server.server_close()
    assert (status, payload) == (201, {"state": "issued"})
    assert len(_Busy.bodies) == 3
    assert len(set(_Busy.bodies)) == 1  # the same request_id each time
    assert json.loads(_Busy.bodies[0])["amount"] == "1.00"


# --- The simulator against the real server ------------------------------------------------------------------------


@pytest.fixture
def server(tmp_path: Path) -> Iterator[dict[str, Any]]:
    """A fresh database with the demo casinos, served by gunicorn (the shipped config).

    Kiosk 9002 is dropped to the vault first, so that the day sees it refuse `kiosk_empty` and an attendant fill it.
    """
    with psycopg.connect(ADMIN_URL, autocommit=True) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {DATABASE} WITH (FORCE)")
        admin.execute(f"CREATE DATABASE {DATABASE}")
    env = service_env(
        CASINO_DEMO="1",
        DATABASE_URL=f"postgres://postgres@127.0.0.1:5432/{DATABASE}",
        CASINO_VAR_DIR=str(tmp_path / "var"),
        ALLOWED_HOSTS="127.0.0.1,localhost",
        LANGUAGE_CODE="en",
    )
    try:
        migrate_fresh(env)
        for command in (["seed_demo"], ["kiosk_cash", "9002", "--drop", "3000.00"]):
            run([sys.executable, "manage.py", *command], env=env)
        port = free_port()
        with gunicorn(env, port, workers=2, output=tmp_path / "gunicorn.log") as process:
            yield {"url": f"http://127.0.0.1:{port}", "env": env, "log": tmp_path / "gunicorn.log"}
            assert process.poll() is None, "gunicorn died"
    finally:
        with psycopg.connect(ADMIN_URL, autocommit=True) as admin:
            admin.execute(f"DROP DATABASE IF EXISTS {DATABASE} WITH (FORCE)")


def _simulate(server: dict[str, Any], *more: str) -> tuple[int, str]:
    command = [
        *(sys.executable, "manage.py", "simulate_floor"),
        *("--machines", "4", "--kiosks", "2", "--minutes", "60", "--seed", "1"),
    ]
    result = run([*command, "--url", server["url"], *more], env=server["env"], check=False)
    return result.returncode, result.stdout + result.stderr


ROW = re.compile(r"^  (\d{4})\s+(\w+)\s+(\S+)\s+(\S+)\s+(\S+)$", re.MULTILINE)
KIOSKS = re.compile(
    r"^Kiosks: (\d+) tickets paid \((\S+) EUR\), (\S+) EUR cash dispensed; "
    r"(\d+) tickets printed for \S+ EUR in notes; players sent to the cash desk: (\d+) "
    r"\(kiosk_empty (\d+), not_cashable (\d+), over_kiosk_limit (\d+)\); fills: (\d+)",
    re.MULTILINE,
)
BOX = re.compile(r"^  box of (\d{4}): notes expected \S+, counted \S+, difference (\S+); .* missing (\S+)$", re.M)
TABLE_BOX = re.compile(r"^  box of table (\w+): cash expected (\S+), counted (\S+), difference (\S+)$", re.M)
TABLE_DAY = re.compile(
    r"^  table (\w+): buy-ins (\S+) \((\S+) in notes in its box\), fills (\d+), credits (\d+), the players lost (\S+)$",
    re.M,
)
RESULT = re.compile(r"^  (machine:\d{4}|table:\w+|casino): (.*)$", re.M)
FAULT = re.compile(r"^  (\d{4})\s+injected: (lost print of |meter jump: )(\S+)(?: \+(\S+))?", re.MULTILINE)


def _differences(output: str) -> dict[tuple[str, str], Decimal]:
    """(machine, meter) -> difference, for the report's rows whose difference is not zero."""
    return {
        (asset, meter): Decimal(difference)
        for asset, meter, _change, _system, difference in ROW.findall(output)
        if difference != "—" and Decimal(difference) != 0
    }


def _kiosk_figures(output: str) -> dict[str, Any]:
    """The summary's kiosk line: tickets paid, their amount, the cash dispensed, tickets printed, refusals, fills."""
    found = KIOSKS.search(output)
    assert found, output[-3000:]
    return {
        "paid": int(found[1]),
        "paid_amount": Decimal(found[2]),
        "dispensed": Decimal(found[3]),
        "printed": int(found[4]),
        "sent_to_desk": int(found[5]),
        "refused": {"kiosk_empty": int(found[6]), "not_cashable": int(found[7]), "over_kiosk_limit": int(found[8])},
        "fills": int(found[9]),
    }


def _kiosk_books(server: dict[str, Any]) -> dict[str, Any]:
    """The server's books, read straight from its database (not through the code under test)."""
    with psycopg.connect(server["env"]["DATABASE_URL"]) as connection:

        def rows(sql: str) -> list[tuple[Any, ...]]:
            return connection.execute(sql).fetchall()

        return {
            "unbalanced": rows(
                "SELECT casino_id, item, SUM(amount) FROM cashdesk_leg GROUP BY casino_id, item HAVING SUM(amount) <> 0"
            ),
            "negative": rows(
                "SELECT desk_id, item, SUM(amount) FROM cashdesk_leg WHERE desk_id IS NOT NULL"
                " GROUP BY desk_id, item HAVING SUM(amount) < 0"
            ),
            "redeemed": rows(
                "SELECT count(*) FROM tickets_ticket t"
                " JOIN machines_machine m ON m.id = t.redeemed_by_machine_id WHERE m.kind = 'kiosk'"
            )[0][0],
            "payouts": rows(
                "SELECT count(*), COALESCE(SUM(amount), 0) FROM cashdesk_cashtransaction WHERE kind = 'kiosk_payout'"
            )[0],
            # Each ticket redeemed at a kiosk has its payout booked out of that kiosk: its amount rounded up to the
            # cent.
            "unmatched": rows(
                "SELECT count(*) FROM tickets_ticket t JOIN machines_machine m ON m.id = t.redeemed_by_machine_id"
                " LEFT JOIN cashdesk_cashtransaction c ON c.ticket_id = t.id AND c.kind = 'kiosk_payout'"
                " AND c.machine_id = m.id AND c.amount = CEIL(t.amount * 100) / 100"
                " WHERE m.kind = 'kiosk' AND c.id IS NULL"
            )[0][0],
            # Each ticket a kiosk printed has the cash taken in booked into that kiosk.
            "printed": rows(
                "SELECT count(*) FROM cashdesk_cashtransaction c JOIN tickets_ticket t ON t.id = c.ticket_id"
                " WHERE c.kind = 'kiosk_ticket' AND t.issuing_machine_id = c.machine_id AND c.amount = t.amount"
            )[0][0],
        }


def _kiosk_rows(output: str) -> dict[tuple[str, str], tuple[str, str, str]]:
    return {(asset, meter): rest for asset, meter, *rest in ROW.findall(output) if asset.startswith("9")}


def _tables_counted(output: str) -> dict[str, Decimal]:
    """The tables' day and their boxes' count: each box holds its buy-ins' notes. What the players lost, by table."""
    played = {number: (buy_ins, notes, lost) for number, buy_ins, notes, _f, _c, lost in TABLE_DAY.findall(output)}
    assert set(played) == {"AR1", "BJ1", "TP1"}, output[-3000:]
    assert sum(int(fills) for *_n, fills, _c, _l in TABLE_DAY.findall(output)) >= 1  # the trays filled from the vault
    counted = {number: rest for number, *rest in TABLE_BOX.findall(output)}
    assert set(counted) == set(played), output[-3000:]
    for number, (buy_ins, notes, _lost) in played.items():
        expected, found, difference = counted[number]
        assert Decimal(buy_ins) == Decimal(notes) == Decimal(expected) == Decimal(found) > 0, number
        assert Decimal(difference) == 0
    return {number: Decimal(lost) for number, (*_b, lost) in played.items()}


def _statement_is_the_books(server: dict[str, Any], output: str, lost_at_tables: dict[str, Decimal]) -> None:
    """The gaming day's statement (both runs are one gaming day) against the books, read from the database: each
    table's win is its closings' postings to the table results, and what the players lost at it; each machine's notes
    are the cash its counted boxes put into the vault; the casino's result is the sum of its lines."""
    lines = {
        key: dict(pair.split(" ") for pair in figures.split(", ")) if figures != "nothing" else {}
        for key, figures in RESULT.findall(output)
    }
    with psycopg.connect(server["env"]["DATABASE_URL"]) as connection:
        table_win = dict(
            connection.execute(
                "SELECT g.number, -SUM(l.amount) FROM cashdesk_leg l"
                " JOIN cashdesk_cashtransaction c ON c.id = l.transaction_id"
                " JOIN cashdesk_tableplaces p ON p.tray_id = c.desk_id JOIN machines_gamingtable g ON g.id = p.table_id"
                " WHERE l.counterparty = 'table_win' GROUP BY g.number"
            ).fetchall()
        )
        notes = dict(
            connection.execute(
                "SELECT m.asset_number, SUM(l.amount) FROM cashdesk_droppedbox b"
                " JOIN machines_machine m ON m.id = b.machine_id"
                " JOIN cashdesk_leg l ON l.transaction_id = b.count_transaction_id"
                " JOIN cashdesk_cashdesk v ON v.id = l.desk_id AND v.kind = 'vault'"
                " WHERE l.item = 'cash' GROUP BY m.asset_number"
            ).fetchall()
        )
    assert table_win == lost_at_tables != {}
    for number, lost in lost_at_tables.items():
        assert Decimal(lines[f"table:{number}"].get("table_win", "0")) == lost
    assert notes
    assert all(Decimal(lines[f"machine:{asset}"].get("notes", "0")) == amount for asset, amount in notes.items())
    for figure in ("result", "turnover"):
        rows = [Decimal(figures.get(figure, "0")) for key, figures in lines.items() if key != "casino"]
        assert Decimal(lines["casino"].get(figure, "0")) == sum(rows), figure
    # The machines' turnover is their bets: the coin-in meter's change over the day.
    assert all(Decimal(lines[f"machine:{asset}"].get("turnover", "0")) > 0 for asset in notes)


def test_a_simulated_day_reconciles_to_zero_and_injected_faults_show_exactly(server):
    code, output = _simulate(server)
    assert code == 0, output[-3000:]
    assert "Result: all 4 machines and 2 kiosks reconcile to zero" in output
    rows = ROW.findall(output)
    assert {row[0] for row in rows} == {"1001", "1002", "1003", "1004", "9001", "9002"}
    assert _differences(output) == {}
    kiosk_rows = _kiosk_rows(output)
    for asset in ("9001", "9002"):
        for meter in ("cash_dispensed_amount", "bills_in_amount", "ticket_in_amount", "ticket_out_amount"):
            change, system, difference = kiosk_rows[(asset, meter)]
            assert Decimal(difference) == 0
            assert Decimal(change) == Decimal(system)
    day = _kiosk_figures(output)
    assert day["paid"] > 0
    assert day["printed"] > 0
    assert day["dispensed"] > day["paid_amount"]  # tickets with a fraction of a cent, paid rounded up
    assert day["dispensed"] == sum(Decimal(kiosk_rows[(a, "cash_dispensed_amount")][1]) for a in ("9001", "9002"))
    # The emptied kiosk refused, the player went to the cash desk, an attendant filled it (through the books).
    assert day["refused"]["kiosk_empty"] >= 1
    assert day["sent_to_desk"] == sum(day["refused"].values())
    assert day["fills"] >= 1
    assert re.search(r"^\[\d\d:\d\d\] 9002 an attendant comes: Kiosk 9002 \(TOR\) filled from the vault", output, re.M)
    assert re.search(r"\d+ tickets printed", output), output[-3000:]
    assert re.search(r"\d+ ticket-ins", output), output[-3000:]
    assert not re.search(r"\d{18}", output), "a whole validation number in the output"
    # The day ends with the drop and the count (issue 25): every box holds what its machine did.
    boxes = BOX.findall(output)
    assert {box[0] for box in boxes} == {"1001", "1002", "1003", "1004"}, output[-3000:]
    assert all(Decimal(difference) == 0 and missing == "0" for _m, difference, missing in boxes), boxes
    assert "Count: every box holds what its machine or table did, and the faults only" in output
    lost_at_tables = _tables_counted(output)

    code, output = _simulate(server, "--faults")
    assert code == 0, output[-3000:]
    assert "Result: the differences are exactly the 3 injected faults" in output
    expected: dict[tuple[str, str], Decimal] = {}
    for asset, kind, first, second in FAULT.findall(output):
        if kind == "lost print of ":
            expected[(asset, "ticket_out_count")] = expected.get((asset, "ticket_out_count"), Decimal(0)) + 1
            key = (asset, "ticket_out_amount")
            expected[key] = expected.get(key, Decimal(0)) + Decimal(first)
        else:
            expected[(asset, first)] = expected.get((asset, first), Decimal(0)) + Decimal(second)
    assert len(FAULT.findall(output)) == 3, output[-3000:]
    assert _differences(output) == expected
    assert all(
        Decimal(difference) == 0
        for (_asset, meter), (*_, difference) in _kiosk_rows(output).items()
        if difference != "—"
    )
    again = _kiosk_figures(output)
    # The count shows the ticket that fell on the floor and the note too many, exactly and nowhere else.
    lost = re.search(r"^  injected: ticket (…\d{4}) of machine (\d{4})'s box fell on the floor", output, re.M)
    extra = re.search(r"^  injected: machine (\d{4})'s box holds a 20 EUR note too many", output, re.M)
    assert lost, output[-3000:]
    assert extra, output[-3000:]
    for machine, difference, missing in BOX.findall(output):
        assert Decimal(difference) == (Decimal("20.00") if machine == extra[1] else 0), (machine, difference)
        assert missing == (lost[1] if machine == lost[2] else "0"), (machine, missing)
    assert "Count: every box holds what its machine or table did, and the faults only" in output
    for table, lost in _tables_counted(output).items():
        lost_at_tables[table] += lost
    _statement_is_the_books(server, output, lost_at_tables)

    # Both days in the books: every item's legs sum to zero, no place holds less than nothing, and the kiosks'
    # redemptions are exactly the tickets redeemed at kiosks, each paid its amount rounded up to the cent.
    books = _kiosk_books(server)
    assert books["unbalanced"] == []
    assert books["negative"] == []
    assert books["redeemed"] == books["payouts"][0] == day["paid"] + again["paid"]
    assert books["payouts"][1] == day["dispensed"] + again["dispensed"]
    assert books["unmatched"] == 0
    assert books["printed"] == day["printed"] + again["printed"]
    assert "Traceback" not in server["log"].read_text()


# --- `make run` and `make simulate --faults`, ten runs in a row -----------------------------------------------------

SEEDS = range(1, 11)


@pytest.fixture
def demo(tmp_path: Path) -> Iterator[dict[str, Any]]:
    """The demo as `make run` has it: an SQLite file made by migrate + seed_demo, runserver, and a Celery worker
    with the beat on the filesystem broker, all on that file. The beat's heartbeat every second keeps its jobs
    writing beside the machines' requests (the README's fault simulation crashed on the lock once in three)."""
    env = service_env(
        CASINO_DEMO="1",
        DEBUG="1",
        DATABASE_URL=f"sqlite:///{tmp_path / 'casino_office.sqlite3'}",
        CASINO_VAR_DIR=str(tmp_path / "var"),
        CELERY_BROKER_URL="filesystem://",
        HEARTBEAT_SECONDS="1",
        ALLOWED_HOSTS="127.0.0.1,localhost",
        LANGUAGE_CODE="en",
    )
    migrate_fresh(env)
    for command in (["seed_demo"],):
        run([sys.executable, "manage.py", *command], env=env)
    port = free_port()
    worker_log, server_log = tmp_path / "worker.log", tmp_path / "runserver.log"
    with worker_log.open("w") as sink:
        worker = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "casino_office", "worker", "--beat", "--pool=solo", "-l", "INFO"],
            cwd=ROOT,
            env=env,
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
    with server_log.open("w") as sink:
        server = subprocess.Popen(
            [sys.executable, "manage.py", "runserver", f"127.0.0.1:{port}", "--noreload"],
            cwd=ROOT,
            env=env,
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
    try:
        wait_for_port(port, seconds=60)
        yield {"url": f"http://127.0.0.1:{port}", "env": env, "worker": worker, "logs": (worker_log, server_log)}
        assert server.poll() is None, "runserver died"
        assert worker.poll() is None, "the worker died"
    finally:
        for process in (server, worker):
            process.terminate()
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()


def test_the_demo_simulates_a_floor_with_faults_ten_runs_in_a_row_on_sqlite(demo):
    for seed in SEEDS:
        command = [
            *(sys.executable, "manage.py", "simulate_floor", "--url", demo["url"], "--faults", "--seed", str(seed)),
            *("--machines", "2", "--kiosks", "2", "--minutes", "12", "--pace", "0.05"),
        ]
        result = run(command, env=demo["env"], check=False)
        output = result.stdout + result.stderr
        assert result.returncode == 0, (seed, output[-3000:])
        assert "Result: the differences are exactly the 3 injected faults" in output, (seed, output[-3000:])
    worker_log, server_log = demo["logs"]
    assert "ops.heartbeat" in worker_log.read_text()  # the beat's jobs ran beside the machines
    assert "Traceback" not in server_log.read_text()

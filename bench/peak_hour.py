"""The peak hour, as it is lived (issue 27): the floor's machines, the cashiers, the pit, the reception and the
dashboards at once, against gunicorn and PostgreSQL as deployed (DEBUG off), from one load client.

    .venv/bin/python bench/peak_hour.py [--machines 64] [--rate 330] [--cashiers 6] [--dashboards 2]
                                        [--pit-every 15] [--reception-every 10] [--seconds 60] [--workers 2]
                                        [--nodes 1] [--nginx] [--own-cluster [--replica]]

At once, for --seconds after a warm-up:
  - the machines: full ticket life cycles (issue → printed → authorize → commit) paced at --rate requests/s across
    --machines machines (bench/api_load.py's client), and each machine's meter reading every five minutes;
  - the cashiers, each at a desk with an open shift, through the desk's pages as a browser sends them (a session,
    the CSRF token, each form's one-time key): a player's ticket printed at a machine of their own, scanned and
    paid; chips sold to one of the day's visitors, admitted at the door and picked at the desk (issue 26);
  - the pit: the supervisor's screen of an open roulette table, then a buy-in with the player's visit card, every
    --pit-every s;
  - the reception: its page, then a returning visitor let in by the personal code typed, every --reception-every s;
  - the dashboards: a manager (password and app code) refreshing the dashboard every 30 s;
  - the beat's jobs in this process: the tickets' expiry every minute, the books' anchoring every --anchor-every s;
  - a watcher sampling pg_stat_activity every 50 ms for backends waiting on a lock.
Reported per actor: requests answered per second, p50/p95/p99, errors; the server's CPU per life cycle (gunicorn's
workers, nginx's when in front, and the bench database's backends); the longest lock wait seen.

More than one node: --nodes N starts N gunicorn instances (--workers each) behind nginx with the shipped site's
upstream and proxy settings; --own-cluster runs the whole benchmark against a PostgreSQL server of its own (fsync
on), and --replica adds a streaming replica of it (pg_basebackup) that the dashboard reads.
"""

import argparse
import asyncio
import datetime
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter, defaultdict
from dataclasses import dataclass
from decimal import Decimal
from http.cookies import SimpleCookie
from typing import Any

import aiohttp

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from bench.api_load import (
    WARMUP,
    Pacer,
    Recorder,
    cpu_window,
    machine_loop,
    percentile,
    start_gunicorn,
    warm_up,
)
from bench.common import (
    DATABASE_URL,
    ROOT,
    CpuMeter,
    fresh_database,
    print_table,
    setup_django,
    wait_for_port,
    write_result,
)

PASSWORD = "bench-staff-password-2026"  # noqa: S105 - the bench's own throwaway database
VISITORS = 40
TARGETS_MS = {"machine": 50.0, "desk": 200.0, "dashboard": 500.0, "job": float("inf")}  # a job: its run's length
LOCK_WAIT_TARGET_MS = 100.0
_TOKEN = re.compile(r'name="(csrfmiddlewaretoken|operation_key)" value="([^"]+)"')


@dataclass
class Floor:
    machine_keys: list[str]
    printer_keys: list[str]  # one machine per cashier, where the players cash out the tickets they bring
    cashiers: list[str]
    managers: dict[str, bytes]  # username: TOTP key
    visit_cards: list[str]
    pit: str  # the pit supervisor, at a roulette table opened before the peak
    table_session: int
    receptionist: str
    visitor_codes: list[str]  # the day's visitors' personal codes: each comes back in, typed at the reception


def prepare(machines: int, cashiers: int, dashboards: int) -> Floor:
    fresh_database()
    setup_django()
    from django.contrib.auth.models import User
    from django.db import connection
    from django.utils import timezone
    from django_otp.plugins.otp_totp.models import TOTPDevice

    from cashdesk import services
    from compliance.models import Entrance
    from compliance.services import IdentityDetails, self_exclusion_import
    from compliance.services.entry import entry_decide
    from machines.keys import hash_key
    from machines.models import Casino, Machine, Place
    from staff.models import StaffAssignment
    from tests.factories import make_user, personal_code

    casino = Casino.objects.create(name="Bench Casino", code="BEN", address="Bench", licence_number="B-1")
    keys = [f"bench-machine-key-{i:04d}" for i in range(machines + cashiers)]
    Machine.objects.bulk_create(
        Machine(casino=casino, asset_number=str(1000 + i), ticket_enrolled=True, api_key_hash=hash_key(key))
        for i, key in enumerate(keys)
    )

    def staff(username: str, role: str) -> User:
        user = make_user(username, role)
        user.set_password(PASSWORD)
        user.save()
        StaffAssignment.objects.create(user=user, casino=casino)
        return user

    float_: dict[str, Decimal | int] = {"cash": Decimal("100000.00"), "chip_100": 2000, "chip_25": 2000}
    names = [f"kasininkas-{i}" for i in range(1, cashiers + 1)]
    for number, name in enumerate(names, start=1):
        desk = Place.objects.create(casino=casino, code=f"K{number}", name=f"Kasa {number}", cash_limit=10**7)
        services.shift_open(desk=desk, cashier=staff(name, "cashier"), counted=float_)
    managers = {}
    for number in range(1, dashboards + 1):
        device = TOTPDevice.objects.create(user=staff(f"vadovas-{number}", "manager"), name="app", confirmed=True)
        managers[device.user.username] = device.bin_key
    officer = staff("atitiktis", "compliance_officer")
    self_exclusion_import(
        casino=casino,
        user=officer,
        data=b"personal_code\n48503021235\n",
        list_date=timezone.localdate(),
        source_name="bench",
    )
    entrance = Entrance.objects.create(casino=casino, code="MAIN", name="Main")
    reception = staff("administratore", "receptionist")
    cards, codes = [], []
    for number in range(VISITORS):
        born = timezone.localdate().replace(year=1960 + number % 40, day=1)
        details = IdentityDetails(
            personal_code=personal_code(born, serial=100 + number),
            document_type="id_card",
            document_number=f"{40000000 + number}",
            given_names=f"Vardas{number}",
            surnames=f"Pavarde{number}",
            date_of_birth=born,
            document_expiry=timezone.localdate().replace(year=timezone.localdate().year + 3),
        )
        cards.append(entry_decide(entrance=entrance, user=reception, details=details).visit.card)  # type: ignore[union-attr]
        codes.append(details.personal_code)
    session = _open_table(casino, staff("pitas", "pit_supervisor"))
    connection.close()
    return Floor(keys[:machines], keys[machines:], names, managers, cards, "pitas", session, "administratore", codes)


def _open_table(casino: Any, supervisor: Any) -> int:
    """A roulette table with its limits, its tray counted and its croupier: the pit's screen for the peak."""
    from django.utils import timezone

    from cashdesk.services.tables import table_create, table_open
    from machines.models import TableGame
    from machines.services import table_limit_order_record
    from staff.models import StaffAssignment
    from tests.factories import make_user

    table = table_create(casino=casino, number="AR1", game=TableGame.AMERICAN_ROULETTE)
    today = timezone.localdate()
    limits = {
        "game": TableGame.AMERICAN_ROULETTE,
        "minimum": Decimal("1"),
        "maximum": Decimal("500"),
        "step": Decimal("1"),
    }
    table_limit_order_record(
        casino=casino, number="1V", signed_on=today, effective_from=today, lines=[limits], user=supervisor
    )
    croupier = make_user("krupje")
    StaffAssignment.objects.create(user=croupier, casino=casino)
    pieces = {"chip_500": 0, "chip_100": 200, "chip_25": 400, "chip_5": 400, "chip_1": 1000, "chip_0_50": 0}
    return table_open(table=table, croupier=croupier, pieces=pieces, user=supervisor).pk


class Browser:
    """A member of staff's browser: its cookies (sent over plain HTTP although the server marks them Secure, as
    the bench serves no TLS), each page's CSRF token and one-time key."""

    def __init__(self, session: aiohttp.ClientSession, base: str, origin: str) -> None:
        self.session = session
        self.base = base
        self.origin = origin  # as the browser sends it: Django checks it against the host it sees (CSRF)
        self.cookies: dict[str, str] = {}

    def _keep(self, response: aiohttp.ClientResponse) -> None:
        for header in response.headers.getall("Set-Cookie", []):
            cookie = SimpleCookie()
            cookie.load(header)
            for name, morsel in cookie.items():
                self.cookies[name] = morsel.value

    async def request(self, method: str, path: str, data: dict[str, str] | None = None) -> tuple[int, str]:
        headers = {"Cookie": "; ".join(f"{k}={v}" for k, v in self.cookies.items()), "Origin": self.origin}
        async with self.session.request(
            method, self.base + path, data=data, headers=headers, allow_redirects=False
        ) as response:
            self._keep(response)
            return response.status, await response.text()

    async def login(self, username: str, totp_key: bytes | None = None) -> None:
        _status, page = await self.request("GET", "/accounts/login/")
        fields = dict(_TOKEN.findall(page))
        form = {"username": username, "password": PASSWORD, **fields}
        status, _page = await self.request("POST", "/accounts/login/", form)
        if totp_key is not None:
            from django_otp.oath import totp

            _status, page = await self.request("GET", "/accounts/second-factor/")
            code = f"{totp(totp_key):06d}"
            status, _page = await self.request(
                "POST", "/accounts/second-factor/", {**dict(_TOKEN.findall(page)), "code": code}
            )
        if status != 302:
            raise RuntimeError(f"{username} could not log in: HTTP {status}")


async def timed(rec: Recorder, name: str, due: float, call: Any, expect: int) -> tuple[int, str] | None:
    sent = time.monotonic()
    try:
        status, page = await call
    except (TimeoutError, aiohttp.ClientError) as exc:
        rec.error(name, type(exc).__name__)
        return None
    if status != expect:
        rec.error(name, f"HTTP {status}")
        return None
    rec.ok(name, due, sent, time.monotonic())
    return status, page


async def cashier_loop(
    browser: Browser, printer: str, cards: list[str], pacer: Pacer, rec: Recorder, number: int
) -> None:
    """A cashier's day: a player's ticket scanned and paid, then chips sold to a visitor, in turn."""
    machine = {"Authorization": f"Bearer {printer}"}
    n = 0
    while (due := await pacer.next()) is not None:
        n += 1
        if n % 2:
            rid = f"desk{number}-{n}"
            async with browser.session.post(
                f"{browser.base}/api/v1/tickets/issue",
                json={"request_id": f"i{rid}", "amount": "25.50"},
                headers=machine,
            ) as issued:
                ticket = (await issued.json())["validation_number"]
            async with browser.session.post(
                f"{browser.base}/api/v1/tickets/{ticket}/printed",
                json={"request_id": f"p{rid}", "result": "printed"},
                headers=machine,
            ):
                pass
            got = await timed(rec, "desk: the desk", due, browser.request("GET", "/desk/"), 200)
            if got is None:
                continue
            scan = {**dict(_TOKEN.findall(got[1])), "number": str(ticket)}
            got = await timed(
                rec, "desk: ticket scanned", time.monotonic(), browser.request("POST", "/desk/ticket/", scan), 200
            )
            if got is None:
                continue
            first: dict[str, str] = {}
            for name, value in _TOKEN.findall(got[1]):  # the pay form's, before the hold form's
                first.setdefault(name, value)
            pay = {**first, "number": str(ticket)}
            await timed(
                rec, "desk: ticket paid", time.monotonic(), browser.request("POST", "/desk/ticket/pay/", pay), 302
            )
        else:
            got = await timed(rec, "desk: chips page", due, browser.request("GET", "/desk/chips/"), 200)
            if got is None:
                continue
            sale = {
                **dict(_TOKEN.findall(got[1])),
                "direction": "buy",
                "chip_25": "2",
                "visitor": cards[n % len(cards)],
            }
            await timed(rec, "desk: chips sold", time.monotonic(), browser.request("POST", "/desk/chips/", sale), 302)


async def pit_loop(browser: Browser, session: int, cards: list[str], pacer: Pacer, rec: Recorder) -> None:
    """The pit supervisor's screen of the table, then a player's buy-in at it (cash for chips, the player's visit
    card scanned), in turn."""
    n = 0
    while (due := await pacer.next()) is not None:
        n += 1
        got = await timed(rec, "pit: table screen", due, browser.request("GET", f"/pit/sessions/{session}/"), 200)
        if got is None:
            continue
        pieces = {"chip_500": "0", "chip_100": "0", "chip_25": "2", "chip_5": "0", "chip_1": "0", "chip_0_50": "0"}
        buy_in = {
            "csrfmiddlewaretoken": dict(_TOKEN.findall(got[1]))["csrfmiddlewaretoken"],
            "operation_key": uuid.uuid4().hex,  # as the buy-in form's own would be
            "seat": str(1 + n % 7),
            "amount": "50.00",
            "visitor": cards[n % len(cards)],
            **pieces,
        }
        path = f"/pit/sessions/{session}/buy-in/"
        await timed(rec, "pit: buy-in", time.monotonic(), browser.request("POST", path, buy_in), 302)


async def reception_loop(browser: Browser, codes: list[str], pacer: Pacer, rec: Recorder) -> None:
    """The reception's page, then a returning visitor let in by the personal code typed (checked against the
    self-exclusion list, admitted, the visit card printed)."""
    n = 0
    while (due := await pacer.next()) is not None:
        n += 1
        got = await timed(rec, "reception: page", due, browser.request("GET", "/reception/"), 200)
        if got is None:
            continue
        check = {**dict(_TOKEN.findall(got[1])), "step": "check", "lookup": codes[n % len(codes)]}
        await timed(rec, "reception: admitted", time.monotonic(), browser.request("POST", "/reception/", check), 200)


async def dashboard_loop(browser: Browser, pacer: Pacer, rec: Recorder) -> None:
    while (due := await pacer.next()) is not None:
        await timed(rec, "dashboard", due, browser.request("GET", "/dashboard/"), 200)


async def meter_loop(session: aiohttp.ClientSession, base: str, key: str, pacer: Pacer, rec: Recorder) -> None:
    headers = {"Authorization": f"Bearer {key}"}
    n = 0
    while (due := await pacer.next()) is not None:
        n += 1
        meters = {"ticket_out_count": n, "ticket_out_amount": f"{12.34 * n:.2f}", "ticket_in_count": n}
        meters |= {"ticket_in_amount": f"{12.34 * n:.2f}", "coin_in_amount": f"{100 * n}.00", "games_played": 10 * n}
        read_at = datetime.datetime.now(datetime.UTC).isoformat()
        body = {"request_id": f"m{key[-4:]}-{n}", "read_at": read_at, "meters": meters}
        sent = time.monotonic()
        async with session.post(f"{base}/api/v1/meters", json=body, headers=headers) as response:
            await response.read()
            if response.status in (200, 201):
                rec.ok("machine: meters", due, sent, time.monotonic())
            else:
                rec.error("machine: meters", f"HTTP {response.status}")


class Jobs:
    """The beat's jobs on their schedules, in this process against the same database: the expiry every minute and
    the books' anchoring every --anchor-every seconds (each also at the start of the measured window)."""

    def __init__(self, start: float, stop: float, anchor_every: float) -> None:
        self.start, self.stop, self.anchor_every = start, stop, anchor_every
        self.runs: dict[str, list[float]] = defaultdict(list)
        self.errors: Counter[str] = Counter()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        from django.db import connection

        from machines.tasks import anchor_books
        from tickets.tasks import expire_due_tickets

        due = {"expiry": self.start, "anchoring": self.start}
        every = {"expiry": 60.0, "anchoring": self.anchor_every}
        jobs = {"expiry": expire_due_tickets, "anchoring": anchor_books}
        while (now := time.monotonic()) < self.stop:
            name = min(due, key=due.__getitem__)
            if due[name] > now:
                time.sleep(min(due[name], self.stop) - now)
                continue
            began = time.monotonic()
            try:
                jobs[name]()
            except Exception as error:  # a job's failure is a finding of the bench, not its end
                self.errors[f"{name}: {type(error).__name__}"] += 1
            self.runs[name].append(time.monotonic() - began)
            due[name] += every[name]
        connection.close()

    def __enter__(self) -> "Jobs":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._thread.join()


class LockWatcher:
    """Samples pg_stat_activity every 50 ms: the longest a backend of the bench database was seen waiting on a
    lock, and how many waits passed the target."""

    def __init__(self) -> None:
        self.longest_ms = 0.0
        self.over: set[tuple[int, str]] = set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        import psycopg

        with psycopg.connect(DATABASE_URL, autocommit=True) as conn:
            while not self._stop.wait(0.05):
                rows = conn.execute(
                    "SELECT pid, query_start::text, EXTRACT(EPOCH FROM now() - query_start) * 1000 FROM "
                    "pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()"
                ).fetchall()
                for pid, started, waited in rows:
                    self.longest_ms = max(self.longest_ms, float(waited))
                    if float(waited) > LOCK_WAIT_TARGET_MS:
                        self.over.add((pid, started))

    def __enter__(self) -> "LockWatcher":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


async def peak(
    base: str, origin: str, floor: Floor, args: argparse.Namespace, meter: CpuMeter
) -> tuple[Recorder, dict[str, Any]]:
    machines = len(floor.machine_keys)
    interval = machines / args.rate
    connector = aiohttp.TCPConnector(limit=(machines + len(floor.cashiers) + len(floor.managers)) * 2)
    async with aiohttp.ClientSession(connector=connector, timeout=aiohttp.ClientTimeout(total=10)) as session:
        cashiers = [Browser(session, base, origin) for _ in floor.cashiers]
        dashboards = [Browser(session, base, origin) for _ in floor.managers]
        await asyncio.gather(*(b.login(name) for b, name in zip(cashiers, floor.cashiers, strict=True)))
        await asyncio.gather(
            *(b.login(name, key) for b, (name, key) in zip(dashboards, floor.managers.items(), strict=True))
        )
        pit, reception = Browser(session, base, origin), Browser(session, base, origin)
        await pit.login(floor.pit)
        await reception.login(floor.receptionist)
        # The workers booted and the machine API warm (bench/api_load.py); the staff's pages are not warmed.
        await warm_up(session, base, floor.machine_keys)

        # The clock starts once every member of staff is logged in (a password's hashing is not the peak's).
        start = time.monotonic()
        stop = start + WARMUP + args.seconds
        rec = Recorder(start + WARMUP, stop)

        def pacer(every: float, i: int, of: int) -> Pacer:
            return Pacer(start, stop, every, every * i / of, None)

        loops = [
            machine_loop(session, base, key, "peak", pacer(interval, i, machines), rec)
            for i, key in enumerate(floor.machine_keys)
        ]
        loops += [
            meter_loop(session, base, key, pacer(300.0, i, machines), rec) for i, key in enumerate(floor.machine_keys)
        ]
        loops += [
            cashier_loop(b, printer, floor.visit_cards, pacer(args.desk_every, i, len(cashiers)), rec, i)
            for i, (b, printer) in enumerate(zip(cashiers, floor.printer_keys, strict=True))
        ]
        if args.pit_every:
            loops.append(pit_loop(pit, floor.table_session, floor.visit_cards, pacer(args.pit_every, 0, 1), rec))
        if args.reception_every:
            loops.append(reception_loop(reception, floor.visitor_codes, pacer(args.reception_every, 0, 1), rec))
        loops += [dashboard_loop(b, pacer(30.0, i, len(dashboards)), rec) for i, b in enumerate(dashboards)]

        cpu_task = asyncio.create_task(cpu_window(meter, stop))
        with Jobs(start + WARMUP, stop, args.anchor_every) as jobs:
            await asyncio.gather(*loops)
            cpu = await cpu_task
    for name, runs in jobs.runs.items():
        for seconds in runs:
            rec.latencies[f"job: {name}"].append(seconds)
        rec.answered[f"job: {name}"] += len(runs)
    for reason, count in jobs.errors.items():
        rec.errors[("job", reason)] += count
    return rec, cpu


def actor_of(name: str) -> str:
    if name.startswith("job"):
        return "job"
    if name.startswith("desk"):
        return "desk"
    if name.startswith("dashboard"):
        return "dashboard"
    if name.startswith(("pit", "reception")):
        return "desk"  # staff pages: the desk's target
    return "machine"


def report(rec: Recorder, cpu: dict[str, Any], watcher: LockWatcher, seconds: float) -> dict[str, Any]:
    rows, summary = [], {}
    by_actor: dict[str, list[float]] = defaultdict(list)
    for name in sorted(rec.latencies):
        values = rec.latencies[name]
        by_actor[actor_of(name)] += values
        errors = sum(count for (n, _why), count in rec.errors.items() if n == name)
        row = [
            name,
            f"{rec.answered[name] / seconds:.1f}",
            *(f"{percentile(values, q) * 1000:.1f}" for q in (0.5, 0.95, 0.99)),
            errors,
        ]
        rows.append(row)
    for actor, values in sorted(by_actor.items()):
        p99 = percentile(values, 0.99) * 1000
        summary[actor] = {"p99_ms": round(p99, 1), "target_ms": TARGETS_MS[actor], "met": p99 <= TARGETS_MS[actor]}
        rows.append([f"ALL {actor}", "", "", "", f"{p99:.1f}", ""])
    print_table(["request", "answered/s", "p50 ms", "p95 ms", "p99 ms", "errors"], rows)
    server_ms = sum(cpu.get("ms", {}).values())
    per_cycle = server_ms / rec.cycles if rec.cycles else float("nan")
    print(
        f"life cycles completed: {rec.cycles} ({rec.cycles / seconds:.1f}/s); server CPU per life cycle {per_cycle:.2f} ms"
    )
    print(f"errors: {dict(Counter({f'{n}: {why}': c for (n, why), c in rec.errors.items()}))}")
    print(
        f"longest lock wait seen: {watcher.longest_ms:.1f} ms; waits over {LOCK_WAIT_TARGET_MS:g} ms: {len(watcher.over)}"
    )
    return {
        "actors": summary,
        "rows": rows,
        "cycles_per_s": rec.cycles / seconds,
        "server_cpu_ms_per_cycle": per_cycle,
        "errors": {f"{n}: {why}": c for (n, why), c in rec.errors.items()},
        "longest_lock_wait_ms": watcher.longest_ms,
        "lock_waits_over_target": len(watcher.over),
    }


def start_nginx(port: int, nodes: list[int], folder: str) -> subprocess.Popen[bytes]:
    """nginx in front of the web nodes with the shipped site's upstream and proxy settings (deploy/nginx), over
    plain HTTP on `port` (the bench measures the system, not TLS)."""
    site = (ROOT / "deploy" / "nginx" / "casino-office.conf").read_text()
    server = re.search(r"^ *server 127\.0\.0\.1:\d+ (.*)$", site, re.MULTILINE)
    location = re.search(r"^    location / \{$.*?^    \}$", site, re.MULTILINE | re.DOTALL)
    keepalive = re.search(r"^ *keepalive \d+;$", site, re.MULTILINE)
    if not (server and location and keepalive):
        raise RuntimeError("deploy/nginx/casino-office.conf is not as the bench expects")
    upstream = "".join(f"  server 127.0.0.1:{node} {server[1]}\n" for node in nodes)
    temp = "".join(
        f" {kind}_temp_path {folder}/{kind};" for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
    )
    user = "user root;\n" if os.geteuid() == 0 else ""
    conf = (
        f"{user}worker_processes 1;\npid {folder}/nginx.pid;\nerror_log {folder}/error.log;\n"
        f"events {{ worker_connections 4096; }}\nhttp {{\n access_log off;{temp}\n"
        f" upstream casino_office {{\n{upstream}{keepalive[0]}\n }}\n"
        f" server {{\n  listen 127.0.0.1:{port};\n  error_log /dev/null;  # as the shipped site's: no request line\n"
        f"{location[0]}\n }}\n}}\n"
    )
    with open(f"{folder}/nginx.conf", "w", encoding="utf-8") as file:
        file.write(conf)
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    proxy = subprocess.Popen([nginx, "-p", folder, "-c", f"{folder}/nginx.conf", "-g", "daemon off;"])
    wait_for_port(port, "nginx", poll=0.1)
    return proxy


def own_cluster(args: argparse.Namespace) -> None:
    """The whole benchmark again, in a child process, against a PostgreSQL primary of its own (fsync on, as
    deployed) and, with --replica, a streaming replica of it made with pg_basebackup that the dashboard reads."""
    from tests.reliability.processes import StandbyPostgres, ThrowawayPostgres

    primary = ThrowawayPostgres(durable=True)
    replica = StandbyPostgres(primary) if args.replica else None
    try:
        argv = [arg for arg in sys.argv[1:] if arg != "--own-cluster"]
        env = {**os.environ, "BENCH_PG_PORT": str(primary.port)}
        if replica is not None:
            env["BENCH_REPORTS_URL"] = (
                f"postgres://postgres@127.0.0.1:{replica.port}/{os.environ.get('BENCH_DB', 'casino_bench')}"
            )
        subprocess.run([sys.executable, os.path.abspath(__file__), *argv], env=env, check=True)
    finally:
        if replica is not None:
            replica.destroy()
        primary.destroy()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--machines", type=int, default=64)
    parser.add_argument("--rate", type=float, default=330.0, help="machine API requests per second offered")
    parser.add_argument("--cashiers", type=int, default=6)
    parser.add_argument("--dashboards", type=int, default=2)
    parser.add_argument("--desk-every", type=float, default=6.0, help="seconds between a cashier's transactions")
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--port", type=int, default=8731)
    parser.add_argument("--anchor-every", type=float, default=900.0, help="seconds between the books' anchors")
    parser.add_argument("--pit-every", type=float, default=15.0, help="seconds between the pit's buy-ins (0: none)")
    parser.add_argument("--reception-every", type=float, default=10.0, help="seconds between visitors let in (0: none)")
    parser.add_argument("--nodes", type=int, default=1, help="web nodes (gunicorn, --workers each) behind nginx")
    parser.add_argument("--nginx", action="store_true", help="nginx in front even of one node (always with 2+)")
    parser.add_argument("--own-cluster", action="store_true", help="a PostgreSQL server of the bench's own")
    parser.add_argument("--replica", action="store_true", help="reports read a streaming replica (--own-cluster)")
    args = parser.parse_args()
    if args.own_cluster:
        own_cluster(args)
        return
    os.environ["REGISTER_ANCHOR_DIR"] = tempfile.mkdtemp(prefix="peak-hour-anchors-")
    floor = prepare(args.machines, args.cashiers, args.dashboards)
    reports = {"REPORTS_DATABASE_URL": os.environ["BENCH_REPORTS_URL"]} if os.environ.get("BENCH_REPORTS_URL") else {}
    ports = [args.port + 1 + node for node in range(args.nodes)] if args.nodes > 1 or args.nginx else [args.port]
    servers = [start_gunicorn(port, args.workers, extra_env=reports) for port in ports]
    proxy = (
        start_nginx(args.port, ports, tempfile.mkdtemp(prefix="peak-hour-nginx-"))
        if len(ports) > 1 or args.nginx
        else None
    )
    # Behind nginx Django sees https (X-Forwarded-Proto) and the host without the port, as in production.
    origin = "https://127.0.0.1" if proxy else f"http://127.0.0.1:{args.port}"
    meter = CpuMeter([server.pid for server in servers], nginx=proxy.pid if proxy else None)
    try:
        with LockWatcher() as watcher:
            rec, cpu = asyncio.run(peak(f"http://127.0.0.1:{args.port}", origin, floor, args, meter))
        result = report(rec, cpu, watcher, args.seconds)
    finally:
        meter.close()
        for process in [*servers, *([proxy] if proxy else [])]:
            process.terminate()
            process.wait(timeout=15)
    result["args"] = vars(args) | {"replica": bool(reports)}
    print(f"written: {write_result('peak_hour', result)}")


if __name__ == "__main__":
    main()

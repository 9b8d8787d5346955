"""Two web nodes behind the shipped nginx site, a PostgreSQL primary and a streaming replica made with
pg_basebackup, a Celery worker on each node against one Redis, the beat on one (issue 27, docs/operations.md
section 9). Everything on ports and folders of its own, torn down after.

What it proves, in order:
  - the beat's jobs run once: every heartbeat the beat sent ran on exactly one of the two nodes' workers;
  - staff sessions and one-time keys work whichever node answers: a login begun on one node ends on the other,
    a desk form got from one is paid on the other and its second sending pays nothing, a manager's app code
    used on one node is refused on the other;
  - reports read the replica and say how far behind it is: with the replica's replay paused a new ticket is not
    in the report and the page says the replica is behind; resumed, it is, and the page says it is up to date;
  - a node killed in the middle of a peak of machines (SIGKILL to its gunicorn and its worker) loses no request
    that the contract's retry does not recover, and pays no ticket twice: a machine's commit sent through nginx
    and a cashier's payment, both caught in flight on the node that is killed, are answered 502 by nginx (never
    sent to the other node) and lost; sent again, each is paid once;
  - no validation number in any node's or nginx's log;
  - the replica stopped, the dashboard still answers, from the primary, and says so; the probe fails.
"""

import http.client
import json
import os
import re
import signal
import ssl
import subprocess
import sys
import threading
import time
import urllib.parse
import uuid
from collections import Counter
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

import psycopg
import pytest
import redis

from tests.ops.test_deploy import REDIS_URL, _nginx_config, production_env, unit_command
from tests.reliability.processes import (
    ROOT,
    StandbyPostgres,
    ThrowawayPostgres,
    free_port,
    migrate_throwaway,
    run,
    throwaway_postgres,
    wait_for_port,
)

MACHINES = 8  # the floor's machines, each a thread of full life cycles through nginx
CYCLES = 20  # life cycles per machine
KILL_AFTER = 24  # the node dies once this many life cycles are done
HEARTBEATS = 4  # the beat's heartbeats (one a second) counted before the peak
_TOKEN = re.compile(r'name="(csrfmiddlewaretoken|operation_key)" value="([^"]+)"')
SETUP = """
import json
from decimal import Decimal
from django_otp.plugins.otp_totp.models import TOTPDevice
from cashdesk import services
from machines.keys import hash_key
from machines.models import Casino, Machine, Place
from staff.models import StaffAssignment
from tests.factories import make_user
casino = Casino.objects.create(name="Du mazgai", code="TWO", address="Vilnius", licence_number="L-2")
for number in range({machines}):
    Machine.objects.create(
        casino=casino, asset_number=str(100 + number), ticket_enrolled=True, api_key_hash=hash_key(f"two-{{number}}")
    )
desk = Place.objects.create(casino=casino, code="K1", name="Kasa 1", cash_limit=10**6)
cashier, manager = make_user("kasininke", "cashier"), make_user("vadove", "manager")
for user in (cashier, manager):
    StaffAssignment.objects.create(user=user, casino=casino)
services.shift_open(desk=desk, cashier=cashier, counted={{"cash": Decimal("5000.00")}})
device = TOTPDevice.objects.create(user=manager, name="app", confirmed=True)
print(json.dumps({{"totp": device.key}}))
"""
PASSWORD = "correct-horse-battery-staple"  # tests.factories.make_user's


@dataclass
class House:
    primary: ThrowawayPostgres
    replica: StandbyPostgres
    env: dict[str, str]
    folder: Path
    queue: str
    nodes: dict[str, int] = field(default_factory=dict)  # node: its gunicorn's port
    processes: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)
    https_port: int = 0
    totp_key: str = ""

    def start(self, name: str, command: list[str], **extra: str) -> None:
        """A process of a node, in a session of its own (killed with its children), its output in a file."""
        with (self.folder / f"{name}.log").open("ab") as log:
            self.processes[name] = subprocess.Popen(
                command,
                cwd=ROOT,
                env={**self.env, **extra},
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    def kill_all(self) -> None:
        for name, process in self.processes.items():
            if process.poll() is None:
                self.kill(name)

    def kill(self, name: str) -> None:
        os.killpg(self.processes[name].pid, signal.SIGKILL)
        self.processes[name].wait(timeout=30)

    def stop(self, name: str) -> None:
        process = self.processes[name]
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=30)

    def log(self, name: str) -> str:
        return (self.folder / f"{name}.log").read_text(errors="replace")

    def sql(self, query: str, params: list[object] | None = None) -> list[tuple[object, ...]]:
        with psycopg.connect(self.primary.url, autocommit=True) as conn:
            return conn.execute(query, params or []).fetchall()


@pytest.fixture
def house(tmp_path):
    queue = f"two-nodes-{uuid.uuid4().hex}"
    with ExitStack() as cleanup:
        cleanup.callback(lambda: redis.Redis.from_url(REDIS_URL).delete(queue))
        primary = cleanup.enter_context(throwaway_postgres())
        migrate_throwaway(primary, tmp_path, dict(os.environ))
        replica = StandbyPostgres(primary)
        cleanup.callback(replica.destroy)
        env = production_env(
            primary.url,
            tmp_path,
            REPORTS_DATABASE_URL=replica.url,
            SECURE_SSL_REDIRECT="0",
            STATIC_MANIFEST="0",
            CELERY_TASK_DEFAULT_QUEUE=queue,
            HEALTH_QUEUES=queue,
            HEARTBEAT_SECONDS="1",
            HEALTH_MAX_HEARTBEAT_AGE="5",
            GUNICORN_WORKERS="3",
            GUNICORN_ACCESS_LOG="-",  # masked (deploy/gunicorn.conf.py): the test reads it for numbers
        )
        (tmp_path / "var").mkdir()
        setup = run([sys.executable, "manage.py", "shell", "-c", SETUP.format(machines=MACHINES + 1)], env=env)
        built = House(primary, replica, env, tmp_path, queue)
        built.totp_key = json.loads(setup.stdout.splitlines()[-1])["totp"]
        cleanup.callback(built.kill_all)
        _start_nodes(built)
        yield built


def _start_nodes(house: House) -> None:
    """Two web nodes, a worker on each, the beat on node B, nginx in front of both."""
    for node in ("a", "b"):
        house.nodes[node] = free_port()
        house.start(
            f"web-{node}",
            unit_command("casino-web", house.folder),
            GUNICORN_BIND=f"127.0.0.1:{house.nodes[node]}",
            DATABASE_URL=f"{house.primary.url}?application_name=web-{node}",  # which node a backend serves
        )
        house.start(f"worker-{node}", [*unit_command("casino-worker", house.folder), "-n", f"node-{node}@%h"])
    house.start("beat", unit_command("casino-beat", house.folder))
    http_port, house.https_port = free_port(), free_port()
    folder = _nginx_config(house.folder, http_port, house.https_port, house.nodes["a"])
    site = (folder / "site.conf").read_text()
    line = re.search(r"^ *server 127\.0\.0\.1:\d+ (.*)$", site, re.MULTILINE)
    assert line is not None, "the shipped site names no upstream server"
    both = "\n".join(f"    server 127.0.0.1:{port} {line[1]}" for port in house.nodes.values())
    (folder / "site.conf").write_text(site.replace(line[0], both))
    nginx = "/usr/sbin/nginx" if Path("/usr/sbin/nginx").exists() else "nginx"
    run([nginx, "-t", "-p", str(folder), "-c", str(folder / "nginx.conf")])
    house.start("nginx", [nginx, "-p", str(folder), "-c", str(folder / "nginx.conf"), "-g", "daemon off;"])
    for port in (*house.nodes.values(), house.https_port):
        wait_for_port(port, seconds=60)


# --- A member of staff's browser, sent to whichever node the test names -----------------------------------------


class Browser:
    """Cookies kept by hand (the nodes mark them Secure; the test speaks plain HTTP to each node), each page's
    CSRF token and one-time key read from its forms."""

    def __init__(self, house: House) -> None:
        self.house = house
        self.cookies: dict[str, str] = {}

    def request(self, node: str, method: str, path: str, form: dict[str, str] | None = None) -> tuple[int, str, str]:
        conn = http.client.HTTPConnection("127.0.0.1", self.house.nodes[node], timeout=30)
        headers = {"Cookie": "; ".join(f"{k}={v}" for k, v in self.cookies.items())}
        body = None
        if form is not None:
            body = urllib.parse.urlencode(form)
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        try:
            conn.request(method, path, body=body, headers=headers)
            response = conn.getresponse()
            for header, value in response.getheaders():
                if header.lower() == "set-cookie":
                    name, _, rest = value.partition("=")
                    self.cookies[name] = rest.split(";", 1)[0]
            return response.status, response.read().decode(), response.getheader("Location") or ""
        finally:
            conn.close()

    def form(self, node: str, path: str) -> dict[str, str]:
        status, page, _ = self.request(node, "GET", path)
        assert status == 200, (node, path, status)
        return dict(_TOKEN.findall(page))

    def login(self, username: str, page_node: str, post_node: str) -> int:
        fields = self.form(page_node, "/accounts/login/")
        status, _, _ = self.request(
            post_node, "POST", "/accounts/login/", {**fields, "username": username, "password": PASSWORD}
        )
        return status

    def second_factor(self, code: str, page_node: str, post_node: str) -> int:
        fields = self.form(page_node, "/accounts/second-factor/")
        status, _, _ = self.request(post_node, "POST", "/accounts/second-factor/", {**fields, "code": code})
        return status


# --- A slot machine of the contract: waits at most 10 s, retries the same request_id until it gets an answer -----


class Machine:
    def __init__(self, house: House, number: int) -> None:
        self.house = house
        self.key = f"two-{number}"
        self.retries = 0
        self._conn: http.client.HTTPConnection | None = None

    def send(self, path: str, body: dict[str, str], node: str | None = None) -> tuple[int, dict[str, str]]:
        """One attempt, through nginx (TLS) or straight to `node`; a connection that failed is not used again."""
        if node is not None:
            conn: http.client.HTTPConnection = http.client.HTTPConnection(
                "127.0.0.1", self.house.nodes[node], timeout=10
            )
        else:
            if self._conn is None:
                context = ssl._create_unverified_context()  # noqa: S323 - the test's own self-signed certificate
                self._conn = http.client.HTTPSConnection(
                    "127.0.0.1", self.house.https_port, timeout=10, context=context
                )
            conn = self._conn
        headers = {"Authorization": f"Bearer {self.key}", "Content-Type": "application/json"}
        try:
            conn.request("POST", path, body=json.dumps(body), headers=headers)
            response = conn.getresponse()
            return response.status, json.loads(response.read() or b"{}")
        except (OSError, http.client.HTTPException, json.JSONDecodeError):
            conn.close()
            self._conn = None if conn is self._conn else self._conn
            raise

    def call(self, path: str, body: dict[str, str], expect: int) -> dict[str, str]:
        """The contract's retry: the same request until an answer that is not a gateway's or the server's
        "unavailable"; that answer must be `expect`."""
        for _attempt in range(100):
            try:
                status, answer = self.send(path, body)
            except (OSError, http.client.HTTPException, json.JSONDecodeError):
                status, answer = 0, {}
            if status not in (0, 502, 503, 504):
                assert status == expect, (path, status, answer)
                return answer
            self.retries += 1
            time.sleep(0.1)
        raise AssertionError(f"{path}: no answer after 100 tries")

    def print_ticket(self, tag: str, amount: str = "12.50") -> str:
        number = self.call("/api/v1/tickets/issue", {"request_id": f"{tag}-i", "amount": amount}, 201)[
            "validation_number"
        ]
        self.call(f"/api/v1/tickets/{number}/printed", {"request_id": f"{tag}-p", "result": "printed"}, 200)
        return number

    def life_cycle(self, tag: str) -> None:
        number = self.print_ticket(tag)
        self.call(f"/api/v1/tickets/{number}/authorize", {"request_id": f"{tag}-a"}, 200)
        self.call(f"/api/v1/tickets/{number}/commit", {"request_id": f"{tag}-c", "result": "accepted"}, 200)


def _poll(what: str, check, seconds: float = 60):  # type: ignore[no-untyped-def]
    """Until check() gives something true; an AssertionError naming `what` after `seconds`."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.2)
    raise AssertionError(f"{what}: not within {seconds} s")


# --- The proofs ---------------------------------------------------------------------------------------------------


def _beat_jobs_run_once(house: House) -> None:
    """Every heartbeat the beat sent ran on exactly one worker of the two nodes: none twice, none lost."""
    succeeded = re.compile(r"Task ops\.heartbeat\[([^\]]+)\] succeeded")

    def ran() -> list[str]:
        return [found for node in ("a", "b") for found in succeeded.findall(house.log(f"worker-{node}"))]

    _poll(f"{HEARTBEATS} heartbeats", lambda: len(ran()) >= HEARTBEATS)
    sent = house.log("beat").count("Sending due task heartbeat (ops.heartbeat)")
    _poll(f"the {sent} heartbeats sent so far run", lambda: len(ran()) >= sent, seconds=30)
    times = Counter(ran())
    assert sent >= HEARTBEATS
    assert set(times.values()) == {1}, times  # each one once, on one node
    assert len(times) >= sent


def _sessions_and_one_time_keys_on_either_node(house: House, machine: Machine) -> Browser:
    """A login begun on one node ends on the other; a desk form got from one is paid on the other, and sent again
    pays nothing; an app code used on one node is refused on the other. The manager's browser, logged in."""
    cashier = Browser(house)
    assert cashier.login("kasininke", page_node="a", post_node="b") == 302
    number = machine.print_ticket("session")
    scan = cashier.form("b", "/desk/")
    status, page, _ = cashier.request("a", "POST", "/desk/ticket/", {**scan, "number": number})
    assert status == 200
    pay = {**dict(reversed(_TOKEN.findall(page))), "number": number}  # the first form's (the pay form's) keys
    first = cashier.request("b", "POST", "/desk/ticket/pay/", pay)
    again = cashier.request("a", "POST", "/desk/ticket/pay/", pay)  # the same form sent twice, to the other node
    assert first[0] == again[0] == 302, (first[0], again[0])
    assert first[2] == again[2]  # the same transaction's page
    paid = house.sql(
        "SELECT count(*) FROM cashdesk_cashtransaction x JOIN tickets_ticket t ON t.id = x.ticket_id"
        " WHERE t.validation_number = %s AND x.kind = 'ticket_payout'",
        [number],
    )
    assert paid == [(1,)]

    from django_otp.oath import totp

    code = f"{totp(bytes.fromhex(house.totp_key)):06d}"
    manager = Browser(house)
    assert manager.login("vadove", page_node="b", post_node="a") == 302
    assert manager.second_factor(code, page_node="a", post_node="b") == 302
    for node in ("a", "b"):
        assert manager.request(node, "GET", "/dashboard/")[0] == 200
    thief = Browser(house)  # the same code, seen over the manager's shoulder, on the other node
    assert thief.login("vadove", page_node="a", post_node="a") == 302
    from django.utils.html import escape
    from django.utils.translation import gettext, override

    fields = thief.form("a", "/accounts/second-factor/")
    status, page, _ = thief.request("a", "POST", "/accounts/second-factor/", {**fields, "code": code})
    with override("lt"):
        refusal = escape(gettext("Wrong code. Enter the code your app shows now."))
    assert status == 200
    assert refusal in page  # refused as a wrong code: it was used once already
    assert thief.request("a", "GET", "/dashboard/")[0] == 302  # to the second factor, not in
    return manager


def _reports_read_the_replica(house: House, machine: Machine, manager: Browser) -> None:
    """With the replica's replay paused, a new ticket is not in the report and the page says how far behind the
    replica is; resumed, the ticket is there and the page says the replica is up to date."""
    report = "/reports/?report=daily&format=csv"  # the last gaming days (today's starts at 06:00 Vilnius)

    def notice(node: str) -> str:
        status, page, _ = manager.request(node, "GET", "/dashboard/")
        assert status == 200
        found = re.search(r'<p class="(\w+)" id="replica-notice">(.*?)</p>', page, re.DOTALL)
        assert found is not None, "the dashboard does not say where it reads"
        return found[1]

    def behind() -> float | None:
        _status, body, _ = manager.request("b", "GET", "/health/?checks=replica")
        return json.loads(body)["checks"]["replica"]["data"].get("behind_seconds")

    _poll("the replica up to date", lambda: notice("a") == "muted" and behind() == 0)
    before = manager.request("a", "GET", report)[1]
    with psycopg.connect(house.replica.url, autocommit=True) as replica:
        replica.execute("SELECT pg_wal_replay_pause()")
        try:
            paused = "SELECT pg_get_wal_replay_pause_state() = 'paused'"
            _poll("the replica's replay paused", lambda: replica.execute(paused).fetchone()[0])  # type: ignore[index]
            machine.life_cycle("unseen")
            _poll("the replica behind by a second", lambda: (behind() or 0) >= 1)
            assert notice("b") == "warn"
            _picture(house, manager, "b", "/dashboard/", "two-nodes-dashboard-replica-behind.png")
            assert manager.request("b", "GET", report)[1] == before  # the report reads the paused replica
        finally:
            replica.execute("SELECT pg_wal_replay_resume()")
    _poll("the replica up to date again", lambda: behind() == 0 and notice("b") == "muted")
    after = manager.request("a", "GET", report)[1]
    assert after != before, "the report did not see the ticket once the replica replayed it"
    _picture(house, manager, "a", "/reports/?report=daily", "two-nodes-report-replica-up-to-date.png")


def _picture(house: House, browser: Browser, node: str, path: str, name: str) -> None:
    """With BROWSER_ARTIFACTS set, the page as the manager sees it, drawn by Chromium (for a look, not a check)."""
    folder = os.environ.get("BROWSER_ARTIFACTS")
    if not folder:
        return
    from playwright.sync_api import sync_playwright

    from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        context = chromium.new_context(viewport={"width": 1280, "height": 900})
        base = f"http://127.0.0.1:{house.nodes[node]}"
        context.add_cookies([{"name": k, "value": v, "url": base} for k, v in browser.cookies.items()])
        page = context.new_page()
        page.goto(base + path)
        Path(folder).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(folder) / name), full_page=False)
        chromium.close()


@dataclass
class Peak:
    """The floor's machines in threads, each its life cycles through nginx; `due` is set once KILL_AFTER are done."""

    house: House
    done: int = 0
    failures: list[str] = field(default_factory=list)
    due: threading.Event = field(default_factory=threading.Event)
    machines: list[Machine] = field(default_factory=list)
    threads: list[threading.Thread] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def start(self) -> None:
        self.machines = [Machine(self.house, number) for number in range(MACHINES)]
        self.threads = [threading.Thread(target=self._run, args=(machine,)) for machine in self.machines]
        for thread in self.threads:
            thread.start()

    def _run(self, machine: Machine) -> None:
        try:
            for cycle in range(CYCLES):
                machine.life_cycle(f"peak-{cycle}")
                with self.lock:
                    self.done += 1
                    if self.done >= KILL_AFTER:
                        self.due.set()
        except AssertionError as failure:
            self.failures.append(f"{machine.key}: {failure}")
            self.due.set()

    def join(self) -> None:
        for thread in self.threads:
            thread.join(timeout=300)


def _held_tickets(victim: Machine) -> tuple[str, str]:
    """Two tickets for the requests the test holds in flight: one authorized at the victim machine, one for the
    desk."""
    held, paid = victim.print_ticket("held"), victim.print_ticket("paid")
    victim.call(f"/api/v1/tickets/{held}/authorize", {"request_id": "held-a"}, 200)
    return held, paid


def _the_peak(house: House) -> Peak:
    peak = Peak(house)
    peak.start()
    assert peak.due.wait(timeout=240), "the peak did not get going"
    assert not peak.failures, peak.failures
    return peak


def _pay_forms(house: House, paid: str) -> tuple[Browser, dict[str, dict[str, str]]]:
    """The cashier's ticket, scanned on each node: the pay form each node gave."""
    cashier = Browser(house)
    assert cashier.login("kasininke", page_node="a", post_node="a") == 302
    forms = {}
    for node in house.nodes:
        status, page, _ = cashier.request(
            node, "POST", "/desk/ticket/", {**cashier.form(node, "/desk/"), "number": paid}
        )
        assert status == 200
        forms[node] = {**dict(reversed(_TOKEN.findall(page))), "number": paid}
    return cashier, forms


def _node_killed_in_the_peak(house: House, victim: Machine) -> str:
    """A machine's commit sent through nginx and a cashier's payment sent to the node that got the commit, both
    held there by a row lock; that node killed in the middle of the peak. Returns the node left alive."""
    held, paid = _held_tickets(victim)
    cashier, pay = _pay_forms(house, paid)
    peak = _the_peak(house)
    answers: dict[str, object] = {}
    commit = (f"/api/v1/tickets/{held}/commit", {"request_id": "held-c", "result": "accepted"})
    with psycopg.connect(house.primary.url) as lock:
        rows = lock.execute(
            "SELECT id FROM tickets_ticket WHERE validation_number IN (%s, %s) FOR UPDATE", [held, paid]
        )
        assert len(rows.fetchall()) == 2
        waiting = "SELECT application_name FROM pg_stat_activity WHERE %s = ANY(pg_blocking_pids(pid))"
        machine = threading.Thread(target=_answer, args=(answers, "machine", victim.send, *commit))
        machine.start()
        (node,) = _poll("the commit waiting on the lock", lambda: house.sql(waiting, [lock.info.backend_pid]))[0]
        dead, alive = node.removeprefix("web-"), "b" if node == "web-a" else "a"
        desk = threading.Thread(
            target=_answer, args=(answers, "cashier", cashier.request, dead, "POST", "/desk/ticket/pay/", pay[dead])
        )
        desk.start()
        _poll("both waiting on the lock", lambda: len(house.sql(waiting, [lock.info.backend_pid])) == 2)
        killed_at = house.sql("SELECT now()")[0][0]
        house.kill(f"web-{dead}")
        house.kill(f"worker-{dead}")
        done_at_the_kill = peak.done
        for thread in (machine, desk):
            thread.join(timeout=30)
        lock.rollback()
    # nginx answered the commit 502 (it did not send it again to the other node) and the cashier's page got no
    # answer. The machine retries through nginx (the dead node refuses: the other answers); the cashier sends the
    # same form again, to the other node; and again.
    assert answers == {"machine": 502, "cashier": "lost"}, answers
    assert victim.call(*commit, 200)["state"] == "redeemed"
    first = cashier.request(alive, "POST", "/desk/ticket/pay/", pay[dead])
    again = cashier.request(alive, "POST", "/desk/ticket/pay/", pay[dead])
    assert first[0] == again[0] == 302, (first[0], again[0])
    assert first[2] == again[2]
    peak.join()
    assert not peak.failures, peak.failures
    assert done_at_the_kill < MACHINES * CYCLES == peak.done  # killed in the middle of the peak, which went on
    retried = sum(machine.retries for machine in peak.machines)
    print(
        f"two nodes: node {dead} killed after {done_at_the_kill} life cycles; the machines retried {retried} requests"
    )
    _poll(
        "a heartbeat after the node died",
        lambda: house.sql("SELECT max(at) > %s FROM ops_heartbeat", [killed_at])[0][0],
    )
    return alive


def _answer(answers: dict[str, object], key: str, send, *args) -> None:  # type: ignore[no-untyped-def]
    """Send; note the answer's status, or that none came (the node died with the request in it)."""
    try:
        answers[key] = send(*args)[0]
    except (OSError, http.client.HTTPException):
        answers[key] = "lost"


def _paid_once(house: House) -> None:
    """Every ticket of the day redeemed, each by exactly one redemption; the two the desk paid, once each."""
    events = house.sql(
        "SELECT t.state, count(e.id) FROM tickets_ticket t"
        " LEFT JOIN tickets_ticketevent e ON e.ticket_id = t.id AND e.kind = 'redeemed' GROUP BY t.id"
    )
    # The peak's, and four more: the session test's (paid at the desk), the unseen one, the two held in flight.
    assert len(events) == MACHINES * CYCLES + 4
    assert set(events) == {("redeemed", 1)}
    payouts = house.sql(
        "SELECT count(*), count(DISTINCT ticket_id) FROM cashdesk_cashtransaction WHERE kind = 'ticket_payout'"
    )
    assert payouts == [(2, 2)]


def _no_number_in_any_log(house: House) -> None:
    """No validation number, whole or all but its check digits, in any node's, the beat's or nginx's log."""
    numbers = [number for (number,) in house.sql("SELECT validation_number FROM tickets_ticket")]
    logs = {path.name: path.read_text(errors="replace") for path in house.folder.rglob("*.log")}
    assert {"web-a.log", "web-b.log", "casino-office.access.log"} <= set(logs), sorted(logs)
    leaks = [(name, number) for name, text in logs.items() for number in numbers if number[:-4] in text]
    assert not leaks, leaks


def _replica_down(house: House, manager: Browser, alive: str) -> None:
    """The replica stopped: the dashboard still answers, from the primary, and says so; the probe fails."""
    from django.utils.translation import gettext, override

    house.replica.stop()
    status, page, _ = manager.request(alive, "GET", "/dashboard/")
    assert status == 200
    with override("lt"):
        said = gettext("The reports' replica cannot be reached: these figures are read from the primary database.")
    assert f'<p class="warn" id="replica-notice"><strong>{said}</strong></p>' in page
    _picture(house, manager, alive, "/dashboard/", "two-nodes-dashboard-replica-down.png")
    _status, body, _ = manager.request(alive, "GET", "/health/?checks=replica")
    assert json.loads(body)["checks"]["replica"]["ok"] is False


@pytest.mark.slow
def test_two_nodes_behind_nginx_with_a_replica(house):
    victim = Machine(house, MACHINES)  # the machine whose requests the test holds in flight
    _beat_jobs_run_once(house)
    manager = _sessions_and_one_time_keys_on_either_node(house, victim)
    _reports_read_the_replica(house, victim, manager)
    alive = _node_killed_in_the_peak(house, victim)
    _paid_once(house)
    _no_number_in_any_log(house)
    _replica_down(house, manager, alive)

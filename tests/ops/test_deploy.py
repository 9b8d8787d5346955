"""What docs/operations.md tells an operator to run, run here: backup and restore, upgrade, the systemd
units' commands, nginx in front of gunicorn, the health probe through it."""

import json
import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
import time
import uuid
from decimal import Decimal
from pathlib import Path

import psycopg
import pytest
import redis
from django.conf import settings
from django.contrib.auth.models import User

from cashdesk import services
from compliance.models import RegisterEntry
from machines.models import Place
from ops.models import Heartbeat
from ops.tasks import heartbeat
from tests.factories import MachineFactory, key_for, make_person, make_user
from tests.ops.test_guide import section_commands
from tests.reliability.processes import ADMIN_URL, ROOT, current_database_url, free_port, run, wait_for_port

REDIS_URL = "redis://127.0.0.1:6379/14"
VENV_BIN = Path(sys.executable).parent
TABLES = ["tickets_ticket", "tickets_ticketevent", "cashdesk_leg", "compliance_registerentry", "compliance_person"]


def production_env(database_url: str, tmp_path: Path, **extra: str) -> dict[str, str]:
    """The environment of a production node: no demo, no debug, TLS expected, hashed static files."""
    env = {k: v for k, v in os.environ.items() if k not in ("SECURE_SSL_REDIRECT", "DEBUG", "STATIC_MANIFEST")}
    env.update(
        DATABASE_URL=database_url,
        SECRET_KEY="prod-like-" + uuid.uuid4().hex + uuid.uuid4().hex,
        ALLOWED_HOSTS="casino.example.lt,127.0.0.1",
        CELERY_BROKER_URL=REDIS_URL,
        STATIC_ROOT=str(tmp_path / "static"),
        CASINO_VAR_DIR=str(tmp_path / "var"),
        LANGUAGE_CODE="lt",
    )
    env.update(extra)
    return env


def unit_command(unit: str, tmp_path: Path) -> list[str]:
    """The ExecStart of deploy/systemd/<unit>.service, with this checkout's venv and a temporary var/."""
    text = (ROOT / "deploy" / "systemd" / f"{unit}.service").read_text()
    line = next(line for line in text.splitlines() if line.startswith("ExecStart="))
    command = shlex.split(line.removeprefix("ExecStart="))
    command[0] = str(VENV_BIN / Path(command[0]).name)
    return [part.replace("/srv/casino-office/var", str(tmp_path / "var")) for part in command]


@pytest.fixture
def scratch_databases():
    names: list[str] = []

    def make(prefix: str) -> str:
        names.append(f"{prefix}_{uuid.uuid4().hex[:10]}")
        return f"postgres://postgres@127.0.0.1:5432/{names[-1]}"

    yield make
    with psycopg.connect(ADMIN_URL, autocommit=True) as admin:
        for name in names:
            admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def _counts(url: str) -> dict[str, int]:
    with psycopg.connect(url) as conn:
        return {table: conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0] for table in TABLES}  # noqa: S608


def _business_day(casino) -> None:
    """Tickets from a machine, a payout and a 1 500 EUR chip sale to an identified person (a register entry)."""
    from django.test import Client

    machine = MachineFactory(casino=casino)
    client = Client(HTTP_AUTHORIZATION=f"Bearer {key_for(machine)}")
    numbers = []
    for i in range(5):
        issued = client.post(
            "/api/v1/tickets/issue", {"request_id": f"r{i}", "amount": "10.50"}, content_type="application/json"
        ).json()
        client.post(
            f"/api/v1/tickets/{issued['validation_number']}/printed",
            {"request_id": f"p{i}", "result": "printed"},
            content_type="application/json",
        )
        numbers.append(issued["validation_number"])
    desk = Place.objects.create(casino=casino, code="K1", name="Kasa 1")
    cashier = make_user("backup-cashier", "cashier")
    shift = services.shift_open(desk=desk, cashier=cashier, counted={"cash": Decimal("5000"), "chip_500": 10})
    services.ticket_payout(shift=shift, user=cashier, validation_number=numbers[0])
    services.chips_buy(shift=shift, user=cashier, chips={"chip_500": 3}, person=make_person())
    assert RegisterEntry.objects.count() == 1


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_backup_then_restore_into_a_new_database_gives_the_same_data(casino, tmp_path, scratch_databases):
    _business_day(casino)
    source = current_database_url()
    dump = tmp_path / "backups" / "nightly.dump"
    backup = run(["scripts/backup-db", str(dump)], env={**os.environ, "DATABASE_URL": source})
    assert dump.exists()
    assert f"backup-db: {dump}" in backup.stdout
    assert (tmp_path / "backups" / "nightly.dump.sha256").read_text().split()[1] == "nightly.dump"

    target = scratch_databases("casino_restored")
    restored = run(["scripts/restore-db", str(dump), target])
    assert f"{casino.code}: chain intact" in restored.stdout
    assert "verified" in restored.stdout
    assert _counts(target) == _counts(source)

    # Never over an existing database, never from a damaged file.
    again = run(["scripts/restore-db", str(dump), target], check=False)
    assert again.returncode == 1
    assert "exists already" in again.stderr
    dump.write_bytes(dump.read_bytes()[:-10] + b"0123456789")
    damaged = run(["scripts/restore-db", str(dump), scratch_databases("casino_damaged")], check=False)
    assert damaged.returncode == 1
    assert "does not match its checksum" in damaged.stderr


def test_backup_refuses_without_a_postgresql_url():
    result = run(["scripts/backup-db"], env={**os.environ, "DATABASE_URL": "sqlite:///x.db"}, check=False)
    assert result.returncode == 2
    assert result.stderr.strip() == "backup-db: DATABASE_URL is not a PostgreSQL URL"


@pytest.mark.slow
def test_upgrade_from_the_previous_release(tmp_path, scratch_databases):
    url = scratch_databases("casino_upgrade")
    with psycopg.connect(ADMIN_URL, autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {url.rsplit('/', 1)[1]}")
    env = production_env(url, tmp_path)
    # The database as the previous release left it: before the dashboard permission and the ops app.
    run([sys.executable, "manage.py", "migrate", "--noinput"], env=env)
    run([sys.executable, "manage.py", "migrate", "cashdesk", "0003", "--noinput"], env=env)
    run([sys.executable, "manage.py", "migrate", "ops", "zero", "--noinput"], env=env)
    pending = run([sys.executable, "manage.py", "migrate", "--check"], env=env, check=False)
    assert pending.returncode == 1

    upgraded = run(["scripts/upgrade", "--no-install"], env=env)
    assert "upgrade: done" in upgraded.stdout
    run([sys.executable, "manage.py", "migrate", "--check"], env=env)
    manifest = json.loads((tmp_path / "static" / "staticfiles.json").read_text())
    assert "site/site.css" in manifest["paths"]


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_worker_and_beat_units_keep_the_heartbeat_fresh(tmp_path):
    """The worker and beat commands of the systemd units, started as written: beat sends, the worker runs."""
    queue = f"units-{uuid.uuid4().hex}"
    env = production_env(
        current_database_url(),
        tmp_path,
        HEARTBEAT_SECONDS="1",
        CELERY_TASK_DEFAULT_QUEUE=queue,
        SECURE_SSL_REDIRECT="0",
    )
    (tmp_path / "var").mkdir()
    processes = [
        subprocess.Popen(
            unit_command(unit, tmp_path), cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        for unit in ("casino-worker", "casino-beat")
    ]
    try:
        deadline = time.monotonic() + 60
        while not Heartbeat.objects.exists() and time.monotonic() < deadline:
            time.sleep(0.5)
        first = Heartbeat.objects.get().at
        time.sleep(3)
        assert Heartbeat.objects.get().at > first  # it keeps beating
        assert all(process.poll() is None for process in processes)
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            process.wait(timeout=60)
        redis.Redis.from_url(REDIS_URL).delete(queue)


def _guide_tls_commands(folder: Path) -> list[list[str]]:
    """The guide's TLS commands ("The TLS certificate"), with /etc/casino-office/tls/ in `folder`."""
    return [
        shlex.split(command.replace("/etc/casino-office/tls/", f"{folder}/"))
        for command in section_commands("The TLS certificate")
    ]


def _nginx_config(tmp_path: Path, http_port: int, https_port: int, web_port: int) -> Path:
    folder = tmp_path / "nginx"
    folder.mkdir()
    # The self-signed certificate, made as the guide says (openssl req -x509 ...).
    make_certificate = _guide_tls_commands(folder)[0]
    assert make_certificate[:3] == ["openssl", "req", "-x509"], make_certificate
    run(make_certificate)
    site = (ROOT / "deploy" / "nginx" / "casino-office.conf").read_text()
    for old, new in (
        ("server 127.0.0.1:8000", f"server 127.0.0.1:{web_port}"),
        ("listen 80;", f"listen 127.0.0.1:{http_port};"),
        ("listen 443 ssl;", f"listen 127.0.0.1:{https_port} ssl;"),
        ("/etc/casino-office/tls/", f"{folder}/"),
        ("/srv/casino-office/var/static/", f"{tmp_path}/static/"),
        ("/var/log/nginx/", f"{folder}/"),
    ):
        assert old in site, old
        site = site.replace(old, new)
    (folder / "site.conf").write_text(site)
    user = "user root;\n" if os.geteuid() == 0 else ""
    (folder / "nginx.conf").write_text(
        f"{user}worker_processes 1;\npid {folder}/nginx.pid;\nerror_log {folder}/error.log;\n"
        "events { worker_connections 64; }\n"
        f"http {{\n include /etc/nginx/mime.types;\n access_log {folder}/access.log;\n"
        + "".join(
            f" {kind}_temp_path {folder}/{kind};\n" for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
        )
        + f" include {folder}/site.conf;\n}}\n"
    )
    return folder


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_nginx_in_front_of_the_web_unit_serves_https_static_files_and_health(tmp_path):
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    assert Path(nginx).exists(), "nginx is needed: scripts/system-packages installs it"
    heartbeat()
    web_port, http_port, https_port = free_port(), free_port(), free_port()
    env = production_env(current_database_url(), tmp_path, GUNICORN_BIND=f"127.0.0.1:{web_port}", GUNICORN_WORKERS="2")
    run([sys.executable, "manage.py", "collectstatic", "--noinput", "--verbosity", "0"], env=env)
    folder = _nginx_config(tmp_path, http_port, https_port, web_port)
    run([nginx, "-t", "-p", str(folder), "-c", str(folder / "nginx.conf")])
    web = subprocess.Popen(
        unit_command("casino-web", tmp_path), cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    proxy = subprocess.Popen([nginx, "-p", str(folder), "-c", str(folder / "nginx.conf"), "-g", "daemon off;"])
    try:
        wait_for_port(web_port)
        wait_for_port(https_port)
        base = f"https://127.0.0.1:{https_port}"
        # The monitoring probe of the guide. Through nginx the app sees https (X-Forwarded-Proto), so
        # SECURE_SSL_REDIRECT does not bounce it.
        health = run(["curl", "-fsS", "--insecure", f"{base}/health/"])
        body = json.loads(health.stdout)
        assert body["status"] == "ok", body
        headers = run(["curl", "-sS", "--insecure", "-D", "-", "-o", "/dev/null", f"{base}/accounts/login/"]).stdout
        assert "HTTP/1.1 200" in headers
        assert "Strict-Transport-Security" in headers
        assert "csrftoken=" in headers
        assert "Secure" in headers
        manifest = json.loads((tmp_path / "static" / "staticfiles.json").read_text())
        css = run(["curl", "-fsS", "--insecure", "-D", "-", f"{base}/static/{manifest['paths']['site/site.css']}"])
        assert "Cache-Control: public, immutable" in css.stdout
        assert ".tiles" in css.stdout
        redirect = run(
            [
                "curl",
                "-sS",
                "-o",
                "/dev/null",
                "-w",
                "%{http_code} %{redirect_url}",
                f"http://127.0.0.1:{http_port}/desk/",
            ]
        )
        code, location = redirect.stdout.split()
        assert code == "301"
        assert location.startswith("https://127.0.0.1")
        # The guide's checks of the installed certificate: its name and end date, then served by nginx and
        # trusted with that certificate alone (no --insecure), under the name staff and machines use.
        _make, show, fetch = _guide_tls_commands(folder)
        assert show[:3] == ["openssl", "x509", "-in"], show
        assert "subject=CN = casino.example.lt" in run(show).stdout
        assert fetch[:3] == ["curl", "-fsS", "--cacert"], fetch
        url = fetch[-1].replace("https://casino.example.lt/", f"https://casino.example.lt:{https_port}/")
        trusted = run([*fetch[:-1], "--resolve", f"casino.example.lt:{https_port}:127.0.0.1", url])
        assert json.loads(trusted.stdout)["status"] == "ok"
        untrusted = run(["curl", "-fsS", f"https://127.0.0.1:{https_port}/health/"], check=False)
        assert untrusted.returncode != 0, "a certificate nobody was told to trust is refused"
    finally:
        proxy.terminate()
        web.terminate()
        proxy.wait(timeout=30)
        web.wait(timeout=30)


@pytest.mark.slow
def test_nginx_writes_no_number_of_a_failed_upstream_request_to_any_log(tmp_path):
    """Issue 21: nginx wrote the request line of a 502/504, number and all, to its error log.

    nginx cannot mask its error log, and every line it writes about a request ends with that request's line,
    at any level: even at `crit` (the level shipped before) a 502 from a socket that is gone wrote it. The site's
    request errors go nowhere; the access log still has each failed request, with its upstream's status and
    timings and the request id. Here gunicorn is gone three ways: refused (502), a socket file that is gone
    (502, logged at crit), silent past the read timeout (504).
    """
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    assert Path(nginx).exists(), "nginx is needed: scripts/system-packages installs it"
    number = "004218779312345672"
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)  # accepts (the kernel does) and never answers
    upstreams = {
        "refused": f"server 127.0.0.1:{free_port()}",
        "socket_gone": f"server unix:{tmp_path}/gunicorn.sock",
        "silent": f"server 127.0.0.1:{silent.getsockname()[1]}",
    }
    statuses = {}
    try:
        for name, upstream in upstreams.items():
            http_port, https_port = free_port(), free_port()
            (tmp_path / name).mkdir()
            folder = _nginx_config(tmp_path / name, http_port, https_port, free_port())
            site = (folder / "site.conf").read_text()
            site = re.sub(r"server 127\.0\.0\.1:\d+", upstream, site).replace(
                "proxy_read_timeout 35s", "proxy_read_timeout 1s"
            )
            (folder / "site.conf").write_text(site)
            run([nginx, "-t", "-p", str(folder), "-c", str(folder / "nginx.conf")])
            proxy = subprocess.Popen([nginx, "-p", str(folder), "-c", str(folder / "nginx.conf"), "-g", "daemon off;"])
            try:
                wait_for_port(https_port)
                for path in (f"/api/v1/tickets/{number}", f"/api/v1/tickets/{number}/authorize"):
                    answer = run(
                        [
                            "curl",
                            "-sS",
                            "--insecure",
                            "-o",
                            "/dev/null",
                            "-w",
                            "%{http_code}",
                            f"https://127.0.0.1:{https_port}{path}",
                        ]
                    )
                    statuses[(name, path)] = answer.stdout
            finally:
                proxy.terminate()
                proxy.wait(timeout=30)
    finally:
        silent.close()
    assert set(statuses.values()) == {"502", "504"}, statuses
    assert {statuses[(name, f"/api/v1/tickets/{number}")] for name in ("refused", "socket_gone")} == {"502"}
    assert statuses[("silent", f"/api/v1/tickets/{number}")] == "504"
    logs = {path: path.read_text(errors="replace") for path in tmp_path.glob("*/nginx/*.log")}
    assert logs, "nginx wrote no log at all"
    leaks = [str(path) for path, text in logs.items() if number[:-4] in re.sub(r"\D", "", text)]
    assert not leaks, {path: logs[Path(path)][-2000:] for path in leaks}
    access = "".join(text for path, text in logs.items() if path.name == "casino-office.access.log")
    assert access.count('"GET" 502 ') == 4, access
    assert access.count('"GET" 504 ') == 2, access
    assert re.search(r'"GET" 504 \d+ [\d.]+ [\d.]+ 504 [\d.]+ "curl/', access), access  # the upstream's status, timed


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_reports_read_from_the_replica_when_one_is_named(casino, tmp_path, scratch_databases):
    """REPORTS_DATABASE_URL: the liability report and the dashboard read there, the cash desk does not."""
    _business_day(casino)
    dump = tmp_path / "copy.dump"
    run(["scripts/backup-db", str(dump)], env={**os.environ, "DATABASE_URL": current_database_url()})
    replica = scratch_databases("casino_replica")
    run(["scripts/restore-db", str(dump), replica])
    with psycopg.connect(replica) as conn:  # make the copy tell itself apart: one more outstanding ticket
        conn.execute("SET session_replication_role = replica")  # a ticket's amount never changes, but on this copy
        conn.execute("UPDATE tickets_ticket SET amount = amount + 1000 WHERE state = 'issued' AND id = "
                     "(SELECT min(id) FROM tickets_ticket WHERE state = 'issued')")  # fmt: skip
    script = (
        "from django.utils import timezone; from machines.models import Casino; "
        "from cashdesk.reports import outstanding_liability; "
        f"print(outstanding_liability(Casino.objects.get(code='{casino.code}'), timezone.now())['amount'])"
    )
    env = {**os.environ, "DATABASE_URL": current_database_url()}
    primary = run([sys.executable, "manage.py", "shell", "--no-imports", "-c", script], env=env).stdout.strip()
    via_replica = run(
        [sys.executable, "manage.py", "shell", "--no-imports", "-c", script],
        env={**env, "REPORTS_DATABASE_URL": replica},
    ).stdout.strip()
    assert Decimal(primary) == Decimal("42.00")  # four tickets of 10.50 still outstanding
    assert Decimal(via_replica) == Decimal("1042.00")
    assert User.objects.filter(username="backup-cashier").exists()
    assert settings.REPORTS_DATABASE == "default"  # the test process itself names no replica

"""No validation number, receipt number, check code, personal code or document number in any log line.

A number in a log is a number anyone who reads the log can cash: the access log alone once listed six
unpaid tickets. The masking (casino_office/logmask.py) keeps the last four digits, enough to find a line.
The journey at the end runs the real system (gunicorn with deploy/gunicorn.conf.py behind nginx with
deploy/nginx/casino-office.conf, a Celery worker) and reads every log it wrote.
"""

import datetime as dt
import html.parser
import http.cookiejar
import importlib.util
import json
import logging
import os
import re
import shutil
import ssl
import subprocess
import sys
import time
import types
import urllib.error
import urllib.parse
import urllib.request
import uuid
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg
import pytest
from django.conf import settings

from casino_office.logmask import MaskingFormatter, OneLineClientErrors, mask
from tests.factories import personal_code
from tests.reliability.processes import (
    ADMIN_URL,
    ROOT,
    free_port,
    gunicorn,
    migrate_fresh,
    run,
    service_env,
    start_worker,
    wait_for_port,
)
from tickets.numbers import display_validation_number, generate_validation_number

# --- The masking rule ----------------------------------------------------------------------------------------

NUMBER = "004218779312345672"  # a validation number (18 digits, Damm check digit)
CODE = "38404120417"  # a personal code (asmens kodas, 11 digits)


def test_a_validation_number_keeps_its_last_four_digits_only():
    assert mask(f"POST /api/v1/tickets/{NUMBER}/printed HTTP/1.1") == (
        "POST /api/v1/tickets/**************5672/printed HTTP/1.1"
    )
    assert mask("00-4218-7793-1234-5672") == "**-****-****-****-5672"
    assert mask("00 4218 7793 1234 5672") == "** **** **** **** 5672"


@pytest.mark.parametrize(
    "text",
    [
        f"/desk/ticket/?number={NUMBER}",
        "/desk/ticket/?number=00+4218+7793+1234+5672",
        "/desk/ticket/?number=00%204218%207793%201234%205672",
        "/desk/ticket/?number=00%2D4218%2d7793-1234-5672",
        f"Key (validation_number)=({NUMBER}) already exists.",
        f"/compliance/?person_code={CODE}&kind=",
        f"Not Found: /api/v1/tickets/{NUMBER}x",
    ],
)
def test_no_full_number_survives_in_any_spelling(text):
    masked = mask(text)
    digits = re.sub(r"\D", "", masked)
    assert NUMBER not in digits, masked
    assert CODE not in digits, masked
    assert not re.search(r"\d{5}", re.sub(r"%[0-9A-Fa-f]{2}", "", masked)), masked


@pytest.mark.parametrize(
    ("text", "masked"),
    [
        (CODE, "*******0417"),
        ("LT4471234", "*****1234"),  # a Lithuanian identity card
        ("12AB34567", "*****4567"),  # a French passport
        ("ab 998877", "ab **8877"),
        ("L01X00T47", "*****0T47"),  # letters among the digits (a German identity card)
        ("TOR-K1-000042", "TOR-K1-**0042"),  # a desk's receipt number
        ("check code 083311", "check code **3311"),  # a machine receipt's check code
    ],
)
def test_codes_documents_and_receipts_are_masked(text, masked):
    assert mask(text) == masked


@pytest.mark.parametrize(
    "text",
    [
        "GET /desk/transactions/42/ HTTP/1.1",
        "2026-12-03 14:22:01,123",
        "Task tickets.expire_due_tickets[5a7f2c9e-1b3d-4e8f-9a0b-112233445566] succeeded in 0.0123456s: 0",
        "payout 150.51 EUR, 12 tickets, shift 1234",
        "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 HeadlessChrome/120.0.6099.109",
    ],
)
def test_what_is_no_secret_is_left_alone(text):
    assert mask(text) == text


def _format(formatter: logging.Formatter, message: str, *args: Any, **extra: Any) -> str:
    try:
        raise ValueError(f"Key (validation_number)=({NUMBER}) already exists.")
    except ValueError:
        record = logging.LogRecord("django.request", logging.WARNING, __file__, 1, message, args, sys.exc_info())
    record.__dict__.update(extra)
    return formatter.format(record)


def test_the_formatter_masks_the_message_and_the_traceback_but_not_the_time():
    formatter = MaskingFormatter("%(asctime)s %(levelname)s %(name)s %(message)s", "%Y-%m-%d %H:%M:%S")
    text = _format(formatter, "Internal Server Error: %s", f"/api/v1/tickets/{NUMBER}/commit")
    assert NUMBER not in text
    assert "/api/v1/tickets/**************5672/commit" in text
    assert "Traceback" in text
    assert "(**************5672) already exists" in text
    assert re.match(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} WARNING django\.request Internal", text), text


def test_each_argument_is_masked_on_its_own():
    formatter = MaskingFormatter("%(message)s")
    record = logging.LogRecord(
        "django.server", logging.INFO, __file__, 1, '"%s" %s %s', ("GET / HTTP/1.1", 200, 5123), None
    )
    assert formatter.format(record) == '"GET / HTTP/1.1" 200 5123'  # a status and a size side by side
    record = logging.LogRecord(
        "x", logging.INFO, __file__, 1, "%(what)s at %(path)s", {"what": 1, "path": NUMBER}, None
    )
    assert formatter.format(record) == "1 at **************5672"


@pytest.mark.parametrize(
    ("text", "masked"),
    [
        (f"?next=/desk/%3Fnumber%3D{NUMBER}", "?next=/desk/%3Fnumber%3D**************5672"),
        ("%2512345678", "%25****5678"),  # a literal "%" before the number
        ("%252012AB34567", "%2520*****4567"),  # a space encoded twice before a document number
    ],
)
def test_percent_escapes_are_read_as_escapes(text, masked):
    assert mask(text) == masked


def _gunicorn_config() -> Any:
    spec = importlib.util.spec_from_file_location("gunicorn_conf", ROOT / "deploy" / "gunicorn.conf.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_gunicorn_masks_the_request_but_not_the_status_size_or_time(tmp_path):
    from gunicorn.config import Config

    shipped = _gunicorn_config()
    config = Config()
    for name in ("access_log_format", "logger_class"):
        config.set(name, getattr(shipped, name))
    config.set("accesslog", str(tmp_path / "access.log"))
    config.set("errorlog", str(tmp_path / "error.log"))
    logger = config.logger_class(config)
    environ = {
        "REQUEST_METHOD": "GET",
        "RAW_URI": f"/desk/ticket/?number={NUMBER}",
        "PATH_INFO": "/desk/ticket/",
        "QUERY_STRING": f"number={NUMBER}",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "REMOTE_ADDR": "10.0.0.1",
    }
    response = types.SimpleNamespace(status="200 OK", sent=512345, headers=[])
    request = types.SimpleNamespace(headers=[("X-REQUEST-ID", "0123456789abcdef0123456789abcdef")])
    logger.access(response, request, environ, dt.timedelta(seconds=1, microseconds=234567))
    logger.error("Error handling request %s", f"/api/v1/tickets/{NUMBER}/commit")
    for handler in [*logger.access_log.handlers, *logger.error_log.handlers]:
        handler.flush()
    assert (tmp_path / "access.log").read_text() == (
        '10.0.0.1 "GET /desk/ticket/?number=**************5672 HTTP/1.1" 200 512345 1234ms '
        "0123456789abcdef0123456789abcdef\n"
    )
    assert "Error handling request /api/v1/tickets/**************5672/commit" in (tmp_path / "error.log").read_text()


def test_a_traceback_formatted_earlier_unmasked_is_masked_all_the_same():
    record = logging.LogRecord("x", logging.ERROR, __file__, 1, "failed", (), None)
    record.exc_text = f"Traceback ...\nIntegrityError: Key (validation_number)=({NUMBER})"
    assert NUMBER not in MaskingFormatter("%(message)s").format(record)


def _record(status: int, message: str) -> logging.LogRecord:
    try:
        raise PermissionError("Your role does not allow this page.")
    except PermissionError:
        record = logging.LogRecord("django.request", logging.WARNING, __file__, 1, message, ("/x/",), sys.exc_info())
    record.status_code = status
    return record


def test_a_refused_request_is_one_line_without_its_traceback():
    formatter = MaskingFormatter("%(levelname)s %(message)s")
    assert "Traceback" in formatter.format(_record(403, "Forbidden: %s"))  # the formatter alone keeps it
    for status in (403, 404, 400):
        record = _record(status, "Refused: %s")
        assert OneLineClientErrors().filter(record) is True  # kept, without the traceback
        assert formatter.format(record) == "WARNING Refused: /x/"
    server_error = _record(500, "Internal Server Error: %s")
    OneLineClientErrors().filter(server_error)
    assert "Traceback" in formatter.format(server_error)  # a server error keeps its traceback


def test_every_handler_of_the_settings_masks_and_keeps_refusals_on_one_line():
    config = settings.LOGGING
    for name, handler in config["handlers"].items():
        formatter = config["formatters"][handler["formatter"]]
        assert formatter["()"] == "casino_office.logmask.MaskingFormatter", name
        filters = [config["filters"][f]["()"] for f in handler.get("filters", [])]
        assert "casino_office.logmask.OneLineClientErrors" in filters, name
    # Django's own handlers (runserver's access log, e-mails to admins) are replaced by the masked one.
    for logger in ("django", "django.server"):
        assert set(config["loggers"][logger].get("handlers", [])) <= set(config["handlers"]), logger


def test_the_worker_logs_through_the_settings_not_celerys_own_handlers():
    from celery.signals import setup_logging

    from casino_office.celery import use_django_logging

    receivers = [ref() if isinstance(ref, weakref.ref) else ref for _key, ref in setup_logging.receivers]
    assert use_django_logging in receivers


def test_nginx_logs_no_url():
    """nginx's access log names no URL (gunicorn's masked one does); its request errors go nowhere (nginx cannot
    mask them, and each ends with the request line: tests/ops/test_deploy.py proves it of a 502 and a 504)."""
    site = (ROOT / "deploy" / "nginx" / "casino-office.conf").read_text()
    formats = re.findall(r"log_format\s+(\S+)\s+((?:'[^']*'\s*)+);", site)
    assert formats, "no log_format in the site"
    for _name, body in formats:
        for variable in ("$request", "$uri", "$args", "$query_string", "$http_referer", "$arg_"):
            assert variable not in body.replace("$request_id", "").replace("$request_time", "").replace(
                "$request_method", ""
            ), variable
    access_logs = re.findall(r"^\s*access_log\s+([^;]+);", site, re.MULTILINE)
    servers = site.count("server {")
    assert len([log for log in access_logs if log.split()[-1] == formats[0][0]]) == servers, access_logs
    assert all(log == "off" or log.split()[-1] == formats[0][0] for log in access_logs), access_logs
    error_logs = re.findall(r"^\s*error_log\s+([^;]+);", site, re.MULTILINE)
    assert error_logs == ["/dev/null"] * servers, error_logs


# --- The system, end to end ----------------------------------------------------------------------------------

DATABASE = "casino_logs"
PASSWORD = "demo-staff-2026"  # seed_demo's staff password
MACHINE_KEY = "demo-tor-1001"  # seed_demo's key for machine 1001 of Casino Tornado
TOTP_KEY = "3132333435363738393031323334353637383930"  # the staff's second factor, where a role needs one
FLOAT = {"cash": "5000.00", "chip_500": "10", "chip_100": "20", "chip_25": "20", "chip_5": "20"}
FLOAT |= {"chip_1": "50", "chip_0_50": "50", "token": "200"}
SETUP = f"""
from django.contrib.auth.models import User
from django_otp.plugins.otp_totp.models import TOTPDevice
for user in User.objects.filter(username__endswith="-tor"):
    TOTPDevice.objects.create(user=user, name="phone", key="{TOTP_KEY}", confirmed=True)
"""


@dataclass
class Form:
    action: str
    method: str
    fields: dict[str, str] = field(default_factory=dict)


class _Forms(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.forms: list[Form] = []
        self._select: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "form":
            self.forms.append(Form(a.get("action", ""), (a.get("method") or "get").lower()))
        elif not self.forms:
            return
        elif tag in ("input", "textarea") and a.get("name") and a.get("type") not in ("submit", "checkbox"):
            self.forms[-1].fields.setdefault(a["name"], a.get("value", ""))
        elif tag == "select":
            self._select = a.get("name")
        elif tag == "option" and self._select and (a.get("value") or "") and self._select not in self.forms[-1].fields:
            self.forms[-1].fields[self._select] = a["value"]

    def handle_endtag(self, tag: str) -> None:
        if tag == "select":
            self._select = None


@dataclass
class Page:
    status: int
    url: str
    text: str

    def forms(self, having: str) -> list[Form]:
        parser = _Forms()
        parser.feed(self.text)
        return [form for form in parser.forms if having in form.fields]

    def form(self, having: str) -> Form:
        found = self.forms(having)
        assert found, (having, self.url, self.status, self.text[:3000])
        return found[0]


class Staff:
    """A member of staff at a browser: cookies, CSRF, forms sent the way the page says (GET or POST)."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))

    def open(self, path: str, data: dict[str, str] | None = None) -> Page:
        url = path if path.startswith("http") else self.base + path
        body = urllib.parse.urlencode(data).encode() if data is not None else None
        try:
            with self.opener.open(urllib.request.Request(url, data=body), timeout=20) as response:  # noqa: S310
                return Page(response.status, response.url, response.read().decode("utf-8", "replace"))
        except urllib.error.HTTPError as error:
            return Page(error.code, error.url, error.read().decode("utf-8", "replace"))

    def submit(self, page: Page, form: Form, **values: str) -> Page:
        data = {**form.fields, **values}
        action = urllib.parse.urljoin(page.url, form.action or page.url)
        if form.method == "post":
            return self.open(action, data)
        return self.open(f"{action.split('?')[0]}?{urllib.parse.urlencode(data)}")

    def login(self, username: str) -> Page:
        page = self.open("/accounts/login/")
        page = self.submit(page, page.form("password"), username=username, password=PASSWORD)
        assert page.status == 200, (page.status, page.url)
        # A role that needs a second factor is asked for a code from its device (see SETUP).
        if urllib.parse.urlsplit(page.url).path.startswith("/accounts/") and not page.forms("password"):
            from django_otp.oath import totp

            name = next(name for name in ("code", "otp_token", "token") if page.forms(name))
            page = self.submit(page, page.form(name), **{name: f"{totp(bytes.fromhex(TOTP_KEY)):06d}"})
        assert page.status == 200, (page.url, page.status)
        assert not page.forms("password"), (page.url, page.text[:2000])
        return page


def _machine(base: str, method: str, path: str, body: dict[str, Any] | None = None, key: str = MACHINE_KEY) -> Any:
    request = urllib.request.Request(  # noqa: S310 - a URL we built
        f"{base}/api/v1/{path}",
        data=json.dumps(body).encode() if body is not None else None,
        method=method,
        headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
    )
    context = ssl._create_unverified_context()  # noqa: S323 - nginx's self-signed test certificate
    try:
        with urllib.request.urlopen(request, timeout=20, context=context) as response:  # noqa: S310
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"{}")


def _nginx(folder: Path, https_port: int, http_port: int, web_port: int) -> list[str]:
    """deploy/nginx/casino-office.conf with this test's ports, certificate and log folder."""
    certificate = ["-keyout", str(folder / "key.pem"), "-out", str(folder / "cert.pem")]
    run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=x", *certificate])
    site = (ROOT / "deploy" / "nginx" / "casino-office.conf").read_text()
    for old, new in (
        ("server 127.0.0.1:8000", f"server 127.0.0.1:{web_port}"),
        ("listen 80;", f"listen 127.0.0.1:{http_port};"),
        ("listen 443 ssl;", f"listen 127.0.0.1:{https_port} ssl;"),
        ("/etc/casino-office/tls/", f"{folder}/"),
        ("/srv/casino-office/var/static/", f"{folder}/static/"),
        ("/var/log/nginx/", f"{folder}/"),
    ):
        site = site.replace(old, new)
    (folder / "site.conf").write_text(site)
    user = "user root;\n" if os.geteuid() == 0 else ""
    temp = "".join(
        f" {kind}_temp_path {folder}/{kind};\n" for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
    )
    # The http block's own logs are Debian's defaults (the combined format): the site must override them.
    (folder / "nginx.conf").write_text(
        f"{user}worker_processes 1;\npid {folder}/nginx.pid;\nerror_log {folder}/http-error.log;\n"
        "events { worker_connections 64; }\n"
        f"http {{\n include /etc/nginx/mime.types;\n access_log {folder}/http-access.log;\n{temp}"
        f" include {folder}/site.conf;\n}}\n"
    )
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    assert Path(nginx).exists(), "nginx is needed: scripts/system-packages installs it"
    run([nginx, "-t", "-p", str(folder), "-c", str(folder / "nginx.conf")])
    return [nginx, "-p", str(folder), "-c", str(folder / "nginx.conf"), "-g", "daemon off;"]


@contextmanager
def _process(command: list[str], env: dict[str, str], output: Path) -> Iterator[subprocess.Popen[bytes]]:
    with output.open("wb") as sink:
        process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=sink, stderr=subprocess.STDOUT)
        try:
            yield process
        finally:
            process.terminate()
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()


def _until(condition: Any, what: str, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"{what}: not within {seconds} s"
        time.sleep(0.2)


@pytest.fixture
def system(tmp_path: Path) -> Iterator[dict[str, Any]]:
    """A fresh database with the demo casinos, served by gunicorn (the shipped config) behind nginx; a worker."""
    with psycopg.connect(ADMIN_URL, autocommit=True) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {DATABASE} WITH (FORCE)")
        admin.execute(f"CREATE DATABASE {DATABASE}")
    logs = tmp_path / "logs"
    logs.mkdir()
    queue = f"logs-{uuid.uuid4().hex}"
    env = service_env(
        CASINO_DEMO="1",
        DATABASE_URL=f"postgres://postgres@127.0.0.1:5432/{DATABASE}",
        CELERY_BROKER_URL="filesystem://",  # shared with the worker through the folder below
        CELERY_TASK_DEFAULT_QUEUE=queue,
        CASINO_VAR_DIR=str(tmp_path / "var"),
        ALLOWED_HOSTS="127.0.0.1,localhost,casino.example.lt",
        LANGUAGE_CODE="en",
        LOG_LEVEL="INFO",
        GUNICORN_LOG_LEVEL="info",
        GUNICORN_ACCESS_LOG=str(logs / "gunicorn-access.log"),
    )
    migrate_fresh(env)
    for command in (["seed_demo"], ["shell", "-c", SETUP]):
        run([sys.executable, "manage.py", *command], env=env)
    web_port, https_port, http_port = free_port(), free_port(), free_port()
    (tmp_path / "nginx").mkdir()
    nginx = _nginx(tmp_path / "nginx", https_port, http_port, web_port)
    worker = start_worker(env, queue, output=logs / "celery.log")
    try:
        with (
            gunicorn(env, web_port, workers=2, output=logs / "gunicorn-error.log") as server,
            _process(nginx, env, logs / "nginx-stdout.log"),
        ):
            wait_for_port(https_port)
            yield {
                "web": f"http://127.0.0.1:{web_port}",
                "proxy": f"https://127.0.0.1:{https_port}",
                "env": env,
                "logs": logs,
                "nginx_logs": tmp_path / "nginx",
            }
            assert server.poll() is None, "gunicorn died"
    finally:
        worker.terminate()
        worker.wait(timeout=60)
        with psycopg.connect(ADMIN_URL, autocommit=True) as admin:
            admin.execute(f"DROP DATABASE IF EXISTS {DATABASE} WITH (FORCE)")


def _machine_session(proxy: str) -> dict[str, str]:
    """The machine's day through nginx: two tickets printed, one played back in; an unknown and a miskeyed number."""
    numbers = {}
    for name, amount in (("paid_at_desk", "12.35"), ("played_in", "40.00")):
        status, issued = _machine(proxy, "POST", "tickets/issue", {"request_id": uuid.uuid4().hex, "amount": amount})
        assert status == 201, issued
        number = numbers[name] = issued["validation_number"]
        printed = {"request_id": uuid.uuid4().hex, "result": "printed"}
        assert _machine(proxy, "POST", f"tickets/{number}/printed", printed)[0] == 200
    number = numbers["played_in"]
    assert _machine(proxy, "GET", f"tickets/{number}")[0] == 200
    assert _machine(proxy, "POST", f"tickets/{number}/authorize", {"request_id": uuid.uuid4().hex})[0] == 200
    commit = {"request_id": uuid.uuid4().hex, "result": "accepted"}
    assert _machine(proxy, "POST", f"tickets/{number}/commit", commit)[0] == 200
    unknown = numbers["unknown"] = generate_validation_number()
    assert _machine(proxy, "POST", f"tickets/{unknown}/authorize", {"request_id": uuid.uuid4().hex})[0] == 404
    assert _machine(proxy, "GET", f"tickets/{display_validation_number(unknown)}")[0] == 404
    miskeyed = numbers["miskeyed"] = unknown[:-1] + str((int(unknown[-1]) + 1) % 10)
    assert _machine(proxy, "GET", f"tickets/{miskeyed}")[0] == 422
    assert _machine(proxy, "GET", f"tickets/{numbers['paid_at_desk']}", key="not-a-key")[0] == 401
    return numbers


def _desk_journey(web: str, ticket: str, person: dict[str, str]) -> dict[str, str]:
    """A cashier scans and pays the ticket, sells chips over the threshold to a new person, pays a machine receipt."""
    secrets: dict[str, str] = {}
    cashier = Staff(web)
    page = cashier.login("kasininke-tor")
    if "float" in page.text.lower() or 'name="desk"' in page.text:
        page = cashier.submit(page, page.form("desk"), **FLOAT)
    page = cashier.open("/desk/")
    scan = page.form("number")
    page = cashier.submit(page, scan, number=display_validation_number(ticket))
    assert "Pay €12.35" in page.text, (page.url, page.text[:2000])
    page = cashier.submit(page, page.form("printed_amount"))
    paid = re.search(r"/desk/transactions/(\d+)/$", page.url)
    assert paid, page.url
    secrets["payout receipt"] = re.search(r"TOR-\w+-\d{6}", page.text).group(0)
    assert cashier.open(f"/documents/receipt/{paid.group(1)}.pdf").status == 200
    page = cashier.submit(cashier.open("/desk/"), scan, number=ticket)  # again: refused, and recorded
    assert "Already paid" in page.text, page.text[:2000]

    page = cashier.open("/desk/chips/")
    page = cashier.submit(
        page,
        page.form("chip_500"),
        direction="buy",
        chip_500="3",
        personal_code=person["code"],
        document_type="id_card",
        document_number=person["document"],
        document_expiry="2031-05-31",
        given_names="Aušra",
        surnames="Petrauskienė",
        date_of_birth="1984-04-12",
    )
    assert re.search(r"/desk/transactions/\d+/$", page.url), (page.url, page.text[:3000])
    secrets["chips receipt"] = re.search(r"TOR-\w+-\d{6}", page.text).group(0)

    floor = Staff(web)
    page = floor.login("salesdarbuotojas-tor")
    page = floor.submit(page, page.form("asset_number"), asset_number="1001", amount="25.00")
    recorded = re.search(r"Receipt (\d+) \(check code (\d+)\) recorded", page.text)
    assert recorded, page.text[:3000]
    secrets["check code"] = recorded.group(2)
    assert floor.open("/desk/").status == 403  # not the floor's page: one line in the log
    page = cashier.open("/desk/receipt-payout/")
    page = cashier.submit(page, page.form("check_code"), receipt_number=recorded.group(1), check_code=recorded.group(2))
    assert re.search(r"/desk/transactions/\d+/$", page.url), (page.url, page.text[:3000])
    assert cashier.open("/supervisor/vault/").status == 403
    return secrets


def _compliance_journey(web: str, person: dict[str, str]) -> None:
    """The compliance officer states a purpose and finds the person by personal code and by document."""
    officer = Staff(web)
    officer.login("atitiktis-tor")
    page = officer.open("/compliance/")
    page = officer.submit(page, page.form("purpose"), purpose="Check: chips over 1000 EUR")
    for search in (person["code"], person["document"]):
        page = officer.open("/compliance/")
        # The officer leaves the kind and desk filters at "all" (this page parser would send each list's first entry).
        page = officer.submit(page, page.form("person_code"), person_code=search, kind="", desk="")
        assert page.status == 200, (search, page.url)
        assert "Petrauskien" in page.text, (search, page.url, page.text[:3000])
    person_page = re.search(r'href="(/compliance/persons/\d+/)"', page.text)
    assert person_page, page.text[:3000]
    assert person["code"] in officer.open(person_page.group(1)).text


def _stale_links(web: str, ticket: str, receipt: str, person: dict[str, str]) -> None:
    """URLs from old bookmarks and mistakes: whatever they carry is masked in every log."""
    cashier = Staff(web)
    cashier.login("kasininkas-tor")
    assert cashier.open(f"/desk/ticket/?number={ticket}").status == 200
    assert Staff(web).open(f"/compliance/?person_code={person['code']}").status == 200  # to the login page
    assert Staff(web).open("/desk/ticket/", {"number": ticket}).status == 403  # no CSRF token: one line too
    assert cashier.open(f"/compliance/persons/{person['document']}/").status == 404
    assert cashier.open(f"/documents/receipt/{receipt}.pdf").status == 404


def _send_to_worker(env: dict[str, str], args: list[str]) -> None:
    """A task the worker does not know (a rolling upgrade): Celery logs the whole message, arguments included."""
    script = (
        "from casino_office.celery import app; from ops.tasks import heartbeat; "
        f"app.send_task('tickets.renamed_in_a_later_release', args={args!r}); heartbeat.delay()"
    )
    run([sys.executable, "manage.py", "shell", "-c", script], env=env)


@pytest.mark.slow
def test_no_secret_number_in_any_log_of_a_working_day(system):
    person = {"code": personal_code(dt.date(1984, 4, 12), serial=417), "document": "LT4471234"}
    tickets = _machine_session(system["proxy"])
    secrets = {f"ticket {name}": number for name, number in tickets.items()}
    secrets |= _desk_journey(system["web"], tickets["paid_at_desk"], person)
    _compliance_journey(system["web"], person)
    _stale_links(system["web"], tickets["unknown"], secrets["payout receipt"], person)
    _send_to_worker(system["env"], [tickets["unknown"], person["code"]])
    secrets |= {"personal code": person["code"], "document": person["document"], "document digits": "4471234"}

    logs = system["logs"]
    _until(lambda: "renamed_in_a_later_release" in (logs / "celery.log").read_text(), "the worker logs the task")
    _until(lambda: re.search(r"ops\.heartbeat\[.*succeeded", (logs / "celery.log").read_text()), "the heartbeat ran")
    files = [*logs.iterdir(), *system["nginx_logs"].glob("*.log")]
    texts = {path.name: path.read_text(errors="replace") for path in files}

    def leaked(secret: str, text: str) -> bool:
        if re.search(rf"(?<![0-9A-Za-z]){re.escape(secret)}(?![0-9A-Za-z])", text):
            return True
        # Long numbers also in groups ("00-4218-7793-...", "00+4218+...").
        return secret.isdigit() and len(secret) >= 11 and secret in re.sub(r"[ \-+]|%20|%2[dD]", "", text)

    leaks = {(log, what) for log, text in texts.items() for what, secret in secrets.items() if leaked(secret, text)}
    assert not leaks, sorted(leaks)

    nginx_logs = {"casino-office.access.log", "http-access.log", "http-error.log"}
    assert {"gunicorn-access.log", "gunicorn-error.log", "celery.log", *nginx_logs} <= set(texts), sorted(texts)

    # The lines were written, masked: the last four digits are there.
    access, errors, worker = texts["gunicorn-access.log"], texts["gunicorn-error.log"], texts["celery.log"]
    for name in ("paid_at_desk", "played_in", "unknown"):
        assert f"/api/v1/tickets/**************{tickets[name][-4:]}/" in access, name
    assert f"person_code=*******{person['code'][-4:]}" in access
    assert f"Not Found: /compliance/persons/*****{person['document'][-4:]}/" in errors
    assert f"Not Found: /documents/receipt/TOR-K1-**{secrets['payout receipt'][-4:]}.pdf" in errors
    assert f"**************{tickets['unknown'][-4:]}" in worker  # the message's arguments
    assert "Received unregistered task" in worker
    assert "ops.heartbeat" in worker
    assert re.search(r"INFO celery\.\S+ Task ops\.heartbeat\[[0-9a-f-]{36}\] succeeded", worker), worker[-3000:]

    # A refusal is one line: no traceback anywhere (no request failed with a 500).
    assert "Forbidden (Permission denied): /desk/" in errors
    assert "Forbidden (Permission denied): /supervisor/vault/" in errors
    assert "Forbidden (CSRF cookie not set.): /desk/ticket/" in errors
    assert "Traceback" not in errors, errors[errors.find("Traceback") - 500 :][:3000]

    # nginx logged every machine request, without its URL, with the id that finds gunicorn's line.
    nginx = texts["casino-office.access.log"].splitlines()
    assert len(nginx) == 11, nginx
    assert sum('"POST"' in line for line in nginx) == 7, nginx
    request_id = re.search(r" ([0-9a-f]{32})$", nginx[0])
    assert request_id, nginx[0]
    assert re.search(rf"/api/v1/tickets/issue HTTP/1.1\" 201 .* {request_id.group(1)}$", access, re.MULTILINE)
    assert not texts.get("http-access.log"), texts.get("http-access.log")  # Debian's combined log got nothing

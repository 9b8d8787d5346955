"""The browser suite: the real system (gunicorn with deploy/gunicorn.conf.py, a database of its own, the demo
casinos) driven by Playwright in Debian's headless Chromium. Screenshots of every step go to
test-artifacts/browser/<test>/.

The system runs on PostgreSQL; a module that also runs on `make run`'s SQLite (a file made by `migrate` and
`seed_demo` with CASINO_DEMO=1) says so with `ON_BOTH_DATABASES`, and its tests run once on each.
"""

import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import psycopg
import pytest

from tests.i18n_words import english_in
from tests.reliability.processes import ADMIN_URL, ROOT, free_port, gunicorn, migrate_fresh

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
# Without the background-networking flags Chromium keeps calling home, which the closed network refuses.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",  # containers give /dev/shm 64 MB; the renderer crashes on PDF frames otherwise
]
# Two runs at once (a developer's and a helper's) keep apart by setting both: BROWSER_DATABASE, BROWSER_ARTIFACTS.
ARTIFACTS = Path(os.environ.get("BROWSER_ARTIFACTS") or ROOT / "test-artifacts" / "browser")
DATABASE = os.environ.get("BROWSER_DATABASE", "casino_browser")
PASSWORD = "demo-staff-2026"  # seed_demo's staff password

# Every page runs under the Content-Security-Policy; a refusal fails the test it happened in (no_csp_violation).
# Chromium logs a refusal to the console; the listener also reports one the console might not show (a frame's).
CSP_VIOLATIONS: list[str] = []
CSP_LISTENER = """
document.addEventListener("securitypolicyviolation", (event) => {
  console.error(`Content Security Policy violation: ${event.effectiveDirective} refused ${event.blockedURI || "inline"}`
    + ` at ${event.sourceFile || document.URL}:${event.lineNumber}`);
});
"""

# A tab whose renderer crashed fails the test it happened in (no_crashed_tab). The receipt's PDF frame that
# printed itself on load crashed headless Chromium's tab every time; the receipt is now shown on the page
# and its PDF opens in a tab of its own, so the suite runs with the browser's print() as it is.
CRASHED_TABS: list[str] = []


def is_csp_violation(text: str) -> bool:
    return "Content Security Policy" in text or "Content-Security-Policy" in text or text.startswith("Refused to")


def system_env(database_url: str) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key != "LANGUAGE_CODE"}  # the casinos' default: lt
    env.update(
        CASINO_DEMO="1",
        DEBUG="0",
        DATABASE_URL=database_url,
        CELERY_BROKER_URL="memory://",
        CASINO_VAR_DIR=str(ARTIFACTS.parent / f"{ARTIFACTS.name}-var"),
        GUNICORN_LOG_LEVEL="warning",
        ALLOWED_HOSTS="127.0.0.1,localhost",
    )
    return env


POSTGRESQL_URL = f"postgres://postgres@127.0.0.1:5432/{DATABASE}"
SQLITE_FILE = ARTIFACTS.parent / f"{ARTIFACTS.name}-sqlite" / "casino_office.sqlite3"
# The modules whose tests run on both: `pytestmark = ON_BOTH_DATABASES`.
ON_BOTH_DATABASES = pytest.mark.parametrize("system", ["postgresql", "sqlite"], indirect=True, scope="module")


class System(str):
    """The served system's base URL (a str, as the tests use it), with the database it runs on."""

    database_url: str

    def __new__(cls, base: str, database_url: str) -> "System":
        served = super().__new__(cls, base)
        served.database_url = database_url
        return served

    @property
    def vendor(self) -> str:
        return "sqlite" if self.database_url.startswith("sqlite:") else "postgresql"

    def sql(self, query: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        """The rows of a query (`%s` placeholders) read straight from the system's database, not through its code."""
        if self.vendor == "sqlite":
            with closing(sqlite3.connect(SQLITE_FILE)) as connection:
                return connection.execute(query.replace("%s", "?"), params).fetchall()
        with psycopg.connect(self.database_url) as connection:
            return connection.execute(query, params).fetchall()


def _serve(env: dict[str, str]) -> Iterator[str]:
    """Migrate the (fresh) database, load the demo casinos, serve it with gunicorn; yield the base URL."""
    if not Path(CHROMIUM).exists():
        pytest.fail(f"Chromium not found at {CHROMIUM}: apt-get install chromium (.ci/run does)")
    migrate_fresh(env)
    subprocess.run([sys.executable, "manage.py", "seed_demo"], cwd=ROOT, env=env, check=True, capture_output=True)
    port = free_port()
    with gunicorn(env, port, workers=2) as server:
        yield f"http://127.0.0.1:{port}"
        assert server.poll() is None, "gunicorn died during the browser tests"


@pytest.fixture(scope="session")
def artifacts() -> Path:
    """The screenshots' folder, emptied once per run."""
    shutil.rmtree(ARTIFACTS, ignore_errors=True)
    return ARTIFACTS


@pytest.fixture(scope="session")
def postgresql_system(artifacts: Path) -> Iterator[System]:
    with psycopg.connect(ADMIN_URL, autocommit=True) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {DATABASE} WITH (FORCE)")
        admin.execute(f"CREATE DATABASE {DATABASE}")
    for base in _serve(system_env(POSTGRESQL_URL)):
        yield System(base, POSTGRESQL_URL)
    with psycopg.connect(ADMIN_URL, autocommit=True) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {DATABASE} WITH (FORCE)")


@pytest.fixture(scope="session")
def sqlite_system(artifacts: Path) -> Iterator[System]:
    """The demo as `make run` has it: an SQLite file made by `migrate` and `seed_demo` with CASINO_DEMO=1."""
    shutil.rmtree(SQLITE_FILE.parent, ignore_errors=True)
    SQLITE_FILE.parent.mkdir(parents=True)
    url = f"sqlite:///{SQLITE_FILE}"
    for base in _serve(system_env(url)):
        yield System(base, url)


@pytest.fixture(scope="module")
def system(request: pytest.FixtureRequest) -> System:
    """The system under test: on PostgreSQL, or on the database a module's parameter names (ON_BOTH_DATABASES)."""
    return request.getfixturevalue(f"{getattr(request, 'param', 'postgresql')}_system")  # type: ignore[no-any-return]


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield chromium
        chromium.close()


# The body's text as shown, without what <code> elements hold: blanked for the reading, then put back.
WITHOUT_CODE = """() => {
  const codes = [...document.querySelectorAll('body code')];
  const kept = codes.map((code) => code.textContent);
  codes.forEach((code) => { code.textContent = ' '; });
  const text = document.body.innerText;
  codes.forEach((code, i) => { code.textContent = kept[i]; });
  return text;
}"""


class Screen:
    """A member of staff at a browser: log in, act, and a screenshot of every step."""

    def __init__(self, browser: Any, base: str, folder: Path) -> None:
        self.base = base
        self.folder = folder
        # A Lithuanian workstation: the browser's own widgets (date pickers) follow its locale, not the page.
        self.context = browser.new_context(
            viewport={"width": 1280, "height": 900}, accept_downloads=True, locale="lt-LT", timezone_id="Europe/Vilnius"
        )
        self.context.add_init_script(CSP_LISTENER)
        # Every tab, the first and those a link opens (the receipt's PDF): none may crash.
        self.context.on("page", lambda page: page.on("crash", lambda crashed: self._crashed(crashed)))
        self.context.on("console", lambda message: self._watch(message.page, f"console {message.type}", message.text))
        self.context.on("weberror", lambda error: self._watch(error.page, "page error", str(error.error)))
        self.page = self.context.new_page()
        self.page.set_default_timeout(15000)
        self.steps = 0

    def _watch(self, page: Any, kind: str, text: str) -> None:
        if is_csp_violation(text):
            CSP_VIOLATIONS.append(f"{self.folder.name} at {page.url if page else '?'}: {kind}: {text}")

    def _crashed(self, page: Any) -> None:
        CRASHED_TABS.append(f"{self.folder.name}: the tab at {page.url} crashed")

    def go(self, path: str) -> Any:
        return self.page.goto(self.base + path)

    def login(self, username: str) -> None:
        self.go("/accounts/login/")
        self.page.fill("#id_username", username)
        self.page.fill("#id_password", PASSWORD)
        self.page.click("main button[type=submit]")
        self.page.wait_for_load_state()
        if "/accounts/second-factor/" in self.page.url:  # supervisors, compliance officers, managers
            self.shot("second-factor")
            self.assert_lithuanian()
            self.page.fill("#id_code", totp_code(username, self.base))
            self.page.click("main button[type=submit]")
            self.page.wait_for_load_state()

    def shot(self, name: str) -> Path:
        self.steps += 1
        self.folder.mkdir(parents=True, exist_ok=True)
        path = self.folder / f"{self.steps:02d}-{name}.png"
        self.page.screenshot(path=str(path), full_page=True)
        return path

    def text(self) -> str:
        return str(self.page.inner_text("body"))

    def assert_lithuanian(self) -> None:
        """Not one word of the English texts on the screen (the language is Lithuanian, the default).

        The text of <code> elements is left out: a second factor's key is random base32 letters, and a run of
        them once spelled "SET" (a word of the English catalog) and failed a login; a machine's model ("Ticket
        redemption") or a value as stored is not the page's language either. They are blanked in the page for
        the reading and put back: cutting their texts out of the page's text instead cut them everywhere (a
        value "K" took the K out of every word).
        """
        text = str(self.page.evaluate(WITHOUT_CODE))
        found = english_in(text)
        assert not found, (self.page.url, sorted(found))

    def close(self) -> None:
        self.context.close()


@pytest.fixture(autouse=True)
def no_csp_violation() -> Iterator[None]:
    """Fail the test if any page refused anything under the Content-Security-Policy: during the test, or in a
    shared fixture's steps (cashier_day) that ran before it."""
    yield
    found = list(CSP_VIOLATIONS)
    CSP_VIOLATIONS.clear()
    if found:
        pytest.fail("Content-Security-Policy violations:\n" + "\n".join(found), pytrace=False)


@pytest.fixture(autouse=True)
def no_crashed_tab() -> Iterator[None]:
    """Fail the test if a tab crashed: during the test, or in a shared fixture's steps that ran before it."""
    yield
    found = list(CRASHED_TABS)
    CRASHED_TABS.clear()
    if found:
        pytest.fail("Crashed tabs:\n" + "\n".join(found), pytrace=False)


@pytest.fixture
def screens(browser: Any, system: str, request: pytest.FixtureRequest) -> Iterator[Any]:
    opened: list[Screen] = []
    test_name = re.sub(r"[^A-Za-z0-9_-]", "_", request.node.name)

    def open_screen(who: str) -> Screen:
        screen = Screen(browser, system, ARTIFACTS / test_name / who)
        opened.append(screen)
        return screen

    yield open_screen
    for screen in opened:
        screen.close()


def totp_code(username: str, system: str | None = None) -> str:
    """The code the member of staff's authenticator app shows now: from their TOTP device's key in the database
    (made when the second-factor page first showed them its QR code); the system's, PostgreSQL's by default."""
    from django_otp.oath import hotp

    served = system if isinstance(system, System) else System("", POSTGRESQL_URL)
    rows = served.sql(
        "SELECT d.key, d.last_t FROM otp_totp_totpdevice d JOIN auth_user u ON u.id = d.user_id"
        " WHERE u.username = %s ORDER BY d.confirmed DESC, d.id LIMIT 1",
        (username,),
    )
    assert rows, f"no TOTP device for {username}"
    key, last_t = rows[0]
    step = max(int(time.time()) // 30, last_t + 1)  # a code is accepted once: the next step's if this one was used
    return f"{hotp(bytes.fromhex(key), step):06d}"


def machine_call(base: str, key: str, method: str, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
    """The slot machine's side: the v1 REST API over HTTP, as a machine sends it."""
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(  # noqa: S310 - a URL we built, http://127.0.0.1
        base + "/api/v1/" + path,
        data=data,
        method=method,
        headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:  # noqa: S310
            return dict(json.loads(response.read()))
    except urllib.error.HTTPError as error:
        raise AssertionError(f"{method} {path}: {error.code} {error.read().decode()}") from None


def printed_ticket(base: str, key: str, amount: str) -> str:
    """A ticket the machine with this key issues and prints (issue, then printed), through the API: its number."""
    issued = machine_call(base, key, "POST", "tickets/issue", {"request_id": uuid.uuid4().hex, "amount": amount})
    number = str(issued["validation_number"])
    machine_call(base, key, "POST", f"tickets/{number}/printed", {"request_id": uuid.uuid4().hex, "result": "printed"})
    return number


# A specimen identity card of the README's (Jonas Petraitis, born 1990-05-17): the lines a door scanner types.
JONAS_MRZ = ("IDLTU10203040<639005170459<<<<", "9005178M3001019LTU<<<<<<<<<<<3", "PETRAITIS<<JONAS<<<<<<<<<<<<<<")


def td1_mrz(given: str, surname: str, born: str, number: str, *, male: bool = True) -> tuple[str, ...]:
    """The three lines of a Lithuanian identity card (TD1) for a made-up person, check digits and the personal code in
    the optional data as on the real card (the mrz library writes them; JONAS_MRZ is its output too)."""
    import datetime as dt

    from mrz.generator.td1 import TD1CodeGenerator

    from tests.factories import personal_code

    birth = dt.date.fromisoformat(born)
    code = personal_code(birth, serial=int(number[-3:]), male=male)
    lines = TD1CodeGenerator(
        "ID", "LTU", number, f"{birth:%y%m%d}", "M" if male else "F", "301231", "LTU", surname, given, code
    )
    return tuple(str(lines).split("\n"))


def admit_at_the_door(browser: Any, system: str, receptionist: str, mrz: tuple[str, ...] = JONAS_MRZ) -> None:
    """A visitor admitted at the casino's reception by its receptionist (issue 26): the document scanned, the first
    visit's details confirmed (or the returning visitor found), admitted; the desk and the pit then pick them."""
    screen = Screen(browser, system, ARTIFACTS / "door" / receptionist)
    try:
        screen.login(receptionist)
        page = screen.page
        page.click("#id_scan")
        with page.expect_navigation():
            for line in mrz:
                page.keyboard.type(line)
                page.keyboard.press("Enter")
        if page.locator(".decision.admitted").count() == 0:  # a first visit: the details confirmed, then admitted
            with page.expect_navigation():
                page.click("main button[type=submit]")
        assert page.locator(".decision.admitted").count() == 1, page.inner_text("main")
    finally:
        screen.close()


def pick_visitor(page: Any, name: str = "PETRAITIS") -> None:
    """Today's visitor picked at a desk's or a table's form: the latest admission of that name."""
    option = page.locator("#id_visitor option", has_text=name).first
    page.select_option("#id_visitor", value=option.get_attribute("value"))

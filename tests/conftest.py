from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.db import transaction
from django.db.backends.postgresql.operations import DatabaseOperations
from django.test import Client

from machines.models import Casino, Machine
from tests.factories import CasinoFactory, MachineFactory, key_for
from tickets.models import Ticket

_flush = DatabaseOperations.execute_sql_flush


def _flush_past_the_append_only_triggers(self: DatabaseOperations, sql_list: list[str]) -> None:
    """The flush between transactional tests TRUNCATEs every table, which the append-only tables refuse.

    The suite connects as a superuser and switches triggers off for the flush's
    transaction alone, as any superuser could (what catches that in production
    is the register's keyed chain and its anchors, not the triggers).
    """
    with transaction.atomic(using=self.connection.alias):
        with self.connection.cursor() as cursor:
            cursor.execute("SET LOCAL session_replication_role = replica")
        _flush(self, sql_list)


DatabaseOperations.execute_sql_flush = _flush_past_the_append_only_triggers  # type: ignore[method-assign]


class MachineClient:
    """A slot machine talking to the API with its key."""

    def __init__(self, machine: Machine) -> None:
        self.machine = machine
        self.client = Client(HTTP_AUTHORIZATION=f"Bearer {key_for(machine)}")
        self._counter = 0

    def next_id(self) -> str:
        self._counter += 1
        return f"{self.machine.asset_number}-req-{self._counter}"

    def post(self, path: str, body: Any) -> Any:
        return self.client.post(f"/api/v1/{path}", body, content_type="application/json")

    def get(self, path: str) -> Any:
        return self.client.get(f"/api/v1/{path}")

    def issue(self, amount: str = "12.50", **extra: Any) -> Any:
        return self.post("tickets/issue", {"request_id": self.next_id(), "amount": amount, **extra})

    def printed(self, number: str, result: str = "printed", **extra: Any) -> Any:
        return self.post(f"tickets/{number}/printed", {"request_id": self.next_id(), "result": result, **extra})

    def authorize(self, number: str) -> Any:
        return self.post(f"tickets/{number}/authorize", {"request_id": self.next_id()})

    def commit(self, number: str, result: str = "accepted", **extra: Any) -> Any:
        return self.post(f"tickets/{number}/commit", {"request_id": self.next_id(), "result": result, **extra})

    def issued_ticket(self, amount: str = "12.50", **extra: Any) -> str:
        """A ticket printed by this machine and valid: state `issued`."""
        response = self.issue(amount, **extra)
        assert response.status_code == 201, response.json()
        number = response.json()["validation_number"]
        assert self.printed(number).status_code == 200
        return str(number)


@pytest.fixture
def casino(db: None) -> Casino:
    return CasinoFactory(code="TOR", name="Casino Tornado", address="Demo g. 1, Vilnius")


@pytest.fixture
def other_casino(db: None) -> Casino:
    return CasinoFactory(code="ADM", name="Casino Admiral")


@pytest.fixture
def machine(casino: Casino) -> Machine:
    return MachineFactory(casino=casino, asset_number="1001")


@pytest.fixture
def api(machine: Machine) -> MachineClient:
    return MachineClient(machine)


@pytest.fixture
def make_api(casino: Casino) -> Callable[..., MachineClient]:
    def make(**fields: Any) -> MachineClient:
        fields.setdefault("casino", casino)
        return MachineClient(MachineFactory(**fields))

    return make


@pytest.fixture
def table_counts() -> Callable[[], dict[str, int]]:
    """Row counts of every table a machine request can write to."""
    from tickets.models import LookupFailure, MachineRequest, TicketEvent

    def counts() -> dict[str, int]:
        return {
            "tickets": Ticket.objects.count(),
            "events": TicketEvent.objects.count(),
            "requests": MachineRequest.objects.count(),
            "lookup_failures": LookupFailure.objects.count(),
        }

    return counts


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings: Any) -> None:
    # PBKDF2's deliberate slowness buys nothing in tests.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def _no_machine_kept_from_another_test() -> None:
    # A machine kept in memory is proved current before it is used, but a test counting statements must not
    # depend on what the tests before it left there.
    from tickets.api.auth import forget_kept_machines

    forget_kept_machines()


# --- The second factor at the suite's logins -------------------------------


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "real_second_factor: Client.force_login/login give no second factor")


# --- Slow tests, left out of `make test-fast` --------------------------------

# Every test in these folders is slow: tests/browser drives Chromium against a live server, tests/ops runs the
# deployment (scripts, gunicorn, nginx, scratch databases). A new test there is slow without anyone marking it;
# elsewhere a slow test says so in its own file (`pytestmark = pytest.mark.slow` or `@pytest.mark.slow`).
SLOW_FOLDERS = [Path(__file__).parent / "browser", Path(__file__).parent / "ops"]


# Of the slow tests, those that run alone, after all the others (`make test`'s second phase): they start servers,
# browsers, Celery workers or database clusters of their own, use the one Redis, or write files other tests read.
# Every other slow test (migrations back and forth, the race storm, the state machine, fuzzing in-process) works on
# its xdist worker's own database and runs on every core with the rest.
ALONE_MODULES = {
    "test_database_restart.py",  # a throwaway cluster, restarted
    "test_simulate_floor.py",  # gunicorn and the simulator
    "test_log_secrets.py",  # gunicorn, Celery and their logs
    "test_worker_death.py",  # a Celery worker on Redis, killed
    "test_celery_worker.py",  # a Celery worker on Redis
    "test_settings.py",  # manage.py in subprocesses
    "test_i18n.py",  # gettext writing catalogs
}


# Slow tests of those folders that share nothing with any other test (a scratch database named afresh, files under
# their own tmp_path, subprocesses of their own and no server): they run on every core with the rest.
SHARES_NOTHING = {"test_upgrade_from_the_previous_release"}


@pytest.hookimpl(tryfirst=True)  # before `-m "not slow"` deselects
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if any(item.path.is_relative_to(folder) for folder in SLOW_FOLDERS):
            item.add_marker(pytest.mark.slow)
            if getattr(item, "originalname", item.name) not in SHARES_NOTHING:
                item.add_marker(pytest.mark.alone)
        elif item.path.name in ALONE_MODULES and item.get_closest_marker("slow"):
            item.add_marker(pytest.mark.alone)


@pytest.fixture(autouse=True)
def _second_factor_given_at_login(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Client.force_login (and Client.login) also give the second factor of those who need one.

    Supervisors, compliance officers, managers and admins log in with a TOTP code too; most tests are
    about what they do once logged in, so logging them in here gives them a confirmed TOTP device and
    marks the session verified (django_otp's DEVICE_ID_SESSION_KEY), as the second-factor page does.
    The second factor itself is tested in tests/staff/test_login_security.py, through the real login
    and second-factor pages; a test marked `real_second_factor` gets the plain, unverified login.
    """
    if request.node.get_closest_marker("real_second_factor"):
        return
    from django.contrib.auth import SESSION_KEY, get_user_model
    from django.http import HttpRequest
    from django_otp import DEVICE_ID_SESSION_KEY
    from django_otp.plugins.otp_totp.models import TOTPDevice

    from staff.login import needs_second_factor

    force_login, login = Client.force_login, Client.login

    def give_second_factor(client: Client, user: Any) -> None:
        if not needs_second_factor(user):
            return
        device = TOTPDevice.objects.filter(user=user, confirmed=True).first()
        if device is None:
            device = TOTPDevice.objects.create(user=user, name="test", confirmed=True)
        session = client.session
        session[DEVICE_ID_SESSION_KEY] = device.persistent_id
        session.save()

    def force_login_verified(self: Client, user: Any, backend: str | None = None) -> None:
        force_login(self, user, backend)
        give_second_factor(self, user)

    def login_verified(self: Client, **credentials: Any) -> bool:
        if "request" not in credentials:  # axes counts failures per request: it needs one
            credentials["request"] = HttpRequest()
            credentials["request"].META["REMOTE_ADDR"] = "127.0.0.1"
        if not login(self, **credentials):
            return False
        give_second_factor(self, get_user_model().objects.get(pk=self.session[SESSION_KEY]))
        return True

    monkeypatch.setattr(Client, "force_login", force_login_verified)
    monkeypatch.setattr(Client, "login", login_verified)


@pytest.fixture(scope="session")
def django_db_setup(
    request: pytest.FixtureRequest,
    django_test_environment: None,
    django_db_blocker: Any,
    django_db_modify_db_settings: None,
) -> Any:
    """The test database as a copy of the template migrated once for these migrations (as the browser's and the
    simulator's systems are: tests.reliability.processes.migrate_fresh), on this machine's PostgreSQL: each xdist
    worker and each phase of `make test` saves about a minute of migrating. Django's setup then keeps it (every
    migration is found applied). On another server, Django creates and migrates it as usual."""
    import os

    import psycopg
    from django.db import connections
    from django.test.utils import setup_databases, teardown_databases

    from tests.reliability.processes import ADMIN_URL, migrate_fresh

    connection = connections["default"]
    local = "postgres://postgres@127.0.0.1:5432/"
    verbosity = request.config.option.verbose
    if connection.vendor != "postgresql" or not os.environ.get("DATABASE_URL", "").startswith(local):
        with django_db_blocker.unblock():
            made = setup_databases(verbosity=verbosity, interactive=False)
        yield
        with django_db_blocker.unblock():
            teardown_databases(made, verbosity=verbosity)
        return
    name = connection.creation._get_test_db_name()
    with psycopg.connect(ADMIN_URL, autocommit=True) as admin:
        if admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone() is None:
            admin.execute(f'CREATE DATABASE "{name}"')
    migrate_fresh({**os.environ, "DATABASE_URL": local + name})
    with django_db_blocker.unblock():
        setup_databases(verbosity=verbosity, interactive=False, keepdb=True)
    yield

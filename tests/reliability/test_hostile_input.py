"""Hostile input never makes a 500: each request a probe answered with a server error, then every form."""

import datetime as dt
import io
from decimal import Decimal
from html.parser import HTMLParser

import pytest
from axes.models import AccessAttempt
from django.test import Client

from cashdesk import services as desk_services
from machines.models import Place
from staff.models import StaffAssignment
from tests.factories import MachineFactory, key_for, make_user


def _client(user=None) -> Client:
    client = Client(raise_request_exception=False)
    if user is not None:
        client.force_login(user)
    return client


@pytest.fixture
def cashier_shift(casino):
    cashier = make_user("hostile-cashier", "cashier")
    StaffAssignment.objects.create(user=cashier, casino=casino)
    desk = Place.objects.create(casino=casino, code="K1", name="Kasa 1", cash_limit=Decimal("500000.00"))
    shift = desk_services.shift_open(desk=desk, cashier=cashier, counted={"cash": Decimal("1000.00")})
    return cashier, shift


@pytest.fixture
def officer(casino):
    user = make_user("hostile-officer", "compliance_officer")
    StaffAssignment.objects.create(user=user, casino=casino)
    return user


def test_language_switch_with_a_bare_word_as_next_lands_at_home(db):
    """`next=x` was a 500: redirect() took the bare word for a view name (NoReverseMatch)."""
    response = _client().post("/language/", {"language": "en", "next": "x"})
    assert response.status_code == 302
    assert response["Location"] == "/"


@pytest.mark.parametrize("path", ["/accounts/login/", "/admin/login/"])
def test_login_with_a_username_over_255_characters_is_refused_and_counted(db, path):
    """A username over 255 characters was a 500 (axes could not store the failed try in its varchar(255))."""
    username = "a" * 300
    response = _client().post(path, {"username": username, "password": "wrong"})
    assert response.status_code == 200  # the login form again, with its error
    attempt = AccessAttempt.objects.get()
    assert attempt.failures_since_start == 1
    assert attempt.username == username[:255]


def test_login_lockout_counts_long_usernames_as_one_account(db, settings):
    """Each long try counts against the same (truncated) account: varying the tail past 255 gains nothing."""
    for tail in range(settings.AXES_FAILURE_LIMIT):
        _client().post(
            "/accounts/login/",
            {"username": "b" * 255 + str(tail), "password": "wrong"},
            REMOTE_ADDR=f"10.0.0.{tail + 1}",
        )
    response = _client().post(
        "/accounts/login/", {"username": "b" * 255 + "x", "password": "wrong"}, REMOTE_ADDR="10.0.1.1"
    )
    assert response.status_code == 429


def test_handpay_detail_with_a_nul_in_the_path_is_a_json_404(casino):
    """GET /api/v1/handpays/%00 was a 500 (PostgreSQL refuses NUL in a string literal)."""
    machine = MachineFactory(casino=casino)
    client = Client(HTTP_AUTHORIZATION=f"Bearer {key_for(machine)}", raise_request_exception=False)
    response = client.get("/api/v1/handpays/%00")
    assert response.status_code in (400, 404)
    assert response["Content-Type"].startswith("application/json")


def test_desk_pay_with_a_nul_in_the_number_is_refused(cashier_shift):
    """POST /desk/ticket/pay/ with a NUL in `number` was a 500 (the lookup of the ticket to show again)."""
    cashier, _shift = cashier_shift
    response = _client(cashier).post("/desk/ticket/pay/", {"number": "1234\x005678", "operation_key": "k"})
    assert response.status_code < 500
    assert response.status_code in (200, 302, 400)


def _with_purpose(user) -> Client:
    client = _client(user)
    client.post("/compliance/purpose/", {"purpose": "AML review", "next": "/compliance/"})
    return client


def test_register_export_with_a_nul_in_the_format_is_a_form_error(officer):
    """POST /compliance/export/ with a NUL in `format` was a 500 (the access log's row could not be stored)."""
    response = _with_purpose(officer).post("/compliance/export/", {"format": "csv\x00"})
    assert response.status_code == 400


def test_register_export_with_an_unknown_format_is_a_form_error(officer):
    """An unknown format was served as CSV and written to the access log as asked."""
    response = _with_purpose(officer).post("/compliance/export/", {"format": "xlsx"})
    assert response.status_code == 400
    assert b"format" in response.content.lower() or b"choice" in response.content.lower()


def test_self_exclusion_csv_with_a_field_over_128_kib_is_a_form_error(officer):
    """A field over csv's 128 KiB field limit was a 500 (csv.Error escaped the import)."""
    data = b"personal_code\n" + b"3" * (200 * 1024) + b"\n"
    upload = io.BytesIO(data)
    upload.name = "list.csv"
    response = _client(officer).post(
        "/compliance/self-exclusion/", {"list_date": dt.date(2026, 12, 1).isoformat(), "file": upload}
    )
    assert response.status_code == 200
    assert response.context["form"].errors["file"]


# --- Every page of the role table, as its role, every form posted with hostile values ---------------

HOSTILE_VALUES = {
    "nul": "1\x002",
    "long": "9" * 10_000,
    "unicode": "\u202e\ufeff\U0001f4a9\u0301ł\ud7ff\u2028<script>'\"",
    "huge": "1" + "0" * 40,
    "exponent": "1e999999",
    "negative": "-0.001",
}


class _Forms(HTMLParser):
    """The forms of a page: (method, action, field names)."""

    def __init__(self) -> None:
        super().__init__()
        self.forms: list[tuple[str, str, set[str]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        if tag == "form":
            self.forms.append(((attributes.get("method") or "get").lower(), attributes.get("action") or "", set()))
        elif tag in ("input", "select", "textarea", "button") and self.forms and attributes.get("name"):
            name = attributes["name"]
            if name != "csrfmiddlewaretoken":
                self.forms[-1][2].add(str(name))


def _forms_of(html: str) -> list[tuple[str, str, set[str]]]:
    parser = _Forms()
    parser.feed(html)
    return parser.forms


@pytest.fixture
def role_clients(casino):
    from tests.reliability.test_security import ROLES

    desk = Place.objects.create(casino=casino, code="K1", name="Kasa 1", cash_limit=Decimal("500000.00"))
    Place.objects.create(casino=casino, code="V", name="Vault", kind=Place.Kind.VAULT)
    result = {"anonymous": _client()}
    for role in ROLES[1:]:
        user = make_user(f"hostile-{role}", *([] if role == "nobody" else [role]))
        StaffAssignment.objects.create(user=user, casino=casino)
        if role == "cashier":
            desk_services.shift_open(desk=desk, cashier=user, counted={"cash": Decimal("1000.00")})
        client = _client(user)
        if role in ("compliance_officer", "manager"):
            client.post("/compliance/purpose/", {"purpose": "AML review", "next": "/compliance/"})
        result[role] = client
    return result


@pytest.mark.slow
def test_every_page_and_form_of_the_role_table_takes_hostile_values_without_a_5xx(role_clients):
    """Each URL of the role table (tests/reliability/test_security.py) as a role it admits: the page, then
    each of its forms (and the URL itself for POST-only URLs) with every field set to each hostile value,
    also sent twice (an array)."""
    from tests.reliability.test_security import TABLE, _urls

    failures: list[str] = []
    requests = 0

    def check(client: Client, method: str, path: str, data: dict[str, object]) -> None:
        nonlocal requests
        requests += 1
        response = getattr(client, method)(path, data)
        if response.status_code >= 500:
            failures.append(f"{method.upper()} {path} {sorted(data)[:6]} -> {response.status_code}")

    for name, path in _urls():
        method, allowed = TABLE[name]
        if allowed == "machine":
            continue  # the machine API's hostile input: tests/api and tests/reliability/test_fuzz_api.py
        roles = ["anonymous"] if allowed in ("open", "any") else sorted(allowed - {"anonymous"})
        for role in roles[:2]:
            client = role_clients[role]
            forms = [("post", path, {"number", "amount", "operation_key", "note", "reason", "format"})]
            if method == "GET":
                page = client.get(path)
                if page.status_code >= 500 and not (name == "health" and page.status_code == 503):  # no workers here
                    failures.append(f"GET {path} as {role} -> {page.status_code}")
                if page.status_code == 200 and "html" in page.get("Content-Type", ""):
                    forms += _forms_of(page.content.decode())
            for form_method, action, fields in forms:
                target = action or path
                if not target.startswith("/") or not fields:
                    continue
                for value in HOSTILE_VALUES.values():
                    check(client, form_method, target, dict.fromkeys(fields, value))
                check(client, form_method, target, {field: ["1", HOSTILE_VALUES["unicode"]] for field in fields})
    assert requests > 200
    assert not failures, failures

"""Security: every URL against every role, secrets never in the logs."""

import logging
import re

import pytest
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver

from staff.models import StaffAssignment
from tests.factories import MachineFactory, key_for, make_user

ROLES = [
    "anonymous",
    "nobody",
    "cashier",
    "floor_attendant",
    "pit_supervisor",
    "shift_supervisor",
    "compliance_officer",
    "manager",
    "security_officer",
    "counter",
    "count_supervisor",
    "receptionist",
]
EVERYONE = set(ROLES)
STAFF = EVERYONE - {"anonymous"}

# URL name -> (method, roles allowed). "machine": the machine API (its own key, tested in tests/api).
# Admin pages admit only Django staff accounts; none of the roles is one.
TABLE: dict[str, tuple[str, set[str] | str]] = {
    "home": ("GET", STAFF - {"nobody"}),  # a user without a role is told so (403)
    "login": ("GET", EVERYONE),
    "logout": ("POST", "any"),  # everyone may log out; it always lands on the login page
    "set-language": ("POST", "open"),  # the language switch, on the login page too; stores only a choice
    "dashboard": ("GET", {"shift_supervisor", "manager"}),
    "health": ("GET", "open"),  # for probes; states and counts only (tests/ops)
    "desk": ("GET", {"cashier"}),
    "desk-ticket": ("POST", {"cashier"}),  # a scan: the number in the body, never in the address
    "desk-ticket-pay": ("POST", {"cashier"}),
    "desk-ticket-hold": ("POST", {"cashier"}),
    "desk-sell": ("GET", {"cashier"}),
    "desk-chips": ("GET", {"cashier"}),
    "desk-tokens": ("GET", {"cashier"}),
    "desk-smartcard": ("GET", {"cashier"}),
    "desk-receipt-payout": ("GET", {"cashier"}),
    "desk-transfer": ("GET", {"cashier"}),
    "desk-reversal": ("GET", {"cashier"}),
    "desk-close": ("GET", {"cashier"}),
    "desk-handover": ("GET", {"cashier"}),
    "desk-take-over": ("GET", {"cashier"}),  # only the cashier it is handed over to (per object, 404 otherwise)
    "desk-transaction": ("GET", {"cashier", "shift_supervisor"}),
    "shift-summary": ("GET", {"cashier", "shift_supervisor", "manager"}),
    "receipt-pdf": ("GET", {"cashier", "shift_supervisor", "manager"}),  # a cashier: only his own (per object)
    "voucher-pdf": ("GET", {"cashier"}),  # only its seller while the shift is open; supervisors reprint a copy
    "shift-report-pdf": ("GET", {"cashier", "shift_supervisor", "manager"}),
    "machine-receipt-pdf": ("GET", {"cashier", "floor_attendant"}),
    "floor-receipts": ("GET", {"floor_attendant"}),
    "floor-receipt-pdf": ("GET", {"floor_attendant"}),  # only receipts he wrote or confirmed (per object)
    "floor-handpay-confirm": ("POST", {"floor_attendant"}),
    "kiosks": ("GET", {"floor_attendant", "shift_supervisor"}),
    "kiosk-fill": ("POST", {"floor_attendant", "shift_supervisor"}),
    "kiosk-drop": ("POST", {"floor_attendant", "shift_supervisor"}),
    "kiosk-approve": ("POST", {"shift_supervisor"}),
    "kiosk-cancel": ("POST", {"floor_attendant", "shift_supervisor"}),  # who asked, or a supervisor (per object)
    "pit": ("GET", {"pit_supervisor", "shift_supervisor"}),
    # The count room (issue 25): the drop team, the count team.
    "count-room": ("GET", {"floor_attendant", "security_officer", "counter", "count_supervisor"}),
    "count-drop": ("GET", {"floor_attendant", "security_officer", "counter", "count_supervisor"}),
    "count-approve": ("POST", {"count_supervisor"}),  # never who counted or dropped (per object, in the service)
    "count-box": ("GET", {"counter", "count_supervisor"}),
    "table-sign-pdf": ("GET", {"pit_supervisor", "shift_supervisor", "manager"}),
    "pit-table-open": ("GET", {"pit_supervisor", "shift_supervisor"}),  # a table of the staff's casino (404 otherwise)
    "pit-session": ("GET", {"pit_supervisor", "shift_supervisor"}),
    "pit-buy-in": ("GET", {"pit_supervisor", "shift_supervisor"}),
    "pit-exchange": ("GET", {"pit_supervisor", "shift_supervisor"}),
    "pit-table-close": ("GET", {"pit_supervisor", "shift_supervisor"}),
    "pit-colour-chips": ("GET", {"pit_supervisor", "shift_supervisor"}),
    "pit-limits": ("GET", {"manager"}),
    "pit-slip-request": ("GET", {"pit_supervisor", "shift_supervisor"}),
    "slip-issue": ("POST", {"cashier", "shift_supervisor"}),  # the cage's cashier, or a supervisor at the vault
    "slip-confirm": ("POST", {"pit_supervisor", "shift_supervisor"}),
    "slip-void-ask": ("POST", {"pit_supervisor", "cashier", "shift_supervisor"}),
    "slip-void": ("POST", {"shift_supervisor"}),
    "slip-pdf": ("GET", {"pit_supervisor", "cashier", "shift_supervisor"}),
    "pit-colour-back": ("GET", {"pit_supervisor", "shift_supervisor"}),
    "supervisor": ("GET", {"shift_supervisor", "compliance_officer", "manager"}),  # a manager: the held tickets only
    "approve-transfer": ("POST", {"shift_supervisor"}),
    "approve-reversal": ("POST", {"shift_supervisor"}),
    "approve-count": ("POST", {"shift_supervisor"}),  # never who counted (per object)
    "reject-count": ("POST", {"shift_supervisor"}),
    "decide-hold": ("POST", {"shift_supervisor", "compliance_officer", "manager"}),  # a manager: past the decision day
    "resolve-stuck": ("POST", {"shift_supervisor"}),
    "void-ticket": ("POST", {"shift_supervisor"}),
    "reprint-voucher": ("POST", {"shift_supervisor"}),
    "void-handpay": ("POST", {"shift_supervisor"}),
    "confirm-receipt": ("POST", {"shift_supervisor"}),
    "unlock-receipt": ("POST", {"shift_supervisor"}),
    "supervisor-vault": ("GET", {"shift_supervisor"}),
    "lockouts": ("GET", {"shift_supervisor"}),
    "change-log": ("GET", {"compliance_officer", "manager"}),
    "lockout-lift": ("POST", {"shift_supervisor"}),
    "second-factor": ("GET", STAFF),  # those who need no code, or gave it, are sent on (tests/staff)
    "desk-smartcard-load": ("GET", {"cashier"}),
    "reports": ("GET", {"shift_supervisor", "manager"}),
    "gaming-day-pdf": ("GET", {"shift_supervisor", "manager"}),
    "gaming-day-close": ("POST", {"manager"}),
    "gaming-day-adjust": ("POST", {"manager"}),
    "compliance-register": ("GET", {"compliance_officer", "manager"}),
    "compliance-purpose": ("GET", {"compliance_officer", "manager"}),
    "compliance-person": ("GET", {"compliance_officer"}),  # personal codes and documents: not for managers
    "compliance-export": ("GET", {"compliance_officer"}),  # personal codes and documents: not for managers
    "compliance-fcis": ("GET", {"compliance_officer"}),  # personal codes and documents: not for managers
    "compliance-alerts": ("GET", {"compliance_officer", "manager"}),
    "compliance-alert-action": ("POST", {"compliance_officer"}),
    "compliance-self-exclusion": ("GET", {"compliance_officer"}),
    "compliance-access-log": ("GET", {"compliance_officer"}),
    "api-schema": ("GET", EVERYONE),
    "api-docs": ("GET", EVERYONE),
    "api-redoc": ("GET", EVERYONE),
    "ticket-issue": ("POST", "machine"),
    "ticket-printed": ("POST", "machine"),
    "ticket-authorize": ("POST", "machine"),
    "ticket-commit": ("POST", "machine"),
    "ticket-detail": ("GET", "machine"),
    "validation-pool": ("POST", "machine"),
    "ticket-offline": ("POST", "machine"),
    "meters": ("POST", "machine"),
    "api-handpay-request": ("POST", "machine"),
    "api-handpay-detail": ("GET", "machine"),
    # The door (issue 26): the receptionist's screen and visit cards; the manager's bars.
    "reception": ("GET", {"receptionist"}),
    "reception-visit-card": ("GET", {"receptionist"}),  # a visit of the staff's casino (404 otherwise)
    "reception-bars": ("GET", {"manager"}),
    "reception-bar-lift": ("POST", {"manager"}),
    "compliance-door": ("GET", {"compliance_officer", "manager"}),  # counts by day and reason, no person named
}


def _walk(patterns, prefix=""):
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            yield from _walk(pattern.url_patterns, prefix + str(pattern.pattern))
        elif isinstance(pattern, URLPattern):
            yield prefix + str(pattern.pattern), pattern.name


def _urls():
    for route, name in _walk(get_resolver().url_patterns):
        if route.startswith("admin/") or name is None:
            continue
        path = "/" + re.sub(r"<(?:int|str):[a-z_]+>", "1", route).replace("^", "").replace("$", "")
        if name == "compliance-alert-action":
            path = path.replace("/1/1/", "/1/review/")
        yield name, path


def test_every_url_has_a_row_in_the_table():
    named = {name for name, _ in _urls()}
    assert named == set(TABLE), {"missing": named - set(TABLE), "stale": set(TABLE) - named}


@pytest.fixture
def clients(casino):
    result = {"anonymous": Client()}
    for role in ROLES[1:]:
        user = make_user(f"sec-{role}", *([] if role == "nobody" else [role]))
        StaffAssignment.objects.create(user=user, casino=casino)
        client = Client()
        client.force_login(user)
        result[role] = client
    return result


@pytest.mark.parametrize(("name", "path"), list(_urls()), ids=[name for name, _ in _urls()])
def test_each_url_admits_exactly_its_roles(clients, name, path):
    method, allowed = TABLE[name]
    for role, client in clients.items():
        response = getattr(client, method.lower())(path)
        if allowed == "any":
            assert response.status_code == 302, role
            continue
        if allowed == "open":  # no login needed, nobody refused (what it accepts is tested with the feature)
            assert response.status_code != 403, role
            assert not (response.status_code == 302 and "/accounts/login/" in response["Location"]), role
            continue
        if allowed == "machine":
            assert response.status_code == 401, (role, response.status_code)  # staff sessions are no machine key
            continue
        if role in allowed:
            assert response.status_code != 403, (role, path)
            assert not (response.status_code == 302 and "/accounts/login/" in response["Location"]), (role, path)
        elif role == "anonymous":
            assert response.status_code == 302, path
            assert "/accounts/login/" in response["Location"], path
        else:
            assert response.status_code == 403, (role, path, response.status_code)


def test_admin_admits_only_staff_accounts(clients, db):
    for role, client in clients.items():
        assert client.get("/admin/").status_code == 302, role
    admin = make_user("sec-admin")
    admin.is_staff = admin.is_superuser = True
    admin.save()
    client = Client()
    client.force_login(admin)
    assert client.get("/admin/").status_code == 200


def test_keys_and_passwords_never_reach_the_logs(casino, caplog):
    caplog.set_level(logging.DEBUG)
    machine = MachineFactory(casino=casino)
    key = key_for(machine)
    Client(HTTP_AUTHORIZATION=f"Bearer {key}").post(
        "/api/v1/tickets/issue", {"request_id": "x", "amount": "1.00"}, content_type="application/json"
    )
    Client(HTTP_AUTHORIZATION="Bearer guessed-key-123456").get("/api/v1/tickets/000000000000000000")
    password = "S3cret-password-for-log-test"
    make_user("logged", "cashier").set_password(password)
    Client().post("/accounts/login/", {"username": "logged", "password": password})
    Client().post("/accounts/login/", {"username": "logged", "password": password + "x"})
    text = "\n".join(record.getMessage() for record in caplog.records)
    assert caplog.records  # the requests were logged at all
    for secret in (key, "guessed-key-123456", password):
        assert secret not in text

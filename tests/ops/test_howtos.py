"""docs/operations.md's how-tos (issue 21), done as the guide says: the first admin, a casino, its desks, a
machine and a kiosk through the admin, a member of staff, and rotating SECRET_KEY."""

import io
import json
import os
import re
import shlex
import subprocess
import sys
from html.parser import HTMLParser
from typing import Any

import pytest
from django.contrib.auth.models import Group, User
from django.core.management import CommandError, call_command
from django.test import Client

from machines.models import Casino, Machine, Place
from staff.models import StaffAssignment, StaffPreference
from tests.ops.test_guide import section_commands
from tests.reliability.processes import ROOT, current_database_url

PASSWORD = "Kasos-Darbas-2027!"


def _manage_py(command: str) -> tuple[str, list[str]]:
    """`.venv/bin/python manage.py <name> <args>` of the guide as call_command's name and arguments."""
    tokens = shlex.split(command)
    assert tokens[:2] == [".venv/bin/python", "manage.py"], command
    return tokens[2], tokens[3:]


class _Form(HTMLParser):
    """The fields an admin add page sends as it stands: inputs' values, checked boxes, selected options."""

    def __init__(self) -> None:
        super().__init__()
        self.data: dict[str, Any] = {}
        self._select: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        name = found.get("name")
        if tag == "input" and name and found.get("type") not in ("submit", "button", "file"):
            if found.get("type") == "checkbox":
                if "checked" in found:
                    self.data[name] = "on"
            else:
                self.data[name] = found.get("value") or ""
        elif tag == "textarea" and name:
            self.data[name] = ""
        elif tag == "select" and name:
            self._select = name
            if "multiple" not in found:  # a multiple choice left empty sends nothing
                self.data.setdefault(name, "")
        elif tag == "option" and self._select and "selected" in found:
            self.data[self._select] = found.get("value") or ""

    def handle_endtag(self, tag: str) -> None:
        if tag == "select":
            self._select = None


def _admin_add(client: Client, model: str, **values: Any) -> None:
    """Fill in the admin's add page of `model` (app/model) as a person does, leaving the defaults, and save it."""
    path = f"/admin/{model}/add/"
    page = client.get(path)
    assert page.status_code == 200, page.status_code
    form = _Form()
    form.feed(page.content.decode())
    response = client.post(path, {**form.data, **values})
    errors = re.findall(r'<ul class="errorlist[^"]*"[^>]*>(.*?)</ul>', response.content.decode(), flags=re.S)
    assert response.status_code == 302, errors


@pytest.fixture
def admin_client(db, monkeypatch) -> Client:
    """The first admin, made with the guide's command at a terminal, logged in to the admin."""
    name, args = _manage_py(section_commands("The first admin")[0])
    assert name == "createsuperuser"
    answers = iter(["short", "short", PASSWORD, PASSWORD])  # a refused password, then a good one twice
    monkeypatch.setattr(
        "django.contrib.auth.management.commands.createsuperuser.getpass.getpass", lambda prompt="": next(answers)
    )
    monkeypatch.setattr("builtins.input", lambda prompt="": "N")  # "Bypass password validation?" No.

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    out = io.StringIO()
    call_command("createsuperuser", *args, stdin=Terminal(), stdout=out, stderr=out)
    assert "This password is too short" in out.getvalue()
    admin = User.objects.get(username="admin")
    assert admin.is_superuser
    assert admin.check_password(PASSWORD)
    client = Client()
    assert client.login(username="admin", password=PASSWORD)
    return client


def test_a_casino_its_desk_vault_machine_and_kiosk_are_added_in_the_admin(admin_client):
    _admin_add(
        admin_client,
        "machines/casino",
        code="TOR",
        name="Casino Tornado",
        address="Gedimino pr. 1, Vilnius",
        licence_number="L-0001",
    )
    casino = Casino.objects.get(code="TOR")
    _admin_add(admin_client, "machines/place", casino=casino.pk, code="K1", name="Kasa 1", kind="desk")
    _admin_add(admin_client, "machines/place", casino=casino.pk, code="V", name="Seifas", kind="vault")
    machine_fields = {
        "casino": casino.pk,
        "manufacturer": "Novomatic",
        "model_name": "Gaminator",
        "ticket_enrolled": "on",
    }
    _admin_add(admin_client, "machines/machine", asset_number="1009", serial_number="SN-1009", **machine_fields)
    _admin_add(
        admin_client,
        "machines/machine",
        asset_number="9009",
        serial_number="SN-9009",
        kind="kiosk",
        **{**machine_fields, "manufacturer": "Demo Kiosk"},
    )
    assert set(Place.objects.filter(casino=casino).values_list("code", "kind")) == {("K1", "desk"), ("V", "vault")}
    assert Machine.objects.get(casino=casino, asset_number="9009").is_kiosk

    name, args = _manage_py(section_commands("A machine or a kiosk")[0])
    assert name == "machine_key"
    out = io.StringIO()
    call_command("machine_key", *args, stdout=out)
    key = re.search(r"[A-Za-z0-9_-]{32,}", out.getvalue())
    assert key, out.getvalue()
    issued = Client().post(
        "/api/v1/tickets/issue",
        json.dumps({"request_id": "first-cashout", "amount": "12.50"}),
        content_type="application/json",
        headers={"authorization": f"Bearer {key.group()}"},
    )
    assert issued.status_code == 201, issued.content


def test_a_member_of_staff_is_created_as_the_guide_says_and_logs_in(casino_tor, monkeypatch):
    name, args = _manage_py(section_commands("A member of staff")[0])
    assert name == "staff_create"
    monkeypatch.setattr(sys, "stdin", io.StringIO(PASSWORD + "\n"))  # a script's standard input
    out = io.StringIO()
    call_command("staff_create", *args, stdout=out)
    assert out.getvalue() == "ona-tor: cashier at TOR (Casino Tornado) created.\n"
    user = User.objects.get(username="ona-tor")
    assert list(user.groups.values_list("name", flat=True)) == ["cashier"]
    assert StaffAssignment.objects.get(user=user).casino == casino_tor
    assert StaffPreference.objects.get(user=user).language == "lt"
    client = Client()
    response = client.post("/accounts/login/", {"username": "ona-tor", "password": PASSWORD})
    assert response.status_code == 302
    assert client.get("/", follow=True).request["PATH_INFO"].startswith("/desk/")


@pytest.mark.parametrize(
    ("argv", "password", "message"),
    [
        (["ona-tor", "--role", "cashier", "--casino", "XYZ"], PASSWORD, "no casino with the code 'XYZ'"),
        (["ona-tor", "--role", "croupier", "--casino", "TOR"], PASSWORD, "No role croupier"),
        (["ona-tor", "--role", "cashier", "--casino", "TOR", "--language", "de"], PASSWORD, "No language de"),
        (["ona-tor", "--role", "cashier", "--casino", "TOR"], "short", "This password is too short"),
        (["ona-tor", "--role", "cashier", "--casino", "TOR"], "", "no password given"),
        (["ona tor!", "--role", "cashier", "--casino", "TOR"], PASSWORD, "Enter a valid username"),
        (["kasininke", "--role", "cashier", "--casino", "TOR"], PASSWORD, "A user named kasininke already exists"),
    ],
)
def test_bad_input_creates_nobody_and_says_why(casino_tor, monkeypatch, argv, password, message):
    User.objects.create_user("kasininke", password=PASSWORD)
    monkeypatch.setattr(sys, "stdin", io.StringIO(password + "\n"))
    with pytest.raises(CommandError, match=re.escape(message)):
        call_command("staff_create", *argv)
    assert not User.objects.filter(username__in=["ona-tor", "ona tor!"]).exists()
    assert StaffAssignment.objects.count() == 0


@pytest.mark.django_db(transaction=True)
def test_bad_input_exits_non_zero_with_one_line(casino_tor):
    result = subprocess.run(
        [sys.executable, "manage.py", "staff_create", "ona-tor", "--role", "croupier", "--casino", "TOR"],
        cwd=ROOT,
        env={**os.environ, "DATABASE_URL": current_database_url()},
        input=PASSWORD + "\n",
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 1
    lines = [line for line in result.stderr.splitlines() if line.strip() and "AXES" not in line]
    assert len(lines) == 1, result.stderr
    assert "No role croupier" in lines[0]


@pytest.fixture
def casino_tor(db) -> Casino:
    return Casino.objects.create(
        code="TOR", name="Casino Tornado", address="Gedimino pr. 1, Vilnius", licence_number="L-1"
    )


# --- Rotating SECRET_KEY --------------------------------------------------------------------------------------------


def test_the_fallback_keys_come_from_the_environment(tmp_path):
    result = subprocess.run(
        [
            sys.executable,
            "manage.py",
            "shell",
            "-c",
            "from django.conf import settings; print(settings.SECRET_KEY_FALLBACKS)",
        ],
        cwd=ROOT,
        env={**os.environ, "SECRET_KEY_FALLBACKS": "old-key-one,old-key-two", "CASINO_VAR_DIR": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "['old-key-one', 'old-key-two']"


@pytest.mark.parametrize(("fallbacks", "still_in"), [(True, True), (False, False)], ids=["with-fallback", "leaked"])
def test_rotating_the_secret_key_keeps_sessions_only_with_the_old_key_as_fallback(
    casino_tor, settings, fallbacks, still_in
):
    cashier = User.objects.create_user("ona-tor", password=PASSWORD)
    cashier.groups.add(Group.objects.get(name="cashier"))
    StaffAssignment.objects.create(user=cashier, casino=casino_tor)
    client = Client()
    client.force_login(cashier)
    assert client.get("/desk/").status_code == 200
    old = settings.SECRET_KEY
    settings.SECRET_KEY = "new-" + old
    settings.SECRET_KEY_FALLBACKS = [old] if fallbacks else []
    response = client.get("/desk/")
    assert (response.status_code == 200) is still_in, response.status_code
    if still_in:  # moved to the new key: still in once the fallback is removed
        settings.SECRET_KEY_FALLBACKS = []
        assert client.get("/desk/").status_code == 200
    else:
        assert response.status_code == 302
        assert response["Location"].startswith("/accounts/login/")

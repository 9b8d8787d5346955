"""Logins: throttling and lockout per account and per address, a supervisor lifting a lockout, and the
second factor (TOTP) for shift supervisors, compliance officers, managers and the admin.

These tests log in through the real pages with plain clients; the suite-wide force_login shortcut
(tests/conftest.py) is not used for the user whose second factor is under test.
"""

import base64
import datetime as dt
import logging
import re

import pytest
import time_machine
from django.conf import settings
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command
from django.test import Client, RequestFactory
from django_otp.oath import totp
from django_otp.plugins.otp_totp.models import TOTPDevice

from staff.models import StaffAssignment
from tests.factories import make_user
from tests.i18n_words import english_in

PASSWORD = "correct-horse-battery-staple"  # tests.factories.make_user's
LOGIN = "/accounts/login/"
SECOND_FACTOR = "/accounts/second-factor/"
LOCKOUTS = "/supervisor/lockouts/"
LIFT = "/supervisor/lockouts/lift/"


def staff_member(username: str, casino, *roles: str) -> User:
    user = make_user(username, *roles)
    StaffAssignment.objects.create(user=user, casino=casino)
    return user


def log_in(client: Client, username: str, password: str = PASSWORD, path: str = LOGIN):
    return client.post(path, {"username": username, "password": password})


def logged_in(client: Client) -> bool:
    return "_auth_user_id" in client.session


def fail_logins(client: Client, username: str, times: int, path: str = LOGIN) -> None:
    for _ in range(times):
        log_in(client, username, "not-the-password", path)


def code_for(device: TOTPDevice) -> str:
    device.refresh_from_db()
    return f"{totp(device.bin_key, step=device.step, t0=device.t0, digits=device.digits):0{device.digits}d}"


# --- Throttling and lockout ----------------------------------------------


def test_sixty_wrong_passwords_then_the_right_one_is_refused(casino):
    staff_member("kasininke", casino, "cashier")
    client = Client()
    fail_logins(client, "kasininke", 60)
    response = log_in(client, "kasininke")
    assert response.status_code == 429
    assert not logged_in(client)


def test_the_lockout_holds_for_the_cool_off_and_then_lifts_by_itself(casino):
    staff_member("kasininke", casino, "cashier")
    start = dt.datetime(2026, 12, 3, 9, 0, tzinfo=dt.UTC)
    with time_machine.travel(start, tick=False) as traveller:
        client = Client()
        fail_logins(client, "kasininke", settings.AXES_FAILURE_LIMIT)
        traveller.shift(settings.AXES_COOLOFF_TIME - dt.timedelta(minutes=1))
        assert log_in(client, "kasininke").status_code == 429
        assert not logged_in(client)
        traveller.shift(dt.timedelta(minutes=2))
        assert log_in(client, "kasininke").status_code == 302
        assert logged_in(client)


def test_a_few_typing_errors_are_forgotten_after_a_good_login(casino):
    staff_member("kasininke", casino, "cashier")
    client = Client()
    for _ in range(3):
        fail_logins(client, "kasininke", settings.AXES_FAILURE_LIMIT - 1)
        assert log_in(client, "kasininke").status_code == 302
        client.post("/accounts/logout/")


def test_one_address_is_locked_across_usernames(casino):
    staff_member("kasininke", casino, "cashier")
    terminal = Client(REMOTE_ADDR="10.20.0.7")
    for n in range(settings.AXES_FAILURE_LIMIT):
        log_in(terminal, f"guess-{n}", "not-the-password")
    assert log_in(terminal, "kasininke").status_code == 429
    assert not logged_in(terminal)
    elsewhere = Client(REMOTE_ADDR="10.20.0.8")
    assert log_in(elsewhere, "kasininke").status_code == 302
    assert logged_in(elsewhere)


def test_one_account_is_locked_across_addresses(casino):
    staff_member("kasininke", casino, "cashier")
    for n in range(settings.AXES_FAILURE_LIMIT):
        log_in(Client(REMOTE_ADDR=f"10.20.1.{n + 1}"), "kasininke", "not-the-password")
    fresh = Client(REMOTE_ADDR="10.20.2.1")
    assert log_in(fresh, "kasininke").status_code == 429
    assert not logged_in(fresh)


def test_logging_into_ones_own_account_does_not_clear_the_guesses_at_another(casino):
    staff_member("kasininke", casino, "cashier")
    staff_member("kasininkas", casino, "cashier")
    attacker = Client(REMOTE_ADDR="10.20.0.66")
    fail_logins(attacker, "kasininke", settings.AXES_FAILURE_LIMIT - 1)
    assert log_in(attacker, "kasininkas").status_code == 302  # the attacker's own account
    attacker.post("/accounts/logout/")
    fail_logins(attacker, "kasininke", 1)
    victim = Client(REMOTE_ADDR="10.20.0.67")
    assert log_in(victim, "kasininke").status_code == 429  # the account's guesses were all counted


def test_the_address_is_the_one_nginx_saw(casino):
    from staff.login import client_address

    factory = RequestFactory()
    via_nginx = factory.get("/", REMOTE_ADDR="127.0.0.1", HTTP_X_FORWARDED_FOR="6.6.6.6, 10.20.0.9")
    assert client_address(via_nginx) == "10.20.0.9"  # nginx appends the address it saw; the rest is the client's
    direct = factory.get("/", REMOTE_ADDR="10.20.0.3", HTTP_X_FORWARDED_FOR="10.20.0.4")
    assert client_address(direct) == "10.20.0.3"  # not from the proxy: the header is the client's own words
    assert client_address(factory.get("/", REMOTE_ADDR="10.20.0.5")) == "10.20.0.5"
    assert client_address(factory.get("/", REMOTE_ADDR="127.0.0.1", HTTP_X_FORWARDED_FOR="junk")) == "127.0.0.1"

    # A forged header from an address that is not the proxy changes nothing: every guess counts there.
    staff_member("kasininke", casino, "cashier")
    for n in range(settings.AXES_FAILURE_LIMIT):
        forger = Client(REMOTE_ADDR="10.20.0.99", HTTP_X_FORWARDED_FOR=f"10.99.0.{n}")
        log_in(forger, f"guess-{n}", "not-the-password")
    forger = Client(REMOTE_ADDR="10.20.0.99", HTTP_X_FORWARDED_FOR="10.99.1.1")
    assert log_in(forger, "kasininke").status_code == 429


def test_the_admin_login_is_throttled(db):
    admin = make_user("administratorius")
    admin.is_staff = admin.is_superuser = True
    admin.save()
    client = Client()
    fail_logins(client, "administratorius", 60, path="/admin/login/")
    response = log_in(client, "administratorius", path="/admin/login/")
    assert response.status_code == 429
    assert not logged_in(client)


def test_the_lockout_page_is_in_the_staff_language_and_hides_nothing_secret(casino, settings):
    settings.LANGUAGE_CODE = "lt"
    staff_member("kasininke", casino, "cashier")
    client = Client()
    fail_logins(client, "kasininke", settings.AXES_FAILURE_LIMIT - 1)
    response = log_in(client, "kasininke", "the-last-wrong-password")
    assert response.status_code == 429
    page = response.content.decode()
    assert "the-last-wrong-password" not in page
    assert 'name="password"' not in page  # no login form to keep guessing on
    text = re.sub(r"<[^>]+>", " ", page.split("<main>")[1])
    assert not english_in(text), english_in(text)
    assert "pamainos vadov" in text.lower()  # who can lift it sooner


def test_failed_logins_leave_no_password_in_the_logs_or_the_database(casino, caplog):
    from axes.models import AccessAttempt

    caplog.set_level(logging.DEBUG)
    staff_member("kasininke", casino, "cashier")
    fail_logins(Client(), "kasininke", settings.AXES_FAILURE_LIMIT + 2)
    text = "\n".join(record.getMessage() for record in caplog.records)
    assert "not-the-password" not in text
    assert AccessAttempt.objects.exists()
    for attempt in AccessAttempt.objects.all():
        assert "not-the-password" not in attempt.post_data


def test_the_machine_api_works_while_its_address_is_locked(casino, api):
    from axes.models import AccessAttempt

    staff_member("kasininke", casino, "cashier")
    fail_logins(Client(), "kasininke", settings.AXES_FAILURE_LIMIT)  # 127.0.0.1, the machines' address here
    assert api.issue("5.00").status_code == 201
    before = AccessAttempt.objects.count()
    bad_key = Client(HTTP_AUTHORIZATION="Bearer guessed-key-123456")
    for _ in range(settings.AXES_FAILURE_LIMIT + 1):
        assert bad_key.get("/api/v1/tickets/000000000000000000").status_code == 401
    assert AccessAttempt.objects.count() == before  # machine keys have their own rate limit (tests/api)
    assert api.issue("5.00").status_code == 201


# --- Supervisors lift lockouts -------------------------------------------


def test_a_supervisor_sees_and_lifts_an_account_lockout_then_the_user_logs_in(casino, caplog):
    from staff.models import LockoutLift

    caplog.set_level(logging.INFO)
    staff_member("kasininke", casino, "cashier")
    supervisor = staff_member("pamainosvadove", casino, "shift_supervisor")
    terminal = Client(REMOTE_ADDR="10.20.0.7")
    fail_logins(terminal, "kasininke", settings.AXES_FAILURE_LIMIT)
    assert log_in(terminal, "kasininke").status_code == 429

    boss = Client()
    boss.force_login(supervisor)
    page = boss.get(LOCKOUTS)
    assert page.status_code == 200
    listed = page.content.decode()
    assert "kasininke" in listed
    assert "10.20.0.7" in listed
    assert str(settings.AXES_FAILURE_LIMIT) in listed

    response = boss.post(LIFT, {"kind": "account", "value": "kasininke"})
    assert response.status_code == 302
    lift = LockoutLift.objects.get()
    assert (lift.lifted_by, lift.casino, lift.kind, lift.value) == (supervisor, casino, "account", "kasininke")
    assert lift.failures == settings.AXES_FAILURE_LIMIT
    assert lift.lifted_at is not None
    assert any("lockout lifted" in record.getMessage() for record in caplog.records)
    locked_accounts = boss.get(LOCKOUTS).content.decode().split('id="locked-accounts"')[1].split("</table>")[0]
    assert "kasininke" not in locked_accounts

    assert log_in(terminal, "kasininke").status_code == 302
    assert logged_in(terminal)


def test_a_supervisor_lifts_an_address_lockout(casino):
    from staff.models import LockoutLift

    staff_member("kasininke", casino, "cashier")
    supervisor = staff_member("pamainosvadove", casino, "shift_supervisor")
    terminal = Client(REMOTE_ADDR="10.20.0.8")
    for n in range(settings.AXES_FAILURE_LIMIT):
        log_in(terminal, f"guess-{n}", "not-the-password")
    assert log_in(terminal, "kasininke").status_code == 429

    boss = Client()
    boss.force_login(supervisor)
    assert "10.20.0.8" in boss.get(LOCKOUTS).content.decode()
    assert boss.post(LIFT, {"kind": "address", "value": "10.20.0.8"}).status_code == 302
    assert LockoutLift.objects.get().value == "10.20.0.8"
    assert log_in(terminal, "kasininke").status_code == 302


def test_a_supervisor_sees_and_lifts_only_their_own_casinos_lockouts(casino, other_casino):
    from axes.models import AccessAttempt

    staff_member("kasininke-adm", other_casino, "cashier")
    supervisor = staff_member("pamainosvadove", casino, "shift_supervisor")
    fail_logins(Client(REMOTE_ADDR="10.30.0.1"), "kasininke-adm", settings.AXES_FAILURE_LIMIT)
    boss = Client()
    boss.force_login(supervisor)
    assert "kasininke-adm" not in boss.get(LOCKOUTS).content.decode()
    assert boss.post(LIFT, {"kind": "account", "value": "kasininke-adm"}).status_code == 404
    # The address's failures are all another casino's account's: not this supervisor's to lift either.
    assert boss.post(LIFT, {"kind": "address", "value": "10.30.0.1"}).status_code == 404
    assert AccessAttempt.objects.filter(username="kasininke-adm").count() == 1


@pytest.mark.django_db(transaction=True)
def test_two_supervisors_lifting_at_once_forget_the_failures_once(casino):
    from staff.models import LockoutLift
    from staff.services import lockout_lift
    from tests.races import race

    staff_member("kasininke", casino, "cashier")
    bosses = [staff_member(f"vadove-{n}", casino, "shift_supervisor") for n in range(2)]
    fail_logins(Client(), "kasininke", settings.AXES_FAILURE_LIMIT)
    results = race(
        [
            lambda boss=boss: lockout_lift(kind="account", value="kasininke", casino=casino, lifted_by=boss)
            for boss in bosses
        ],
        gate=("SELECT id FROM axes_accessattempt WHERE username = %s FOR UPDATE", ["kasininke"]),
    )
    lifts = [result for result in results if isinstance(result, LockoutLift)]
    assert len(lifts) == 1, results
    assert results.count(None) == 1, results  # the other waited, then found nothing left to lift
    assert LockoutLift.objects.get().failures == settings.AXES_FAILURE_LIMIT


def test_a_lift_of_nothing_changes_nothing(casino):
    from staff.models import LockoutLift

    supervisor = staff_member("pamainosvadove", casino, "shift_supervisor")
    boss = Client()
    boss.force_login(supervisor)
    assert boss.post(LIFT, {"kind": "address", "value": "not-an-address"}).status_code == 400
    assert boss.post(LIFT, {"kind": "everything", "value": "x"}).status_code == 400
    response = boss.post(LIFT, {"kind": "address", "value": "10.20.0.9"}, follow=True)
    assert response.status_code == 200
    assert not LockoutLift.objects.exists()


def test_a_cashier_can_neither_see_nor_lift_lockouts(casino):
    from axes.models import AccessAttempt

    cashier = staff_member("kasininkas", casino, "cashier")
    staff_member("kasininke", casino, "cashier")
    fail_logins(Client(), "kasininke", settings.AXES_FAILURE_LIMIT)
    client = Client()
    client.force_login(cashier)
    assert client.get(LOCKOUTS).status_code == 403
    assert client.post(LIFT, {"kind": "account", "value": "kasininke"}).status_code == 403
    assert AccessAttempt.objects.filter(username="kasininke").exists()


def test_an_administrator_lifts_any_lockout_with_axes_commands(casino, other_casino, capsys):
    staff_member("kasininke-adm", other_casino, "cashier")
    fail_logins(Client(REMOTE_ADDR="10.30.0.1"), "kasininke-adm", settings.AXES_FAILURE_LIMIT)
    for n in range(settings.AXES_FAILURE_LIMIT):
        log_in(Client(REMOTE_ADDR="10.30.0.2"), f"guess-{n}", "not-the-password")
    call_command("axes_list_attempts")
    listed = capsys.readouterr().out
    assert "10.30.0.1" in listed
    assert "10.30.0.2" in listed
    call_command("axes_reset_username", "kasininke-adm")
    call_command("axes_reset_ip", "10.30.0.2")
    assert log_in(Client(REMOTE_ADDR="10.30.0.1"), "kasininke-adm").status_code == 302
    assert log_in(Client(REMOTE_ADDR="10.30.0.2"), "kasininke-adm").status_code == 302


# --- The second factor -----------------------------------------------------

ROLE_PAGES = {"shift_supervisor": "/supervisor/", "compliance_officer": "/compliance/purpose/", "manager": "/reports/"}


@pytest.mark.parametrize("role", list(ROLE_PAGES))
def test_a_role_that_needs_a_second_factor_enrols_and_enters_a_code_first(casino, role):
    user = staff_member(f"user-{role}", casino, role)
    client = Client()
    assert log_in(client, user.username).status_code == 302
    page = ROLE_PAGES[role]
    response = client.get(page)
    assert response.status_code == 302
    assert response["Location"].startswith(SECOND_FACTOR)
    assert client.get("/").status_code == 302
    assert client.get("/").url.startswith(SECOND_FACTOR)

    enrolment = client.get(response["Location"])
    assert enrolment.status_code == 200
    device = TOTPDevice.objects.get(user=user, confirmed=False)
    html = enrolment.content.decode()
    assert re.search(r'<img [^>]*src="data:image/svg\+xml', html)  # the QR code, allowed by the CSP
    secret = re.sub(r"\s", "", re.search(r'<code id="secret">([^<]+)</code>', html).group(1))
    assert base64.b32decode(secret) == device.bin_key
    assert " style=" not in html
    assert "<script>" not in html

    start = dt.datetime.now(dt.UTC)
    with time_machine.travel(start, tick=False) as traveller:
        wrong = client.post(response["Location"], {"code": "000000" if code_for(device) != "000000" else "111111"})
        assert wrong.status_code == 200
        assert client.get(page).status_code == 302  # still not through
        throttled = client.post(response["Location"], {"code": code_for(device)})
        assert throttled.status_code == 200  # a wrong code makes the next one wait
        traveller.shift(dt.timedelta(seconds=5))
        accepted = client.post(response["Location"], {"code": code_for(device)})
        assert accepted.status_code == 302
        assert accepted["Location"] == page
        assert client.get(page).status_code == 200
    device.refresh_from_db()
    assert device.confirmed


def test_the_next_login_asks_for_a_code_of_the_enrolled_device_only_once(casino):
    user = staff_member("pamainosvadove", casino, "shift_supervisor")
    device = TOTPDevice.objects.create(user=user, name="phone", confirmed=True)
    start = dt.datetime.now(dt.UTC)
    with time_machine.travel(start, tick=False) as traveller:
        client = Client()
        log_in(client, user.username)
        asked = client.get(SECOND_FACTOR)
        assert asked.status_code == 200
        assert "data:image" not in asked.content.decode()  # no new enrolment for an enrolled user
        assert 'id="secret"' not in asked.content.decode()
        code = code_for(device)
        assert client.post(SECOND_FACTOR, {"code": code}).status_code == 302
        assert client.get("/supervisor/").status_code == 200

        # The same code a second time (someone looking over the shoulder) is refused.
        traveller.shift(dt.timedelta(seconds=5))
        other = Client()
        log_in(other, user.username)
        assert other.post(SECOND_FACTOR, {"code": code}).status_code == 200
        assert other.get("/supervisor/").status_code == 302
    assert TOTPDevice.objects.filter(user=user).count() == 1


def test_a_code_is_six_digits(casino):
    user = staff_member("pamainosvadove", casino, "shift_supervisor")
    TOTPDevice.objects.create(user=user, name="phone", confirmed=True)
    client = Client()
    log_in(client, user.username)
    for bad in ("", "12345", "1234567", "abcdef", "١٢٣٤٥٦"):
        response = client.post(SECOND_FACTOR, {"code": bad})
        assert response.status_code == 200, bad
        assert client.get("/supervisor/").status_code == 302


def test_a_cashier_and_a_floor_attendant_reach_their_pages_with_a_password_only(casino):
    for username, role, page in (("kasininke", "cashier", "/desk/"), ("salė", "floor_attendant", "/floor/receipts/")):
        staff_member(username, casino, role)
        client = Client()
        assert log_in(client, username).status_code == 302
        assert client.get(page).status_code == 200
        assert client.get(SECOND_FACTOR).status_code == 302  # nothing to enter: sent on
        assert not TOTPDevice.objects.exists()


@pytest.mark.real_second_factor
def test_the_admin_requires_a_second_factor(db):
    from django.contrib import admin

    user = make_user("administratorius")
    user.is_staff = user.is_superuser = True
    user.save()
    client = Client()
    response = log_in(client, "administratorius", path="/admin/login/?next=/admin/")
    assert response.status_code == 302
    assert logged_in(client)
    refused = client.get("/admin/")
    assert refused.status_code == 302
    assert refused["Location"].startswith(SECOND_FACTOR)
    client.get(refused["Location"])
    device = TOTPDevice.objects.get(user=user)
    assert client.post(refused["Location"], {"code": code_for(device)})["Location"] == "/admin/"
    assert client.get("/admin/").status_code == 200

    # The admin site itself asks for it too, whatever the middleware does.
    request = RequestFactory().get("/admin/")
    request.user = user
    user.is_verified = lambda: False
    assert not admin.site.has_permission(request)


@pytest.mark.real_second_factor
def test_force_login_can_leave_the_second_factor_to_the_test(casino):
    user = staff_member("pamainosvadove", casino, "shift_supervisor")
    client = Client()
    client.force_login(user)
    assert client.get("/supervisor/")["Location"].startswith(SECOND_FACTOR)


def test_force_login_gives_the_suite_a_verified_supervisor(casino):
    user = staff_member("pamainosvadove", casino, "shift_supervisor")
    client = Client()
    client.force_login(user)
    assert client.get("/supervisor/").status_code == 200


def test_a_lost_phone_is_reset_by_a_command(casino, capsys):
    user = staff_member("pamainosvadove", casino, "shift_supervisor")
    TOTPDevice.objects.create(user=user, name="phone", confirmed=True)
    call_command("second_factor_reset", "pamainosvadove")
    out = capsys.readouterr().out
    assert out.count("\n") == 1
    assert "pamainosvadove" in out
    assert not TOTPDevice.objects.filter(user=user).exists()
    with pytest.raises(CommandError):
        call_command("second_factor_reset", "nobody-of-that-name")


def test_the_pages_of_logins_are_lithuanian(casino, settings):
    from staff.models import StaffPreference

    settings.LANGUAGE_CODE = "lt"
    supervisor = staff_member("pamainosvadove", casino, "shift_supervisor")
    StaffPreference.objects.create(user=supervisor, language="lt")
    fail_logins(Client(REMOTE_ADDR="10.20.0.7"), "kasininke", settings.AXES_FAILURE_LIMIT)
    client = Client()
    log_in(client, "pamainosvadove")
    pages = {
        "enrolment": client.get(SECOND_FACTOR),
        "wrong code": client.post(SECOND_FACTOR, {"code": "12"}),
    }
    verified = Client()
    verified.force_login(supervisor)
    pages["lockouts"] = verified.get(LOCKOUTS)
    pages["login"] = Client().get(LOGIN)
    for name, response in pages.items():
        assert response.status_code == 200, name
        main = response.content.decode().split("<main>")[1]
        # The enrolment's key is random base32 letters, not language: it spelt "PINK" once and failed this test.
        main = re.sub(r'<code id="secret">[^<]*</code>', " ", main)
        text = re.sub(r"<[^>]+>", " ", main)
        assert not english_in(text), (name, english_in(text))


def test_the_demo_passwords_pass_the_validators():
    from django.contrib.auth.password_validation import validate_password

    from cashdesk.management.commands import seed_demo

    validate_password(seed_demo.DEMO_ADMIN_PASSWORD, User(username="admin", email="admin@example.invalid"))
    for name, _role in seed_demo.DEMO_STAFF:
        validate_password(seed_demo.DEMO_STAFF_PASSWORD, User(username=f"{name}-tor"))


@pytest.mark.real_second_factor
def test_a_sensitive_permission_given_directly_needs_the_second_factor_too(casino):
    """Not only the role groups: a compliance permission given on the user's own page (the admin) counts."""
    from django.contrib.auth.models import Permission

    user = staff_member("direct-perms", casino)
    user.user_permissions.add(
        Permission.objects.get(content_type__app_label="compliance", codename="view_registerentry"),
        Permission.objects.get(content_type__app_label="compliance", codename="view_personal_data"),
    )
    client = Client()
    assert log_in(client, user.username).status_code == 302
    response = client.get("/compliance/purpose/")
    assert response.status_code == 302
    assert response["Location"].startswith(SECOND_FACTOR)

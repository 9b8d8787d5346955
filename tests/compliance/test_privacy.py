"""Personal data outside the purpose rule, and the compliance workspace's bad input (issue 11, findings 3, 7, 8)."""

import datetime as dt
from decimal import Decimal

import pytest
from django.test import Client

from cashdesk import services
from compliance.models import AccessLogEntry, Alert
from staff.models import StaffAssignment
from tests.factories import personal_code

CODE = personal_code(dt.date(1980, 5, 17))  # the `person` fixture's code


@pytest.fixture
def officer(casino, compliance):
    StaffAssignment.objects.create(user=compliance, casino=casino)
    client = Client(raise_request_exception=False)
    client.force_login(compliance)
    return client


@pytest.fixture
def boss(casino, manager):
    StaffAssignment.objects.create(user=manager, casino=casino)
    client = Client(raise_request_exception=False)
    client.force_login(manager)
    return client


def _state_purpose(client: Client) -> None:
    client.post("/compliance/purpose/", {"purpose": "AML review", "next": "/compliance/"})


@pytest.fixture
def alert(shift, cashier, person):
    services.ticket_sell(shift=shift, user=cashier, amount=Decimal("2500.00"), person=person)
    return Alert.objects.get()


def test_the_alerts_queue_asks_for_a_purpose_and_logs_its_reads(officer, alert):
    first = officer.get("/compliance/alerts/")
    assert first.status_code == 302
    assert first["Location"].startswith("/compliance/purpose/")
    assert not AccessLogEntry.objects.exists()
    _state_purpose(officer)
    page = officer.get("/compliance/alerts/?status=open")
    assert page.status_code == 200
    assert "Jonaitis" in page.content.decode()
    entry = AccessLogEntry.objects.get()
    assert (entry.action, entry.purpose, entry.subject) == ("view", "AML review", {"kind": "alerts", "status": "open"})


def test_managers_never_see_personal_codes_or_document_numbers(boss, alert, person):
    _state_purpose(boss)
    register = boss.get("/compliance/")
    assert register.status_code == 200
    text = register.content.decode()
    assert "Jonaitis" in text  # names and totals: what a manager's work needs
    assert CODE not in text
    assert "LT1234567" not in text
    assert boss.get(f"/compliance/persons/{person.pk}/").status_code == 403
    assert boss.get("/compliance/fcis/").status_code == 403


def test_only_compliance_officers_export_personal_data(boss, officer, alert):
    _state_purpose(boss)
    _state_purpose(officer)
    for fmt in ("csv", "pdf"):
        assert boss.get("/compliance/export/", {"format": fmt}).status_code == 403
        assert boss.post("/compliance/export/", {"format": fmt}).status_code == 403
    exported = officer.post("/compliance/export/", {"format": "csv"})
    assert exported.status_code == 200
    assert CODE in exported.content.decode()


def test_the_register_is_searched_by_code_in_a_post_body(officer, alert):
    _state_purpose(officer)
    found = officer.post("/compliance/", {"person_code": CODE})
    assert found.status_code == 200
    assert found.context["totals"]["count"] == 1
    assert AccessLogEntry.objects.filter(action="search").count() == 1
    # A code in the address is not used (it would be in every access log on the way); the page says so.
    in_url = officer.get("/compliance/", {"person_code": "38001011235"})
    assert in_url.status_code == 400
    assert "person_code" in in_url.context["form"].errors
    assert not AccessLogEntry.objects.filter(action="search").count() > 1
    # The page's search form and its export buttons send the code in the body.
    html = found.content.decode()
    assert 'method="post"' in html
    assert CODE not in html.split("<table", 1)[0].replace(f'value="{CODE}"', "")


def test_a_purpose_with_a_next_that_is_no_url_lands_on_the_register(officer):
    for target in ("not a url", "compliance-register", "javascript:alert(1)", "//evil.example/x"):
        response = officer.post("/compliance/purpose/", {"purpose": "x", "next": target})
        assert response.status_code == 302, target
        assert response["Location"] == "/compliance/", target


def test_the_purpose_redirect_keeps_the_whole_next_address(officer):
    response = officer.get("/compliance/alerts/?status=open&x=1")
    assert response.status_code == 302
    officer.post("/compliance/purpose/", {"purpose": "x", "next": "/compliance/alerts/?status=open&x=1"})
    assert "next=%2Fcompliance%2Falerts%2F%3Fstatus%3Dopen%26x%3D1" in response["Location"]


@pytest.mark.parametrize("day", ["9999-12-31", "0001-01-01", "2026-13-01", "x"])
def test_the_fcis_page_refuses_a_day_out_of_range_with_a_message(officer, day):
    _state_purpose(officer)
    response = officer.get("/compliance/fcis/", {"day": day})
    assert response.status_code == 400
    assert response.context["error"] in response.content.decode()
    assert not AccessLogEntry.objects.filter(subject__kind="fcis").exists()


def test_an_alert_note_with_a_nul_character_is_refused_and_changes_nothing(officer, alert):
    _state_purpose(officer)
    response = officer.post(f"/compliance/alerts/{alert.pk}/close/", {"note": "checked\x00"})
    assert response.status_code == 302
    alert.refresh_from_db()
    assert alert.status == "open"
    shown = [str(m) for m in response.wsgi_request._messages]
    assert len(shown) == 1
    assert "note" in shown[0].lower() or "pastab" in shown[0].lower()


def test_an_alert_closed_without_a_note_is_refused(officer, alert):
    _state_purpose(officer)
    officer.post(f"/compliance/alerts/{alert.pk}/close/", {"note": ""})
    alert.refresh_from_db()
    assert alert.status == "open"


def test_a_manager_cannot_search_the_register_by_code_or_document(boss, alert):
    _state_purpose(boss)
    for code in (CODE, "LT1234567", "LT0000000"):  # the person's code and document, and one of nobody
        response = boss.post("/compliance/", {"person_code": code})
        assert response.status_code == 400, code
        assert "person_code" in response.context["form"].errors
        assert response.context["totals"]["count"] == 1, code  # the code filtered nothing: the whole register
    assert not AccessLogEntry.objects.filter(action="search").exists()
    assert 'name="person_code"' not in boss.get("/compliance/").content.decode()  # no such field on his page


def test_an_unknown_alert_action_is_404_and_changes_nothing(officer, alert):
    _state_purpose(officer)
    response = officer.post(f"/compliance/alerts/{alert.pk}/bogus/", {"note": "closing it by the back door"})
    assert response.status_code == 404
    alert.refresh_from_db()
    assert alert.status == "open"

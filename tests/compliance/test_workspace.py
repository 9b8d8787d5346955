"""The compliance workspace through the web: roles, purpose, the access log, exports."""

import csv
import datetime as dt
import io
from decimal import Decimal

import pytest
from django.test import Client

from cashdesk import services
from compliance.models import AccessLogEntry, Alert, RegisterEntry
from compliance.services import register_head
from staff.models import StaffAssignment
from tests.cashdesk.test_printing import pdf_text
from tests.cashdesk.test_views import _count_post
from tests.factories import make_person, make_user, personal_code, with_key


@pytest.fixture
def staff(casino, cashier, supervisor, floor, compliance, manager):
    users = {
        "cashier": cashier,
        "supervisor": supervisor,
        "floor": floor,
        "compliance": compliance,
        "manager": manager,
        "nobody": make_user("norole"),
    }
    for user in users.values():
        StaffAssignment.objects.create(user=user, casino=casino)
    return users


def login(user, purpose: str | None = "AML review of December") -> Client:
    client = Client()
    client.force_login(user)
    if purpose:
        client.post("/compliance/purpose/", {"purpose": purpose, "next": "/compliance/"})
    return client


PAGES = {
    "/compliance/": {"compliance", "manager"},
    "/compliance/alerts/": {"compliance", "manager"},
    "/compliance/export/?format=csv": {"compliance"},  # personal data leave only with the compliance officer
    "/compliance/fcis/": {"compliance"},
    "/compliance/self-exclusion/": {"compliance"},
    "/compliance/access-log/": {"compliance"},
}


@pytest.mark.parametrize("path", list(PAGES))
def test_only_compliance_and_managers_see_the_register(staff, path):
    for role, user in staff.items():
        status = login(user).get(path).status_code
        assert status == (200 if role in PAGES[path] else 403), (path, role, status)
    assert Client().get(path).status_code == 302


def test_personal_data_needs_a_stated_purpose(staff):
    client = login(staff["compliance"], purpose=None)
    response = client.get("/compliance/")
    assert response.status_code == 302
    assert response["Location"].startswith("/compliance/purpose/")
    client.post("/compliance/purpose/", {"purpose": "FCIS request 42", "next": "/compliance/"})
    assert client.get("/compliance/").status_code == 200
    assert AccessLogEntry.objects.get().purpose == "FCIS request 42"


def test_the_purpose_form_does_not_redirect_off_site(staff):
    client = login(staff["compliance"], purpose=None)
    response = client.post("/compliance/purpose/", {"purpose": "x", "next": "https://evil.example/"})
    assert response["Location"] == "/compliance/"


def test_the_demo_journey(api, staff, desk, vault, casino):
    """A 1500 EUR chip purchase for a new person and a 2500 EUR ticket payout for a returning one."""
    cashier = Client()
    cashier.force_login(staff["cashier"])
    cashier.post("/desk/", _count_post(desk=desk.pk))
    returning = make_person(given_names="Jonas", surnames="Jonaitis", document_number="LT1234567")
    new_person = {
        "personal_code": personal_code(dt.date(1985, 3, 4), male=False),
        "document_type": "id_card",
        "document_number": "LT99887766",
        "document_expiry": "2030-06-30",
        "given_names": "Rūta",
        "surnames": "Žemaitė",
        "date_of_birth": "1985-03-04",
    }
    assert (
        cashier.post("/desk/chips/", with_key({"direction": "buy", "chip_500": "3", **new_person})).status_code == 302
    )
    number = api.issued_ticket("2500.00")
    # The returning player is found by the personal code alone.
    paid = cashier.post(
        "/desk/ticket/pay/", with_key({"number": number, "personal_code": personal_code(dt.date(1980, 5, 17))})
    )
    assert paid.status_code == 302

    officer = login(staff["compliance"])
    page = officer.get("/compliance/").content.decode()
    assert "Rūta Žemaitė" in page
    assert "Jonas Jonaitis" in page
    assert "€1,500.00" in page
    assert "€2,500.00" in page
    alerts = officer.get("/compliance/alerts/").content.decode()
    assert "due-diligence" in alerts
    assert Alert.objects.get().person == returning

    exported = officer.get("/compliance/export/", {"format": "csv"})
    rows = list(csv.reader(io.StringIO(exported.content.decode())))
    assert rows[0][:5] == ["sequence", "time", "gaming_day", "kind", "amount"]
    assert {row[3] for row in rows[1:-1]} == {"chips_buy", "ticket_payout"}
    assert personal_code(dt.date(1985, 3, 4), male=False) in exported.content.decode()
    assert rows[-1] == [f"# chain head {register_head(casino)}"]
    pdf = officer.get("/compliance/export/", {"format": "pdf"})
    text = pdf_text(pdf.content)
    assert register_head(casino) in text
    assert "Žemaitė" in text

    person_page = officer.get(f"/compliance/persons/{returning.pk}/").content.decode()
    assert personal_code(dt.date(1980, 5, 17)) in person_page

    log = list(
        AccessLogEntry.objects.filter(user=staff["compliance"]).order_by("at").values_list("action", "what", "purpose")
    )
    assert [action for action, _, _ in log] == ["view", "view", "export", "export", "view"]
    assert all(purpose == "AML review of December" for _, _, purpose in log)
    assert log[1][1] == "alerts all"
    assert log[-1][1] == f"person {returning.pk}"
    assert "register csv" in log[2][1]


def test_a_search_by_code_is_logged_as_a_search(staff, shift, cashier, person):
    services.ticket_sell(shift=shift, user=cashier, amount=Decimal("1500.00"), person=person)
    officer = login(staff["compliance"])
    page = officer.post("/compliance/", {"person_code": personal_code(dt.date(1980, 5, 17))})
    assert "Jonaitis" in page.content.decode()
    assert AccessLogEntry.objects.get().action == "search"
    nobody = officer.post("/compliance/", {"person_code": "LT0000000"}).content.decode()
    assert "No entries." in nobody


def test_managers_see_the_register_but_not_the_log_or_alert_actions(staff, shift, cashier, person):
    services.ticket_sell(shift=shift, user=cashier, amount=Decimal("2500.00"), person=person)
    manager = login(staff["manager"])
    alert = Alert.objects.get()
    assert manager.post(f"/compliance/alerts/{alert.pk}/review/").status_code == 403
    assert manager.get("/compliance/access-log/").status_code == 403


def test_alert_actions_through_the_queue(staff, shift, cashier, person):
    services.ticket_sell(shift=shift, user=cashier, amount=Decimal("2500.00"), person=person)
    officer = login(staff["compliance"])
    alert = Alert.objects.get()
    officer.post(f"/compliance/alerts/{alert.pk}/review/")
    officer.post(f"/compliance/alerts/{alert.pk}/close/", {"note": "Known player, win documented."})
    alert.refresh_from_db()
    assert (alert.status, alert.handled_by, alert.note) == (
        "closed",
        staff["compliance"],
        "Known player, win documented.",
    )


def test_self_exclusion_upload(staff):
    officer = login(staff["compliance"])
    upload = io.BytesIO(f"personal_code\n{personal_code(dt.date(1970, 1, 1))}\n".encode())
    upload.name = "lrt-2026-12.csv"
    response = officer.post("/compliance/self-exclusion/", {"list_date": "2026-12-01", "file": upload})
    assert response.status_code == 302
    bad = io.BytesIO(b"nonsense\n1\n")
    bad.name = "bad.csv"
    page = officer.post("/compliance/self-exclusion/", {"list_date": "2026-12-01", "file": bad})
    assert "Columns needed" in page.content.decode()


def test_fcis_report_data_lists_the_days_large_cash_operations(staff, shift, cashier, person, casino):
    for _ in range(3):
        services.ticket_sell(shift=shift, user=cashier, amount=Decimal("5000.00"), person=person)
    officer = login(staff["compliance"])
    day = RegisterEntry.objects.first().gaming_day
    data = officer.get("/compliance/fcis/", {"day": day.isoformat(), "format": "csv"}).content.decode()
    rows = list(csv.reader(io.StringIO(data)))
    assert len(rows) == 4
    assert rows[1][6] == "15000.00"
    assert AccessLogEntry.objects.filter(action="export", what=f"FCIS report data {day}").exists()


def test_a_cashier_sees_only_initials_in_the_cash_desk(staff, shift, cashier, person):
    tx = services.ticket_sell(shift=shift, user=cashier, amount=Decimal("1500.00"), person=person)
    client = Client()
    client.force_login(cashier)
    page = client.get(f"/desk/transactions/{tx.pk}/").content.decode()
    assert "Jonaitis" not in page
    assert personal_code(dt.date(1980, 5, 17)) not in page


def test_register_filters_by_desk_kind_and_cashier(staff, shift, cashier, person, casino):
    from machines.models import Place

    services.ticket_sell(shift=shift, user=cashier, amount=Decimal("1500.00"), person=person)
    services.chips_buy(shift=shift, user=cashier, chips={"chip_500": 4}, person=person)
    other_desk = Place.objects.create(casino=casino, code="K7", name="Kasa 7")
    officer = login(staff["compliance"])

    def count(**params):
        return officer.get("/compliance/", params).context["totals"]["count"]

    assert count() == 2
    assert count(kind="chips_buy") == 1
    assert count(desk=shift.desk.pk) == 2
    assert count(desk=other_desk.pk) == 0
    assert count(cashier=cashier.username) == 2
    assert count(cashier="nobody-by-that-name") == 0

"""Locale slips (issue 12): dates typed as YYYY-MM-DD on every browser, labelled fields, one name per desk,
the current report marked, CSV amounts with their item's places, a favicon."""

import csv
import io
import re
from decimal import Decimal

import pytest
from django.test import Client

from cashdesk import services
from cashdesk.models import HoldCase
from compliance.models import AccessLogEntry, RegisterEntry
from machines.models import Place
from staff.models import StaffAssignment
from tests.cashdesk.conftest import FLOAT

REPORT_KINDS = ["daily", "liability", "exceptions", "machines", "desks", "books", "overshort"]
TICKET = re.compile(r"^-?\d+\.\d{3}$")  # a ticket's amount: to the mill
CASH = re.compile(r"^-?\d+\.\d{2}$")  # euros and cents
PIECES = re.compile(r"^\d+$")


def _desk_code_in(text: str) -> bool:
    """The desk's code "K1" as a word of its own (a CSRF token or a key may hold the letters by chance)."""
    return re.search(r"(?<![A-Za-z0-9])K1(?![A-Za-z0-9])", text) is not None


def _client(user, casino, language: str | None = None) -> Client:
    StaffAssignment.objects.get_or_create(user=user, casino=casino)
    client = Client(raise_request_exception=False)
    client.force_login(user)
    if language:
        client.cookies["django_language"] = language
    return client


@pytest.fixture
def reader(casino, manager):
    return _client(manager, casino)


def _inputs(page: str) -> list[str]:
    return re.findall(r"<input\b[^>]*>", page)


def _no_browser_date_widgets(page: str) -> None:
    assert 'type="date"' not in page
    assert 'type="datetime-local"' not in page


def _labelled(page: str) -> None:
    """Every visible input, select and textarea is inside a <label> or named by a <label for=...>."""
    fors = set(re.findall(r'<label[^>]*\bfor="([^"]+)"', page))
    for match in re.finditer(r"<(input|select|textarea)\b[^>]*>", page):
        tag = match.group(0)
        if re.search(r'type="(hidden|submit|button|checkbox)"', tag):
            continue
        ident = re.search(r'\bid="([^"]+)"', tag)
        if ident and ident.group(1) in fors:
            continue
        before = page[: match.start()]
        assert before.rfind("<label") > before.rfind("</label>"), f"unlabelled: {tag}"


# --- The favicon -------------------------------------------------------------------------------------------------


def test_favicon_ico_is_answered_for_anyone(db):
    response = Client().get("/favicon.ico")
    assert response.status_code in (200, 301, 302)
    if response.status_code != 200:
        assert response["Location"].endswith(".svg")
        assert Client().get(response["Location"]).status_code == 200


# --- Dates typed and shown as YYYY-MM-DD -------------------------------------------------------------------------


@pytest.mark.parametrize("kind", REPORT_KINDS)
@pytest.mark.parametrize("language", ["lt", "en"])
def test_report_dates_are_text_inputs_with_a_pattern_and_labelled(reader, kind, language):
    reader.cookies["django_language"] = language
    page = reader.get("/reports/", {"report": kind}).content.decode()
    _no_browser_date_widgets(page)
    _labelled(page)
    dated = [tag for tag in _inputs(page) if re.search(r'name="(start|end|at)"', tag)]
    assert dated
    for tag in dated:
        assert 'type="text"' in tag
        assert "pattern=" in tag
        value = re.search(r'value="([^"]*)"', tag).group(1)
        if 'name="at"' in tag:
            assert re.fullmatch(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}", value), value
        else:
            assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", value), value


@pytest.mark.parametrize("kind", ["liability", "books"])
def test_the_moment_shown_is_the_moment_read_back(reader, kind):
    page = reader.get("/reports/", {"report": kind, "at": "2026-11-30 21:15"})
    assert page.status_code == 200
    assert 'value="2026-11-30 21:15"' in page.content.decode()
    # The old form's links (with a T) still work.
    assert reader.get("/reports/", {"report": kind, "at": "2026-11-30T21:15"}).status_code == 200


@pytest.mark.parametrize("typed", ["30.11.2026 21:15", "2026-11-30 25:00", "noon", "2026-13-01 10:00"])
def test_a_badly_typed_moment_is_an_error_message_not_a_500(reader, typed):
    page = reader.get("/reports/", {"report": "liability", "at": typed})
    assert page.status_code == 400
    assert "Enter the moment as YYYY-MM-DD HH:MM" in page.content.decode()


def test_a_badly_typed_day_is_an_error_message(reader):
    page = reader.get("/reports/", {"report": "daily", "start": "11/30/2026"})
    assert page.status_code == 400
    assert "Enter dates as YYYY-MM-DD" in page.content.decode()


def test_report_dates_in_lithuanian_are_yyyy_mm_dd(reader, casino, api):
    reader.cookies["django_language"] = "lt"
    page = reader.get("/reports/", {"report": "daily", "start": "2026-11-01", "end": "2026-11-03"}).content.decode()
    assert 'value="2026-11-01"' in page
    assert "11/01/2026" not in page


def test_compliance_pages_type_days_as_yyyy_mm_dd(casino, compliance):
    officer = _client(compliance, casino)
    officer.post("/compliance/purpose/", {"purpose": "AML review", "next": "/compliance/"})
    for path in ("/compliance/", "/compliance/fcis/", "/compliance/self-exclusion/"):
        page = officer.get(path).content.decode()
        _no_browser_date_widgets(page)
        _labelled(page)
        days = [tag for tag in _inputs(page) if re.search(r'name="(start|end|day|list_date)"', tag)]
        assert days, path
        for tag in days:
            assert 'type="text"' in tag, (path, tag)
            assert "pattern=" in tag, (path, tag)
    fcis = officer.get("/compliance/fcis/", {"day": "2026-11-30"}).content.decode()
    assert 'value="2026-11-30"' in fcis
    bad = officer.get("/compliance/fcis/", {"day": "30.11.2026"})
    assert bad.status_code == 400
    assert 'class="errorlist"' in bad.content.decode()


# --- The current report is marked ---------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", REPORT_KINDS)
def test_the_current_report_tab_is_marked(reader, kind):
    page = reader.get("/reports/", {"report": kind}).content.decode()
    current = re.findall(r'<a[^>]*aria-current="page"[^>]*>', page)
    assert len(current) == 1, current
    assert f"report={kind}&" in current[0].replace("&amp;", "&")


# --- One name per desk ---------------------------------------------------------------------------------------------


def test_a_desk_is_called_by_its_name(desk, shift):
    assert str(desk) == "Kasa 1"
    assert "Kasa 1" in str(shift)
    assert "K1" not in str(shift)


def test_reports_and_their_csv_name_desks_by_name(api, reader, shift, cashier):
    number = api.issued_ticket("10.00")
    services.ticket_payout(shift=shift, user=cashier, validation_number=number)
    services.shift_close(shift=shift, user=cashier, counted={**FLOAT, "cash": FLOAT["cash"] - Decimal("15.00")})
    for kind in ("desks", "overshort", "books"):
        page = reader.get("/reports/", {"report": kind}).content.decode()
        assert "Kasa 1" in page, kind
        assert ">K1<" not in page, kind
        exported = reader.get("/reports/", {"report": kind, "format": "csv"}).content.decode()
        assert "Kasa 1" in exported, kind
        assert "K1," not in exported, kind


def test_the_register_names_desks_by_name(casino, compliance, shift, cashier, person):
    services.ticket_sell(shift=shift, user=cashier, amount=Decimal("2500.00"), person=person)
    officer = _client(compliance, casino)
    officer.post("/compliance/purpose/", {"purpose": "AML review", "next": "/compliance/"})
    page = officer.get("/compliance/").content.decode()
    assert "<td>Kasa 1</td>" in page
    assert "<td>K1</td>" not in page
    rows = list(csv.reader(io.StringIO(officer.get("/compliance/export/", {"format": "csv"}).content.decode())))
    assert rows[1][rows[0].index("desk")] == "Kasa 1"
    alerts = officer.get("/compliance/alerts/").content.decode()
    assert not _desk_code_in(alerts)
    person_page = officer.get(f"/compliance/persons/{person.pk}/").content.decode()
    assert "<td>Kasa 1</td>" in person_page


# --- CSV amounts with their item's places ------------------------------------------------------------------------


def _table(response) -> list[dict[str, str]]:
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/csv")
    return list(csv.DictReader(io.StringIO(response.content.decode())))


@pytest.fixture
def history(api, casino, shift, cashier, supervisor, vault):
    """A day with machine tickets (one to the mill), a desk sale and payout, a hold, a mismatch, a closed shift."""
    played = api.issued_ticket("423.45")
    assert api.authorize(played).status_code == 200
    assert api.commit(played).status_code == 200
    mill = api.issued_ticket("100.005")
    # Paid at the desk against a printed amount that differs: an exception row.
    services.ticket_payout(shift=shift, user=cashier, validation_number=mill, printed_amount=Decimal("100.00"))
    services.ticket_sell(shift=shift, user=cashier, amount=Decimal("37.65"))
    held = api.issued_ticket("20.10")
    services.ticket_hold(shift=shift, user=cashier, validation_number=held, reason=HoldCase.Reason.SUSPECTED_COPY)
    services.shift_close(
        shift=shift,
        user=cashier,
        counted={**FLOAT, "cash": FLOAT["cash"] - Decimal("100.01") + Decimal("37.65") + Decimal("10.05")},
    )
    return casino


CSV_PLACES = {
    "daily": {
        "day": None,
        "issued_count": PIECES,
        "issued_amount": TICKET,
        "redeemed_count": PIECES,
        "redeemed_amount": TICKET,
        "expired_count": PIECES,
        "expired_amount": TICKET,
    },
    "liability": {"count": PIECES, "amount": TICKET},
    "exceptions": {"amount": TICKET},
    "machines": {"tickets_out": PIECES, "amount_out": TICKET, "tickets_in": PIECES, "amount_in": TICKET},
    "desks": {"n": PIECES, "total": CASH},
    "books": {"amount": CASH},
    "overshort": {"variance": CASH},
}


@pytest.mark.parametrize("kind", list(CSV_PLACES))
def test_every_csv_amount_has_its_items_places(history, reader, kind):
    rows = _table(reader.get("/reports/", {"report": kind, "format": "csv"}))
    assert rows, kind
    for row in rows:
        for column, places in CSV_PLACES[kind].items():
            assert column in row, (kind, column)
            if places is not None:
                assert places.fullmatch(row[column]), (kind, column, row[column])
        for value in row.values():
            assert not re.search(r"\.\d{4,}", value or ""), (kind, row)


def test_the_csv_keeps_a_tickets_mill(history, reader):
    rows = _table(reader.get("/reports/", {"report": "machines", "format": "csv"}))
    assert rows[0]["amount_out"] == "543.555"  # 423.45 + 100.005 + 20.10
    assert rows[0]["amount_in"] == "423.450"
    liability = _table(reader.get("/reports/", {"report": "liability", "format": "csv"}))[0]
    assert liability["amount"] == "57.750"  # the held ticket (20.10) and the voucher sold at the desk (37.65)


def test_csv_moments_are_local_and_to_the_second(history, reader):
    row = _table(reader.get("/reports/", {"report": "overshort", "format": "csv"}))[0]
    for column in ("opened_at", "closed_at"):
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}[+-]\d{2}:\d{2}", row[column]), row[column]


def test_compliance_csvs_write_cents(casino, compliance, shift, cashier, person):
    for amount in ("5000.10", "5000.20", "5000.15"):
        services.ticket_sell(shift=shift, user=cashier, amount=Decimal(amount), person=person)
    officer = _client(compliance, casino)
    officer.post("/compliance/purpose/", {"purpose": "AML review", "next": "/compliance/"})
    register = list(csv.reader(io.StringIO(officer.get("/compliance/export/", {"format": "csv"}).content.decode())))
    amount = register[0].index("amount")
    assert [row[amount] for row in register[1:-1]] == ["5000.10", "5000.20", "5000.15"]
    day = RegisterEntry.objects.first().gaming_day
    fcis = _table(officer.get("/compliance/fcis/", {"day": day.isoformat(), "format": "csv"}))
    assert len(fcis) == 3
    for row in fcis:
        assert row["day_total"] == "15000.45"
        assert CASH.fullmatch(row["amount"]), row


def test_a_vault_and_a_desk_show_their_names_on_the_dashboard(casino, manager, desk, vault):
    other = Place.objects.create(casino=casino, code="K2", name="Kasa 2")
    page = _client(manager, casino).get("/dashboard/").content.decode()
    for name in ("Kasa 1", other.name):
        assert name in page
    for code in (">K1<", ">K2<"):
        assert code not in page


def test_the_supervisor_names_the_desk_and_the_cashier(casino, shift, supervisor):
    page = _client(supervisor, casino).get("/supervisor/").content.decode()
    assert "Kasa 1" in page
    assert ">K1<" not in page


def test_the_access_log_names_a_filtered_desk_by_its_name(casino, compliance, desk):
    officer = _client(compliance, casino)
    officer.post("/compliance/purpose/", {"purpose": "AML review", "next": "/compliance/"})
    assert officer.get("/compliance/", {"desk": desk.pk}).status_code == 200
    assert AccessLogEntry.objects.latest("at").subject["desk"] == "Kasa 1"
    assert "; Kasa 1" in officer.get("/compliance/access-log/").content.decode()


def test_the_supervisors_row_forms_are_labelled_without_repeated_ids(api, casino, shift, cashier, supervisor):
    for amount in ("20.00", "30.00"):
        number = api.issued_ticket(amount)
        services.ticket_hold(shift=shift, user=cashier, validation_number=number, reason=HoldCase.Reason.SUSPECTED_COPY)
    page = _client(supervisor, casino).get("/supervisor/").content.decode()
    _labelled(page)
    ids = re.findall(r'\bid="([^"]+)"', page)
    assert len(ids) == len(set(ids)), sorted(i for i in ids if ids.count(i) > 1)


def test_the_alert_queues_note_is_labelled(casino, compliance, shift, cashier, person):
    services.ticket_sell(shift=shift, user=cashier, amount=Decimal("2500.00"), person=person)
    officer = _client(compliance, casino)
    officer.post("/compliance/purpose/", {"purpose": "AML review", "next": "/compliance/"})
    page = officer.get("/compliance/alerts/").content.decode()
    assert 'name="note"' in page
    _labelled(page)


def test_the_exceptions_report_names_the_desk_a_paid_ticket_came_back_to(api, reader, shift, cashier):
    number = api.issued_ticket("10.00")
    services.ticket_payout(shift=shift, user=cashier, validation_number=number)
    services.ticket_present(shift=shift, user=cashier, validation_number=number)  # shown again: refused
    page = reader.get("/reports/", {"report": "exceptions"}).content.decode()
    assert "Desk: Kasa 1" in page
    assert not _desk_code_in(page)
    exported = reader.get("/reports/", {"report": "exceptions", "format": "csv"}).content.decode()
    assert "Kasa 1" in exported
    assert not _desk_code_in(exported)

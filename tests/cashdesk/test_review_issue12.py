"""An adversarial review of the issue 12 change (the desk screen, blind counts, the receipt page, typed days,
CSV places, the favicon, the dashboard's split counts and the re-laid-out paper): probes a careless or
hostile user could hit. Each passing probe stays as a regression test; a failing one is a known defect,
marked xfail(strict) with the defect named."""

import re
from decimal import Decimal
from html import unescape

import pytest
from django.test import Client
from reportlab.lib.units import mm

from cashdesk import printing, services
from cashdesk.models import CashTransaction, Shift
from cashdesk.views.reports import _written
from machines.models import Place
from staff.models import StaffAssignment
from tests.cashdesk.conftest import FLOAT
from tests.factories import make_person, make_user, with_key

MONEY = re.compile(r"€\s?\d")


def _client(user, casino, *, raise_errors: bool = False) -> Client:
    StaffAssignment.objects.get_or_create(user=user, casino=casino)
    client = Client(raise_request_exception=raise_errors)
    client.force_login(user)
    return client


@pytest.fixture
def desk_client(shift, cashier, casino):
    return _client(cashier, casino)


def _count(**overrides):
    data = {item: str(value) for item, value in FLOAT.items()}
    data.update({k: str(v) for k, v in overrides.items()})
    return data


# --- The person folded away: the server still refuses without one ----------------------------------------


def test_a_ticket_a_mill_over_the_threshold_opens_the_person_and_is_refused_without_one(desk_client, api, casino):
    """1000.001 EUR is paid 1000.01 EUR (rounded up): over a 1000.00 threshold."""
    number = api.issued_ticket("1000.001")
    page = desk_client.post("/desk/ticket/", {"number": number}).content.decode()
    assert 'id="person-required"' in page
    assert re.search(r'<details class="person" id="person" open', page)
    paid = desk_client.post("/desk/ticket/pay/", with_key({"number": number}))
    assert paid.status_code == 200
    assert not CashTransaction.objects.filter(kind="ticket_payout").exists()


def test_a_ticket_exactly_at_the_threshold_pays_with_one_enter(desk_client, api):
    number = api.issued_ticket("1000.00")
    page = desk_client.post("/desk/ticket/", {"number": number}).content.decode()
    assert 'id="person-required"' not in page
    paid = desk_client.post("/desk/ticket/pay/", with_key({"number": number}))
    assert paid.status_code == 302
    assert CashTransaction.objects.filter(kind="ticket_payout").count() == 1


@pytest.mark.parametrize(
    ("path", "data", "kind"),
    [
        ("/desk/sell/", {"amount": "1000.01"}, "ticket_sale"),
        ("/desk/chips/", {"direction": "buy", "chip_500": "2", "chip_0_50": "1"}, "chips_buy"),
        ("/desk/chips/", {"direction": "cashout", "chip_500": "2", "chip_0_50": "1"}, "chips_cashout"),
        ("/desk/tokens/", {"direction": "buy", "count": "1001"}, "tokens_buy"),
        ("/desk/tokens/", {"direction": "cashout", "count": "1001"}, "tokens_cashout"),
        ("/desk/smartcard/", {"card_number": "AB12", "credits": "1000.001", "card_counter": "7"}, "smartcard_payout"),
        ("/desk/smartcard/load/", {"card_number": "AB12", "amount": "1000.01", "card_counter": "8"}, "smartcard_load"),
    ],
)
def test_every_form_over_the_threshold_is_refused_without_a_person(desk_client, path, data, kind):
    before = CashTransaction.objects.count()
    response = desk_client.post(path, with_key(data))
    assert response.status_code == 200, response.get("Location")
    assert CashTransaction.objects.count() == before, kind
    html = response.content.decode()
    assert re.search(r'<details class="person" id="person" open', html), kind
    assert 'id="person-required"' in html


def test_a_person_with_a_blank_code_and_document_is_no_person(desk_client):
    """Only names typed (no code, no document): the amount over the threshold is still refused."""
    data = {"amount": "1500.00", "given_names": "Jonas", "surnames": "Jonaitis", "date_of_birth": "1980-05-17"}
    response = desk_client.post("/desk/sell/", with_key(data))
    assert response.status_code == 200
    assert not CashTransaction.objects.filter(kind="ticket_sale").exists()


# --- Blind counts ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["/desk/close/", "/desk/handover/"])
def test_a_bad_count_comes_back_still_blind(desk_client, path):
    response = desk_client.post(path, _count(cash="-5", chip_500="abc"))
    assert response.status_code == 200
    html = response.content.decode()
    assert 'id="balances"' not in html
    assert "/documents/shift/" not in html  # no X report link
    assert not MONEY.search(html), "an amount on the blind count's page"
    assert Shift.objects.filter(closed_at__isnull=True).exists()


def test_a_count_the_service_refuses_comes_back_still_blind(desk_client):
    huge = _count(cash="9999999999.99", **dict.fromkeys(["chip_500", "chip_100", "chip_25", "token"], 10_000_000))
    response = desk_client.post("/desk/close/", huge)
    assert response.status_code == 200
    html = response.content.decode()
    assert "too large" in html
    assert 'id="balances"' not in html
    assert not MONEY.search(html)


def test_a_handover_to_a_busy_cashier_comes_back_still_blind(desk_client, cashier2, casino):
    other = Place.objects.create(casino=casino, code="K2", name="Kasa 2", cash_limit=Decimal("500000.00"))
    services.shift_open(desk=other, cashier=cashier2, counted=FLOAT)
    StaffAssignment.objects.create(user=cashier2, casino=casino)
    response = desk_client.post("/desk/handover/", with_key(_count(next_cashier=cashier2.pk)))
    assert response.status_code == 200
    assert "already has an open shift" in response.content.decode()
    html = response.content.decode()
    assert 'id="balances"' not in html
    assert not MONEY.search(html)


# --- The receipt on the transaction page ---------------------------------------------------------------------


def test_another_cashiers_receipt_is_not_shown(shift, cashier, cashier2, casino):
    tx = services.chips_buy(shift=shift, user=cashier, chips={"chip_5": 3})
    response = _client(cashier2, casino).get(f"/desk/transactions/{tx.pk}/")
    assert response.status_code == 302
    assert tx.receipt_number not in response.content.decode()


def test_another_casinos_supervisor_gets_no_receipt(shift, cashier, other_casino):
    tx = services.chips_buy(shift=shift, user=cashier, chips={"chip_5": 3})
    boss = make_user("kitas", "shift_supervisor")
    response = _client(boss, other_casino).get(f"/desk/transactions/{tx.pk}/")
    assert response.status_code == 404


def test_a_sold_ticket_and_its_payout_show_the_number_masked(desk_client, shift, cashier, person):
    sold = services.ticket_sell(shift=shift, user=cashier, amount=Decimal("1500.00"), person=person)
    number = sold.ticket.validation_number
    html = desk_client.get(f"/desk/transactions/{sold.pk}/").content.decode()
    assert number not in html
    assert number[-4:] in html  # the masked form keeps the last digits
    assert person.surnames not in html  # only that a person was identified
    assert "person identified" in html


def test_a_reversal_shows_the_receipt_it_reverses(desk_client, shift, cashier, supervisor, casino):
    original = services.chips_buy(shift=shift, user=cashier, chips={"chip_5": 3})
    services.reversal_request(original=original, user=cashier, reason="wrong chips")
    reversal = CashTransaction.objects.filter(kind="reversal").first()
    if reversal is None:  # a reversal is booked when a supervisor approves it
        from cashdesk.models import ReversalRequest

        services.reversal_approve(request=ReversalRequest.objects.get(), supervisor=supervisor)
        reversal = CashTransaction.objects.get(kind="reversal")
    html = _client(supervisor, casino).get(f"/desk/transactions/{reversal.pk}/").content.decode()
    assert original.receipt_number in html


# --- Reports: typed days and moments -------------------------------------------------------------------------


BAD_DAYS = [
    "0000-00-00",
    "9999-12-31",
    "0001-01-01",
    "1999-12-31",
    "3000-01-01",
    "2024-02-30",
    "2024-13-01",
    "x" * 20_000,
    "2024-01-01\x00",
    "\x00",
    "\u0662\u0660\u0662\u0664-\u0660\u0661-\u0660\u0661"  # Arabic-Indic digits,
    "\uff12\uff10\uff12\uff14-\uff10\uff11-\uff10\uff11"  # full-width digits,
    " 2024-01-01 ",
    "2024-1-1",
    "+2024-01-01",
    "20240101",
    "2024-W01-1",
    "2024-01-01T00:00",
    "-1",
]
BAD_MOMENTS = [
    "0000-00-00 00:00",
    "9999-12-31 23:59",
    "2999-12-31 23:59:59",
    "2000-01-01 00:00",
    "1999-12-31 23:59",
    "2024-01-01 24:00",
    "2024-01-01 23:60",
    "2024-01-01 10:00:60",
    "2024-03-31 03:30",  # Vilnius: the hour skipped for summer time
    "2024-10-27 03:30",  # and the hour repeated
    "2024-01-01T10:00+05:00",
    "2024-01-01 10:00Z",
    "\u0662\u0660\u0662\u0664-\u0660\u0661-\u0660\u0661 \u0661\u0660:\u0660\u0660"  # Arabic-Indic digits,
    "x" * 20_000,
    "2024-01-01 10:00\x00",
]
REPORTS = ["daily", "liability", "exceptions", "books", "overshort", "machines", "desks"]


@pytest.fixture
def reports_client(manager, casino):
    return _client(manager, casino)


@pytest.mark.parametrize("value", BAD_DAYS)
@pytest.mark.parametrize("field", ["start", "end"])
def test_a_bad_report_day_is_a_message_never_a_500(reports_client, field, value):
    for kind in ("daily", "desks"):
        for fmt in ("", "csv"):
            response = reports_client.get("/reports/", {"report": kind, field: value, "format": fmt})
            assert response.status_code in (200, 400), (kind, fmt, response.status_code)


@pytest.mark.parametrize("value", BAD_MOMENTS)
def test_a_bad_report_moment_is_a_message_never_a_500(reports_client, value):
    for kind in ("liability", "books"):
        for fmt in ("", "csv"):
            response = reports_client.get("/reports/", {"report": kind, "at": value, "format": fmt})
            assert response.status_code in (200, 400), (kind, fmt, response.status_code)


@pytest.mark.parametrize("kind", REPORTS)
def test_the_widest_period_backwards_and_every_report(reports_client, kind):
    for fmt in ("", "csv"):
        response = reports_client.get(
            "/reports/", {"report": kind, "start": "2999-12-31", "end": "2000-01-01", "format": fmt}
        )
        assert response.status_code == 200, (kind, fmt)


def test_the_report_page_echoes_no_typed_markup(reports_client):
    response = reports_client.get("/reports/", {"start": '"><script>alert(1)</script>'})
    assert response.status_code == 400
    assert "<script>alert(1)" not in response.content.decode()


def test_a_cashier_gets_no_report(desk_client):
    response = desk_client.get("/reports/", {"report": "books", "format": "csv"})
    assert response.status_code in (302, 403)
    assert not response.get("Content-Disposition")


# --- Compliance: typed days ----------------------------------------------------------------------------------


@pytest.fixture
def officer(compliance, casino):
    client = _client(compliance, casino)
    client.post("/compliance/purpose/", {"purpose": "AML review", "next": "/compliance/"})
    return client


@pytest.mark.parametrize("value", BAD_DAYS)
def test_a_bad_register_day_is_a_form_error_never_a_500(officer, value):
    for field in ("start", "end"):
        assert officer.get("/compliance/", {field: value}).status_code in (200, 400), field
        posted = officer.post("/compliance/", {field: value})
        assert posted.status_code in (200, 400), field
        exported = officer.post("/compliance/export/", {field: value})
        assert exported.status_code in (200, 302, 400, 404, 405), field


@pytest.mark.parametrize("value", BAD_DAYS)
def test_a_bad_fcis_day_is_a_form_error_never_a_500(officer, value):
    for fmt in ("", "csv"):
        response = officer.get("/compliance/fcis/", {"day": value, "format": fmt})
        assert response.status_code in (200, 400), fmt


def test_the_fcis_page_echoes_the_typed_day_escaped(officer):
    response = officer.get("/compliance/fcis/", {"day": '"><script>alert(1)</script>'})
    assert response.status_code == 400
    assert "<script>alert(1)" not in response.content.decode()


def test_a_register_filter_on_another_casinos_desk_is_refused(officer, other_casino):
    foreign = Place.objects.create(casino=other_casino, code="X9", name="Svetima kasa")
    response = officer.get("/compliance/", {"desk": str(foreign.pk)})
    assert response.status_code in (200, 400)
    assert "Svetima kasa" not in response.content.decode()


# --- CSV amounts ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "places", "written"),
    [
        (Decimal("-10"), 2, "-10.00"),
        (Decimal("-0.5"), 2, "-0.50"),
        (Decimal("1E+3"), 2, "1000.00"),
        (Decimal("1E-7"), 3, "0.000"),
        (Decimal("0E-10"), 2, "0.00"),
        (Decimal("9999999999.999"), 3, "9999999999.999"),
        (Decimal("-9999999999.99"), None, "-9999999999.99"),
        (Decimal("12.345"), 3, "12.345"),
        (None, 2, ""),
        ("", 2, ""),
        (0, None, "0"),
    ],
)
def test_a_csv_cell_is_fixed_point_with_its_places(value, places, written):
    assert _written(value, places) == written


def test_an_exactly_offset_close_is_not_written_minus_zero(desk_client, reports_client, shift, casino):
    """10 EUR cash over, two 5 EUR chips short: the shift's over/short is nil, never '-0.00'."""
    counted = _count(cash=str(FLOAT["cash"] + 10), chip_5=FLOAT["chip_5"] - 2)
    assert desk_client.post("/desk/close/", counted).status_code == 302
    today = casino.gaming_day(Shift.objects.get(pk=shift.pk).closed_at)
    response = reports_client.get("/reports/", {"report": "overshort", "start": today, "end": today, "format": "csv"})
    rows = response.content.decode().splitlines()
    assert len(rows) == 2, rows
    assert rows[1].endswith(",0.00"), rows[1]


def test_the_csv_writes_no_float_and_no_exponent(desk_client, reports_client, shift, cashier, casino, person):
    services.ticket_sell(shift=shift, user=cashier, amount=Decimal("1500.00"), person=person)
    services.chips_buy(shift=shift, user=cashier, chips={"chip_0_50": 1})
    today = casino.gaming_day(Shift.objects.get(pk=shift.pk).opened_at)
    for kind in REPORTS:
        response = reports_client.get("/reports/", {"report": kind, "start": today, "end": today, "format": "csv"})
        text = response.content.decode()
        assert not re.search(r"\d[eE][+-]?\d", text), (kind, text)
        assert "Decimal(" not in text, kind


# --- The dashboard -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("hour", [0, 6, 23])
def test_the_dashboard_answers_at_any_start_hour_with_no_shift_and_no_ticket(manager, casino, hour):
    casino.gaming_day_start_hour = hour
    casino.save()
    Place.objects.create(casino=casino, code="K1", name="Kasa 1", cash_limit=Decimal("500000.00"))
    response = _client(manager, casino).get("/dashboard/")
    assert response.status_code == 200
    html = unescape(response.content.decode())
    assert "no shift" in html
    assert f"the casino's day starts at {hour:02d}:00" in html


@pytest.mark.parametrize("role", ["cashier", "floor_attendant", "compliance_officer"])
def test_the_dashboard_with_names_on_shift_is_for_managers_and_supervisors(casino, shift, role):
    response = _client(make_user(f"x-{role}", role), casino).get("/dashboard/")
    assert response.status_code in (302, 403)
    # The cashier's username as a word of its own (a CSRF token on the page may hold the letters by chance).
    assert not re.search(r"(?<![A-Za-z0-9])ona(?![A-Za-z0-9])", response.content.decode())


def test_the_dashboard_shows_the_cashiers_name_and_no_customer(manager, casino, shift, cashier, person):
    cashier.first_name, cashier.last_name = "Ona", "Onaitė"
    cashier.save()
    services.ticket_sell(shift=shift, user=cashier, amount=Decimal("1500.00"), person=person)
    html = _client(manager, casino).get("/dashboard/").content.decode()
    assert "Ona Onaitė" in html
    assert person.surnames not in html


def test_a_ticket_sold_and_paid_at_the_desk_is_counted_at_the_desk_not_the_machine(
    manager, casino, shift, cashier, desk_client
):
    sold = services.ticket_sell(shift=shift, user=cashier, amount=Decimal("40.00"))
    paid = desk_client.post("/desk/ticket/pay/", with_key({"number": sold.ticket.validation_number}))
    assert paid.status_code == 302
    html = _client(manager, casino).get("/dashboard/").content.decode()
    assert "Desk tickets today: 1 sold (€40.00), 1 paid (€40.00)." in html
    assert "Machine tickets today: 0 printed by machines (€0.00), 0 played into machines (€0.00)." in html


# --- The favicon ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("query", ["", "?next=https://evil.example/", "?url=//evil.example"])
def test_the_favicon_is_a_local_redirect_for_anyone(db, query):
    response = Client().get(f"/favicon.ico{query}", HTTP_HOST="localhost")
    assert response.status_code == 302
    location = response["Location"]
    assert location.startswith("/"), location
    assert not location.startswith("//"), location
    assert location.endswith(".svg")
    assert "evil" not in location
    assert "login" not in location


# --- Paper with hostile texts --------------------------------------------------------------------------------

ONE_WORD_NAME = "Ž" * 120  # the longest casino name, with no space to break at
ONE_WORD_ADDRESS = "Ozo" + "-" * 100 + "W" * 152  # 255 characters, hyphens then a wall of wide letters


@pytest.fixture
def hostile(casino):
    casino.name = ONE_WORD_NAME
    casino.address = ONE_WORD_ADDRESS
    casino.max_ticket_amount = Decimal("9999999999.99")
    casino.save()
    desk = Place.objects.create(
        casino=casino, code="K1", name="W" * 64, cash_limit=Decimal("9999999999.99"), cash_limit_enforced=False
    )
    cashier = make_user("w" * 150, "cashier")
    shift = services.shift_open(desk=desk, cashier=cashier, counted=FLOAT)
    return {"casino": casino, "desk": desk, "cashier": cashier, "shift": shift}


def _bar_heights(monkeypatch) -> list[float]:
    heights: list[float] = []
    draw = printing.draw_barcode

    def recording(canvas, kind, text, *, x, y, width, height):
        heights.append(height)
        draw(canvas, kind, text, x=x, y=y, width=width, height=height)

    monkeypatch.setattr(printing, "draw_barcode", recording)
    return heights


def test_the_voucher_with_unbreakable_names_is_printed(hostile):
    person = make_person()
    tx = services.ticket_sell(
        shift=hostile["shift"], user=hostile["cashier"], amount=Decimal("999999999.99"), person=person
    )
    for copy in (False, True):
        data = printing.voucher_pdf(tx.ticket, copy=copy)
        assert data.startswith(b"%PDF")


def _sold(hostile):
    return services.ticket_sell(
        shift=hostile["shift"], user=hostile["cashier"], amount=Decimal("999999999.99"), person=make_person()
    )


def test_the_vouchers_bars_keep_8_mm_with_long_names_in_capitals(hostile, monkeypatch):
    heights = _bar_heights(monkeypatch)
    hostile["casino"].name = "KAZINO „DIDŽIOJI LIETUVOS KUNIGAIKŠTYSTĖ“ VILNIAUS AKROPOLIS ANTRAS AUKŠTAS VIP SALĖ"
    hostile["casino"].address = "OZO G. 25, ŠEŠKINĖS SENIŪNIJA, LT-07150 VILNIUS, LIETUVOS RESPUBLIKA " * 3
    hostile["casino"].save()
    Place.objects.filter(pk=hostile["desk"].pk).update(
        name="PAGRINDINĖ KASA ANTRAME AUKŠTE PRIE VIP SALĖS ĮĖJIMO NR. 12 ŠIAURĖ"[:64]
    )
    printing.voucher_pdf(_sold(hostile).ticket, copy=True)
    assert heights
    assert min(heights) >= 8 * mm - 0.01, [h / mm for h in heights]


def test_the_vouchers_bars_keep_8_mm_with_unbroken_names(hostile, monkeypatch):
    heights = _bar_heights(monkeypatch)
    printing.voucher_pdf(_sold(hostile).ticket, copy=True)
    assert heights
    assert min(heights) >= 8 * mm - 0.01, [h / mm for h in heights]


def test_the_receipt_and_the_x_report_with_unbreakable_names_are_printed(hostile):
    tx = services.chips_buy(shift=hostile["shift"], user=hostile["cashier"], chips={"chip_1": 3})
    assert printing.receipt_pdf(tx).startswith(b"%PDF")
    assert printing.shift_report_pdf(hostile["shift"]).startswith(b"%PDF")

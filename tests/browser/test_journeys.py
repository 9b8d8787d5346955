"""The main journeys in a real browser, in Lithuanian (the casinos' default language).

A machine prints a ticket through the API; a cashier opens a shift, pays it (and a 250 EUR one with one scan
and one Enter, never seeing an identity field), sells a ticket,
sells chips over 1000 EUR to a new person, pays a machine receipt and closes with a variance;
a compliance officer finds the register entry and exports it; a floor attendant cannot reach
the payout page; a manager sees the dashboard.
"""

import csv
import datetime as dt
import io
import re
from decimal import Decimal

import pytest
from playwright.sync_api import expect

from cashdesk.management.commands.seed_demo import VAULT_CHIPS
from tests.browser.conftest import ON_BOTH_DATABASES, admit_at_the_door, pick_visitor, printed_ticket
from tests.factories import personal_code

pytestmark = ON_BOTH_DATABASES  # and on `make run`'s SQLite: the demo does what production does

MACHINE_KEY = "demo-tor-1002"  # seed_demo's key for machine 1002 of Casino Tornado (0.001 EUR credits)
FLOAT = {
    "cash": "5000.00",
    "chip_500": "10",
    "chip_100": "20",
    "chip_25": "20",
    "chip_5": "20",
    "chip_1": "50",
    "chip_0_50": "50",
    "token": "200",
}
PERSON_FIELDS = ("personal_code", "document_type", "document_number", "given_names", "surnames", "date_of_birth")
PERSON = {
    "code": personal_code(dt.date(1984, 4, 12), serial=417),
    "given": "Aušra",
    "surname": "Petrauskienė",
    "born": "1984-04-12",
}


def _confirm(screen) -> None:
    screen.page.click("main form button[type=submit]")
    screen.page.wait_for_load_state()


@pytest.fixture(scope="module")
def cashier_day(browser, system):
    """The cashier's shift, step by step with screenshots; what it produced, for the tests that check it."""
    from tests.browser.conftest import ARTIFACTS, Screen

    admit_at_the_door(browser, system, "administratore-tor")
    screen = Screen(browser, system, ARTIFACTS / f"cashier_shift-{system.vendor}")
    page = screen.page
    ticket = printed_ticket(system, MACHINE_KEY, "12.345")
    steps: dict[str, str] = {"ticket": ticket}
    try:
        screen.login("kasininke-tor")
        assert page.url.endswith("/desk/")
        assert page.inner_text("h1") == "Pamainos atidarymas"
        screen.assert_lithuanian()
        screen.shot("open-shift-form")

        page.select_option("#id_desk", label="Kasa 1")
        for item, value in FLOAT.items():
            page.fill(f"#id_{item}", value)
        screen.shot("float-counted")
        page.click("main button[type=submit]")
        page.wait_for_load_state()
        assert "Pamaina atidaryta." in screen.text()
        screen.assert_lithuanian()
        screen.shot("shift-open")

        # The ticket the machine printed: scanned (typed) into the number field, Enter.
        page.fill("#id_number", ticket)
        with page.expect_navigation():
            page.press("#id_number", "Enter")
        assert page.url == f"{system}/desk/ticket/"  # the number went in the body, not the URL
        assert page.inner_text("#payable") == "Išmokėti 12,35\u00a0€"  # 12.345 rounded up to the cent
        screen.assert_lithuanian()
        screen.shot("ticket-scanned")
        # Keyboard only: the pay button has the focus, Enter pays.
        assert page.evaluate("document.activeElement.textContent") == "Išmokėti 12,35\u00a0€"
        with page.expect_navigation():
            page.keyboard.press("Enter")
        assert "Bilieto išmokėjimas" in page.inner_text("h1")
        # What the cashier sees: the receipt itself, its number and amount, on the page (no PDF frame).
        receipt_number = page.inner_text("h1").split("·")[-1].strip()
        shown = page.locator("#receipt-shown")
        expect(shown).to_be_visible()
        expect(shown.locator("h2")).to_contain_text(receipt_number)
        expect(page.locator("#receipt-amount")).to_have_text("12,35\u00a0€")
        assert page.locator("iframe").count() == 0
        screen.assert_lithuanian()
        screen.shot("ticket-paid")
        # P opens the receipt's PDF in a tab of its own, where the browser prints it; no tab crashes.
        with page.expect_popup() as popup:
            page.keyboard.press("p")
        pdf = popup.value
        pdf.wait_for_load_state()
        assert pdf.url == f"{system}/documents/receipt/{page.url.rstrip('/').split('/')[-1]}.pdf"
        pdf.close()
        # Enter: the next customer.
        with page.expect_navigation():
            page.keyboard.press("Enter")
        assert page.url == f"{system}/desk/"

        # A 250 € ticket: one scan, one Enter; no identity field on the way (under the threshold).
        big = printed_ticket(system, MACHINE_KEY, "250.00")
        page.fill("#id_number", big)
        with page.expect_navigation():
            page.press("#id_number", "Enter")
        expect(page.locator("#payable")).to_have_text("Išmokėti 250,00\u00a0€")
        for field in PERSON_FIELDS:
            expect(page.locator(f"#id_{field}")).to_be_hidden()
        screen.shot("ticket-250-scanned")
        with page.expect_navigation():
            page.keyboard.press("Enter")
        assert "Bilieto išmokėjimas" in page.inner_text("h1")
        expect(page.locator("#receipt-amount")).to_have_text("250,00\u00a0€")
        screen.shot("ticket-250-paid")

        # Paying it again is refused, saying when and where it was paid. The number goes in the form's body,
        # never in the URL (access logs): the page's address names no ticket.
        page.goto(system + "/desk/")
        page.fill("#id_number", ticket)
        with page.expect_navigation():
            page.press("#id_number", "Enter")
        assert "Jau išmokėtas" in page.inner_text("#refusal")
        assert page.url == f"{system}/desk/ticket/"
        screen.shot("ticket-paid-twice-refused")

        page.goto(system + "/desk/")
        with page.expect_navigation():  # a link: its page loaded (and focused) before the focus is read
            page.click("text=Parduoti bilietą")
        assert page.evaluate("document.activeElement.id") == "id_amount"  # the amount first
        for field in PERSON_FIELDS:
            expect(page.locator(f"#id_{field}")).to_be_hidden()
        page.fill("#id_amount", "50")
        # A purchase for cash is linked to an admitted visitor (issue 26): Jonas came in through the door today.
        pick_visitor(page)
        expect(page.locator("#visitor-detail")).to_contain_text("galioja iki 2030-01-01")  # once picked
        screen.shot("sell-ticket-form")
        _confirm(screen)
        assert "Bilieto pardavimas" in page.inner_text("h1")
        assert page.is_visible("#voucher")
        screen.assert_lithuanian()
        screen.shot("ticket-sold")

        # Chips for 1 500 EUR: over the threshold, so the person is identified first.
        page.goto(system + "/desk/chips/")
        page.select_option("#id_direction", "buy")
        page.fill("#id_chip_500", "3")
        expect(page.locator("#running-total")).to_have_text("1\u00a0500,00\u00a0€")  # as the cashier types
        screen.shot("chips-running-total")
        _confirm(screen)
        assert "Daugiau nei 1\u00a0000,00\u00a0€: prieš šią operaciją nustatykite asmens tapatybę." in screen.text()
        expect(page.locator("#id_personal_code")).to_be_visible()  # the person's fields open, with the reason
        expect(page.locator("#person-required")).to_be_visible()
        screen.assert_lithuanian()
        screen.shot("chips-refused-without-person")
        page.fill("#id_personal_code", PERSON["code"])
        page.select_option("#id_document_type", "id_card")
        page.fill("#id_document_number", "LT4471234")
        page.fill("#id_document_expiry", "2031-05-31")
        page.fill("#id_given_names", PERSON["given"])
        page.fill("#id_surnames", PERSON["surname"])
        page.fill("#id_date_of_birth", PERSON["born"])
        screen.shot("chips-person-entered")
        _confirm(screen)
        assert "Grynieji į žetonus" in page.inner_text("h1")
        assert page.inner_text("#receipt-amount") == "1\u00a0500,00\u00a0€"
        screen.assert_lithuanian()
        screen.shot("chips-sold")
        steps["chips_receipt"] = page.inner_text("h1").split("·")[-1].strip()

        # A machine receipt written by the floor attendant, paid at the desk.
        page.goto(system + "/desk/")
        floor = Screen(browser, system, ARTIFACTS / f"cashier_shift-{system.vendor}" / "floor")
        try:
            floor.login("salesdarbuotojas-tor")
            floor.page.fill("#id_asset_number", "1001")
            floor.page.fill("#id_amount", "25.00")
            floor.page.click("main form button[type=submit]")
            floor.page.wait_for_load_state()
            message = floor.page.inner_text(".messages")
            floor.assert_lithuanian()
            floor.shot("machine-receipt-recorded")
        finally:
            floor.close()
        receipt = re.search(r"Kvitas nr\. (\d+) \(kontrolinis kodas (\d+)\) užregistruotas", message)
        assert receipt, message
        page.goto(system + "/desk/receipt-payout/")
        page.fill("#id_receipt_number", receipt.group(1))
        page.fill("#id_check_code", receipt.group(2))
        _confirm(screen)
        assert "Automato kvito išmokėjimas" in page.inner_text("h1")
        screen.assert_lithuanian()
        screen.shot("machine-receipt-paid")

        # Close, blind: no expected figure on the page while counting.
        # Expected cash 5 000 − 12,35 − 250 + 50 + 1 500 − 25 = 6 262,65; counted 10 EUR less.
        page.goto(system + "/desk/close/")
        assert page.locator("#balances").count() == 0
        assert "6\u00a0262,65" not in screen.text()
        counted = dict(FLOAT, cash="6252.65", chip_500="7")
        for item, value in counted.items():
            page.fill(f"#id_{item}", value)
        expect(page.locator("#running-total")).to_be_visible()
        screen.shot("closing-count")
        _confirm(screen)
        assert re.search(r"/shifts/\d+/$", page.url), page.url
        closed = page.inner_text(".messages .success")  # Shift N closed: counted …, variance …
        assert "12\u00a0627,65\u00a0€" in closed, closed  # all that was counted: cash and pieces
        assert "-10,00\u00a0€" in closed, closed
        closing = page.locator("table").last.inner_text()
        assert re.search(r"Grynieji\t6\u00a0262,65\u00a0€\t6\u00a0252,65\u00a0€\t-10,00\u00a0€", closing), closing
        screen.assert_lithuanian()
        screen.shot("shift-closed-with-variance")
        steps["shift_url"] = page.url
    finally:
        screen.close()
    return steps


def test_a_cashier_works_a_shift_in_lithuanian(cashier_day):
    assert cashier_day["shift_url"]
    assert cashier_day["chips_receipt"]


def test_compliance_finds_the_entry_and_exports_it(cashier_day, screens):
    screen = screens("compliance")
    page = screen.page
    screen.login("atitiktis-tor")
    page.goto(screen.base + "/compliance/")
    assert page.inner_text("h1") == "Asmens duomenys: nurodykite tikslą"  # purpose first, then personal data
    screen.shot("purpose-asked")
    page.fill("#id_purpose", "Patikrinimas: žetonų pirkimas virš 1000 EUR")
    page.click("main form button[type=submit]")
    page.wait_for_load_state()
    assert page.inner_text("h1") == "Asmenų registracijos žurnalas"
    page.fill("#id_person_code", PERSON["code"])
    page.click("main form button[type=submit]")
    page.wait_for_load_state()
    rows = page.locator("table tr").all_inner_texts()
    found = [row for row in rows if PERSON["surname"] in row]
    assert len(found) == 1, rows
    assert "1\u00a0500,00\u00a0€" in found[0]
    assert "Grynieji į žetonus" in found[0]
    screen.assert_lithuanian()
    screen.shot("entry-found")

    with page.expect_download() as download_info:
        page.click("#export-csv")
    exported = download_info.value.path().read_text(encoding="utf-8-sig")
    lines = list(csv.reader(io.StringIO(exported)))
    matching = [line for line in lines if PERSON["code"] in line]
    assert len(matching) == 1, lines[:3]
    assert Decimal("1500.00") in {Decimal(value) for value in matching[0] if re.fullmatch(r"\d+\.\d{2}", value)}
    with page.expect_download() as pdf_info:
        page.click("#export-pdf")
    assert pdf_info.value.path().read_bytes().startswith(b"%PDF")
    screen.shot("exported")
    page.goto(screen.base + "/compliance/access-log/")
    log = screen.text()
    assert "Patikrinimas: žetonų pirkimas virš 1000 EUR" in log  # every search and export is logged with its purpose
    screen.assert_lithuanian()
    screen.shot("access-log")


def test_a_floor_attendant_cannot_reach_the_payout_page(screens, system):
    screen = screens("floor_attendant")
    page = screen.page
    screen.login("salesdarbuotojas-tor")
    assert page.url.endswith("/floor/receipts/")
    assert page.locator("header a[href='/desk/']").count() == 0  # no cash-desk link for this role
    screen.shot("start-page")
    for path in ("/desk/", "/desk/ticket/", "/desk/sell/"):
        response = screen.go(path)
        assert response.status == 403, path
        assert page.inner_text("#forbidden") == "Neleidžiama"
        screen.assert_lithuanian()
    screen.shot("payout-page-refused")
    # A forged POST to the payout endpoint is refused the same way.
    refused = page.request.post(system + "/desk/ticket/pay/", form={"number": "1"})
    assert refused.status == 403


def test_a_supervisor_counts_the_vault_into_the_books(screens, system):
    screen = screens("supervisor")
    page = screen.page
    screen.login("pamainosvadove-tor")
    screen.go("/supervisor/")
    page.click("a[href='/supervisor/vault/']")
    page.wait_for_load_state()
    assert page.inner_text("h1") == "Seifas"
    screen.assert_lithuanian()
    screen.shot("vault-before-count")
    # seed_demo counted the vault in and filled its kiosks from it: the supervisor finds what the books say.
    ((total,),) = system.sql(
        "SELECT coalesce(sum(l.amount), 0) FROM cashdesk_leg l JOIN cashdesk_cashdesk d ON d.id = l.desk_id "
        "JOIN machines_casino c ON c.id = d.casino_id WHERE d.kind = 'vault' AND c.code = 'TOR' AND l.item = 'cash'"
    )
    held = Decimal(str(total)).quantize(Decimal("0.01"))  # SQLite sums in floating point
    page.fill("#id_cash", f"{held:.2f}")
    for item, pieces in VAULT_CHIPS.items():  # the chips seed_demo counted in, for the tables
        page.fill(f"#id_{item}", str(pieces))
    page.click("main form button[type=submit]")
    page.wait_for_load_state()
    assert "Saugykla suskaičiuota; skirtumas nuo apskaitos: 0,00" in page.inner_text(".messages")
    holdings = page.locator("table").first.inner_text().replace("\xa0", " ")
    assert f"{held:,.2f}".replace(",", " ").replace(".", ",") in holdings, holdings
    screen.assert_lithuanian()
    screen.shot("vault-counted")


def test_a_supervisor_reprints_a_desk_ticket_as_a_copy(cashier_day, screens, system):
    """The voucher the cashier sold, after her shift closed: only a supervisor's copy, with a reason, recorded."""
    rows = system.sql(
        "SELECT id, validation_number FROM tickets_ticket WHERE issuing_desk_id IS NOT NULL ORDER BY id DESC LIMIT 1"
    )
    assert rows
    ticket_id, number = rows[0]
    screen = screens("supervisor")
    page = screen.page
    screen.login("pamainosvadove-tor")
    screen.go("/supervisor/")
    assert number not in screen.text()
    page.fill("#id_reprint-number", number)
    page.fill("#id_reprint-reason", "Užstrigo spausdintuvas")
    screen.assert_lithuanian()
    screen.shot("reprint-asked")
    with page.expect_popup() as popup:
        page.click("form[action='/supervisor/tickets/reprint/'] button[type=submit]")
    copy = popup.value
    copy.wait_for_load_state()
    screen.shot("reprint-opened")
    copy.close()
    event = system.sql(
        "SELECT e.reason, u.username FROM tickets_ticketevent e JOIN auth_user u ON u.id = e.user_id"
        " WHERE e.ticket_id = %s AND e.kind = 'reprinted'",
        (ticket_id,),
    )
    assert event == [("Užstrigo spausdintuvas", "pamainosvadove-tor")]


def test_a_manager_sees_the_day_at_a_glance(cashier_day, screens):
    screen = screens("manager")
    page = screen.page
    screen.login("vadovas-tor")
    assert page.url.endswith("/dashboard/")
    for chart in ("#flow-chart svg", "#trend-chart svg", "#desk-chart svg"):
        assert page.locator(chart).is_visible(), chart
    out_bars = page.locator("#flow-chart rect.out[data-value]")
    assert sum(int(value) for value in out_bars.evaluate_all("bars => bars.map(b => b.dataset.value)")) >= 2
    assert "Neišmokėti įsipareigojimai" in screen.text()
    screen.assert_lithuanian()
    screen.shot("dashboard-lt")
    page.click("header button[value=en]")  # the language switch
    page.wait_for_load_state()
    assert page.inner_text("h1").startswith("Dashboard")
    screen.shot("dashboard-en")
    page.click("header button[value=lt]")
    page.wait_for_load_state()
    assert page.inner_text("h1").startswith("Apžvalga")

    # The books after the cashier's day: every item's places and counterparties sum to zero.
    page.goto(page.url.split("/dashboard/")[0] + "/reports/?report=books")
    rows = page.locator("table tr").all_inner_texts()
    totals = [row for row in rows if row.startswith("Iš viso (visada nulis)")]
    assert totals, rows
    assert all(row.split("\t")[-1].replace("\xa0", " ").strip() == "0,00 €" for row in totals), totals
    assert any(row.startswith("Perteklius / trūkumas") and "10,00" in row for row in rows), rows
    screen.assert_lithuanian()
    screen.shot("books")

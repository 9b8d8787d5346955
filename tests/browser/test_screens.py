"""Every role's screens in Lithuanian on a 1366×768 workstation, kept as artifacts to look at.

test-artifacts/browser/screens/<role>/NN-<screen>.png is what the member of staff sees on the screen without
scrolling (1366×768); the same name with -page is the whole page. Each screen is checked for what a screenshot
cannot be trusted to show: no English word on it, nothing wider than the screen (no sideways scrolling), every
visible field with a label. Casino Admiral's staff, so that the journeys in test_journeys.py (Casino Tornado)
are not disturbed.
"""

from collections.abc import Iterator
from typing import Any

import pytest

from tests.browser.conftest import admit_at_the_door, pick_visitor, printed_ticket, td1_mrz

WIDTH, HEIGHT = 1366, 768
PRINTER_KEY = "demo-adm-1001"  # seed_demo's key for machine 1001 of Casino Admiral

# Inputs a member of staff can see that no <label>, aria-label or aria-labelledby names.
UNLABELLED = """() => [...document.querySelectorAll('main input, main select, main textarea')]
  .filter((field) => field.type !== 'hidden' && field.offsetParent !== null)
  .filter((field) => !(field.labels && field.labels.length) && !field.getAttribute('aria-label')
    && !field.getAttribute('aria-labelledby'))
  .map((field) => field.name || field.id || field.outerHTML.slice(0, 60))"""


class Workstation:
    def __init__(self, screen: Any, role: str) -> None:
        self.screen = screen
        self.page = screen.page
        self.page.set_viewport_size({"width": WIDTH, "height": HEIGHT})
        self.folder = screen.folder
        self.role = role

    def look(self, name: str) -> None:
        """Screenshot what is on the screen and the whole page; check the language, the width and the labels."""
        self.page.wait_for_load_state()
        self.screen.steps += 1  # numbered after the login's own screenshots
        self.folder.mkdir(parents=True, exist_ok=True)
        self.page.screenshot(path=str(self.folder / f"{self.screen.steps:02d}-{name}.png"))
        self.page.screenshot(path=str(self.folder / f"{self.screen.steps:02d}-{name}-page.png"), full_page=True)
        self.screen.assert_lithuanian()
        overflow = self.page.evaluate("document.documentElement.scrollWidth")
        assert overflow <= WIDTH, f"{self.role} {name}: {overflow} px wide on a {WIDTH} px screen"
        unlabelled = self.page.evaluate(UNLABELLED)
        assert not unlabelled, f"{self.role} {name}: fields without a label: {unlabelled}"

    def visit(self, path: str, name: str) -> None:
        response = self.screen.go(path)
        assert response is not None, path
        assert response.status == 200, (path, response.status)
        self.look(name)


@pytest.fixture
def workstation(browser: Any, system: str) -> Iterator[Any]:
    from tests.browser.conftest import ARTIFACTS, Screen

    opened: list[Screen] = []

    def open_workstation(role: str, username: str) -> Workstation:
        screen = Screen(browser, system, ARTIFACTS / "screens" / role)
        opened.append(screen)
        screen.login(username)
        return Workstation(screen, role)

    yield open_workstation
    for screen in opened:
        screen.close()


def test_cashier_screens(workstation, system):
    desk = workstation("cashier", "kasininke-adm")
    page = desk.page
    desk.look("open-shift")
    page.select_option("#id_desk", index=1)
    page.fill("#id_cash", "3000")
    page.fill("#id_chip_100", "10")
    page.fill("#id_token", "100")
    with page.expect_navigation():
        page.click("main button[type=submit]")
    desk.look("desk")

    page.fill("#id_number", printed_ticket(system, PRINTER_KEY, "250.00"))
    with page.expect_navigation():
        page.press("#id_number", "Enter")
    desk.look("ticket-250")
    with page.expect_navigation():
        page.keyboard.press("Enter")
    desk.look("ticket-paid")

    for path, name in [
        ("/desk/sell/", "sell"),
        ("/desk/chips/", "chips"),
        ("/desk/tokens/", "tokens"),
        ("/desk/smartcard/", "smartcard-payout"),
        ("/desk/smartcard/load/", "smartcard-load"),
        ("/desk/receipt-payout/", "machine-receipt-payout"),
        ("/desk/transfer/", "vault-transfer"),
        ("/desk/handover/", "handover-count"),
    ]:
        desk.visit(path, name)
    desk.screen.go("/desk/chips/")
    page.fill("#id_chip_100", "3")
    page.fill("#id_chip_5", "7")
    desk.look("chips-typed")

    desk.visit("/desk/close/", "close-count")
    page.fill("#id_cash", "2750")
    page.fill("#id_chip_100", "10")
    page.fill("#id_token", "99")
    with page.expect_navigation():
        page.click("main button[type=submit]")
    assert "/shifts/" in page.url
    desk.look("shift-closed")


def test_floor_attendant_screens(workstation):
    floor = workstation("floor", "salesdarbuotojas-adm")
    floor.visit("/floor/receipts/", "machine-receipts")


def test_pit_supervisor_screens(workstation, browser, system):
    """The pit, then a table's day on its pages: opened with a count, a buy-in refused until the person is
    identified, one recorded for a visitor admitted at the door, the closing with the table's result."""
    admit_at_the_door(browser, system, "administratore-adm", td1_mrz("MANTAS", "RIMKUS", "1987-08-21", "40517788"))
    pit = workstation("pit", "salesvadove-adm")
    pit.visit("/pit/", "pit")
    page = pit.page
    with page.expect_navigation():
        page.click("table.pit tbody tr:first-child a[href$='/open/']")
    pit.look("table-open")
    page.select_option("#id_croupier", label="Aistė Petraitytė")
    page.fill("#id_chip_100", "20")
    page.fill("#id_chip_25", "40")
    page.fill("#id_chip_5", "100")
    page.fill("#id_chip_1", "10")
    with page.expect_navigation():
        page.click("main button[type=submit]")
    assert "/pit/sessions/" in page.url
    pit.look("table-session")
    with page.expect_navigation():
        page.click("main a[href$='/buy-in/']")
    page.select_option("#id_seat", "3")
    page.fill("#id_amount", "1500")
    page.fill("#id_chip_100", "15")
    with page.expect_navigation():
        page.click("main button[type=submit]")
    assert page.locator("#person-required").is_visible()
    pit.look("buy-in-identify")
    page.fill("#id_amount", "125")
    page.fill("#id_chip_100", "1")
    page.fill("#id_chip_25", "1")
    pick_visitor(page, "RIMKUS")  # today's visitor, admitted at the door (issue 26)
    pit.look("buy-in-visitor-picked")
    with page.expect_navigation():
        page.click("main button[type=submit]")
    assert "/buy-in/" not in page.url
    # A 25 chip changed for five 5s: the tray's value stays.
    with page.expect_navigation():
        page.click("main a[href$='/exchange/']")
    page.select_option("#id_seat", "3")
    page.fill("#id_in_chip_25", "1")
    page.fill("#id_out_chip_5", "5")
    pit.look("chips-exchange")
    with page.expect_navigation():
        page.click("main button[type=submit]")
    assert page.locator("#exchanges").is_visible()
    # Learning chips for 1 EUR of value chips; two come back for a 1 EUR chip, in the player's favour.
    with page.expect_navigation():
        page.click("main a[href$='/colour/']")
    page.select_option("#id_colour", "blue")
    page.select_option("#id_value", "0.01")
    page.select_option("#id_seat", "5")
    page.fill("#id_chip_5", "1")
    pit.look("colour-chips")
    with page.expect_navigation():
        page.click("main button[type=submit]")
    with page.expect_navigation():
        page.click("#colour-chips a[href$='/back/']")
    pit.look("colour-chips-back")
    page.fill("#id_returned", "2")
    page.fill("#id_chip_1", "1")
    with page.expect_navigation():
        page.click("main button[type=submit]")
    pit.look("table-with-colour-chips")
    # A credit of two 25 chips to the vault: asked for at the table, received by the shift supervisor, confirmed.
    with page.expect_navigation():
        page.click("main a[href*='kind=to_cage']")
    page.fill("#id_chip_25", "2")
    pit.look("credit-asked")
    with page.expect_navigation():
        page.click("main button[type=submit]")
    session_url = page.url
    supervisor = workstation("pit-cage", "pamainosvadove-adm")
    supervisor.visit("/supervisor/", "supervision-with-a-slip")
    with supervisor.page.expect_navigation():
        supervisor.page.click("#table-slips + table button[type=submit]")
    page.goto(session_url)
    with page.expect_navigation():
        page.click("#slips button:has-text('Patvirtinti prie stalo')")
    pit.look("table-with-a-credit")
    with page.expect_navigation():
        page.click("main a[href$='/close/']")
    pit.look("table-close")
    page.fill("#id_chip_100", "19")
    page.fill("#id_chip_25", "45")
    page.fill("#id_chip_5", "101")
    page.fill("#id_chip_1", "9")
    with page.expect_navigation():
        page.click("main button[type=submit]")
    pit.look("table-result")
    # 3 539 in the tray at the closing against 3 510 opened, 50 credited, 125 dropped: the table won 204
    # (4 of it on learning chips).
    assert "204,00" in page.inner_text("table.result")


def test_supervisor_screens(workstation):
    supervisor = workstation("supervisor", "pamainosvadove-adm")
    for path, name in [
        ("/dashboard/", "dashboard"),
        ("/supervisor/", "supervision"),
        ("/supervisor/vault/", "vault"),
        ("/supervisor/lockouts/", "lockouts"),
    ]:
        supervisor.visit(path, name)


def test_manager_screens(workstation):
    manager = workstation("manager", "vadovas-adm")
    manager.visit("/dashboard/", "dashboard")
    for kind in ("daily", "liability", "exceptions", "machines", "desks", "books", "overshort", "meters", "tables"):
        manager.visit(f"/reports/?report={kind}", f"report-{kind}")
    manager.visit("/pit/limits/", "table-limits")
    manager.visit("/changes/", "change-log")
    manager.visit("/changes/?object_type=machines.machine", "change-log-machines")


def test_compliance_screens(workstation):
    officer = workstation("compliance", "atitiktis-adm")
    page = officer.page
    officer.look("landing")
    officer.visit("/compliance/purpose/", "purpose")
    page.fill("#id_purpose", "Ekrano peržiūra")
    with page.expect_navigation():
        page.click("main button[type=submit]")
    for path, name in [
        ("/compliance/", "register"),
        ("/compliance/alerts/", "alerts"),
        ("/compliance/self-exclusion/", "self-exclusion"),
        ("/compliance/access-log/", "access-log"),
        ("/compliance/fcis/", "fcis-report"),
    ]:
        officer.visit(path, name)


# A first visit of the receptionist's own (the journeys admit the README's Jonas Petraitis at Casino Tornado).
FIRST_VISITOR = td1_mrz("RASA", "KAVALIAUSKAITE", "1992-02-29", "50623344", male=False)


def test_receptionist_screens(workstation):
    """The door (issue 26): a first visit scanned (the scanner types each line and Enter), completed and admitted."""
    reception = workstation("receptionist", "administratore-adm")
    page = reception.page
    reception.look("landing")
    page.click("#id_scan")
    with page.expect_navigation():
        for line in FIRST_VISITOR:
            page.keyboard.type(line)
            page.keyboard.press("Enter")
    reception.look("first-visit")
    with page.expect_navigation():
        page.click("main button[type=submit]")
    reception.look("admitted")
    assert page.locator(".decision.admitted").count() == 1

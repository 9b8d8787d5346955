"""The drop and the count at Casino Tornado, end to end in the browser, on PostgreSQL and on `make run`'s SQLite.

Machine 1008 takes 150 EUR of notes (its meters say so) and two tickets printed by machine 1007. The floor attendant
starts a drop run with the security officer as witness and takes the box out, its number scanned (a scanner types
it and presses Enter: the form goes on to the next field, it is not sent half filled). Two counters receive the box
and count it on a 1366×768 screen, each blind to the other (the box's figures are on no page until both agree); the
count supervisor approves the count; the manager reads the gaming day's statement and its PDF. Then the books, read
straight from the database.
"""

import datetime as dt
import re
import uuid
from urllib.request import Request, urlopen

from tests.browser.conftest import ON_BOTH_DATABASES, machine_call, printed_ticket
from tests.browser.test_table_journey import _check_the_books

pytestmark = ON_BOTH_DATABASES

PRINTER, PLAYER = "demo-tor-1007", "demo-tor-1008"
WIDTH, HEIGHT = 1366, 768


def _meters(system, bills_in: str, tickets_in: int, amount_in: str) -> None:
    machine_call(
        system,
        PLAYER,
        "POST",
        "meters",
        {
            "request_id": uuid.uuid4().hex,
            "read_at": dt.datetime.now().astimezone().isoformat(),
            "meters": {
                "ticket_out_count": 0,
                "ticket_out_amount": "0.00",
                "ticket_in_count": tickets_in,
                "ticket_in_amount": amount_in,
                "bills_in_amount": bills_in,
            },
        },
    )


def _played(system) -> list[str]:
    numbers = []
    for amount in ("12.50", "7.00"):
        number = printed_ticket(system, PRINTER, amount)
        machine_call(system, PLAYER, "POST", f"tickets/{number}/authorize", {"request_id": uuid.uuid4().hex})
        machine_call(
            system, PLAYER, "POST", f"tickets/{number}/commit", {"request_id": uuid.uuid4().hex, "result": "accepted"}
        )
        numbers.append(number)
    return numbers


def _scan(page, selector: str, code: str) -> None:
    """A barcode scanner as a keyboard: the code typed, then Enter."""
    page.focus(selector)
    page.keyboard.type(code)
    page.keyboard.press("Enter")


def _count(screen, drop_url: str, tickets: list[str], name: str) -> None:
    page = screen.page
    page.goto(drop_url)
    with page.expect_navigation():
        page.click("#boxes a[href*='/count/boxes/']")
    assert "150,00" not in screen.text()  # blind: nothing of what the books expect (the counter's own total aside)
    _scan(page, "#id_box_number", "D-1008")
    assert page.evaluate("document.activeElement.id") == "id_note_500"  # Enter went on, nothing was sent
    page.fill("#id_note_100", "1")
    page.fill("#id_note_50", "1")
    page.focus("#id_tickets")
    for number in tickets:
        page.keyboard.type(number)
        page.keyboard.press("Enter")
    screen.shot(f"{name}-counting")
    screen.assert_lithuanian()
    assert page.evaluate("document.documentElement.scrollWidth") <= WIDTH
    with page.expect_navigation():
        page.click("#box-count button[type=submit]")
    screen.assert_lithuanian()


def test_a_machine_s_box_dropped_counted_blind_and_approved(screens, system):
    _meters(system, "5000.00", 0, "0.00")
    tickets = _played(system)
    _meters(system, "5150.00", 2, "19.50")

    attendant = screens("floor-attendant")
    attendant.login("salesdarbuotojas-tor")
    page = attendant.page
    page.set_viewport_size({"width": WIDTH, "height": HEIGHT})
    attendant.go("/count/")
    page.select_option("#id_witness", label="apsauga-tor")
    with page.expect_navigation():
        page.click("main form button[type=submit]")
    drop_url = page.url
    assert "/count/drops/" in drop_url
    gaming_day = re.search(r"Lošimų dienos (\d{4}-\d\d-\d\d) dėžių išėmimas", attendant.text())[1]
    page.select_option("#id_remove-source", label="Automatas 1008")
    _scan(page, "#id_remove-box_number", "D-1008")
    assert "/count/drops/" in page.url
    assert page.evaluate("document.activeElement.id") == "id_remove-bills_in"  # the meter came from the machine
    with page.expect_navigation():
        page.click("#remove-box button[type=submit]")
    attendant.assert_lithuanian()
    attendant.shot("box-out")
    assert "D-1008" in attendant.text()

    first, second = screens("counter-1"), screens("counter-2")
    first.login("skaiciuotoja-tor")
    second.login("skaiciuotojas-tor")
    for screen in (first, second):
        screen.page.set_viewport_size({"width": WIDTH, "height": HEIGHT})
    first.page.goto(drop_url)
    with first.page.expect_navigation():
        _scan(first.page, "#id_arrive-box_number", "D-1008")  # the only field: Enter sends it
    assert "skaičiavimo patalpoje" in first.text()
    _count(first, drop_url, tickets, "first")
    assert "150,00" not in first.text()
    assert "rodoma, kai du skaičiavimai sutampa" in first.text()
    _count(second, drop_url, tickets, "second")
    assert "150,00" in second.text()
    assert "sutampa 2" in second.text()
    second.shot("counts-agree")

    supervisor = screens("count-supervisor")
    supervisor.login("skaiciavimovadove-tor")
    supervisor.page.set_viewport_size({"width": WIDTH, "height": HEIGHT})
    supervisor.page.goto(drop_url)
    with supervisor.page.expect_navigation():
        supervisor.page.click("#approve-count button[type=submit]")
    assert "Skaičiavimas patvirtintas" in supervisor.text()
    supervisor.assert_lithuanian()
    supervisor.shot("approved")

    manager = screens("manager")
    manager.login("vadovas-tor")
    manager.go(f"/reports/?report=gaming_day&day={gaming_day}")
    manager.assert_lithuanian()
    assert "Automatas 1008" in manager.text()
    manager.shot("statement")
    pdf_url = manager.page.get_attribute("a[href$='statement.pdf']", "href")
    cookies = "; ".join(f"{c['name']}={c['value']}" for c in manager.context.cookies())
    with urlopen(Request(system + pdf_url, headers={"Cookie": cookies})) as response:  # noqa: S310 - our server
        assert response.read().startswith(b"%PDF")

    collected = system.sql("SELECT count(*) FROM tickets_ticketevent WHERE kind = 'collected'")[0][0]
    assert collected >= 2
    _check_the_books(system)

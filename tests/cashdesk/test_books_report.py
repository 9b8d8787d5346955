"""The books: every place and counterparty per item, always summing to zero; over/short per shift."""

import csv
import io
from decimal import Decimal

from django.test import Client
from django.utils import timezone

from cashdesk import reports, services
from cashdesk.books import counterparty_balances, place_balances
from staff.models import StaffAssignment
from tests.cashdesk.conftest import FLOAT


def _day(casino, shift):
    return casino.gaming_day(shift.opened_at)


def test_the_books_sum_to_zero_per_item_and_show_every_place(api, shift, cashier, supervisor, vault, casino, person):
    services.vault_count(vault=vault, user=supervisor, counted={"cash": Decimal("100000.00")})
    services.chips_buy(shift=shift, user=cashier, chips={"chip_100": 3})
    services.ticket_payout(shift=shift, user=cashier, validation_number=api.issued_ticket("12.345"))
    fill = services.transfer_request(shift=shift, user=cashier, direction="fill", amount=Decimal("5000.00"))
    services.transfer_approve(transfer=fill, supervisor=supervisor)

    rows = reports.books(casino, at=timezone.now())

    totals = {row["item"]: row["amount"] for row in rows if row["place"].startswith("Total")}
    assert totals
    assert set(totals.values()) == {Decimal("0.00")}
    by_place = {(row["place"], row["item"]): row["amount"] for row in rows}
    assert by_place[("Kasa 1", "cash")] == FLOAT["cash"] + 300 - Decimal("12.35") + 5000
    assert by_place[("Vault", "cash")] == Decimal("95000.00")
    assert by_place[("Tickets outstanding", "cash")] == Decimal("12.35")
    assert by_place[("Players", "chip_100")] == Decimal("300.00")
    assert by_place[("Opening balances", "cash")] == -(FLOAT["cash"] + Decimal("100000.00"))


def test_a_short_closing_is_posted_to_over_short_and_reported_per_shift(shift, cashier, casino):
    services.shift_close(shift=shift, user=cashier, counted={**FLOAT, "cash": FLOAT["cash"] - 10})

    assert place_balances(shift.desk)["cash"] == FLOAT["cash"] - 10
    assert counterparty_balances(casino)["over_short"]["cash"] == Decimal("10.00")
    day = _day(casino, shift)
    (row,) = reports.over_short(casino, day, day)
    assert (row["desk"], row["cashier"], row["variance"]) == ("Kasa 1", "ona", Decimal("-10.00"))


def test_the_books_report_page_and_csv(shift, cashier, manager, casino):
    services.chips_buy(shift=shift, user=cashier, chips={"chip_5": 2})
    StaffAssignment.objects.create(user=manager, casino=casino)
    client = Client()
    client.force_login(manager)

    page = client.get("/reports/", {"report": "books"})
    assert page.status_code == 200
    assert "Kasa 1" in page.content.decode()
    exported = client.get("/reports/", {"report": "books", "format": "csv"})
    table = list(csv.reader(io.StringIO(exported.content.decode())))
    assert table[0] == ["place", "item", "amount"]
    total = sum(
        Decimal(amount) for place, item, amount in table[1:] if item == "cash" and not place.startswith("Total")
    )
    assert total == 0

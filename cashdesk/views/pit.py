"""The pit (issue 24): the casino's gaming tables with their limits now, their places' holdings and their signs.

The rest of the pit supervisor's day (opening counts, fills, credits, buy-ins, closing) is not built yet.
"""

from dataclasses import dataclass
from decimal import Decimal

from django.http import HttpResponse
from django.shortcuts import render
from django.utils import timezone

from cashdesk.books import place_balances
from cashdesk.models import TablePlaces
from machines.models import GamingTable, Place, TableLimit, table_limit_on
from staff.access import StaffRequest, role_required, staff_casino

PIT = "staff.work_pit"


@dataclass(frozen=True)
class TableRow:
    table: GamingTable
    limit: TableLimit | None
    tray: Decimal
    drop_box: Decimal


def _held(place: Place) -> Decimal:
    """What a place holds in the books, every item at its value (the tray's chips, the box's cash)."""
    return sum(place_balances(place).values(), Decimal("0.00"))


@role_required(PIT)
def pit(request: StaffRequest) -> HttpResponse:
    casino = staff_casino(request)
    today = casino.gaming_day(timezone.now())
    rows = []
    for books in TablePlaces.objects.filter(table__casino=casino).select_related("table", "tray", "drop_box"):
        rows.append(TableRow(books.table, table_limit_on(books.table, today), _held(books.tray), _held(books.drop_box)))
    rows.sort(key=lambda row: row.table.number)
    return render(request, "cashdesk/pit.html", {"rows": rows, "gaming_day": today})

import csv
import datetime as dt
import re
from decimal import Decimal
from typing import Any

from django.contrib import messages
from django.http import HttpResponse, HttpResponsePermanentRedirect, QueryDict
from django.shortcuts import render
from django.utils import timezone
from django.utils.formats import date_format, number_format
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from cashdesk import gaming_day, reports
from cashdesk.forms import GamingDayAdjustForm, OperationForm
from cashdesk.items import Item
from cashdesk.models import TransactionKind
from casino_office.money import format_money
from casino_office.replica import replica_notice
from machines.models import Casino
from staff.access import StaffRequest, role_required, staff_casino

REPORTS = {
    "daily": gettext_lazy("Tickets per gaming day"),
    "liability": gettext_lazy("Outstanding ticket liability"),
    "exceptions": gettext_lazy("Exceptions"),
    "machines": gettext_lazy("Per machine"),
    "desks": gettext_lazy("Per cash desk"),
    "books": gettext_lazy("Books"),
    "overshort": gettext_lazy("Over/short per shift"),
    "meters": gettext_lazy("Meters against tickets"),
    "kiosks": gettext_lazy("Per kiosk"),
    "transfers": gettext_lazy("Vault transfers"),
    "tables": gettext_lazy("Gaming tables"),
    "gaming_day": gettext_lazy("Gaming day statement"),
}
# The reports of one gaming day (`day`), not of a period.
DAY_REPORTS = ("meters", "gaming_day")
GAMING_DAY_COLUMNS = ["line", *gaming_day.AMOUNTS]
DAILY_COLUMNS = ["day", "issued_count", "issued_amount", "redeemed_count", "redeemed_amount"]
DAILY_COLUMNS += ["expired_count", "expired_amount"]
# Column headers on screen; the CSV keeps the keys (stable for spreadsheets and scripts).
COLUMN_LABELS = {
    "day": gettext_lazy("Gaming day"),
    "issued_count": gettext_lazy("Issued"),
    "issued_amount": gettext_lazy("Amount issued"),
    "redeemed_count": gettext_lazy("Redeemed"),
    "redeemed_amount": gettext_lazy("Amount redeemed"),
    "expired_count": gettext_lazy("Expired"),
    "expired_amount": gettext_lazy("Amount expired"),
    "at": gettext_lazy("At"),
    "count": gettext_lazy("Tickets"),
    "amount": gettext_lazy("Amount"),
    "when": gettext_lazy("When"),
    "kind": gettext_lazy("Kind"),
    "ticket": gettext_lazy("Ticket"),
    "where": gettext_lazy("Where"),
    "detail": gettext_lazy("Detail"),
    "machine": gettext_lazy("Machine"),
    "tickets_out": gettext_lazy("Tickets out"),
    "amount_out": gettext_lazy("Amount out"),
    "tickets_in": gettext_lazy("Tickets in"),
    "amount_in": gettext_lazy("Amount in"),
    "n": gettext_lazy("Transactions"),
    "total": gettext_lazy("Total"),
    "place": gettext_lazy("Place"),
    "item": gettext_lazy("Item"),
    "shift": gettext_lazy("Shift"),
    "desk": gettext_lazy("Desk"),
    "cashier": gettext_lazy("Cashier"),
    "opened_at": gettext_lazy("Opened"),
    "closed_at": gettext_lazy("Closed"),
    "variance": gettext_lazy("Over (+) / short (-)"),
    "meter": gettext_lazy("Meter"),
    "meter_change": gettext_lazy("Meters' change"),
    "system": gettext_lazy("System's figure"),
    "difference": gettext_lazy("Difference"),
    "note": gettext_lazy("Note"),
    "kiosk": gettext_lazy("Kiosk"),
    "paid_count": gettext_lazy("Tickets paid"),
    "paid_amount": gettext_lazy("Cash paid out"),
    "printed_count": gettext_lazy("Tickets printed"),
    "printed_amount": gettext_lazy("Cash taken in"),
    "fill_count": gettext_lazy("Fills"),
    "fill_amount": gettext_lazy("Cash filled"),
    "drop_count": gettext_lazy("Drops"),
    "drop_counted": gettext_lazy("Counted at drops"),
    "cash_end": gettext_lazy("Cash at the end"),
    "receipt": gettext_lazy("Receipt"),
    "pieces": gettext_lazy("Pieces"),
    "approver": gettext_lazy("Approved by"),
    "table": gettext_lazy("Table"),
    "game": gettext_lazy("Game"),
    "opening": gettext_lazy("Opening tray"),
    "fills": gettext_lazy("Fills"),
    "credits": gettext_lazy("Credits"),
    "buy_ins": gettext_lazy("Buy-ins"),
    "drop": gettext_lazy("Drop (recorded)"),
    "closing": gettext_lazy("Closing tray"),
    "win": gettext_lazy("Win"),
    "hold": gettext_lazy("Hold (%)"),
    "line": gettext_lazy("Line"),
    "notes": gettext_lazy("Notes dropped (counted)"),
    "handpays": gettext_lazy("Handpays"),
    "receipts": gettext_lazy("Machine receipts"),
    "table_win": gettext_lazy("Table win (recorded)"),
    "count_difference": gettext_lazy("Count difference"),
    "result": gettext_lazy("Result"),
    "turnover": gettext_lazy("Turnover (bets, table drop)"),
}
# The meters a machine reports (machine contract v1.1), as the page names them; the CSV keeps the keys.
METER_LABELS = {
    "ticket_out_count": gettext_lazy("Tickets out (count)"),
    "ticket_out_amount": gettext_lazy("Tickets out (amount)"),
    "ticket_in_count": gettext_lazy("Tickets in (count)"),
    "ticket_in_amount": gettext_lazy("Tickets in (amount)"),
    "handpay_count": gettext_lazy("Handpays (count)"),
    "handpay_amount": gettext_lazy("Handpays (amount)"),
    # Against the machine receipts written on the floor for the machine.
    "attendant_paid_count": gettext_lazy("Machine receipts paid by an attendant (count)"),
    "attendant_paid_amount": gettext_lazy("Machine receipts paid by an attendant (amount)"),
    # Kiosks: against the cash their books say they dispensed for tickets and took in for printed ones.
    "cash_dispensed_amount": gettext_lazy("Cash dispensed (kiosk)"),
    "bills_in_amount": gettext_lazy("Notes taken in (kiosk)"),
}

# Counts and amounts: right-aligned on the page.
NUMERIC_COLUMNS = {
    *(f"{label}_{part}" for label in ("issued", "redeemed", "expired") for part in ("count", "amount")),
    *("count", "amount", "tickets_out", "amount_out", "tickets_in", "amount_in", "n", "total", "variance"),
    *("meter_change", "system", "difference"),
    *("paid_count", "paid_amount", "printed_count", "printed_amount", "fill_count", "fill_amount"),
    *("drop_count", "drop_counted", "cash_end", "pieces"),
    *("opening", "fills", "credits", "buy_ins", "drop", "closing", "win", "hold"),
    *gaming_day.AMOUNTS,
}
# Places of each amount column in the CSV: a ticket's amount to the mill (as the machine and the ticket
# carry it), cash in cents; counts are whole numbers and need no entry.
TICKET_PLACES, CASH_PLACES = 3, 2
CSV_PLACES: dict[str, dict[str, int]] = {
    "daily": dict.fromkeys(("issued_amount", "redeemed_amount", "expired_amount"), TICKET_PLACES),
    "liability": {"amount": TICKET_PLACES},
    "exceptions": {"amount": TICKET_PLACES},
    "machines": {"amount_out": TICKET_PLACES, "amount_in": TICKET_PLACES},
    "desks": {"total": CASH_PLACES},
    "books": {"amount": CASH_PLACES},
    "overshort": {"variance": CASH_PLACES},
    # Meter amounts to the mill like tickets; the count meters are whole numbers and written as such.
    "meters": dict.fromkeys(("meter_change", "system", "difference"), TICKET_PLACES),
    # The kiosks' cash as the books hold it, in cents.
    "kiosks": dict.fromkeys(
        ("paid_amount", "printed_amount", "fill_amount", "drop_counted", "variance", "cash_end"), CASH_PLACES
    ),
    "transfers": {"amount": CASH_PLACES},
    "tables": {**dict.fromkeys(("opening", "fills", "credits", "drop", "closing", "win"), CASH_PLACES), "hold": 1},
    # Tickets to the mill like the tickets' reports; the rest in cents.
    "gaming_day": {
        **dict.fromkeys(gaming_day.AMOUNTS, CASH_PLACES),
        **dict.fromkeys(("tickets_in", "tickets_out", "handpays", "receipts", "result", "turnover"), TICKET_PLACES),
    },
}


# An exception's details (what its event recorded), named in the reader's language on the page and in the
# CSV alike, in this order; a meter's difference is named as the meters report names the meter.
DETAIL_LABELS = {
    "action": gettext_lazy("Action"),
    "desk": gettext_lazy("Desk"),
    "printed": gettext_lazy("Printed amount"),
    "system": gettext_lazy("System's figure"),
    "paid": gettext_lazy("Paid"),
    "holder_machine": gettext_lazy("Holding machine"),
    "hold_expired_at": gettext_lazy("Hold ended"),
    "due": gettext_lazy("Decision due"),
    "pit_supervisor": gettext_lazy("Pit supervisor"),
    "croupier": gettext_lazy("Croupier"),
    "tolerance": gettext_lazy("Tolerance"),
    **METER_LABELS,
}
# Where a paid ticket was presented again (the refusal's "action").
DETAIL_ACTIONS = {
    "authorize": gettext_lazy("ticket-in at a machine"),
    "commit": gettext_lazy("credits taken at a machine"),
    "printed": gettext_lazy("print report of a machine"),
    "cash_payout": gettext_lazy("cash payout at the desk"),
    "hold": gettext_lazy("hold at the desk"),
    "presented": gettext_lazy("presented at the desk"),
}
# Details that are amounts, with their places in the CSV (the rest are moments, days, names or counts).
DETAIL_PLACES = {
    "printed": TICKET_PLACES,
    "system": TICKET_PLACES,
    "paid": CASH_PLACES,
    "tolerance": CASH_PLACES,
    **{meter: TICKET_PLACES for meter in METER_LABELS if meter.endswith("_amount")},
}
DETAIL_MOMENTS, DETAIL_DAYS = {"hold_expired_at"}, {"due"}


def _detail_value(key: str, value: Any, written: bool) -> str:
    try:
        if key in DETAIL_PLACES:
            amount = Decimal(str(value))
            return _written(amount, DETAIL_PLACES[key]) if written else _shown(key, amount)
        if key in DETAIL_MOMENTS:
            moment = dt.datetime.fromisoformat(str(value))
            return _written(moment, None) if written else _shown(key, moment)
        if key in DETAIL_DAYS:
            day = dt.date.fromisoformat(str(value))
            return _written(day, None) if written else _shown(key, day)
    except (ArithmeticError, ValueError):
        pass  # recorded in another form: shown as it was recorded
    if key == "action" and value in DETAIL_ACTIONS:
        return str(DETAIL_ACTIONS[value])
    return str(value)


def _details(details: dict[str, Any], written: bool) -> str:
    """Labelled text, "Action: ticket-in at a machine; Desk: Kasa 1", amounts as the page or the CSV writes them."""
    order = list(DETAIL_LABELS)
    keys = sorted(details, key=lambda key: (order.index(key) if key in order else len(order), key))
    return "; ".join(
        f"{DETAIL_LABELS.get(key, key)}: {_detail_value(key, details[key], written)}"
        for key in keys
        if details[key] is not None and details[key] != ""
    )


def _written(value: Any, places: int | None) -> str:
    """A CSV cell: amounts with a fixed number of places and a point, moments local to the second, days ISO.

    Nil is written unsigned ("0.00", never "-0.00"), whatever sign the sums left on it.
    """
    if value is None:
        return ""
    if isinstance(value, Decimal):
        quantum = Decimal(1).scaleb(-(CASH_PLACES if places is None else places))
        written = value.quantize(quantum)
        return f"{written.copy_abs() if written.is_zero() else written:f}"
    if isinstance(value, dt.datetime):
        return timezone.localtime(value).isoformat(timespec="seconds")
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, dict):
        return _details(value, written=True)
    return str(value)


def _shown(column: str, value: Any) -> str:
    """A cell as the reader's locale writes it."""
    if value is None or value == "":
        return ""
    if column == "hold":  # a share in per cent, not an amount
        return f"{number_format(value, 1)} %"
    if isinstance(value, Decimal):
        return format_money(value.copy_abs() if value.is_zero() else value)
    if isinstance(value, dt.datetime):
        return date_format(timezone.localtime(value), "SHORT_DATETIME_FORMAT")
    if isinstance(value, dt.date):
        return date_format(value, "SHORT_DATE_FORMAT")
    if column == "kind" and value in TransactionKind.values:
        return str(TransactionKind(value).label)
    if column == "item" and value in Item.values:
        return str(Item(value).label)
    if column == "meter" and value in METER_LABELS:
        return str(METER_LABELS[value])
    if isinstance(value, dict):
        return _details(value, written=False)
    return str(value)


# The periods a report may ask for: wide enough for any casino's history, and far enough from the
# calendar's ends (year 1, year 9999) that a gaming day's bounds and time zones never overflow.
FIRST_DAY = dt.date(2000, 1, 1)
LAST_DAY = dt.date(2999, 12, 31)


class BadPeriod(ValueError):
    pass


def _within_range(day: dt.date) -> dt.date:
    if not FIRST_DAY <= day <= LAST_DAY:
        raise BadPeriod(
            _("Choose dates from %(first)s to %(last)s.")
            % {"first": date_format(FIRST_DAY, "SHORT_DATE_FORMAT"), "last": date_format(LAST_DAY, "SHORT_DATE_FORMAT")}
        )
    return day


DAY = re.compile(r"\d{4}-\d{2}-\d{2}")
# As the page shows it (a space), or as the old form and its links sent it (a T); seconds optional.
MOMENT = re.compile(r"\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}(:\d{2})?")


def _date(raw: str | None, default: dt.date) -> dt.date:
    if not raw:
        return default
    try:
        if not DAY.fullmatch(raw.strip()):
            raise ValueError(raw)
        day = dt.date.fromisoformat(raw.strip())
    except ValueError:
        raise BadPeriod(_("Enter dates as YYYY-MM-DD.")) from None
    return _within_range(day)


def _moment(raw: str | None, casino: Casino) -> dt.datetime:
    if not raw:
        return timezone.now()
    try:
        if not MOMENT.fullmatch(raw.strip()):
            raise ValueError(raw)
        moment = dt.datetime.fromisoformat(raw.strip())
    except ValueError:
        raise BadPeriod(_("Enter the moment as YYYY-MM-DD HH:MM.")) from None
    _within_range(moment.date())
    return moment.replace(tzinfo=casino.zoneinfo)


@role_required("staff.view_reports")
def report(request: StaffRequest) -> HttpResponse:
    casino = staff_casino(request)
    if "kind" in request.GET:
        return _renamed_address(request)
    kind = request.GET.get("report", "daily")
    if kind not in REPORTS:
        kind = "daily"
    today = casino.gaming_day(timezone.now())
    start, end, at = today - dt.timedelta(days=6), today, timezone.now()
    day = today - dt.timedelta(days=1)  # the last finished gaming day
    try:
        start = _date(request.GET.get("start"), start)
        end = _date(request.GET.get("end"), end)
        at = _moment(request.GET.get("at"), casino)
        day = _date(request.GET.get("day"), day)
    except BadPeriod as refused:
        # The page again with its default period, saying what was wrong; nothing is read for the bad one.
        messages.error(request, str(refused))
        return _page(request, kind, today - dt.timedelta(days=6), today, timezone.now(), [], [], status=400, day=day)
    if end < start:
        start, end = end, start

    # The gaming day's statement is read once, for its table and for the rest of its page.
    figures = gaming_day.statement(casino, day) if kind == "gaming_day" else None
    columns, rows, start, end = _report_table(kind, casino, start=start, end=end, at=at, day=day, figures=figures)
    if request.GET.get("format") == "csv":
        return _csv_response(casino, kind, start, end, columns, rows)
    return _page(request, kind, start, end, at, columns, rows, day=day, figures=figures)


def _report_table(
    kind: str,
    casino: Casino,
    *,
    start: dt.date,
    end: dt.date,
    at: dt.datetime,
    day: dt.date,
    figures: gaming_day.Statement | None = None,
) -> tuple[list[str], list[dict[str, Any]], dt.date, dt.date]:
    """The report's columns and rows, and the period it covers (the meters report covers its one day)."""
    columns: list[str]
    rows: list[dict[str, Any]]
    if kind == "daily":
        rows = reports.tickets_per_gaming_day(casino, start, end)
        columns = DAILY_COLUMNS
    elif kind == "liability":
        rows = [reports.outstanding_liability(casino, at)]
        columns = ["at", "count", "amount"]
    elif kind == "exceptions":
        rows = reports.exceptions(casino, start, end)
        columns = ["when", "kind", "ticket", "amount", "where", "detail"]
    elif kind == "books":
        rows = reports.books(casino, at)
        columns = ["place", "item", "amount"]
    elif kind == "overshort":
        rows = reports.over_short(casino, start, end)
        columns = ["shift", "desk", "cashier", "opened_at", "closed_at", "variance"]
    elif kind == "machines":
        rows = reports.per_machine(casino, start, end)
        columns = ["machine", "tickets_out", "amount_out", "tickets_in", "amount_in"]
    elif kind == "kiosks":
        rows = reports.kiosks(casino, start, end)
        columns = ["kiosk", "paid_count", "paid_amount", "printed_count", "printed_amount", "fill_count"]
        columns += ["fill_amount", "drop_count", "drop_counted", "variance", "cash_end"]
    elif kind == "transfers":
        rows = reports.transfers(casino, start, end)
        columns = ["when", "receipt", "desk", "kind", "item", "pieces", "amount", "cashier", "approver"]
    elif kind == "tables":
        rows = reports.tables(casino, start, end)
        columns = ["day", "table", "game", "opening", "fills", "credits", "buy_ins", "drop", "closing", "win", "hold"]
    elif kind == "gaming_day":
        rows = (figures or gaming_day.statement(casino, day)).rows
        columns = GAMING_DAY_COLUMNS
        start = end = day
    elif kind == "meters":
        rows = reports.meters(casino, day)
        columns = ["machine", "meter", "meter_change", "system", "difference", "note"]
        start = end = day
    else:
        rows = reports.per_desk(casino, start, end)
        columns = ["desk", "kind", "n", "total"]
    return columns, rows, start, end


def _csv_response(
    casino: Casino, kind: str, start: dt.date, end: dt.date, columns: list[str], rows: list[dict[str, Any]]
) -> HttpResponse:
    """The report as a CSV download: the columns' keys as headers, amounts with the report's places."""
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{casino.code}-{kind}-{start}-{end}.csv"'
    writer = csv.writer(response)
    writer.writerow(columns)
    places = CSV_PLACES.get(kind, {})
    for row in rows:
        writer.writerow([_written(row.get(column, ""), places.get(column)) for column in columns])
    return response


def _renamed_address(request: StaffRequest) -> HttpResponse:
    """The meters report was asked for as `?kind=meters&day=` (issue 13); every report is `?report=` now."""
    query = QueryDict(mutable=True)
    query["report"] = request.GET["kind"]
    for name, values in request.GET.lists():
        if name not in ("kind", "report"):
            query.setlist(name, values)
    return HttpResponsePermanentRedirect(f"{request.path}?{query.urlencode()}")


def _books_example() -> dict[str, str]:
    """The amounts of the books' explanation (a ticket sold for 37.65, a desk counted 10.00 short), written as
    the reader's language writes amounts: outside the translated sentence, which only places them."""
    return {
        "owed": format_money(Decimal("-37.65")),
        "worth": format_money(Decimal("37.65")),
        "over": "+" + format_money(Decimal("10.00")),
        "short": format_money(Decimal("10.00")),
    }


def _page(
    request: StaffRequest,
    kind: str,
    start: dt.date,
    end: dt.date,
    at: dt.datetime,
    columns: list[str],
    rows: list[dict[str, Any]],
    status: int = 200,
    day: dt.date | None = None,
    figures: gaming_day.Statement | None = None,
) -> HttpResponse:
    extra = _gaming_day_context(request, figures) if figures is not None and status == 200 else {}
    numeric = [column in NUMERIC_COLUMNS for column in columns]
    # Each row's cells, and whether it is a totals row (set apart on the page).
    table = [
        (
            [(_shown(column, row.get(column, "")), num) for column, num in zip(columns, numeric, strict=True)],
            bool(row.get("_total")),
        )
        for row in rows
    ]
    return render(
        request,
        "cashdesk/reports.html",
        {
            "reports": REPORTS,
            "kind": kind,
            "title": REPORTS[kind],
            "columns": [(COLUMN_LABELS[column], num) for column, num in zip(columns, numeric, strict=True)],
            "table": table,
            "start": start,
            "end": end,
            "day": day or end,
            "at": timezone.localtime(at),
            "day_pattern": DAY.pattern,
            "books_example": _books_example() if kind == "books" else {},
            "moment_pattern": MOMENT.pattern,
            "day_reports": DAY_REPORTS,
            "replica": replica_notice() if kind != "gaming_day" else None,  # the statement reads the primary
            **extra,
        },
        status=status,
    )


def _gaming_day_context(request: StaffRequest, figures: gaming_day.Statement) -> dict[str, Any]:
    """The statement's state, its boxes, and the manager's forms: close the day, or adjust it once closed."""
    casino, day = figures.casino, figures.day
    manager = request.user.has_perm("staff.close_gaming_day")
    over = day < casino.gaming_day(timezone.now())
    lines = [(row["key"], row["line"]) for row in figures.rows if not row.get("_adjustment")]
    return {
        "statement": figures,
        "close_form": OperationForm() if manager and over and figures.closable else None,
        "adjust_form": GamingDayAdjustForm(lines=lines) if manager and figures.closed else None,
    }

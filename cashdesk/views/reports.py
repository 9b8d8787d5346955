import csv
import datetime as dt
from typing import Any

from django.http import HttpResponse
from django.shortcuts import render
from django.utils import timezone

from cashdesk import reports
from cashdesk.views.common import StaffRequest, role_required, staff_casino

REPORTS = {
    "daily": "Tickets per gaming day",
    "liability": "Outstanding ticket liability",
    "exceptions": "Exceptions",
    "machines": "Per machine",
    "desks": "Per cash desk",
}


def _date(raw: str | None, default: dt.date) -> dt.date:
    try:
        return dt.date.fromisoformat(raw) if raw else default
    except ValueError:
        return default


@role_required("cashdesk.view_reports")
def report(request: StaffRequest) -> HttpResponse:
    casino = staff_casino(request)
    kind = request.GET.get("report", "daily")
    if kind not in REPORTS:
        kind = "daily"
    today = casino.gaming_day(timezone.now())
    start = _date(request.GET.get("start"), today - dt.timedelta(days=6))
    end = _date(request.GET.get("end"), today)
    if end < start:
        start, end = end, start
    at_raw = request.GET.get("at")
    try:
        at = dt.datetime.fromisoformat(at_raw).replace(tzinfo=casino.zoneinfo) if at_raw else timezone.now()
    except ValueError:
        at = timezone.now()

    columns: list[str]
    rows: list[dict[str, Any]]
    if kind == "daily":
        rows = reports.tickets_per_gaming_day(casino, start, end)
        columns = [
            "day",
            "issued_count",
            "issued_amount",
            "redeemed_count",
            "redeemed_amount",
            "expired_count",
            "expired_amount",
        ]
    elif kind == "liability":
        rows = [reports.outstanding_liability(casino, at)]
        columns = ["at", "count", "amount"]
    elif kind == "exceptions":
        rows = reports.exceptions(casino, start, end)
        columns = ["when", "kind", "ticket", "amount", "where", "detail"]
    elif kind == "machines":
        rows = reports.per_machine(casino, start, end)
        columns = ["machine", "tickets_out", "amount_out", "tickets_in", "amount_in"]
    else:
        rows = reports.per_desk(casino, start, end)
        columns = ["desk__code", "kind", "n", "total"]

    if request.GET.get("format") == "csv":
        response = HttpResponse(content_type="text/csv; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="{casino.code}-{kind}-{start}-{end}.csv"'
        writer = csv.writer(response)
        writer.writerow(columns)
        for row in rows:
            writer.writerow([row.get(column, "") for column in columns])
        return response
    table = [[row.get(column, "") for column in columns] for row in rows]
    return render(
        request,
        "cashdesk/reports.html",
        {
            "reports": REPORTS,
            "kind": kind,
            "title": REPORTS[kind],
            "columns": columns,
            "table": table,
            "start": start,
            "end": end,
            "at": timezone.localtime(at),
        },
    )

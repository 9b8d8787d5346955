import datetime as dt
from decimal import Decimal

from django.http import HttpResponse
from django.shortcuts import render
from django.utils import timezone
from django.utils.formats import date_format, time_format
from django.utils.safestring import SafeString
from django.utils.translation import gettext as _

from cashdesk import charts
from cashdesk.dashboard import (
    DeskCash,
    HourRow,
    LiabilityPoint,
    cash_per_desk,
    cash_per_kiosk,
    count_room_today,
    liability_trend,
    open_exceptions,
    tables_today,
    tickets_per_hour,
)
from casino_office.money import format_money
from casino_office.replica import replica_notice
from compliance.selectors import door_day
from machines.models import Casino
from staff.access import StaffRequest, role_required, staff_casino

ZERO = Decimal("0")


def _gaming_day_line(casino: Casino, day: dt.date) -> str:
    """The gaming day in one line: when it starts and ends, and that the casino's configured hour decides it."""
    begin, finish = casino.gaming_day_bounds(day)
    begin, finish = begin.astimezone(casino.zoneinfo), finish.astimezone(casino.zoneinfo)
    return _(
        "Gaming day %(day)s: it runs from %(start)s on %(first)s to %(end)s on %(next)s "
        "(the casino's day starts at %(hour)s)."
    ) % {
        "day": date_format(day, "SHORT_DATE_FORMAT"),
        "start": time_format(begin, "H:i"),
        "first": date_format(begin.date(), "SHORT_DATE_FORMAT"),
        "end": time_format(finish, "H:i"),
        "next": date_format(finish.date(), "SHORT_DATE_FORMAT"),
        "hour": time_format(dt.time(casino.gaming_day_start_hour), "H:i"),
    }


@role_required("staff.view_dashboard")
def dashboard(request: StaffRequest) -> HttpResponse:
    """The manager's and supervisor's start page: today's ticket flow, liability, desk and kiosk cash, exceptions."""
    casino = staff_casino(request)
    now = timezone.now()
    day = casino.gaming_day(now)
    hours = tickets_per_hour(casino, day)
    trend = liability_trend(casino, now)
    desks = cash_per_desk(casino)
    kiosks = cash_per_kiosk(casino)
    context = {
        "day": day,
        "now": now,
        "hours": hours,
        "gaming_day_line": _gaming_day_line(casino, day),
        "totals": _hour_totals(hours),
        "trend": trend,
        "liability_now": trend[-1].amount,
        "liability_month_ago": trend[0].amount,
        "desks": desks,
        "kiosks": kiosks,
        # The kiosks' line and columns of tickets when the casino has kiosks (or its kiosks did something today).
        "show_kiosk_tickets": bool(kiosks) or any(row.kiosk_paid_count or row.kiosk_printed_count for row in hours),
        "low_kiosks": [kiosk for kiosk in kiosks if kiosk.low],
        "kiosk_ceiling": casino.kiosk_payout_ceiling,
        "kiosk_capacity": casino.kiosk_cash_capacity,
        "exceptions": open_exceptions(casino, now),
        "tables": tables_today(casino, day),
        "count_room": count_room_today(casino, day),
        "door": door_day(casino, day),
        "replica": replica_notice(),
        **_dashboard_charts(day, hours, trend, desks),
    }
    return render(request, "cashdesk/dashboard.html", context)


def _dashboard_charts(
    day: dt.date, hours: list[HourRow], trend: list[LiabilityPoint], desks: list[DeskCash]
) -> dict[str, SafeString]:
    """The page's three charts: machine tickets per hour, the liability's trend, each desk's cash against its limit."""
    hour_labels = [f"{row.hour:%H}" for row in hours]
    # Only the machines' tickets: those sold and paid at the desks, and at kiosks, are counted on lines of their own.
    flow_chart = charts.grouped_bars(
        hour_labels,
        [
            charts.Series(_("Printed by machines"), [row.machine_out_count for row in hours], "out"),
            charts.Series(_("Played into machines"), [row.machine_in_count for row in hours], "in"),
        ],
        _("Machine tickets per hour, gaming day %(day)s") % {"day": date_format(day, "SHORT_DATE_FORMAT")},
    )
    trend_chart = charts.line(
        [(date_format(point.day, "SHORT_DATE_FORMAT"), point.amount) for point in trend],
        _("Outstanding liability at the end of each gaming day, last 30 days"),
        format_money,
    )
    desk_chart = charts.limit_bars(
        [(desk.desk.name, desk.cash, desk.limit) for desk in desks],
        _("Cash on hand per desk and its limit"),
        format_money,
    )
    return {"flow_chart": flow_chart, "trend_chart": trend_chart, "desk_chart": desk_chart}


def _hour_totals(hours: list[HourRow]) -> dict[str, Decimal | int]:
    """The day's totals of the hourly table: counts as whole numbers, amounts as Decimal."""
    return {
        field: sum((getattr(row, field) for row in hours), start=ZERO if field.endswith("amount") else 0)
        for field in (
            "machine_out_count",
            "machine_out_amount",
            "machine_in_count",
            "machine_in_amount",
            "desk_sold_count",
            "desk_sold_amount",
            "desk_paid_count",
            "desk_paid_amount",
            "kiosk_paid_count",
            "kiosk_paid_amount",
            "kiosk_printed_count",
            "kiosk_printed_amount",
        )
    }

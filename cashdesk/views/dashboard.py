from django.http import HttpResponse
from django.shortcuts import render
from django.utils import timezone
from django.utils.formats import date_format
from django.utils.translation import gettext as _

from cashdesk import charts
from cashdesk.dashboard import cash_per_desk, liability_trend, open_exceptions, tickets_per_hour
from staff.access import StaffRequest, role_required, staff_casino
from tickets.money import format_money


@role_required("staff.view_dashboard")
def dashboard(request: StaffRequest) -> HttpResponse:
    """The manager's and supervisor's start page: today's ticket flow, liability, desk cash, exceptions."""
    casino = staff_casino(request)
    now = timezone.now()
    day = casino.gaming_day(now)
    hours = tickets_per_hour(casino, day)
    trend = liability_trend(casino, now)
    desks = cash_per_desk(casino)
    hour_labels = [f"{row.hour:%H}" for row in hours]
    flow_chart = charts.grouped_bars(
        hour_labels,
        [
            charts.Series(_("Tickets out"), [row.out_count for row in hours], "out"),
            charts.Series(_("Tickets in"), [row.in_count for row in hours], "in"),
        ],
        _("Tickets in and out per hour, gaming day %(day)s") % {"day": date_format(day, "SHORT_DATE_FORMAT")},
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
    context = {
        "day": day,
        "now": now,
        "hours": hours,
        "totals": {
            "out_count": sum(row.out_count for row in hours),
            "out_amount": sum(row.out_amount for row in hours),
            "in_count": sum(row.in_count for row in hours),
            "in_amount": sum(row.in_amount for row in hours),
        },
        "trend": trend,
        "liability_now": trend[-1].amount,
        "liability_month_ago": trend[0].amount,
        "desks": desks,
        "exceptions": open_exceptions(casino, now),
        "flow_chart": flow_chart,
        "trend_chart": trend_chart,
        "desk_chart": desk_chart,
    }
    return render(request, "cashdesk/dashboard.html", context)

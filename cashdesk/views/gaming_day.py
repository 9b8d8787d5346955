"""The gaming day statement's actions (issue 25): its PDF, and a manager's closing and adjustment of the day. The
statement itself is a report (`/reports/?report=gaming_day`)."""

import datetime as dt
from urllib.parse import urlencode

from django.contrib import messages
from django.http import Http404, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.utils.translation import gettext as _

from cashdesk.forms import GamingDayAdjustForm, OperationForm
from cashdesk.gaming_day import statement
from cashdesk.models import GamingDayClose
from cashdesk.services.gaming_day import gaming_day_adjust, gaming_day_close
from cashdesk.statement_pdf import statement_pdf
from casino_office.errors import DomainError
from staff.access import StaffRequest, role_required, staff_casino

CLOSE = "staff.close_gaming_day"


def _day(raw: str) -> dt.date:
    try:
        return dt.date.fromisoformat(raw)
    except ValueError:
        raise Http404(_("No such gaming day.")) from None


def _back(day: dt.date) -> HttpResponse:
    return redirect(reverse("reports") + "?" + urlencode({"report": "gaming_day", "day": day.isoformat()}))


@role_required("staff.view_reports")
def statement_pdf_view(request: StaffRequest, day: str) -> HttpResponse:
    casino = staff_casino(request)
    when = _day(day)
    response = HttpResponse(statement_pdf(statement(casino, when)), content_type="application/pdf")
    response["Content-Disposition"] = f'inline; filename="{casino.code}-gaming-day-{when.isoformat()}.pdf"'
    return response


@role_required(CLOSE)
def close(request: StaffRequest, day: str) -> HttpResponse:
    when = _day(day)
    if request.method != "POST":
        return _back(when)
    form = OperationForm(request.POST)
    if not form.is_valid():
        messages.error(request, _("This form has expired; open it again from the menu."))
        return _back(when)
    try:
        gaming_day_close(
            casino=staff_casino(request), day=when, user=request.user, operation_key=form.cleaned_data["operation_key"]
        )
    except DomainError as error:
        messages.error(request, error.message)
    else:
        messages.success(request, _("The gaming day is closed: its figures change only by an adjustment."))
    return _back(when)


@role_required(CLOSE)
def adjust(request: StaffRequest, day: str) -> HttpResponse:
    when = _day(day)
    closed = GamingDayClose.objects.filter(casino=staff_casino(request), gaming_day=when).first()
    if request.method != "POST" or closed is None:
        return _back(when)
    form = GamingDayAdjustForm(request.POST, lines=[(row["key"], row["line"]) for row in closed.figures["rows"]])
    if not form.is_valid():
        messages.error(request, " ".join(str(error) for errors in form.errors.values() for error in errors))
        return _back(when)
    try:
        gaming_day_adjust(
            closed=closed,
            line=form.cleaned_data["line"],
            amount=form.cleaned_data["amount"],
            reason=form.cleaned_data["reason"],
            user=request.user,
            operation_key=form.cleaned_data["operation_key"],
        )
    except DomainError as error:
        messages.error(request, error.message)
    else:
        messages.success(request, _("The adjustment is recorded with its reason."))
    return _back(when)

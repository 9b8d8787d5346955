"""Logging in and its second factor, each member's language, the supervisors' page of login lockouts, the change log."""

import csv
import datetime as dt
from typing import Any

import segno
from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBadRequest, HttpResponseRedirect
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST
from django_otp import login as otp_login

from casino_office.redirects import local_path
from machines.models import Casino
from staff import changes, selectors, services
from staff.access import StaffRequest, role_required, staff_casino
from staff.errors import StaffError
from staff.forms import ChangeLogForm, LockoutLiftForm, SecondFactorForm
from staff.login import needs_second_factor
from staff.models import StaffPreference

SUPERVISOR = "staff.supervise_desk"
CHANGE_LOG = "staff.view_change_log"


def _next(request: HttpRequest) -> str:
    target = request.GET.get("next", "")
    if target and url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return target
    return reverse("home")


@login_required
def second_factor(request: StaffRequest) -> HttpResponse:
    """Enrol an authenticator app (a QR code and the key in text), or enter its code; then on to `next`."""
    target = _next(request)
    if not needs_second_factor(request.user) or request.user.is_verified():  # type: ignore[attr-defined]
        return redirect(target)
    device = services.second_factor_device(user=request.user)
    form = SecondFactorForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            device = services.second_factor_check(device=device, code=form.cleaned_data["code"])
        except StaffError as error:
            form.add_error("code", error.message)
        else:
            request.session.cycle_key()  # a new session key for the fully logged-in session
            otp_login(request, device)
            return redirect(target)
    context: dict[str, object] = {"form": form, "enrolling": not device.confirmed}
    if not device.confirmed:
        context["qr"] = segno.make(device.config_url, error="m").svg_data_uri(scale=5, border=2)
        context["secret"] = services.second_factor_secret(device)
    return render(request, "staff/second_factor.html", context)


@role_required(SUPERVISOR)
def lockouts(request: StaffRequest) -> HttpResponse:
    casino = staff_casino(request)
    accounts, addresses = selectors.lockouts_for(casino)
    return render(
        request,
        "staff/lockouts.html",
        {
            "accounts": accounts,
            "addresses": addresses,
            "lifts": selectors.recent_lifts(casino),
            "limit": settings.AXES_FAILURE_LIMIT,
        },
    )


@require_POST
@role_required(SUPERVISOR)
def lockout_lift(request: StaffRequest) -> HttpResponse:
    form = LockoutLiftForm(request.POST)
    if not form.is_valid():
        return HttpResponseBadRequest(_("No such lockout."), content_type="text/plain; charset=utf-8")
    try:
        lift = services.lockout_lift(
            kind=form.cleaned_data["kind"],
            value=form.cleaned_data["value"],
            casino=staff_casino(request),
            lifted_by=request.user,
        )
    except StaffError as error:
        raise Http404(error.message) from None
    if lift is None:
        messages.info(request, _("Nothing to lift: the lockout has ended or was lifted already."))
    else:
        messages.success(request, _("Lockout lifted: %(value)s.") % {"value": lift.value})
    return redirect("lockouts")


@require_POST
def set_language(request: HttpRequest) -> HttpResponse:
    """The language switch in the header: stored on the user (and in a cookie for the login page)."""
    language = request.POST.get("language", "")
    if language not in dict(settings.LANGUAGES):
        return HttpResponseBadRequest(_("Unknown language."), content_type="text/plain; charset=utf-8")
    if request.user.is_authenticated:
        StaffPreference.objects.update_or_create(user=request.user, defaults={"language": language})
    response = HttpResponseRedirect(local_path(request, request.POST.get("next", ""), reverse("home")))
    response.set_cookie(
        settings.LANGUAGE_COOKIE_NAME,
        language,
        max_age=365 * 24 * 3600,
        samesite="Lax",
        secure=settings.SESSION_COOKIE_SECURE,
        httponly=True,
    )
    return response


@role_required(CHANGE_LOG)
def change_log(request: StaffRequest) -> HttpResponse:
    """Who changed the casino's configuration, when, how, before and after; filtered, by page or as CSV."""
    casino = staff_casino(request)
    types = [(name, changes.object_label(name)) for name in changes.object_types(casino)]
    form = ChangeLogForm(request.GET or None, object_types=types)
    valid = form.is_valid() if form.is_bound else True
    found = _changes_found(casino, form.cleaned_data if form.is_bound and valid else {})
    if valid and request.GET.get("format") == "csv":
        response = HttpResponse(content_type="text/csv; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="changes-{casino.code}.csv"'
        writer = csv.writer(response)
        writer.writerow(changes.CSV_HEAD)
        for row in changes.csv_rows(found, casino):
            writer.writerow([changes.csv_cell(cell) for cell in row])
        return response
    page = Paginator(found if valid else found.none(), changes.PAGE_SIZE).get_page(request.GET.get("page"))
    query = request.GET.copy()
    query.pop("page", None)
    context = {
        "form": form,
        "page": page,
        "rows": [_row(change) for change in page],
        "query": query.urlencode(),
        "zone": casino.time_zone,
    }
    return render(request, "staff/change_log.html", context, status=200 if valid else 400)


def _row(change: Any) -> dict[str, Any]:
    how, detail = changes.via_shown(change.changed_via)
    return {
        "change": change,
        "fields": changes.field_changes(change),
        "kind": changes.object_label(change.object_type),
        "how": how,
        "detail": detail,
    }


def _changes_found(casino: Casino, filters: dict[str, Any]) -> Any:
    start, end = filters.get("start"), filters.get("end")
    return changes.config_changes(
        casino,
        object_type=filters.get("object_type") or "",
        object_text=(filters.get("object") or "").strip(),
        person=(filters.get("person") or "").strip(),
        since=dt.datetime.combine(start, dt.time(), tzinfo=casino.zoneinfo) if start else None,
        until=dt.datetime.combine(end + dt.timedelta(days=1), dt.time(), tzinfo=casino.zoneinfo) if end else None,
    )

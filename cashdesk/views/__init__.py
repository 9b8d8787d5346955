from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest, HttpResponseRedirect
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from casino_office.redirects import local_path
from staff.models import StaffPreference


@login_required
def home(request: HttpRequest) -> HttpResponse:
    """Each role starts on its own page."""
    user = request.user
    for perm, target in (
        ("staff.operate_desk", "desk"),
        ("staff.view_dashboard", "dashboard"),
        ("compliance.manage_alerts", "compliance-register"),
        ("staff.view_reports", "reports"),
        ("staff.decide_hold", "supervisor"),
        ("staff.record_receipt", "floor-receipts"),
    ):
        if user.has_perm(perm):
            return redirect(target)
    return render(request, "cashdesk/no_role.html", status=403)


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


def csrf_failure(request: HttpRequest, reason: str = "") -> HttpResponse:
    """A form refused by the CSRF check (an expired session, a page kept open overnight), in the staff's language."""
    return render(request, "403_csrf.html", status=403)

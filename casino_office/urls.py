from django.conf import settings
from django.contrib import admin
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect, JsonResponse
from django.templatetags.static import static
from django.urls import include, path, re_path
from django.views.defaults import page_not_found, server_error

from casino_office.admin import StaffAdminSite
from casino_office.middleware import is_machine_api
from ops.views import health

# Every app registers with admin.site; making it an OTP admin site keeps those registrations.
admin.site.__class__ = StaffAdminSite


def favicon(request: HttpRequest) -> HttpResponse:
    """/favicon.ico, which browsers, PDF viewers and the admin ask for whatever the page links: the site's SVG icon.

    A temporary redirect (cached a day): the static name carries a hash that changes with each release.
    """
    response = HttpResponseRedirect(static("site/favicon.svg"))
    response["Cache-Control"] = "public, max-age=86400"
    return response


urlpatterns: list[object] = [path("favicon.ico", favicon)]
if settings.BENCH_FLOOR_ENDPOINT:
    from casino_office.bench_floor import FloorView

    # Under /api/, as a machine's request: the same middleware (casino_office.bench_floor).
    urlpatterns.append(path("api/bench/floor", FloorView.as_view()))
urlpatterns += [
    path("admin/", admin.site.urls),
    path("health/", health, name="health"),
    path("api/v1/", include("cashdesk.api.urls")),  # v1.1 handpays: machine receipts belong to the cash desk
    path("api/v1/", include("tickets.api.urls")),
    # Any other path under /api (also /api/v1 without its slash): the API's JSON 404 for every method, never a
    # redirect or the staff UI's pages.
    re_path(r"^api(?:/|$)", include("tickets.api.fallback_urls")),
    path("compliance/", include("compliance.urls")),
    path("reception/", include("compliance.reception_urls")),
    path("", include("staff.urls")),
    path("", include("cashdesk.urls")),
]


def handler404(request: HttpRequest, exception: Exception) -> object:
    if is_machine_api(request):
        return JsonResponse({"code": "not_found", "detail": "No such endpoint."}, status=404)
    return page_not_found(request, exception)


def handler500(request: HttpRequest) -> object:
    if is_machine_api(request):
        return JsonResponse({"code": "server_error", "detail": "Internal error; retry."}, status=500)
    return server_error(request)

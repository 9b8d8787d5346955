"""The staff's middleware as one layer the machine API skips (staff.middleware.StaffOnlyMiddleware)."""

from contextlib import ExitStack
from unittest import mock

import pytest
from django.conf import settings
from django.core.checks import run_checks
from django.core.exceptions import ImproperlyConfigured
from django.http import HttpResponse
from django.template import engines
from django.template.response import SimpleTemplateResponse
from django.test import Client, override_settings
from django.urls import include, path
from django.utils import translation
from django.utils.module_loading import import_string

from staff.middleware import StaffOnlyMiddleware, check_staff_csrf_cookie_secure, check_staff_only_middleware
from tests.factories import make_user


def _spy_on_staff_middleware(stack: ExitStack) -> list[tuple[str, str]]:
    """Every class of STAFF_ONLY_MIDDLEWARE records the requests it is called with."""
    calls: list[tuple[str, str]] = []
    for dotted in settings.STAFF_ONLY_MIDDLEWARE:
        cls = import_string(dotted)

        def recording(self, request, _original=cls.__call__, _name=cls.__name__):
            calls.append((_name, request.path))
            return _original(self, request)

        stack.enter_context(mock.patch.object(cls, "__call__", recording))
    return calls


def test_a_machine_request_meets_none_of_the_staff_middleware_and_a_staff_page_all_of_it(api):
    names = [import_string(dotted).__name__ for dotted in settings.STAFF_ONLY_MIDDLEWARE]
    with ExitStack() as stack:
        calls = _spy_on_staff_middleware(stack)
        number = api.issued_ticket("10.00")
        assert api.get(f"tickets/{number}").status_code == 200
        assert calls == []
        assert Client().get("/accounts/login/").status_code == 200
    assert calls == [(name, "/accounts/login/") for name in names]


def test_a_machine_answer_keeps_its_security_headers_and_english_and_sets_no_cookie(api, casino):
    user = make_user("mw-cashier", "cashier")
    api.client.force_login(user)  # a session cookie the machine path must neither read nor renew
    response = api.issue("10.00")
    assert response.status_code == 201
    assert response["Content-Language"] == "en"
    assert response["X-Frame-Options"] == "DENY"
    assert response["X-Content-Type-Options"] == "nosniff"
    assert "frame-ancestors 'none'" in response["Content-Security-Policy"]
    assert not response.cookies
    assert "Vary" not in response  # nothing in the answer depends on a cookie


def test_the_staff_pages_keep_their_csrf_check_and_language():
    client = Client(enforce_csrf_checks=True)
    refused = client.post("/accounts/login/", {"username": "x", "password": "y"})
    assert refused.status_code == 403  # CsrfViewMiddleware's process_view, run through the one layer
    page = client.get("/accounts/login/")
    assert page["Content-Language"] == settings.LANGUAGE_CODE
    assert "csrftoken" in page.cookies


# --- The hooks of the middleware inside the layer run as Django runs them for middleware listed in MIDDLEWARE ---

HOOKS: list[str] = []


class _Recorder:
    """A middleware that records its hooks; `Outer` and `Inner` tell two of them apart."""

    label = ""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        HOOKS.append(f"{self.label} call")
        return self.get_response(request)

    def process_view(self, request, view, args, kwargs):
        HOOKS.append(f"{self.label} view")

    def process_template_response(self, request, response):
        HOOKS.append(f"{self.label} template")
        return response

    def process_exception(self, request, exception):
        HOOKS.append(f"{self.label} exception")
        if self.label == "inner" and "recover" in request.path:
            return HttpResponse("recovered", status=418)
        return None


class Outer(_Recorder):
    label = "outer"


class Inner(_Recorder):
    label = "inner"


def _template_view(request):
    return SimpleTemplateResponse(engines["django"].from_string("t"))


def _failing_view(request):
    raise ValueError("boom")


def _language_view(request):
    return HttpResponse(translation.get_language())


urlpatterns = [
    path("api/language/", _language_view),
    path("staff/language/", _language_view),
    path("staff/template/", _template_view),
    path("staff/fail/", _failing_view),
    path("staff/recover/", _failing_view),
    path("api/template/", _template_view),
    path("api/recover/", _failing_view),
    path("", include("casino_office.urls")),  # the names the staff's middleware reverses (the login page...)
]

RECORDERS = ["tests.test_middleware.Outer", "tests.test_middleware.Inner"]
BASE = ["casino_office.middleware.DatabaseUnavailableMiddleware"]


def _hooks_for(paths: list[str], **middleware: list[str]) -> list[list[str]]:
    seen = []
    with override_settings(ROOT_URLCONF="tests.test_middleware", DEBUG_PROPAGATE_EXCEPTIONS=False, **middleware):
        client = Client(raise_request_exception=False)
        for url in paths:
            HOOKS.clear()
            response = client.get(url)
            seen.append([*HOOKS, str(response.status_code)])
    return seen


def test_the_hooks_of_the_middleware_inside_run_in_the_order_they_would_run_listed_in_middleware():
    paths = ["/staff/template/", "/staff/fail/", "/staff/recover/"]
    listed = _hooks_for(paths, MIDDLEWARE=[*BASE, *RECORDERS])
    inside = _hooks_for(
        paths, MIDDLEWARE=[*BASE, "staff.middleware.StaffOnlyMiddleware"], STAFF_ONLY_MIDDLEWARE=RECORDERS
    )
    assert inside == listed
    assert listed[0] == [
        "outer call",
        "inner call",
        "outer view",
        "inner view",
        "inner template",
        "outer template",
        "200",
    ]
    assert listed[2][-2:] == ["inner exception", "418"]


def test_the_machine_api_meets_no_hook_of_the_middleware_inside():
    seen = _hooks_for(
        ["/api/template/", "/api/recover/"],
        MIDDLEWARE=[*BASE, "staff.middleware.StaffOnlyMiddleware"],
        STAFF_ONLY_MIDDLEWARE=RECORDERS,
    )
    assert seen == [["200"], ["500"]]


STAFF = settings.STAFF_ONLY_MIDDLEWARE


@pytest.mark.parametrize(
    "change",
    [
        {"STAFF_ONLY_MIDDLEWARE": [m for m in STAFF if "csrf" not in m]},
        {"STAFF_ONLY_MIDDLEWARE": [m for m in STAFF if "SecondFactor" not in m]},
        {"STAFF_ONLY_MIDDLEWARE": [*STAFF, "staff.middleware.ConfigActorMiddleware"]},
        {"STAFF_ONLY_MIDDLEWARE": [STAFF[2], STAFF[0], STAFF[1], *STAFF[3:]]},
        {"MIDDLEWARE": [m for m in settings.MIDDLEWARE if "StaffOnly" not in m]},
        {"MIDDLEWARE": [*settings.MIDDLEWARE, "django.contrib.sessions.middleware.SessionMiddleware"]},
    ],
    ids=[
        "csrf left out",
        "second factor left out",
        "axes not last",
        "auth before sessions",
        "the layer not in MIDDLEWARE",
        "sessions in both lists",
    ],
)
def test_the_check_refuses_a_staff_stack_that_lost_a_guard(change):
    assert check_staff_only_middleware() == []
    with override_settings(**change):
        assert [message.id for message in check_staff_only_middleware()] == ["staff.E001"]


class _AsyncOnly:
    sync_capable = False
    async_capable = True

    def __init__(self, get_response):
        self.get_response = get_response


def test_a_middleware_that_cannot_run_synchronously_is_refused_as_the_layer_is_built():
    with (
        override_settings(STAFF_ONLY_MIDDLEWARE=[*STAFF, "tests.test_middleware._AsyncOnly"]),
        pytest.raises(ImproperlyConfigured, match="_AsyncOnly cannot run synchronously"),
    ):
        StaffOnlyMiddleware(lambda request: HttpResponse())


@pytest.mark.parametrize("page", ["/api/v1/schema/", "/api/v1/docs/"])
def test_the_api_docs_are_english_for_a_lithuanian_casino_and_a_lithuanian_cookie(db, settings, page):
    settings.LANGUAGE_CODE = "lt"
    client = Client()
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "lt"
    response = client.get(page)
    assert response.status_code == 200
    assert response["Content-Language"] == "en"
    assert "Vary" not in response or "Cookie" not in response["Vary"]


def test_a_machine_request_runs_in_english_whatever_the_casino_and_the_cookie_say(db, settings):
    settings.LANGUAGE_CODE = "lt"
    with override_settings(ROOT_URLCONF="tests.test_middleware"):
        client = Client()
        client.cookies[settings.LANGUAGE_COOKIE_NAME] = "lt"
        assert client.get("/api/language/").content == b"en"
        assert client.get("/staff/language/").content == b"lt"


def test_a_csrf_cookie_sent_over_plain_http_is_still_warned_of_at_deploy():
    """Django's security.W016 looks for the CSRF middleware in MIDDLEWARE only; the staff's check asks it again."""
    with override_settings(CSRF_COOKIE_SECURE=True):
        assert check_staff_csrf_cookie_secure() == []
    with override_settings(CSRF_COOKIE_SECURE=False):
        assert [message.id for message in check_staff_csrf_cookie_secure()] == ["security.W016"]
    with override_settings(CSRF_COOKIE_SECURE=False, CSRF_USE_SESSIONS=True):
        assert check_staff_csrf_cookie_secure() == []


def test_the_deploy_checks_ask_for_a_secure_csrf_cookie():
    """The staff's W016 is registered: `check --deploy` still reports an insecure CSRF cookie."""
    with override_settings(CSRF_COOKIE_SECURE=False):
        found = [message.id for message in run_checks(include_deployment_checks=True, tags=["security"])]
    assert "security.W016" in found

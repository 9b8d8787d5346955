from collections.abc import Callable
from functools import cached_property
from typing import Any
from urllib.parse import urlencode

from django.conf import settings
from django.core import checks
from django.core.checks.security import csrf as csrf_checks
from django.core.exceptions import ImproperlyConfigured, MiddlewareNotUsed
from django.core.handlers.exception import convert_exception_to_response
from django.db import DatabaseError
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import reverse
from django.utils import translation
from django.utils.cache import patch_vary_headers
from django.utils.module_loading import import_string

from casino_office.middleware import is_machine_api
from machines.history import acting_as
from staff.login import needs_second_factor
from staff.models import StaffPreference


class SecondFactorMiddleware:
    """Send a logged-in user who needs a second factor and has not given it to the second-factor page.

    After django_otp's OTPMiddleware (request.user.is_verified). Open without it: logging in and out, the
    language switch, the second-factor page itself, static files and /health/. (The machine API never comes
    here: StaffOnlyMiddleware, below.)
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    @cached_property
    def open_paths(self) -> frozenset[str]:
        return frozenset(
            reverse(name) for name in ("login", "logout", "set-language", "second-factor", "health", "admin:logout")
        )

    @cached_property
    def open_prefixes(self) -> tuple[str, ...]:
        return ("/" + settings.STATIC_URL.lstrip("/"),)

    def __call__(self, request: HttpRequest) -> HttpResponse:
        path = request.path
        if path in self.open_paths or path.startswith(self.open_prefixes):
            return self.get_response(request)
        user = request.user
        if needs_second_factor(user) and not user.is_verified():  # type: ignore[union-attr]
            query = {"next": request.get_full_path()} if request.method in ("GET", "HEAD") else {}
            target = reverse("second-factor") + (f"?{urlencode(query)}" if query else "")
            return HttpResponseRedirect(target)
        return self.get_response(request)


class StaffLanguageMiddleware:
    """Activate the language of the person at the screen.

    Order: a logged-in member of staff gets the language stored on their
    preference; anyone else (the login page) the language cookie set by the
    switch; otherwise the casino's default, LANGUAGE_CODE. (The machine API
    never comes here: StaffOnlyMiddleware, below, answers it in English.)
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        language = self.language_for(request)
        translation.activate(language)
        request.LANGUAGE_CODE = language
        response = self.get_response(request)
        response.headers.setdefault("Content-Language", language)
        patch_vary_headers(response, ("Cookie",))
        translation.deactivate()
        return response

    @staticmethod
    def language_for(request: HttpRequest) -> str:
        available = dict(settings.LANGUAGES)
        user = getattr(request, "user", None)
        try:  # reading the session and the preference needs the database
            if user is not None and user.is_authenticated:
                stored = StaffPreference.objects.filter(user_id=user.pk).values_list("language", flat=True).first()
                if stored in available:
                    return str(stored)
        except DatabaseError:  # the view answers 503 (or /health/ reports it); don't fail here first
            pass
        cookie = request.COOKIES.get(settings.LANGUAGE_COOKIE_NAME)
        if cookie in available:
            return cookie
        return settings.LANGUAGE_CODE


class ConfigActorMiddleware:
    """Name the logged-in user (and the page) as whoever changes configuration during the request.

    The configuration's history (machines.history) records them with each change it seals; the machine API
    has no logged-in user, changes no configuration and never comes here (StaffOnlyMiddleware).
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        user = getattr(request, "user", None)
        if user is None or not user.is_authenticated:
            return self.get_response(request)
        with acting_as(user.pk, f"web {request.method} {request.path}"):
            return self.get_response(request)


class StaffOnlyMiddleware:
    """The middleware only the staff's pages need (settings.STAFF_ONLY_MIDDLEWARE), as one layer the machine API skips.

    Sessions, CSRF, the logged-in user and their second factor, the configuration's actor, the staff's language,
    messages and the login lockout serve people at screens. A machine authenticates by its key on every request
    and never has a session, so those layers only cost it time: about 5 % of a machine request's instructions
    (bench/README.md). A machine API request goes straight on, in English (the contract's texts); every other
    request goes through the staff's middleware as if each were listed in MIDDLEWARE at this place: built in
    the same order, and their process_view, process_template_response and process_exception hooks run in the
    order Django's handler runs them.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response
        handler: Callable[[HttpRequest], Any] = get_response
        self.view_hooks: list[Callable[..., Any]] = []
        self.template_response_hooks: list[Callable[..., Any]] = []
        self.exception_hooks: list[Callable[..., Any]] = []
        for path in reversed(settings.STAFF_ONLY_MIDDLEWARE):  # as BaseHandler.load_middleware, innermost first
            factory = import_string(path)
            if not getattr(factory, "sync_capable", True):  # the layer is synchronous, as every server of ours is
                raise ImproperlyConfigured(f"STAFF_ONLY_MIDDLEWARE: {path} cannot run synchronously.")
            try:
                instance = factory(handler)
            except MiddlewareNotUsed:
                continue
            if instance is None:
                raise ImproperlyConfigured(f"Middleware factory {path} returned None.")
            if hasattr(instance, "process_view"):
                self.view_hooks.insert(0, instance.process_view)
            if hasattr(instance, "process_template_response"):
                self.template_response_hooks.append(instance.process_template_response)
            if hasattr(instance, "process_exception"):
                self.exception_hooks.append(instance.process_exception)
            handler = convert_exception_to_response(instance)
        self.staff = handler

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if not is_machine_api(request):
            return self.staff(request)
        with translation.override("en"):
            request.LANGUAGE_CODE = "en"
            response = self.get_response(request)
        response.headers.setdefault("Content-Language", "en")
        return response

    def process_view(self, request: HttpRequest, view: Callable[..., Any], args: Any, kwargs: Any) -> Any:
        if is_machine_api(request):
            return None
        for hook in self.view_hooks:
            if (response := hook(request, view, args, kwargs)) is not None:
                return response
        return None

    def process_template_response(self, request: HttpRequest, response: Any) -> Any:
        if not is_machine_api(request):
            for hook in self.template_response_hooks:
                response = hook(request, response)
        return response

    def process_exception(self, request: HttpRequest, exception: Exception) -> Any:
        if is_machine_api(request):
            return None
        for hook in self.exception_hooks:
            if (response := hook(request, exception)) is not None:
                return response
        return None


# What the staff's pages need, in this order, inside StaffOnlyMiddleware (the admin's checks, admin.E408-E410,
# django-axes's, axes.W002, and Django's security.W003 look for some of these in MIDDLEWARE, where they no longer
# are).
STAFF_MIDDLEWARE_NEEDED = (
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django_otp.middleware.OTPMiddleware",
    "staff.middleware.SecondFactorMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "axes.middleware.AxesMiddleware",
)


def check_staff_only_middleware(**_: object) -> list[checks.CheckMessage]:
    """StaffOnlyMiddleware is in MIDDLEWARE and holds what the staff's pages need, in order, axes last; none of its
    middleware is in MIDDLEWARE as well (it would run twice, and for the machine API)."""
    listed = list(getattr(settings, "STAFF_ONLY_MIDDLEWARE", []))
    found = [path for path in listed if path in STAFF_MIDDLEWARE_NEEDED]
    problems = []
    if "staff.middleware.StaffOnlyMiddleware" not in settings.MIDDLEWARE:
        problems.append("MIDDLEWARE must include staff.middleware.StaffOnlyMiddleware.")
    if found != list(STAFF_MIDDLEWARE_NEEDED) or listed[-1:] != [STAFF_MIDDLEWARE_NEEDED[-1]]:
        problems.append(
            f"STAFF_ONLY_MIDDLEWARE must list {', '.join(STAFF_MIDDLEWARE_NEEDED)} in this order, axes last."
        )
    if twice := sorted(set(listed) & set(settings.MIDDLEWARE)):
        problems.append(f"In both MIDDLEWARE and STAFF_ONLY_MIDDLEWARE: {', '.join(twice)}.")
    return [checks.Error(problem, id="staff.E001") for problem in problems]


def check_staff_csrf_cookie_secure(**_: object) -> list[checks.CheckMessage]:
    """Django's security.W016 (the CSRF cookie sent over HTTPS only), asked with the staff's middleware in view:
    Django's own check looks for CsrfViewMiddleware in MIDDLEWARE only, and passes when it is not there."""
    csrf = "django.middleware.csrf.CsrfViewMiddleware" in getattr(settings, "STAFF_ONLY_MIDDLEWARE", [])
    if csrf and not settings.CSRF_USE_SESSIONS and settings.CSRF_COOKIE_SECURE is not True:
        return [csrf_checks.W016]
    return []

from collections.abc import Callable
from functools import cached_property
from urllib.parse import urlencode

from django.conf import settings
from django.db import DatabaseError
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import reverse
from django.utils import translation
from django.utils.cache import patch_vary_headers

from machines.history import acting_as
from staff.login import needs_second_factor
from staff.models import StaffPreference


class SecondFactorMiddleware:
    """Send a logged-in user who needs a second factor and has not given it to the second-factor page.

    After django_otp's OTPMiddleware (request.user.is_verified). Open without it: logging in and out, the
    language switch, the second-factor page itself, static files, /health/ and the machine API (keys,
    not sessions; its requests never read the session here).
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
        return ("/" + settings.STATIC_URL.lstrip("/"), "/api/")

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


API_PREFIX = "/api/"


class StaffLanguageMiddleware:
    """Activate the language of the person at the screen.

    Order: the machine API is always English (its contract's texts); a logged-in
    member of staff gets the language stored on their preference; anyone else
    (the login page) the language cookie set by the switch; otherwise the
    casino's default, LANGUAGE_CODE.
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
        if request.path.startswith(API_PREFIX):
            return "en"
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
    has no logged-in user and changes no configuration.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.path.startswith("/api/"):  # machines' keys, not sessions: no user to read (nor its cost)
            return self.get_response(request)
        user = getattr(request, "user", None)
        if user is None or not user.is_authenticated:
            return self.get_response(request)
        with acting_as(user.pk, f"web {request.method} {request.path}"):
            return self.get_response(request)

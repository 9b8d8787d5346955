from collections.abc import Callable
from functools import cached_property
from urllib.parse import urlencode

from django.conf import settings
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import reverse

from staff.login import needs_second_factor


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

import logging
from collections.abc import Callable

from django.conf import settings
from django.db import DatabaseError, InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils import translation
from django.utils.cache import patch_vary_headers

logger = logging.getLogger(__name__)


class DatabaseUnavailableMiddleware:
    """Answer 503 `unavailable` while the database cannot be reached.

    Machines retry with the same request_id, so a clean 503 during an outage
    is harmless; a 500 with an HTML page is not something they can act on.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if isinstance(exception, OperationalError | InterfaceError) or (
            isinstance(exception, DatabaseError) and "connection" in str(exception).lower()
        ):
            logger.warning("database unavailable: %s", exception)
            response = JsonResponse(
                {"code": "unavailable", "detail": "The ticket system is temporarily unavailable; retry."},
                status=503,
            )
            response["Retry-After"] = "2"
            return response
        return None


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
                from staff.models import StaffPreference

                stored = StaffPreference.objects.filter(user_id=user.pk).values_list("language", flat=True).first()
                if stored in available:
                    return str(stored)
        except DatabaseError:  # the view answers 503 (or /health/ reports it); don't fail here first
            pass
        cookie = request.COOKIES.get(settings.LANGUAGE_COOKIE_NAME)
        if cookie in available:
            return cookie
        return settings.LANGUAGE_CODE

import logging
from collections.abc import Callable

from django.db import DatabaseError, InterfaceError, OperationalError, connection
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest, JsonResponse
from django.utils.translation import gettext as _

logger = logging.getLogger(__name__)

# Where the machine API (and its docs) lives: keys, not sessions; always English.
MACHINE_API_PREFIX = "/api/"


def is_machine_api(request: HttpRequest) -> bool:
    """Whether the request is for the machine API (and its docs)."""
    return request.path_info.startswith(MACHINE_API_PREFIX)


# PostgreSQL's error for a prepared statement whose table changed under it (SQLSTATE 0A000).
_STALE_PLAN = "cached plan must not change result type"


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
        stale_plan = isinstance(exception, DatabaseError) and _STALE_PLAN in str(exception)
        if stale_plan:
            # A migration from another node changed a column a statement prepared on this connection reads
            # (casino_office.rawsql): drop the connection with its prepared statements; the retry prepares afresh.
            connection.close()
        if (
            stale_plan
            or isinstance(exception, OperationalError | InterfaceError)
            or (isinstance(exception, DatabaseError) and "connection" in str(exception).lower())
        ):
            logger.warning("database unavailable: %s", exception)
            response = JsonResponse(
                {"code": "unavailable", "detail": "The ticket system is temporarily unavailable; retry."},
                status=503,
            )
            response["Retry-After"] = "2"
            return response
        return None


class NulCharacterMiddleware:
    """Refuse a NUL character in the address, before any view looks up what it names.

    No text the office keeps may hold one (PostgreSQL refuses it in any text column), and no screen or
    machine sends one: a lookup with it was a 500. The machine API's address answers as any unknown one,
    `404 not_found`; a staff page's a plain 400. Form fields are the forms' to refuse, with a message
    beside the field (Django's form fields refuse NUL).
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if "\x00" in request.path:
            if is_machine_api(request):
                return JsonResponse({"code": "not_found", "detail": "No such endpoint."}, status=404)
            return HttpResponseBadRequest(
                _("The request contains a NUL character."), content_type="text/plain; charset=utf-8"
            )
        return self.get_response(request)

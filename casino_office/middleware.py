import logging
from collections.abc import Callable

from django.db import DatabaseError, InterfaceError, OperationalError, connection
from django.http import HttpRequest, HttpResponse, JsonResponse

logger = logging.getLogger(__name__)

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
            # (tickets.rawsql): drop the connection with its prepared statements; the retry prepares afresh.
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

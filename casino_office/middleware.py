import logging
from collections.abc import Callable

from django.db import DatabaseError, InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse, JsonResponse

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

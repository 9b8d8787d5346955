"""Every API error is JSON: {"code": "<snake_case>", "detail": "<human text>"} (machine-api.md)."""

from typing import Any

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler


class ApiError(exceptions.APIException):
    def __init__(self, status_code: int, code: str, detail: str, headers: dict[str, str] | None = None) -> None:
        self.status_code = status_code
        self.code = code
        self.headers = headers or {}
        super().__init__(detail=detail, code=code)


def error_body(code: str, detail: str) -> dict[str, str]:
    return {"code": code, "detail": detail}


def error_response(status_code: int, code: str, detail: str, headers: dict[str, str] | None = None) -> Response:
    return Response(error_body(code, detail), status=status_code, headers=headers)


# The contract's status for a domain code that is not a conflict (contract "Errors").
STATUS_BY_CODE = {
    "not_found": 404,
    "invalid_amount": 422,
    "amount_not_in_credits": 422,
    "over_limit": 422,
    "invalid_number": 422,
    "invalid_request": 422,
}


def invalid(code: str, detail: str) -> ApiError:
    """An input refused, to raise: nothing is remembered under the request_id (a corrected retry is no reuse)."""
    return ApiError(STATUS_BY_CODE.get(code, 422), code, detail)


def refusal(code: str, detail: str) -> Response:
    """An operation refused, to return: an outcome, remembered under the request_id like a success."""
    return error_response(STATUS_BY_CODE.get(code, 409), code, detail)


_CODES: list[tuple[type[exceptions.APIException], str]] = [
    (exceptions.NotAuthenticated, "unauthenticated"),
    (exceptions.AuthenticationFailed, "unauthenticated"),
    (exceptions.ParseError, "malformed_json"),
    (exceptions.UnsupportedMediaType, "unsupported_media_type"),
    (exceptions.MethodNotAllowed, "method_not_allowed"),
    (exceptions.NotAcceptable, "not_acceptable"),
    (exceptions.NotFound, "not_found"),
    (exceptions.Throttled, "rate_limited"),
    (exceptions.ValidationError, "invalid_request"),
    (exceptions.PermissionDenied, "forbidden"),
]


def api_exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, ApiError):
        return error_response(exc.status_code, exc.code, str(exc.detail), exc.headers)
    if isinstance(exc, RequestDataTooBig):  # raised by Django when the parser reads the body
        return error_response(
            413,
            "payload_too_large",
            f"The body is larger than the {settings.DATA_UPLOAD_MAX_MEMORY_SIZE} bytes accepted.",
        )
    response = exception_handler(exc, context)
    if response is None:
        return None
    code = next((name for cls, name in _CODES if isinstance(exc, cls)), "error")
    if isinstance(exc, exceptions.PermissionDenied) and getattr(exc, "default_code", "") == "machine_disabled":
        code = "machine_disabled"
    detail: Any = getattr(exc, "detail", "")
    if isinstance(exc, exceptions.ValidationError):
        response.status_code = status.HTTP_422_UNPROCESSABLE_ENTITY
        detail = "Invalid request body."
    response.data = error_body(code, str(detail))
    return response

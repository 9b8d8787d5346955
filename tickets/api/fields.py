"""A machine's JSON body read field by field, with the contract's error codes (422 invalid_request)."""

import re
from typing import Any

from rest_framework.request import Request

from tickets.api.errors import invalid

# Printable text only: no control character (C0, DEL or C1, Unicode's "Cc") has business in an id or a reason;
# PostgreSQL text cannot hold NUL, and a log reads NEL (U+0085) as the end of a line.
TEXT = re.compile(r"^[^\x00-\x1f\x7f-\x9f]*$")


def json_object(request: Request) -> dict[str, Any]:
    if not isinstance(request.data, dict):
        raise invalid("invalid_request", "The body must be a JSON object.")
    return request.data


def text(body: dict[str, Any], name: str, *, required: bool, max_length: int, min_length: int = 0) -> str:
    value = body.get(name)
    if value is None and not required:
        return ""
    if not isinstance(value, str) or not (min_length <= len(value) <= max_length) or not TEXT.fullmatch(value):
        raise invalid(
            "invalid_request", f"'{name}' must be a string of {min_length}-{max_length} printable characters."
        )
    return value


def choice(body: dict[str, Any], name: str, choices: tuple[str, ...], default: str | None = None) -> str:
    value = body.get(name, default)
    if value not in choices:
        raise invalid("invalid_request", f"'{name}' must be one of: {', '.join(choices)}.")
    return str(value)


def request_id(body: dict[str, Any]) -> str:
    return text(body, "request_id", required=True, min_length=1, max_length=64)

"""Moments machines send (a reading's `read_at`, an offline ticket's `printed_at`): ISO 8601 with an offset."""

import datetime as dt
import re
from typing import Any

from machines.models import Machine
from tickets.api.errors import ApiError

# Before any ticket system: a machine's clock gone wrong (a RAM clear sets year 1); also keeps date arithmetic
# and the casino's time zone in range.
EARLIEST = dt.datetime(2000, 1, 1, tzinfo=dt.UTC)
# The widest offset PostgreSQL keeps (and wider than any time zone's): ±15:59.
LARGEST_OFFSET = dt.timedelta(hours=15, minutes=59)
# Date and time with an offset (Z or ±hh:mm); fractions of a second allowed.
_MOMENT = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}:\d{2})$")


def moment_with_offset(body: dict[str, Any], name: str) -> dt.datetime:
    """`body[name]` as an aware datetime, or 422 invalid_request naming the field."""
    raw = body.get(name)
    problem = f"'{name}' must be an ISO 8601 date and time with an offset, e.g. \"2026-12-02T18:04:11+02:00\"."
    if not isinstance(raw, str) or not _MOMENT.fullmatch(raw):
        raise ApiError(422, "invalid_request", problem)
    try:
        moment = dt.datetime.fromisoformat(raw.replace("Z", "+00:00"))
    except ValueError:
        raise ApiError(422, "invalid_request", problem) from None
    offset = moment.utcoffset()
    if offset is None or abs(offset) > LARGEST_OFFSET:
        raise ApiError(422, "invalid_request", f"'{name}' has an offset beyond ±15:59, which no time zone has.")
    if moment < EARLIEST:
        raise ApiError(422, "invalid_request", f"'{name}' is before the year 2000: the machine's clock is wrong.")
    return moment


def local_moment(moment: dt.datetime | None, machine: Machine) -> str | None:
    """A moment of an answer: in the machine's casino's time zone, to the second."""
    if moment is None:
        return None
    return moment.astimezone(machine.casino.zoneinfo).isoformat(timespec="seconds")

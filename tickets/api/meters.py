"""Machine contract v1.1: POST /api/v1/meters, a machine's meter reading (../shared/machine-api.md)."""

import datetime as dt
import re
from decimal import Decimal
from typing import Any

from django.db import transaction
from django.utils import timezone
from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import serializers
from rest_framework.response import Response

from machines.chains import chain_and_save
from machines.models import (
    AMOUNT_METERS,
    COUNT_METERS,
    METER_AMOUNT_DIGITS,
    METER_AMOUNT_PLACES,
    METER_NAMES,
    TICKET_METERS,
    Machine,
    MeterReading,
)
from tickets.api.errors import ApiError
from tickets.api.moments import local_moment, moment_with_offset
from tickets.api.scaffold import MachinePost, MachinePostView
from tickets.api.serializers import POST_REFUSALS, MomentField, RequestIdField, refusal_responses

# "Money and numbers", but zero allowed: a lifetime counter starts at zero.
_METER_AMOUNT = re.compile(
    rf"^(0|[1-9][0-9]{{0,{METER_AMOUNT_DIGITS - METER_AMOUNT_PLACES - 1}}})(\.[0-9]{{1,{METER_AMOUNT_PLACES}}})?$"
)
_BIGINT_MAX = 2**63 - 1
# A clock a little ahead is tolerated; more is a machine with a wrong clock.
FUTURE_TOLERANCE = dt.timedelta(minutes=5)


def _invalid_request(detail: str) -> ApiError:
    return ApiError(422, "invalid_request", detail)


def _read_at(body: dict[str, Any], now: dt.datetime) -> dt.datetime:
    moment = moment_with_offset(body, "read_at")
    if moment > now + FUTURE_TOLERANCE:
        raise _invalid_request("'read_at' is more than 5 minutes in the future.")
    return moment


def _meters(body: dict[str, Any]) -> dict[str, int | Decimal]:
    raw = body.get("meters")
    if not isinstance(raw, dict):
        raise _invalid_request("'meters' must be an object.")
    unknown = sorted(name for name in raw if name not in METER_NAMES)
    if unknown:
        raise _invalid_request(f"Unknown meter: {unknown[0][:64]!r}.")
    missing = [name for name in TICKET_METERS if name not in raw]
    if missing:
        raise _invalid_request(f"The ticket meters are required; missing: {', '.join(missing)}.")
    values: dict[str, int | Decimal] = {}
    for name in COUNT_METERS:
        if name not in raw:
            continue
        value = raw[name]
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= _BIGINT_MAX:
            raise _invalid_request(f"'{name}' must be a whole number >= 0.")
        values[name] = value
    for name in AMOUNT_METERS:
        if name not in raw:
            continue
        value = raw[name]
        if not isinstance(value, str) or not _METER_AMOUNT.fullmatch(value):
            raise ApiError(
                422, "invalid_amount", f"'{name}' must be a string like \"12.50\": >= 0, at most three decimals."
            )
        values[name] = Decimal(value)
    return values


def _is_reset(previous: MeterReading | None, values: dict[str, int | Decimal]) -> bool:
    """A counter lower than in the machine's previous reading: the meters were cleared."""
    if previous is None:
        return False
    for name, value in values.items():
        before = getattr(previous, name)
        if before is not None and value < before:
            return True
    return False


def meter_reading_record(
    *, machine: Machine, read_at: dt.datetime, values: dict[str, int | Decimal], request_id: str
) -> MeterReading:
    """Store a reading; `reset` against the machine's previous reading by read_at.

    The machine's row lock serialises its readings, so two at once cannot both
    compare against the same predecessor.
    """
    with transaction.atomic():
        Machine.objects.select_for_update().only("id").get(pk=machine.pk)
        previous = (
            MeterReading.objects.filter(machine=machine, read_at__lte=read_at).order_by("-read_at", "-id").first()
        )
        reading = MeterReading(
            machine=machine,
            read_at=read_at,
            received_at=timezone.now(),
            request_id=request_id,
            reset=_is_reset(previous, values),
            **values,
        )
        chain_and_save(reading, casino_id=machine.casino_id)
        return reading


class MeterValuesSchema(serializers.Serializer):
    ticket_out_count = serializers.IntegerField(min_value=0, max_value=_BIGINT_MAX)
    ticket_out_amount = serializers.RegexField(_METER_AMOUNT.pattern, help_text="Euros as a string, >= 0.")
    ticket_in_count = serializers.IntegerField(min_value=0, max_value=_BIGINT_MAX)
    ticket_in_amount = serializers.RegexField(_METER_AMOUNT.pattern, help_text="Euros as a string, >= 0.")
    handpay_count = serializers.IntegerField(min_value=0, max_value=_BIGINT_MAX, required=False)
    handpay_amount = serializers.RegexField(_METER_AMOUNT.pattern, required=False)
    games_played = serializers.IntegerField(min_value=0, max_value=_BIGINT_MAX, required=False)
    bills_in_amount = serializers.RegexField(_METER_AMOUNT.pattern, required=False)
    coin_in_amount = serializers.RegexField(_METER_AMOUNT.pattern, required=False)
    coin_out_amount = serializers.RegexField(_METER_AMOUNT.pattern, required=False)
    cash_dispensed_amount = serializers.RegexField(_METER_AMOUNT.pattern, required=False)
    attendant_paid_count = serializers.IntegerField(
        min_value=0,
        max_value=_BIGINT_MAX,
        required=False,
        help_text="Cancelled credits paid by an attendant with a machine receipt.",
    )
    attendant_paid_amount = serializers.RegexField(_METER_AMOUNT.pattern, required=False)


class MetersRequestSchema(serializers.Serializer):
    request_id = RequestIdField()
    read_at = MomentField(help_text="ISO 8601 with an offset; at most 5 minutes in the future.")
    meters = MeterValuesSchema(help_text="Lifetime counters; the four ticket meters are required, no other name.")


class MetersResponseSchema(serializers.Serializer):
    read_at = serializers.DateTimeField()
    reset = serializers.BooleanField(help_text="A counter was lower than in the previous reading: meters cleared.")


@extend_schema_view(
    post=extend_schema(
        operation_id="meters_report",
        summary="A meter reading: the machine's lifetime counters",
        request=MetersRequestSchema,
        responses={
            201: MetersResponseSchema,
            **refusal_responses(
                POST_REFUSALS,
                {
                    422: {
                        "invalid_request": "an unknown meter, a count of the wrong type, a ticket meter missing, "
                        "read_at missing or more than 5 minutes ahead",
                        "invalid_amount": "an amount meter that is not an amount >= 0 with at most three decimals",
                    }
                },
            ),
        },
    )
)
class MetersView(MachinePostView):
    operation = "meters"

    def handle(self, post: MachinePost) -> Response:
        read_at = _read_at(post.body, timezone.now())
        values = _meters(post.body)
        reading = meter_reading_record(machine=post.machine, read_at=read_at, values=values, request_id=post.request_id)
        return Response({"read_at": local_moment(reading.read_at, post.machine), "reset": reading.reset}, status=201)

"""Shapes of the machine API, for the OpenAPI schema.

Input is parsed by tickets.api.fields and the views with the contract's exact error codes
(DRF's CharField would quietly accept a JSON number as an amount); these
serializers describe the same shapes for machine vendors.
"""

from collections.abc import Mapping
from typing import Any

from drf_spectacular.utils import OpenApiResponse, extend_schema_field
from rest_framework import serializers

from tickets.models import TicketState


def _positive_amount(whole_digits: int) -> str:
    """What parse_amount accepts, as one pattern: no sign, no leading zero, at most three decimals, never zero."""
    return rf"^([1-9][0-9]{{0,{whole_digits - 1}}}(\.[0-9]{{1,3}})?|0\.([1-9][0-9]{{0,2}}|0[1-9][0-9]?|00[1-9]))$"


# A ticket's amount column holds 9 digits before the point: no casino maximum lets more through.
AMOUNT_PATTERN = _positive_amount(9)
# A handpay's amount column holds 10 digits before the point (cashdesk.services.handpays.MAX_HANDPAY_AMOUNT).
HANDPAY_AMOUNT_PATTERN = _positive_amount(10)
NUMBER_PATTERN = r"^[0-9]{18}$"
# What a machine may send for a validation number: the 18 digits bare, or grouped as printed
# (NN-NNNN-NNNN-NNNN-NNNN) with dashes or with single spaces.
PRESENTED_NUMBER_PATTERN = r"^([0-9]{18}|[0-9]{2}(-[0-9]{4}){4}|[0-9]{2}( [0-9]{4}){4})$"
PRESENTED_NUMBER_SCHEMA = {
    "type": "string",
    "pattern": PRESENTED_NUMBER_PATTERN,
    "description": "18 digits, the last a Damm check digit; bare, or grouped as printed with dashes or single "
    "spaces (00-4218-7793-1234-5672). A wrong check digit is 422 invalid_number.",
}
# Printable text only (tickets.api.fields.TEXT): no NUL, no control character.
TEXT_PATTERN = r"^[^\x00-\x1f\x7f-\x9f]*$"
# An ISO 8601 moment with an offset, as tickets.api.moments reads it, from the year 2000 on.
MOMENT_PATTERN = (
    r"^(2[0-9]{3}|[3-9][0-9]{3})-[0-9]{2}-[0-9]{2}"  # the year 2000 or later
    r"T[0-9]{2}:[0-9]{2}(:[0-9]{2}(\.[0-9]{1,6})?)?"
    r"(Z|[+-](0[0-9]|1[0-5]):[0-5][0-9])$"  # PostgreSQL keeps offsets up to 15:59
)
# PostgreSQL's integer: a pool's count, an offline ticket's sequence.
INTEGER_MAX = 2_147_483_647


def error_schema(codes: Mapping[str, str]) -> dict[str, Any]:
    """A refusal's body with the exact codes one status of one operation answers."""
    return {
        "type": "object",
        "properties": {"code": {"type": "string", "enum": sorted(codes)}, "detail": {"type": "string"}},
        "required": ["code", "detail"],
        "additionalProperties": False,
    }


Refusals = Mapping[int, Mapping[str, str]]


def refusal_responses(*tables: Refusals) -> dict[int, OpenApiResponse]:
    """{status: {code: when}} tables merged, as the operation's documented error answers."""
    merged: dict[int, dict[str, str]] = {}
    for table in tables:
        for status, codes in table.items():
            merged.setdefault(status, {}).update(codes)
    return {
        status: OpenApiResponse(
            error_schema(codes), description="; ".join(f"`{code}`: {when}" for code, when in sorted(codes.items()))
        )
        for status, codes in sorted(merged.items())
    }


# The refusals every operation may answer, by status and code (contract "Authentication", "Errors").
ANY_REFUSALS: Refusals = {
    401: {"unauthenticated": "the `Authorization: Bearer` key is missing or unknown"},
    403: {"machine_disabled": "the machine is not active or not enrolled in the ticket system"},
    406: {"not_acceptable": "the client does not accept application/json"},
    503: {"unavailable": "the database cannot be reached; retry with the same request_id"},
}
# ... and every POST (tickets.api.scaffold).
POST_REFUSALS: Refusals = {
    **ANY_REFUSALS,
    400: {"malformed_json": "the body is not JSON (or repeats a key, or nests too deep)"},
    409: {"request_id_reused": "this request_id was used for a different request"},
    413: {"payload_too_large": "the body is larger than the server accepts"},
    415: {"unsupported_media_type": "send application/json"},
    422: {"invalid_request": "a field is missing, of the wrong type, or holds a control character"},
}


def schema_links(status: int, **targets: dict[str, Any]) -> dict[str, Any]:
    """OpenAPI links from one answer to the next operations (tickets.api.schema moves them into the answer)."""
    return {"x-links": {str(status): targets}}


def link(operation_id: str, description: str, **definition: Any) -> dict[str, Any]:
    return {"operationId": operation_id, "description": description, **definition}


# A link's parameter: the answered ticket's number.
NUMBER_FROM_ANSWER = {"validation_number": "$response.body#/validation_number"}
TO_TICKET = link("ticket_get", "The ticket's public fields.", parameters=NUMBER_FROM_ANSWER)


class RequestIdField(serializers.RegexField):
    def __init__(self) -> None:
        super().__init__(
            TEXT_PATTERN,
            min_length=1,
            max_length=64,
            help_text="Chosen by the machine, unique per machine; printable characters only.",
        )


class _ReasonField(serializers.RegexField):
    def __init__(self) -> None:
        super().__init__(
            TEXT_PATTERN, required=False, allow_null=True, max_length=255, help_text="Printable characters only."
        )


@extend_schema_field(PRESENTED_NUMBER_SCHEMA)
class PresentedNumberField(serializers.CharField):
    pass


@extend_schema_field(
    {
        "type": "string",
        "format": "date-time",
        "pattern": MOMENT_PATTERN,
        "description": "ISO 8601 with an offset (Z or +hh:mm), not before 2000-01-01T00:00:00Z.",
    }
)
class MomentField(serializers.CharField):
    pass


class IssueRequestSchema(serializers.Serializer):
    request_id = RequestIdField()
    amount = serializers.RegexField(
        AMOUNT_PATTERN,
        help_text="Euros as a string, at most three decimals, > 0; at most the casino's ticket maximum (422 "
        "over_limit), a whole number of the machine's credits (422 amount_not_in_credits); a kiosk's in whole "
        "cents (422 invalid_amount).",
    )
    ticket_type = serializers.ChoiceField(
        ["cashable", "promo"], required=False, default="cashable", help_text="A kiosk prints cashable tickets only."
    )


class PrintedRequestSchema(serializers.Serializer):
    request_id = RequestIdField()
    result = serializers.ChoiceField(["printed", "failed"])
    reason = _ReasonField()


class AuthorizeRequestSchema(serializers.Serializer):
    request_id = RequestIdField()


class CommitRequestSchema(serializers.Serializer):
    request_id = RequestIdField()
    result = serializers.ChoiceField(["accepted", "rejected"])
    reason = _ReasonField()
    dispensed = serializers.RegexField(
        AMOUNT_PATTERN,
        required=False,
        help_text="Kiosks (v1.1), with result accepted: the cash dispensed, equal to authorize's payout.",
    )


class PrintDataSchema(serializers.Serializer):
    casino_name = serializers.CharField()
    casino_address = serializers.CharField()
    machine = serializers.CharField(help_text="Asset number of the issuing machine.")
    sequence = serializers.IntegerField()
    amount_words = serializers.CharField(help_text="In the casino's language (Lithuanian by default).")
    amount_words_en = serializers.CharField(help_text="In English.")
    validation_display = serializers.CharField()


_STATES = TicketState.values


class TicketSchema(serializers.Serializer):
    validation_number = serializers.RegexField(NUMBER_PATTERN)
    state = serializers.ChoiceField(_STATES)
    amount = serializers.RegexField(AMOUNT_PATTERN)
    ticket_type = serializers.ChoiceField(["cashable", "promo"])
    issued_at = serializers.DateTimeField()
    expires_at = serializers.DateTimeField()


class IssueResponseSchema(TicketSchema):
    print = PrintDataSchema()


class StateResponseSchema(serializers.Serializer):
    validation_number = serializers.RegexField(NUMBER_PATTERN)
    state = serializers.ChoiceField(_STATES)


class AuthorizeResponseSchema(serializers.Serializer):
    validation_number = serializers.RegexField(NUMBER_PATTERN)
    state = serializers.ChoiceField(_STATES)
    amount = serializers.RegexField(AMOUNT_PATTERN)
    ticket_type = serializers.ChoiceField(["cashable", "promo"])
    hold_expires_at = serializers.DateTimeField()
    payout = serializers.RegexField(
        AMOUNT_PATTERN,
        required=False,
        help_text="Kiosks (v1.1) only: the cash to dispense, the amount rounded up to the cent.",
    )


# Machine contract v1.1: offline validation.


class ValidationPoolRequestSchema(serializers.Serializer):
    request_id = RequestIdField()
    count = serializers.IntegerField(
        min_value=1,
        max_value=INTEGER_MAX,
        required=False,
        default=20,
        help_text="Numbers wanted, 1 to the casino's pool size (default 20); above it, the pool size is used.",
    )


class ValidationPoolResponseSchema(serializers.Serializer):
    validation_numbers = serializers.ListField(
        child=serializers.RegexField(NUMBER_PATTERN),
        help_text="Every number reserved for this machine and not yet reported, topped up to `count`.",
    )
    pool_size = serializers.IntegerField(help_text="The casino's pool size.")


class OfflineTicketRequestSchema(serializers.Serializer):
    request_id = RequestIdField()
    validation_number = PresentedNumberField(help_text="A number of this machine's pool.")
    amount = serializers.RegexField(
        AMOUNT_PATTERN,
        help_text="Euros as a string, at most three decimals, > 0; at most the casino's ticket maximum, a whole "
        "number of the machine's credits.",
    )
    ticket_type = serializers.ChoiceField(["cashable", "promo"], required=False, default="cashable")
    printed_at = MomentField(help_text="ISO 8601 with an offset; at most 5 minutes ahead of the host's clock.")
    sequence = serializers.IntegerField(
        min_value=0,
        max_value=INTEGER_MAX,
        help_text="The machine's ticket sequence number as printed; it wraps to 1 after 2147483647.",
    )

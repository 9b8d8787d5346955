"""Shapes of the machine API, for the OpenAPI schema.

Input is parsed by tickets.api.views with the contract's exact error codes
(DRF's CharField would quietly accept a JSON number as an amount); these
serializers describe the same shapes for machine vendors.
"""

from rest_framework import serializers

from tickets.models import TicketState

AMOUNT_PATTERN = r"^(0|[1-9][0-9]{0,11})(\.[0-9]{1,3})?$"
NUMBER_PATTERN = r"^[0-9]{18}$"


class ErrorSchema(serializers.Serializer):
    code = serializers.CharField()
    detail = serializers.CharField()


class _RequestIdField(serializers.CharField):
    def __init__(self) -> None:
        super().__init__(min_length=1, max_length=64, help_text="Chosen by the machine, unique per machine.")


class IssueRequestSchema(serializers.Serializer):
    request_id = _RequestIdField()
    amount = serializers.RegexField(AMOUNT_PATTERN, help_text="Euros as a string, at most three decimals, > 0.")
    ticket_type = serializers.ChoiceField(["cashable", "promo"], required=False, default="cashable")


class PrintedRequestSchema(serializers.Serializer):
    request_id = _RequestIdField()
    result = serializers.ChoiceField(["printed", "failed"])
    reason = serializers.CharField(required=False, max_length=255)


class AuthorizeRequestSchema(serializers.Serializer):
    request_id = _RequestIdField()


class CommitRequestSchema(serializers.Serializer):
    request_id = _RequestIdField()
    result = serializers.ChoiceField(["accepted", "rejected"])
    reason = serializers.CharField(required=False, max_length=255)
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
    request_id = _RequestIdField()
    count = serializers.IntegerField(
        min_value=1,
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
    request_id = _RequestIdField()
    validation_number = serializers.CharField(help_text="A number of this machine's pool (spaces or dashes allowed).")
    amount = serializers.RegexField(AMOUNT_PATTERN, help_text="Euros as a string, at most three decimals, > 0.")
    ticket_type = serializers.ChoiceField(["cashable", "promo"], required=False, default="cashable")
    printed_at = serializers.DateTimeField(
        help_text="ISO 8601 with an offset; at most 5 minutes ahead of the host's clock."
    )
    sequence = serializers.IntegerField(min_value=0, help_text="The machine's ticket sequence number as printed.")

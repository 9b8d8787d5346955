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

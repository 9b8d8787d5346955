"""Machine contract v1.1: POST /api/v1/handpays and GET /api/v1/handpays/{receipt_number}.

Same style as tickets.api.views: parse with the contract's error codes, call
one service, render its result; the POST is a tickets.api.scaffold.MachinePostView.
"""

from typing import Any

from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_field, extend_schema_view
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from cashdesk.errors import CashDeskError
from cashdesk.models import MachineReceipt
from cashdesk.receipt_numbers import RECEIPT_NUMBER_LENGTH
from cashdesk.services.handpays import HANDPAY_KINDS, handpay_request
from casino_office.money import InvalidAmount, format_amount, parse_amount
from machines.models import Machine
from tickets.api.errors import ApiError, error_response, invalid, refusal
from tickets.api.fields import choice
from tickets.api.moments import local_moment
from tickets.api.scaffold import MachineAPIView, MachinePost, MachinePostView
from tickets.api.serializers import (
    ANY_REFUSALS,
    HANDPAY_AMOUNT_PATTERN,
    POST_REFUSALS,
    RequestIdField,
    link,
    refusal_responses,
    schema_links,
)

_STATES = [state.value for state in MachineReceipt.State]
_RECEIPT_PATTERN = rf"^[0-9]{{{RECEIPT_NUMBER_LENGTH}}}$"


def _one_of(values: list[str], description: str) -> dict[str, str]:
    """A closed set of strings, as a pattern: an enum named "state" would collide with the tickets' own."""
    return {"type": "string", "pattern": f"^({'|'.join(values)})$", "description": description}


@extend_schema_field(_one_of(_STATES, "requested -> confirmed -> paid, or void."))
class _StateField(serializers.CharField):
    pass


@extend_schema_field(_one_of(list(HANDPAY_KINDS), "jackpot or cancelled_credits."))
class _KindField(serializers.CharField):
    pass


@extend_schema_field(_one_of(["requested"], "Always requested in the answer to the request."))
class _RequestedField(serializers.CharField):
    pass


class HandpayRequestSchema(serializers.Serializer):
    request_id = RequestIdField()
    amount = serializers.RegexField(
        HANDPAY_AMOUNT_PATTERN,
        help_text="Euros as a string, at most three decimals, > 0, below 10 000 000 000; no casino maximum applies.",
    )
    kind = _KindField()


class HandpayCreatedSchema(serializers.Serializer):
    receipt_number = serializers.RegexField(_RECEIPT_PATTERN)
    state = _RequestedField()
    amount = serializers.RegexField(HANDPAY_AMOUNT_PATTERN)
    kind = _KindField()
    requested_at = serializers.DateTimeField()


class HandpaySchema(serializers.Serializer):
    receipt_number = serializers.RegexField(_RECEIPT_PATTERN)
    state = _StateField()
    amount = serializers.RegexField(HANDPAY_AMOUNT_PATTERN)
    kind = _KindField()
    requested_at = serializers.DateTimeField()
    confirmed_at = serializers.DateTimeField(allow_null=True)
    paid_at = serializers.DateTimeField(allow_null=True)


_RECEIPT_PARAM = OpenApiParameter(
    "receipt_number",
    {"type": "string", "pattern": _RECEIPT_PATTERN},
    OpenApiParameter.PATH,
    description="13 digits, the last a Damm check digit, as the POST answered it.",
)


def _handpay_body(receipt: MachineReceipt, machine: Machine, *, full: bool) -> dict[str, Any]:
    body: dict[str, Any] = {
        "receipt_number": receipt.number,
        "state": receipt.state,
        "amount": format_amount(receipt.amount),
        "kind": receipt.kind,
        "requested_at": local_moment(receipt.created_at, machine),
    }
    if full:
        body["confirmed_at"] = local_moment(receipt.confirmed_at, machine)
        body["paid_at"] = local_moment(receipt.paid_at, machine)
    return body


@extend_schema_view(
    post=extend_schema(
        operation_id="handpay_request",
        summary="A win the machine does not pay itself: ask for a handpay",
        request=HandpayRequestSchema,
        responses={
            201: HandpayCreatedSchema,
            **refusal_responses(
                POST_REFUSALS,
                {
                    409: {"handpay_pending": "this machine already has a handpay that is requested"},
                    422: {
                        "invalid_amount": "not an amount > 0 with at most three decimals below 10 000 000 000",
                        "invalid_request": "kind is not jackpot or cancelled_credits",
                    },
                },
            ),
        },
        extensions=schema_links(
            201,
            state=link(
                "handpay_get",
                "The handpay's state: clear the lockup once confirmed, paid or void.",
                parameters={"receipt_number": "$response.body#/receipt_number"},
            ),
        ),
    )
)
class HandpayRequestView(MachinePostView):
    operation = "handpay"

    def handle(self, post: MachinePost) -> Response:
        try:
            amount = parse_amount(post.body.get("amount"))
        except InvalidAmount:
            raise invalid(
                "invalid_amount", "'amount' must be a string like \"12.50\": > 0, at most three decimals."
            ) from None
        kind = choice(post.body, "kind", HANDPAY_KINDS)
        try:
            receipt = handpay_request(machine=post.machine, amount=amount, kind=kind, request_id=post.request_id)
        except CashDeskError as error:
            if error.code == "handpay_pending":
                # The contract's sentence, not the cashier's.
                return refusal(error.code, "This machine already has a handpay that is requested.")
            raise ApiError(422, error.code, error.message) from None
        return Response(_handpay_body(receipt, post.machine, full=False), status=201)


class HandpayDetailView(MachineAPIView):
    @extend_schema(
        operation_id="handpay_get",
        summary="A handpay's state: the machine clears its lockup once it is confirmed, paid or void",
        parameters=[_RECEIPT_PARAM],
        responses={
            200: HandpaySchema,
            **refusal_responses(
                ANY_REFUSALS, {404: {"not_found": "no handpay of this machine has this number (another machine's)"}}
            ),
        },
    )
    def get(self, request: Request, receipt_number: str) -> Response:
        machine = self.machine(request)
        receipt = MachineReceipt.objects.filter(
            machine=machine, source=MachineReceipt.Source.MACHINE, number=receipt_number.strip()[:20]
        ).first()
        if receipt is None:
            return error_response(404, "not_found", "This machine has no handpay with this receipt number.")
        return Response(_handpay_body(receipt, machine, full=True))

"""Machine contract v1.1, offline validation: POST /api/v1/validation-pool and POST /api/v1/tickets/offline."""

from typing import Any

from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework.response import Response

from casino_office.money import InvalidAmount, parse_amount
from tickets import offline
from tickets.api.errors import error_response, invalid
from tickets.api.fields import choice
from tickets.api.moments import moment_with_offset
from tickets.api.scaffold import MachinePost, MachinePostView
from tickets.api.serializers import (
    NUMBER_FROM_ANSWER,
    POST_REFUSALS,
    TO_TICKET,
    OfflineTicketRequestSchema,
    TicketSchema,
    ValidationPoolRequestSchema,
    ValidationPoolResponseSchema,
    link,
    refusal_responses,
    schema_links,
)
from tickets.api.views import ticket_body
from tickets.exceptions import TicketError
from tickets.models import TicketType
from tickets.numbers import InvalidValidationNumber, NotAContractSpelling, parse_machine_validation_number
from tickets.services import MAX_TICKET_SEQUENCE

_INPUT_CODES = frozenset({"invalid_amount", "amount_not_in_credits", "over_limit", "invalid_number", "invalid_request"})
_MAX_SEQUENCE = MAX_TICKET_SEQUENCE  # the column's range; the host's counter wraps past it


def _integer(body: dict[str, Any], name: str, *, minimum: int, maximum: int, default: int | None = None) -> int:
    value = body.get(name, default)
    # JSON true/false are ints to Python; a machine's counter is neither.
    if isinstance(value, bool) or not isinstance(value, int) or not (minimum <= value <= maximum):
        raise invalid("invalid_request", f"'{name}' must be an integer from {minimum} to {maximum}.")
    return value


@extend_schema_view(
    post=extend_schema(
        operation_id="validation_pool",
        summary="Numbers for offline cashouts: the machine's reserved pool, topped up",
        request=ValidationPoolRequestSchema,
        responses={200: ValidationPoolResponseSchema, **refusal_responses(POST_REFUSALS)},
        extensions=schema_links(
            200,
            offline_ticket=link(
                "ticket_offline",
                "Report a ticket printed offline with a number of the pool.",
                requestBody={"validation_number": "$response.body#/validation_numbers/0"},
            ),
        ),
    )
)
class ValidationPoolView(MachinePostView):
    operation = "validation-pool"

    def handle(self, post: MachinePost) -> Response:
        machine = post.machine
        requested = _integer(post.body, "count", minimum=1, maximum=_MAX_SEQUENCE, default=offline.DEFAULT_POOL_REQUEST)
        count = offline.pool_count(machine=machine, requested=requested)
        reserved = offline.validation_pool_top_up(machine=machine, count=count)
        return Response(
            {
                "validation_numbers": [reservation.validation_number for reservation in reserved],
                "pool_size": machine.casino.validation_pool_size,
            }
        )


@extend_schema_view(
    post=extend_schema(
        operation_id="ticket_offline",
        summary="Report a ticket printed while offline with a number of the machine's pool",
        request=OfflineTicketRequestSchema,
        responses={
            201: TicketSchema,
            **refusal_responses(
                POST_REFUSALS,
                {
                    409: {
                        "not_in_pool": "the number was not reserved for this machine",
                        "already_reported": "the number was reported before with another request_id",
                    },
                    422: {
                        "invalid_amount": "not an amount > 0 with at most three decimals; a kiosk's not in whole cents",
                        "over_limit": "above the casino's ticket maximum",
                        "amount_not_in_credits": "not a whole number of the machine's credits",
                        "invalid_number": "the check digit is wrong",
                        "invalid_request": "printed_at more than 5 minutes ahead; a kiosk reported a promo ticket",
                    },
                },
            ),
        },
        extensions=schema_links(
            201,
            ticket_in=link("ticket_authorize", "Ticket-in: a machine reads the ticket.", parameters=NUMBER_FROM_ANSWER),
            ticket=TO_TICKET,
        ),
    )
)
class OfflineTicketView(MachinePostView):
    operation = "offline"

    def handle(self, post: MachinePost) -> Response:
        body = post.body
        number = _body_number(body)
        try:
            amount = parse_amount(body.get("amount"))
        except InvalidAmount:
            raise invalid(
                "invalid_amount", "'amount' must be a string like \"12.50\": > 0, at most three decimals."
            ) from None
        ticket_type = choice(body, "ticket_type", tuple(TicketType.values), default=TicketType.CASHABLE)
        printed_at = moment_with_offset(body, "printed_at")
        sequence = _integer(body, "sequence", minimum=0, maximum=_MAX_SEQUENCE)
        try:
            ticket = offline.ticket_report_offline(
                machine=post.machine,
                validation_number=number,
                amount=amount,
                ticket_type=ticket_type,
                printed_at=printed_at,
                sequence=sequence,
                request_id=post.request_id,
            )
        except TicketError as error:
            if error.code in _INPUT_CODES:
                raise invalid(error.code, error.detail) from None
            return error_response(409, error.code, error.detail)
        return Response(ticket_body(ticket, post.machine), status=201)


def _body_number(body: dict[str, Any]) -> str:
    raw_number = body.get("validation_number")
    try:
        if not isinstance(raw_number, str):
            raise InvalidValidationNumber(raw_number)
        return parse_machine_validation_number(raw_number)
    except (InvalidValidationNumber, NotAContractSpelling):
        raise invalid("invalid_number", "The validation number is malformed or its check digit is wrong.") from None

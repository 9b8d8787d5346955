"""The slot-machine REST contract v1 (../shared/machine-api.md).

Views parse input with the contract's error codes, call one service, and
render its result. Every POST is a tickets.api.scaffold.MachinePostView.
"""

from collections.abc import Callable
from decimal import Decimal
from typing import Any
from urllib.parse import urlsplit

from django.http import HttpRequest, JsonResponse
from django.http.response import HttpResponseBase
from django.views.decorators.csrf import csrf_exempt
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework.request import Request
from rest_framework.response import Response

from casino_office.money import InvalidAmount, amount_in_words, cash_payout, format_amount, parse_amount
from machines.models import Machine
from tickets import selectors, services
from tickets.api.errors import ApiError, error_response, invalid, refusal
from tickets.api.fields import choice, text
from tickets.api.idempotency import request_id_answered
from tickets.api.moments import local_moment
from tickets.api.scaffold import MachineAPIView, MachinePost, MachinePostView
from tickets.api.serializers import (
    ANY_REFUSALS,
    NUMBER_FROM_ANSWER,
    POST_REFUSALS,
    PRESENTED_NUMBER_SCHEMA,
    TO_TICKET,
    AuthorizeRequestSchema,
    AuthorizeResponseSchema,
    CommitRequestSchema,
    IssueRequestSchema,
    IssueResponseSchema,
    PrintedRequestSchema,
    Refusals,
    StateResponseSchema,
    TicketSchema,
    link,
    refusal_responses,
    schema_links,
)
from tickets.exceptions import TicketError, TicketNotFound
from tickets.models import Ticket, TicketType
from tickets.numbers import (
    InvalidValidationNumber,
    NotAContractSpelling,
    display_validation_number,
    parse_machine_validation_number,
)


def ticket_body(ticket: Ticket, machine: Machine) -> dict[str, Any]:
    return {
        "validation_number": ticket.validation_number,
        "state": ticket.state,
        "amount": format_amount(ticket.amount),
        "ticket_type": ticket.ticket_type,
        "issued_at": local_moment(ticket.issued_at, machine),
        "expires_at": local_moment(ticket.expires_at, machine),
    }


def _state_body(ticket: Ticket) -> dict[str, Any]:
    return {"validation_number": ticket.validation_number, "state": ticket.state}


def _dispensed(body: dict[str, Any]) -> Decimal:
    """A kiosk's accepted commit: the cash it dispensed, in euros and cents (it must equal the payout)."""
    try:
        dispensed: Decimal = parse_amount(body.get("dispensed"))
    except InvalidAmount:
        raise invalid(
            "invalid_amount", "'dispensed' must be the payout the kiosk dispensed, a string like \"12.50\"."
        ) from None
    return dispensed


def _printable(raw: str) -> str:
    return "".join(ch if ch.isprintable() else "?" for ch in raw)[:64]


def _with_ticket_number(machine: Machine, raw_number: str, action: Callable[[str], Response]) -> Response:
    """Rate limit, parse and look up a validation number; count failures against the machine."""
    retry_after = selectors.machine_lookup_retry_after(machine=machine)
    if retry_after is not None:
        raise ApiError(
            429,
            "rate_limited",
            "Too many unknown or invalid validation numbers from this machine.",
            headers={"Retry-After": str(retry_after)},
        )
    try:
        number = parse_machine_validation_number(raw_number)
    except NotAContractSpelling:
        # Written as no number of the contract: never found, and nothing is looked up; a guess all the same.
        services.lookup_failure_record(machine=machine, presented_number=_printable(raw_number), code="not_found")
        return error_response(404, "not_found", "No such ticket in this casino.")
    except InvalidValidationNumber:
        services.lookup_failure_record(machine=machine, presented_number=_printable(raw_number), code="invalid_number")
        return error_response(422, "invalid_number", "The validation number is malformed or its check digit is wrong.")
    try:
        return action(number)
    except TicketNotFound as error:
        services.lookup_failure_record(machine=machine, presented_number=number, code="not_found")
        return refusal(error.code, error.detail)
    except TicketError as error:
        return refusal(error.code, error.detail)


def _not_a_number(post: MachinePost, raw_number: str) -> Response | None:
    """A path number in no spelling of the contract is not found before anything runs: counted as a guess, and,
    as an input error, not remembered under its request_id (a corrected retry is no reuse). A request_id that
    was answered before is run_idempotent's to answer (a reuse, counting nothing)."""
    try:
        parse_machine_validation_number(raw_number)
    except NotAContractSpelling:
        if request_id_answered(machine=post.machine, request_id=post.request_id):
            return None
        post.ensure_current()  # the guess is counted outside a request transaction: against this machine?
        return _with_ticket_number(post.machine, raw_number, _never_called)
    except InvalidValidationNumber:
        pass
    return None


def _never_called(number: str) -> Response:  # pragma: no cover - _with_ticket_number answers 404 first
    raise AssertionError(number)


def _number_subject(raw_number: str) -> str:
    try:
        return parse_machine_validation_number(raw_number)
    except (InvalidValidationNumber, NotAContractSpelling):
        return raw_number


def _as_sent(request: Request, decoded: str) -> str:
    """The path's number as the machine wrote it, where the server tells (gunicorn's RAW_URI, else REQUEST_URI).

    A space is written %20 in a URL; any other escape (%2D, a digit as %37) is no spelling of the contract.
    """
    uri = request.META.get("RAW_URI") or request.META.get("REQUEST_URI")
    segments = urlsplit(uri).path.split("/") if isinstance(uri, str) else []
    if "tickets" not in segments[:-1]:
        return decoded
    written = segments[segments.index("tickets") + 1]
    spelled = written.replace("%20", " ")
    return spelled if spelled == decoded else written


NUMBER_REFUSALS: Refusals = {
    404: {"not_found": "no such ticket in this machine's casino, or the number is not written as the schema says"},
    422: {"invalid_number": "the check digit is wrong"},
    429: {"rate_limited": "too many unknown or invalid numbers from this machine; wait Retry-After seconds"},
}
_TICKET_REFUSALS = {
    "already_redeemed": "the ticket is redeemed",
    "expired": "the ticket's expires_at has passed",
    "void": "the ticket is void",
    "not_printed": "the ticket's print is not confirmed (pending_print)",
    "on_hold": "the ticket is on hold at the cash desk",
    "not_cashable": "kiosks only (v1.1): a promo ticket",
    "over_kiosk_limit": "kiosks only (v1.1): the amount is above the casino's kiosk limit",
    "kiosk_empty": "kiosks only (v1.1): the kiosk's cash in the books is less than the payout",
}
_RETRY_AFTER = OpenApiParameter(
    "Retry-After",
    {"type": "integer", "minimum": 1},
    OpenApiParameter.HEADER,
    required=True,
    response=[429],
    description="Seconds until the machine may present numbers again.",
)
_NUMBER_PARAM = OpenApiParameter(
    "validation_number",
    PRESENTED_NUMBER_SCHEMA,
    OpenApiParameter.PATH,
    description=str(PRESENTED_NUMBER_SCHEMA["description"]),
)


# No docstring on a view class: drf-spectacular would show it as each of its operations' description.
class TicketNumberPostView(MachinePostView):
    # A POST on a ticket named in the path (tickets/{validation_number}/...): the number is rate limited, parsed
    # and looked up around the operation, and is part of the request (its fingerprint's subject).

    def answer(self, request: Request, **path: str) -> HttpResponseBase:
        presented = _as_sent(request, path["validation_number"])
        post = self.machine_post(request)
        if (refused := _not_a_number(post, presented)) is not None:
            return refused

        def handle() -> Response:
            # The body first: an input refused is answered before the number counts against the machine.
            action = self.ticket_action(post)
            return _with_ticket_number(post.machine, presented, action)

        return self.run_once(post, handle, subject=_number_subject(presented))

    def ticket_action(self, post: MachinePost) -> Callable[[str], Response]:
        """The body read; what the operation does with the ticket's parsed number."""
        raise NotImplementedError  # pragma: no cover - every operation implements it


@extend_schema_view(
    post=extend_schema(
        operation_id="ticket_issue",
        summary="Cashout, step 1: reserve a validation number",
        request=IssueRequestSchema,
        responses={
            201: IssueResponseSchema,
            **refusal_responses(
                POST_REFUSALS,
                {
                    422: {
                        "invalid_amount": "not an amount > 0 with at most three decimals; a kiosk's not in whole cents",
                        "over_limit": "above the casino's ticket maximum",
                        "amount_not_in_credits": "not a whole number of the machine's credits",
                        "invalid_request": "a kiosk asked for a promo ticket",
                    }
                },
            ),
        },
        extensions=schema_links(
            201,
            print_result=link("ticket_printed", "Report the print result.", parameters=NUMBER_FROM_ANSWER),
            ticket=TO_TICKET,
        ),
    )
)
class TicketIssueView(MachinePostView):
    operation = "issue"

    def handle(self, post: MachinePost) -> Response:
        machine, body = post.machine, post.body
        try:
            amount: Decimal = parse_amount(body.get("amount"))
        except InvalidAmount:
            raise invalid(
                "invalid_amount", "'amount' must be a string like \"12.50\": > 0, at most three decimals."
            ) from None
        ticket_type = choice(body, "ticket_type", tuple(TicketType.values), default=TicketType.CASHABLE)
        try:
            ticket = services.ticket_issue(
                machine=machine, amount=amount, ticket_type=ticket_type, request_id=post.request_id
            )
        except TicketError as error:
            raise invalid(error.code, error.detail) from None
        data = ticket_body(ticket, machine)
        data["print"] = _print_data(ticket, machine)
        return Response(data, status=201)


def _print_data(ticket: Ticket, machine: Machine) -> dict[str, Any]:
    """What the machine prints on the ticket besides its public fields."""
    casino = machine.casino
    return {
        "casino_name": casino.name,
        "casino_address": casino.address,
        "machine": machine.asset_number,
        "sequence": ticket.sequence,
        "amount_words": amount_in_words(ticket.amount, casino.language),
        "amount_words_en": amount_in_words(ticket.amount, "en"),
        "validation_display": display_validation_number(ticket.validation_number),
    }


@extend_schema_view(
    post=extend_schema(
        operation_id="ticket_printed",
        summary="Cashout, step 2: report the print result",
        parameters=[_NUMBER_PARAM, _RETRY_AFTER],
        request=PrintedRequestSchema,
        responses={
            200: StateResponseSchema,
            **refusal_responses(
                POST_REFUSALS,
                NUMBER_REFUSALS,
                {
                    404: {"not_found": "also a ticket this machine did not issue"},
                    409: {"invalid_state": "the ticket is no longer pending_print"},
                },
            ),
        },
        extensions=schema_links(
            200,
            ticket_in=link(
                "ticket_authorize", "Ticket-in: another machine reads the ticket.", parameters=NUMBER_FROM_ANSWER
            ),
            ticket=TO_TICKET,
        ),
    )
)
class TicketPrintedView(TicketNumberPostView):
    operation = "printed"

    def ticket_action(self, post: MachinePost) -> Callable[[str], Response]:
        printed = choice(post.body, "result", ("printed", "failed")) == "printed"
        reason = text(post.body, "reason", required=False, max_length=255)

        def act(number: str) -> Response:
            ticket = services.ticket_confirm_print(
                machine=post.machine,
                validation_number=number,
                printed=printed,
                reason=reason,
                request_id=post.request_id,
            )
            return Response(_state_body(ticket))

        return act


@extend_schema_view(
    post=extend_schema(
        operation_id="ticket_authorize",
        summary="Ticket-in, step 1: hold the ticket for this machine",
        parameters=[_NUMBER_PARAM, _RETRY_AFTER],
        request=AuthorizeRequestSchema,
        responses={
            200: AuthorizeResponseSchema,
            **refusal_responses(
                POST_REFUSALS,
                NUMBER_REFUSALS,
                {
                    409: {
                        **_TICKET_REFUSALS,
                        "pending_elsewhere": "another machine holds the ticket (redeem_pending)",
                        "not_reported": "a number reserved for an offline ticket not reported yet",
                    }
                },
            ),
        },
        extensions=schema_links(
            200,
            commit=link("ticket_commit", "Commit (accepted) or give back (rejected).", parameters=NUMBER_FROM_ANSWER),
            ticket=TO_TICKET,
        ),
    )
)
class TicketAuthorizeView(TicketNumberPostView):
    operation = "authorize"

    def ticket_action(self, post: MachinePost) -> Callable[[str], Response]:
        machine = post.machine

        def act(number: str) -> Response:
            ticket = services.ticket_authorize(machine=machine, validation_number=number, request_id=post.request_id)
            data = {
                "validation_number": ticket.validation_number,
                "state": ticket.state,
                "amount": format_amount(ticket.amount),
                "ticket_type": ticket.ticket_type,
                "hold_expires_at": local_moment(ticket.hold_expires_at, machine),
            }
            if machine.is_kiosk:  # contract v1.1, "Kiosks": the cash to dispense, rounded up to the cent
                data["payout"] = format_amount(cash_payout(ticket.amount))
            return Response(data)

        return act


@extend_schema_view(
    post=extend_schema(
        operation_id="ticket_commit",
        summary="Ticket-in, step 2: commit (accepted) or give back (rejected)",
        parameters=[_NUMBER_PARAM, _RETRY_AFTER],
        request=CommitRequestSchema,
        responses={
            200: StateResponseSchema,
            **refusal_responses(
                POST_REFUSALS,
                NUMBER_REFUSALS,
                {
                    409: {
                        **_TICKET_REFUSALS,
                        "pending_elsewhere": "another machine holds the ticket",
                        "invalid_state": "the ticket is not held (issued: authorize it first)",
                    },
                    422: {"invalid_amount": "kiosks (v1.1): 'dispensed' is not the payout"},
                },
            ),
        },
        extensions=schema_links(
            200,
            present_again=link(
                "ticket_authorize",
                "Present the ticket again (issued again if rejected).",
                parameters=NUMBER_FROM_ANSWER,
            ),
            ticket=TO_TICKET,
        ),
    )
)
class TicketCommitView(TicketNumberPostView):
    operation = "commit"

    def ticket_action(self, post: MachinePost) -> Callable[[str], Response]:
        accepted = choice(post.body, "result", ("accepted", "rejected")) == "accepted"
        reason = text(post.body, "reason", required=False, max_length=255)
        dispensed = _dispensed(post.body) if post.machine.is_kiosk and accepted else None

        def act(number: str) -> Response:
            ticket = services.ticket_commit(
                machine=post.machine,
                validation_number=number,
                accepted=accepted,
                reason=reason,
                request_id=post.request_id,
                dispensed=dispensed,
            )
            return Response(_state_body(ticket))

        return act


class TicketDetailView(MachineAPIView):
    @extend_schema(
        operation_id="ticket_get",
        summary="A ticket's public fields",
        parameters=[_NUMBER_PARAM, _RETRY_AFTER],
        responses={200: TicketSchema, **refusal_responses(ANY_REFUSALS, NUMBER_REFUSALS)},
    )
    def get(self, request: Request, validation_number: str) -> Response:
        validation_number = _as_sent(request, validation_number)
        machine = self.machine(request)

        def act(number: str) -> Response:
            ticket = selectors.ticket_get_for_machine(machine=machine, validation_number=number)
            return Response(ticket_body(ticket, machine))

        return _with_ticket_number(machine, validation_number, act)


@csrf_exempt  # nothing here to protect: without it, a machine's POST to a wrong path got the staff UI's CSRF page
def api_not_found(request: HttpRequest, path: str = "") -> JsonResponse:
    return JsonResponse({"code": "not_found", "detail": "No such endpoint."}, status=404)

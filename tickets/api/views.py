"""The slot-machine REST contract v1 (../shared/machine-api.md).

Views parse input with the contract's error codes, call one service, and
render its result. Every POST runs through run_idempotent.
"""

import datetime as dt
import re
from collections.abc import Callable
from decimal import Decimal
from typing import Any
from urllib.parse import urlsplit

from django.db import connection
from django.http import HttpRequest, JsonResponse
from django.http.response import HttpResponseBase
from django.utils import translation
from django.views.decorators.csrf import csrf_exempt
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from casino_office.money import InvalidAmount, amount_in_words, cash_payout, format_amount, parse_amount
from machines.models import Machine
from tickets import selectors, services
from tickets.api.auth import IsTicketMachine, MachineKeyAuthentication
from tickets.api.errors import ApiError, error_response
from tickets.api.idempotency import fingerprint, request_id_answered, run_idempotent
from tickets.api.serializers import (
    PRESENTED_NUMBER_SCHEMA,
    AuthorizeRequestSchema,
    AuthorizeResponseSchema,
    CommitRequestSchema,
    IssueRequestSchema,
    IssueResponseSchema,
    PrintedRequestSchema,
    Refusals,
    StateResponseSchema,
    TicketSchema,
    refusal_responses,
)
from tickets.exceptions import TicketError, TicketNotFound
from tickets.models import Ticket, TicketType
from tickets.numbers import (
    InvalidValidationNumber,
    NotAContractSpelling,
    display_validation_number,
    parse_machine_validation_number,
)

_STATUS_BY_CODE = {
    "not_found": 404,
    "invalid_amount": 422,
    "amount_not_in_credits": 422,
    "over_limit": 422,
    "invalid_number": 422,
    "invalid_request": 422,
}
# Printable text only: no control character (C0, DEL or C1, Unicode's "Cc") has business in an id or a reason;
# PostgreSQL text cannot hold NUL, and a log reads NEL (U+0085) as the end of a line.
_TEXT = re.compile(r"^[^\x00-\x1f\x7f-\x9f]*$")


def _local(moment: dt.datetime | None, machine: Machine) -> str | None:
    if moment is None:
        return None
    return moment.astimezone(machine.casino.zoneinfo).isoformat(timespec="seconds")


def _ticket_body(ticket: Ticket, machine: Machine) -> dict[str, Any]:
    return {
        "validation_number": ticket.validation_number,
        "state": ticket.state,
        "amount": format_amount(ticket.amount),
        "ticket_type": ticket.ticket_type,
        "issued_at": _local(ticket.issued_at, machine),
        "expires_at": _local(ticket.expires_at, machine),
    }


def _state_body(ticket: Ticket) -> dict[str, Any]:
    return {"validation_number": ticket.validation_number, "state": ticket.state}


def _invalid(code: str, detail: str) -> ApiError:
    return ApiError(_STATUS_BY_CODE.get(code, 422), code, detail)


def _body(request: Request) -> dict[str, Any]:
    if not isinstance(request.data, dict):
        raise _invalid("invalid_request", "The body must be a JSON object.")
    return request.data


def _text(body: dict[str, Any], name: str, *, required: bool, max_length: int, min_length: int = 0) -> str:
    value = body.get(name)
    if value is None and not required:
        return ""
    if not isinstance(value, str) or not (min_length <= len(value) <= max_length) or not _TEXT.fullmatch(value):
        raise _invalid(
            "invalid_request", f"'{name}' must be a string of {min_length}-{max_length} printable characters."
        )
    return value


def _choice(body: dict[str, Any], name: str, choices: tuple[str, ...], default: str | None = None) -> str:
    value = body.get(name, default)
    if value not in choices:
        raise _invalid("invalid_request", f"'{name}' must be one of: {', '.join(choices)}.")
    return str(value)


def _dispensed(body: dict[str, Any]) -> Decimal:
    """A kiosk's accepted commit: the cash it dispensed, in euros and cents (it must equal the payout)."""
    try:
        dispensed: Decimal = parse_amount(body.get("dispensed"))
    except InvalidAmount:
        raise _invalid(
            "invalid_amount", "'dispensed' must be the payout the kiosk dispensed, a string like \"12.50\"."
        ) from None
    return dispensed


def _request_id(body: dict[str, Any]) -> str:
    return _text(body, "request_id", required=True, min_length=1, max_length=64)


def _refusal_response(error: TicketError) -> Response:
    return error_response(_STATUS_BY_CODE.get(error.code, 409), error.code, error.detail)


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
        return _refusal_response(error)
    except TicketError as error:
        return _refusal_response(error)


def _not_a_number(machine: Machine, raw_number: str, request_id: str) -> Response | None:
    """A path number in no spelling of the contract is not found before anything runs: counted as a guess, and,
    as an input error, not remembered under its request_id (a corrected retry is no reuse). A request_id that
    was answered before is run_idempotent's to answer (a reuse, counting nothing)."""
    try:
        parse_machine_validation_number(raw_number)
    except NotAContractSpelling:
        if request_id_answered(machine=machine, request_id=request_id):
            return None
        return _with_ticket_number(machine, raw_number, _never_called)
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


# The refusals every operation may answer, by status and code (contract "Authentication", "Errors").
ANY_REFUSALS: Refusals = {
    401: {"unauthenticated": "the `Authorization: Bearer` key is missing or unknown"},
    403: {"machine_disabled": "the machine is not active or not enrolled in the ticket system"},
    406: {"not_acceptable": "the client does not accept application/json"},
    503: {"unavailable": "the database cannot be reached; retry with the same request_id"},
}
POST_REFUSALS: Refusals = {
    **ANY_REFUSALS,
    400: {"malformed_json": "the body is not JSON (or repeats a key, or nests too deep)"},
    409: {"request_id_reused": "this request_id was used for a different request"},
    413: {"payload_too_large": "the body is larger than the server accepts"},
    415: {"unsupported_media_type": "send application/json"},
    422: {"invalid_request": "a field is missing, of the wrong type, or holds a control character"},
}
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
_NUMBER = {"validation_number": "$response.body#/validation_number"}


def schema_links(status: int, **targets: dict[str, Any]) -> dict[str, Any]:
    """OpenAPI links from one answer to the next operations (tickets.api.schema moves them into the answer)."""
    return {"x-links": {str(status): targets}}


def _link(operation_id: str, description: str, **definition: Any) -> dict[str, Any]:
    return {"operationId": operation_id, "description": description, **definition}


_TO_TICKET = _link("ticket_get", "The ticket's public fields.", parameters=_NUMBER)


class MachineAPIView(APIView):
    authentication_classes = [MachineKeyAuthentication]
    permission_classes = [IsTicketMachine]

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        # No SELECT 1 before the request's first statement (CONN_HEALTH_CHECKS): a connection that died since
        # the last request fails that statement, the request is answered 503 `unavailable` (the machine retries
        # with the same request_id, contract "Errors"), and Django drops the connection as the request ends.
        connection.health_check_done = True  # type: ignore[attr-defined]  # Django >= 4.1, not in the stubs
        # The contract's texts are English, whatever the staff UI's language.
        with translation.override("en"):
            return super().dispatch(request, *args, **kwargs)

    @staticmethod
    def machine(request: Request) -> Machine:
        assert isinstance(request.auth, Machine)
        return request.auth


class TicketIssueView(MachineAPIView):
    @extend_schema(
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
            print_result=_link("ticket_printed", "Report the print result.", parameters=_NUMBER),
            ticket=_TO_TICKET,
        ),
    )
    def post(self, request: Request) -> HttpResponseBase:
        machine = self.machine(request)
        body = _body(request)
        request_id = _request_id(body)

        def handle() -> Response:
            try:
                amount: Decimal = parse_amount(body.get("amount"))
            except InvalidAmount:
                raise _invalid(
                    "invalid_amount", "'amount' must be a string like \"12.50\": > 0, at most three decimals."
                ) from None
            ticket_type = _choice(body, "ticket_type", tuple(TicketType.values), default=TicketType.CASHABLE)
            try:
                ticket = services.ticket_issue(
                    machine=machine, amount=amount, ticket_type=ticket_type, request_id=request_id
                )
            except TicketError as error:
                raise _invalid(error.code, error.detail) from None
            casino = machine.casino
            data = _ticket_body(ticket, machine)
            data["print"] = {
                "casino_name": casino.name,
                "casino_address": casino.address,
                "machine": machine.asset_number,
                "sequence": ticket.sequence,
                "amount_words": amount_in_words(ticket.amount, casino.language),
                "amount_words_en": amount_in_words(ticket.amount, "en"),
                "validation_display": display_validation_number(ticket.validation_number),
            }
            return Response(data, status=201)

        return run_idempotent(
            machine=machine,
            request_id=request_id,
            fingerprint_=fingerprint("issue", "", body),
            handler=handle,
        )


class TicketPrintedView(MachineAPIView):
    @extend_schema(
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
            ticket_in=_link("ticket_authorize", "Ticket-in: another machine reads the ticket.", parameters=_NUMBER),
            ticket=_TO_TICKET,
        ),
    )
    def post(self, request: Request, validation_number: str) -> HttpResponseBase:
        validation_number = _as_sent(request, validation_number)
        machine = self.machine(request)
        body = _body(request)
        request_id = _request_id(body)
        if (refused := _not_a_number(machine, validation_number, request_id)) is not None:
            return refused

        def handle() -> Response:
            printed = _choice(body, "result", ("printed", "failed")) == "printed"
            reason = _text(body, "reason", required=False, max_length=255)

            def act(number: str) -> Response:
                ticket = services.ticket_confirm_print(
                    machine=machine, validation_number=number, printed=printed, reason=reason, request_id=request_id
                )
                return Response(_state_body(ticket))

            return _with_ticket_number(machine, validation_number, act)

        return run_idempotent(
            machine=machine,
            request_id=request_id,
            fingerprint_=fingerprint("printed", _number_subject(validation_number), body),
            handler=handle,
        )


class TicketAuthorizeView(MachineAPIView):
    @extend_schema(
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
            commit=_link("ticket_commit", "Commit (accepted) or give back (rejected).", parameters=_NUMBER),
            ticket=_TO_TICKET,
        ),
    )
    def post(self, request: Request, validation_number: str) -> HttpResponseBase:
        validation_number = _as_sent(request, validation_number)
        machine = self.machine(request)
        body = _body(request)
        request_id = _request_id(body)
        if (refused := _not_a_number(machine, validation_number, request_id)) is not None:
            return refused

        def act(number: str) -> Response:
            ticket = services.ticket_authorize(machine=machine, validation_number=number, request_id=request_id)
            data = {
                "validation_number": ticket.validation_number,
                "state": ticket.state,
                "amount": format_amount(ticket.amount),
                "ticket_type": ticket.ticket_type,
                "hold_expires_at": _local(ticket.hold_expires_at, machine),
            }
            if machine.is_kiosk:  # contract v1.1, "Kiosks": the cash to dispense, rounded up to the cent
                data["payout"] = format_amount(cash_payout(ticket.amount))
            return Response(data)

        return run_idempotent(
            machine=machine,
            request_id=request_id,
            fingerprint_=fingerprint("authorize", _number_subject(validation_number), body),
            handler=lambda: _with_ticket_number(machine, validation_number, act),
        )


class TicketCommitView(MachineAPIView):
    @extend_schema(
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
            present_again=_link(
                "ticket_authorize", "Present the ticket again (issued again if rejected).", parameters=_NUMBER
            ),
            ticket=_TO_TICKET,
        ),
    )
    def post(self, request: Request, validation_number: str) -> HttpResponseBase:
        validation_number = _as_sent(request, validation_number)
        machine = self.machine(request)
        body = _body(request)
        request_id = _request_id(body)
        if (refused := _not_a_number(machine, validation_number, request_id)) is not None:
            return refused

        def handle() -> Response:
            accepted = _choice(body, "result", ("accepted", "rejected")) == "accepted"
            reason = _text(body, "reason", required=False, max_length=255)
            dispensed = _dispensed(body) if machine.is_kiosk and accepted else None

            def act(number: str) -> Response:
                ticket = services.ticket_commit(
                    machine=machine,
                    validation_number=number,
                    accepted=accepted,
                    reason=reason,
                    request_id=request_id,
                    dispensed=dispensed,
                )
                return Response(_state_body(ticket))

            return _with_ticket_number(machine, validation_number, act)

        return run_idempotent(
            machine=machine,
            request_id=request_id,
            fingerprint_=fingerprint("commit", _number_subject(validation_number), body),
            handler=handle,
        )


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
            return Response(_ticket_body(ticket, machine))

        return _with_ticket_number(machine, validation_number, act)


@csrf_exempt  # nothing here to protect: without it, a machine's POST to a wrong path got the staff UI's CSRF page
def api_not_found(request: HttpRequest, path: str = "") -> JsonResponse:
    return JsonResponse({"code": "not_found", "detail": "No such endpoint."}, status=404)

"""Replays by request_id (machine-api.md "Idempotency").

The stored answer is written in the same transaction as the effect. A
concurrent duplicate blocks on the unique (machine, request_id) index until
the first commits, then fails its insert, rolls back its own effects and
returns the first answer: never a second effect.
"""

import hashlib
import json
from collections.abc import Callable
from typing import Any

from django.db import IntegrityError, transaction
from django.http import HttpResponse
from django.http.response import HttpResponseBase
from django.utils import timezone
from rest_framework.exceptions import APIException
from rest_framework.response import Response

from casino_office import rawsql
from machines.models import Machine
from tickets.api.auth import KeptMachine, StaleMachine
from tickets.api.errors import ApiError, error_response
from tickets.models import MachineRequest

# Answers kept for replay: outcomes of the business layer. Input errors
# (422) and rate limiting (429) change nothing and are not remembered, so a
# corrected retry is not mistaken for a reuse.
_REMEMBERED_STATUSES = frozenset({200, 201, 404, 409})


class _DuplicateRequest(Exception):
    pass


def fingerprint(endpoint: str, subject: str, body: dict[str, Any]) -> str:
    canonical = json.dumps([endpoint, subject, body], sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(canonical.encode("ascii")).hexdigest()


def _json_response(body: str, status: int) -> HttpResponse:
    return HttpResponse(body, status=status, content_type="application/json")


def _replay(stored: MachineRequest, print_: str) -> HttpResponseBase:
    if stored.fingerprint != print_:
        return error_response(409, "request_id_reused", "This request_id was used for a different request.")
    return _json_response(stored.response_body, stored.response_status)


def _stored(machine: Machine, request_id: str) -> MachineRequest | None:
    return rawsql.select_one(MachineRequest, 't."machine_id" = %s AND t."request_id" = %s', [machine.pk, request_id])


def request_id_answered(*, machine: Machine, request_id: str) -> bool:
    """Whether this machine's request_id has a stored answer (a replay, or a reuse)."""
    return _stored(machine, request_id) is not None


def _store(machine: Machine, request_id: str, fingerprint_: str, response: Response, kept: KeptMachine | None) -> str:
    """Store the answer in the request's transaction (raises _DuplicateRequest on a replay) and return its body.

    A machine from memory is proved current in the insert's statement (StaleMachine if not); an answer not stored
    proves it with a read of its own.
    """
    body = json.dumps(response.data, ensure_ascii=False, separators=(",", ":"))
    if response.status_code not in _REMEMBERED_STATUSES:
        if _stored(machine, request_id) is not None:
            raise _DuplicateRequest()
        if kept is not None:
            kept.ensure_current(machine)
        return body
    answer = MachineRequest(
        machine=machine,
        request_id=request_id,
        fingerprint=fingerprint_,
        response_status=response.status_code,
        response_body=body,
        created_at=timezone.now(),
    )
    try:
        if kept is None:
            rawsql.insert(answer)
        elif not rawsql.insert_checking(answer, kept.check(machine)):
            raise StaleMachine()
    except IntegrityError:
        # No savepoint needed: leaving the block with this exception rolls the whole request back, its effects
        # included.
        raise _DuplicateRequest() from None
    return body


def run_idempotent(
    *,
    machine: Machine,
    request_id: str,
    fingerprint_: str,
    handler: Callable[[], Response],
    kept: KeptMachine | None = None,
) -> HttpResponseBase:
    """Run the request once, or answer what its request_id was answered before.

    Nothing is looked up first: the request runs, and the unique (machine, request_id) index finds a replay
    when its answer is written, in the same transaction as its effects. A replay (or a concurrent duplicate,
    which waits on that index until the first commits) is then rolled back whole and given the stored
    answer. An answer that is not remembered (422, 429) looks for a stored one before its transaction
    ends, and so does an attempt that fails on another unique key, so a replay is never answered anything
    else. A first request, nearly every one, costs no lookup; a replay costs one rolled-back attempt.

    With `kept` (the machine was read from memory), no answer leaves unless the machine is proved current: the
    stored answer's insert checks it in the same statement, an answer not stored and a replay read it first;
    StaleMachine, with everything rolled back, when it is not.
    """
    try:
        with transaction.atomic():
            try:
                response = handler()
            except APIException:
                if _stored(machine, request_id) is not None:
                    raise _DuplicateRequest() from None
                raise
            body = _store(machine, request_id, fingerprint_, response, kept)
    except _DuplicateRequest:
        if kept is not None:
            kept.ensure_current(machine)
        stored = _stored(machine, request_id)
        if stored is None:  # pragma: no cover - the winner's row is committed before we fail
            raise ApiError(503, "unavailable", "Concurrent request; retry.") from None
        return _replay(stored, fingerprint_)
    except IntegrityError:
        # A replay's attempt can meet its first run's effect in another unique key (a handpay's request id)
        # before it writes its answer; rolled back whole, it is answered from the stored answer. Without
        # one, the error is a bug and surfaces.
        if kept is not None:
            kept.ensure_current(machine)
        stored = _stored(machine, request_id)
        if stored is None:
            raise
        return _replay(stored, fingerprint_)
    return _json_response(body, response.status_code)

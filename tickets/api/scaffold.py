"""How every machine request is served (../shared/machine-api.md "Authentication", "Idempotency", "Errors").

A view of the contract is a MachineAPIView: the machine is authenticated by its key, the connection is not
health-checked first, and the answer is in English. A POST is a MachinePostView: it names its `operation`
and implements `handle`; the scaffold reads the body as a JSON object and its request_id, then runs `handle`
once in a transaction that stores the answer under the unique (machine, request_id) key, and answers a
repeated request with its first answer, byte for byte (tickets.api.idempotency). Nothing is looked up
before the work: the hot path costs the operation's own statements and the stored answer's insert.

In `handle`, an input refused is raised (tickets.api.errors.invalid: not remembered, so a corrected retry
is no reuse); an operation refused is returned (tickets.api.errors.refusal: remembered like a success).
"""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

from django.db import connection
from django.http import HttpRequest
from django.http.response import HttpResponseBase
from django.utils import translation
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from machines.models import Machine
from tickets.api import fields
from tickets.api.auth import (
    IsTicketMachine,
    KeptMachine,
    MachineKeyAuthentication,
    MachinePrincipal,
    StaleMachine,
)
from tickets.api.idempotency import fingerprint, run_idempotent


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


@dataclass(frozen=True)
class MachinePost:
    """A machine's POST as the scaffold read it: who sent it, its JSON object, and its request_id."""

    machine: Machine
    body: dict[str, Any]
    request_id: str
    # Set when the machine was read from memory (tickets.api.auth.KeptMachine): what proves it current.
    kept: KeptMachine | None = None

    def ensure_current(self) -> None:
        """Before an effect outside the request's transaction: the machine read now (StaleMachine unless the same)."""
        if self.kept is not None:
            self.kept.ensure_current(self.machine)


class MachinePostView(MachineAPIView):
    # The machine may come from the process's memory (tickets.api.auth): every answer below is given only once
    # the machine is proved current (in the transaction that stores it, or by reading it), else the request starts
    # over with the machine read fresh.
    proves_kept_machine = True
    # The request's name in its fingerprint: the same request_id with another operation is a reuse.
    operation: ClassVar[str]

    # No docstring on `post`: drf-spectacular would show it as every operation's description.
    def post(self, request: Request, **path: str) -> HttpResponseBase:
        principal = request.user
        assert isinstance(principal, MachinePrincipal)
        try:
            try:
                return self.answer(request, **path)
            except StaleMachine:
                raise
            except Exception:
                if principal.kept is not None:  # an input refused (or a failure) before the answer: to this machine?
                    principal.kept.ensure_current(self.machine(request))
                raise
        except StaleMachine:
            assert principal.kept is not None
            principal.kept.refresh(self.machine(request))  # 401 for a key gone, 403 for a machine disabled
            principal.kept = None
            return self.answer(request, **path)

    def answer(self, request: Request, **path: str) -> HttpResponseBase:
        """The operation's answer (raises StaleMachine when the machine from memory proved out of date)."""
        post = self.machine_post(request)
        return self.run_once(post, lambda: self.handle(post))

    def handle(self, post: MachinePost) -> Response:
        raise NotImplementedError  # pragma: no cover - every operation implements it

    @classmethod
    def machine_post(cls, request: Request) -> MachinePost:
        """The machine, the body (422 unless a JSON object) and its request_id (422 unless printable, 1-64)."""
        body = fields.json_object(request)
        principal = request.user
        kept = principal.kept if isinstance(principal, MachinePrincipal) else None
        return MachinePost(machine=cls.machine(request), body=body, request_id=fields.request_id(body), kept=kept)

    def run_once(self, post: MachinePost, handler: Callable[[], Response], *, subject: str = "") -> HttpResponseBase:
        """`handler`'s answer, stored under the request_id, or the answer stored before (a replay or a reuse).

        `subject` is what the path names (a ticket's number): part of the request, as the body is.
        """
        return run_idempotent(
            machine=post.machine,
            request_id=post.request_id,
            fingerprint_=fingerprint(self.operation, subject, post.body),
            handler=handler,
            kept=post.kept,
        )

import datetime as dt
import time
from dataclasses import dataclass
from functools import cache
from typing import Any

from django.conf import settings
from django.db import connection
from django.utils import timezone
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import exceptions
from rest_framework.authentication import BaseAuthentication, get_authorization_header
from rest_framework.permissions import BasePermission
from rest_framework.request import Request
from rest_framework.views import APIView

from casino_office import rawsql
from machines.keys import hash_key
from machines.models import MACHINE_WORK_FIELDS, Casino, Machine

# last_seen_at is refreshed at most this often, to keep a write off every request.
_LAST_SEEN_RESOLUTION = dt.timedelta(seconds=60)
# Machines kept in a process's memory at most (the oldest go first beyond it).
_KEPT_AT_MOST = 4096


# What moves with the machine's own requests and changes nothing they are answered: its last request's time and
# its tickets' counter (the issue's statement moves it under a row lock). The block of its guessed numbers is in
# the version: a block set in another process is not in this one's memory.
_NOT_IN_VERSION = tuple(name for name in MACHINE_WORK_FIELDS if name != "lookups_blocked_until")


@cache
def _version_sql() -> str:
    """What the machine is (every column but `_NOT_IN_VERSION`) and its casino's whole row, as one digest: equal
    digests, the same machine and rules."""
    fields = [field for field in Machine._meta.concrete_fields if field.name not in _NOT_IN_VERSION]
    what = ", ".join(f't."{field.column}"' for field in fields)
    return f"encode(sha256(convert_to(ROW({what})::text || r::text, 'UTF8')), 'hex')"


@dataclass(frozen=True)
class _Kept:
    row: tuple[Any, ...]
    version: str
    until: float  # time.monotonic()


_kept: dict[str, _Kept] = {}


def forget_kept_machines() -> None:
    """Empty this process's memory of machines (the tests start each from nothing)."""
    _kept.clear()


class StaleMachine(Exception):
    """The machine kept in memory is no longer the machine in the database: read it again and start over."""


@dataclass(frozen=True)
class KeptMachine:
    """A machine read from this process's memory, not from the database: the request's transaction proves it
    current before it commits (`check`, in the statement that stores the answer), or the request starts over
    with the machine read fresh (`refresh`). A revoked key, a disabled machine or a changed rule takes effect
    on the next request as before: nothing read from memory commits unless the row still says the same."""

    key_hash: str
    version: str

    def check(self, machine: Machine) -> rawsql.Also:
        """A boolean SQL expression: the machine's row and its casino's still are what was read. A request that
        changed them itself (its guess blocked the machine) does not pass either: it starts over, read fresh."""
        tables = f'"{Machine._meta.db_table}" t JOIN "{Casino._meta.db_table}" r ON r."id" = t."casino_id"'
        where = f't."id" = %s AND t."api_key_hash" = %s AND {_version_sql()} = %s'
        sql = f"EXISTS (SELECT 1 FROM {tables} WHERE {where})"  # noqa: S608 - identifiers from the models
        return sql, [machine.pk, self.key_hash, self.version]

    def ensure_current(self, machine: Machine) -> None:
        """Read the machine's row now (a statement) and raise StaleMachine unless it is what the request knows."""
        sql, params = self.check(machine)
        with rawsql.cursor() as c:
            c.execute(f"SELECT {sql}", params)
            row = c.fetchone()
        if not (row and row[0]):
            raise StaleMachine()

    def refresh(self, machine: Machine) -> None:
        """Read the machine again into `machine` (its casino too); a key gone is 401, a machine disabled 403."""
        _kept.pop(self.key_hash, None)
        fresh = _read(self.key_hash)
        if fresh is None:
            raise exceptions.AuthenticationFailed("Unknown machine key.")
        machine.__dict__.update(fresh.__dict__)
        if not machine.may_use_ticket_system:
            raise MachineDisabled()


def _read(key_hash: str) -> Machine | None:
    """The machine with its casino, read fresh; on PostgreSQL kept in memory with its version for `_machine`."""
    if connection.vendor != "postgresql" or settings.MACHINE_KEPT_SECONDS <= 0:
        return rawsql.select_one(Machine, 't."api_key_hash" = %s', [key_hash], related="casino")
    row = rawsql.select_row(Machine, 't."api_key_hash" = %s', [key_hash], related="casino", extra=_version_sql())
    if row is None:
        return None
    if key_hash not in _kept and len(_kept) >= _KEPT_AT_MOST:
        _kept.pop(next(iter(_kept), ""), None)  # the oldest kept; safe with threads (one C call each)
    _kept[key_hash] = _Kept(tuple(row[:-1]), row[-1], time.monotonic() + settings.MACHINE_KEPT_SECONDS)
    return rawsql.built(Machine, row, "casino")


def _seen_long_ago(machine: Machine | None, now: dt.datetime) -> bool:
    return machine is not None and (machine.last_seen_at is None or now - machine.last_seen_at > _LAST_SEEN_RESOLUTION)


def _machine(key_hash: str, *, may_keep: bool) -> tuple[Machine | None, KeptMachine | None]:
    """The machine of this key: from memory where `may_keep` and it is there (with what proves it current), else
    read fresh (a revoked or rotated key is refused at once)."""
    kept = _kept.get(key_hash) if may_keep else None
    if kept is not None and kept.until > time.monotonic():
        return rawsql.built(Machine, kept.row, "casino"), KeptMachine(key_hash, kept.version)
    return _read(key_hash), None


class MachinePrincipal:
    """request.user for a machine: authenticated, but never a staff user. `kept` when read from memory."""

    is_authenticated = True
    is_staff = False

    def __init__(self, machine: Machine, kept: KeptMachine | None = None) -> None:
        self.machine = machine
        self.kept = kept

    def __str__(self) -> str:
        return f"machine {self.machine}"


class MachineKeyAuthentication(BaseAuthentication):
    """`Authorization: Bearer <machine key>`; the key is looked up by its SHA-256."""

    keyword = b"bearer"

    def authenticate(self, request: Request) -> tuple[MachinePrincipal, Machine] | None:
        parts = get_authorization_header(request).split()
        if not parts:
            return None
        if parts[0].lower() != self.keyword or len(parts) != 2:
            raise exceptions.AuthenticationFailed("Use 'Authorization: Bearer <machine key>'.")
        try:
            key = parts[1].decode("ascii")
        except UnicodeDecodeError:
            raise exceptions.AuthenticationFailed("Unknown machine key.") from None
        key_hash = hash_key(key)
        # Memory only for a POST of a view that proves the machine before each answer (tickets.api.scaffold.
        # MachinePostView: not OPTIONS, not a 405, not a GET of another view).
        view = (request.parser_context or {}).get("view")
        may_keep = request.method == "POST" and getattr(view, "proves_kept_machine", False)
        machine, kept = _machine(key_hash, may_keep=may_keep)
        now = timezone.now()
        if kept is not None and _seen_long_ago(machine, now):
            # The stamp is written before any request transaction: only for a machine read fresh.
            machine, kept = _read(key_hash), None
        if machine is None:
            raise exceptions.AuthenticationFailed("Unknown machine key.")
        if _seen_long_ago(machine, now):
            Machine.objects.filter(pk=machine.pk).update(last_seen_at=now)
            machine.last_seen_at = now
            _kept.pop(key_hash, None)  # kept with the stamp before: read again next time
        return MachinePrincipal(machine, kept), machine

    def authenticate_header(self, request: Request) -> str:
        return "Bearer"


class MachineDisabled(exceptions.PermissionDenied):
    default_code = "machine_disabled"
    default_detail = "This machine is not active or not enrolled in the ticket system."


class IsTicketMachine(BasePermission):
    def has_permission(self, request: Request, view: APIView) -> bool:
        machine = request.auth
        if not isinstance(machine, Machine):
            return False
        if not machine.may_use_ticket_system:
            principal = request.user
            if not isinstance(principal, MachinePrincipal) or principal.kept is None:
                raise MachineDisabled()
            principal.kept.refresh(machine)  # memory said disabled: the database has the last word
            principal.kept = None
        return True


class MachineKeyScheme(OpenApiAuthenticationExtension):
    target_class = "tickets.api.auth.MachineKeyAuthentication"
    name = "machineKey"

    def get_security_definition(self, auto_schema: object) -> dict[str, str]:
        return {"type": "http", "scheme": "bearer", "description": "The machine's API key."}

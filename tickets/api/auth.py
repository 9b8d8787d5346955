import datetime as dt

from django.utils import timezone
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import exceptions
from rest_framework.authentication import BaseAuthentication, get_authorization_header
from rest_framework.permissions import BasePermission
from rest_framework.request import Request
from rest_framework.views import APIView

from casino_office import rawsql
from machines.keys import hash_key
from machines.models import Machine

# last_seen_at is refreshed at most this often, to keep a write off every request.
_LAST_SEEN_RESOLUTION = dt.timedelta(seconds=60)


def _machine_by_key_hash(key_hash: str) -> Machine | None:
    """The machine with its casino, read fresh on every request: a revoked or rotated key is refused at once."""
    return rawsql.select_one(Machine, 't."api_key_hash" = %s', [key_hash], related="casino")


class MachinePrincipal:
    """request.user for a machine: authenticated, but never a staff user."""

    is_authenticated = True
    is_staff = False

    def __init__(self, machine: Machine) -> None:
        self.machine = machine

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
        machine = _machine_by_key_hash(hash_key(key))
        if machine is None:
            raise exceptions.AuthenticationFailed("Unknown machine key.")
        now = timezone.now()
        if machine.last_seen_at is None or now - machine.last_seen_at > _LAST_SEEN_RESOLUTION:
            Machine.objects.filter(pk=machine.pk).update(last_seen_at=now)
            machine.last_seen_at = now
        return MachinePrincipal(machine), machine

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
            raise MachineDisabled()
        return True


class MachineKeyScheme(OpenApiAuthenticationExtension):
    target_class = "tickets.api.auth.MachineKeyAuthentication"
    name = "machineKey"

    def get_security_definition(self, auto_schema: object) -> dict[str, str]:
        return {"type": "http", "scheme": "bearer", "description": "The machine's API key."}

"""A second kiosk, and what happened to a ticket at the kiosks: its payouts, its state, its refusals."""

from cashdesk.models import CashTransaction, TransactionKind
from machines.models import Machine
from tests.conftest import MachineClient
from tests.factories import MachineFactory
from tickets.models import Ticket, TicketEvent


def other_kiosk(casino, asset: str = "K-02") -> MachineClient:
    return MachineClient(MachineFactory(casino=casino, asset_number=asset, kind=Machine.Kind.KIOSK))


def payouts(number: str) -> list[tuple[str, int | None]]:
    """Every cash payout of the ticket: its kind and the kiosk that paid it (None at a desk)."""
    return list(
        CashTransaction.objects.filter(
            ticket__validation_number=number, kind__in=[TransactionKind.KIOSK_PAYOUT, TransactionKind.TICKET_PAYOUT]
        ).values_list("kind", "machine_id")
    )


def state(number: str) -> str:
    return Ticket.objects.get(validation_number=number).state


def refusals(number: str) -> list[str]:
    return list(
        TicketEvent.objects.filter(ticket__validation_number=number, kind="refused")
        .order_by("pk")
        .values_list("reason", flat=True)
    )

"""Kiosks (machine contract v1.1): what a kiosk may pay, and the hook to the books that hold its cash.

A kiosk is a machine of kind `kiosk`. It redeems tickets for cash and may
print tickets for cash taken in. The ticket rules live here and in
`tickets.services`; the kiosk's cash lives in the casino's books (cashdesk),
which this layer may not import. The books are provided through the port
`KIOSK_CASH` (casino_office.ports; cashdesk's AppConfig.ready); without them a
kiosk pays nothing (`kiosk_empty`).
"""

import datetime as dt
from decimal import Decimal
from typing import Protocol

from casino_office.money import cash_payout
from casino_office.ports import Port
from machines.models import Machine
from tickets.exceptions import TicketRefused
from tickets.models import Ticket, TicketType


class KioskCash(Protocol):
    def available(self, *, machine: Machine, ticket: Ticket) -> Decimal:
        """Cash the kiosk may still dispense for `ticket`: its books' cash less the payouts it holds for others.

        Locks the kiosk's place until the caller's transaction ends, so two
        authorizations at one kiosk are judged one after the other.
        """
        ...

    def book_payout(self, *, machine: Machine, ticket: Ticket, payout: Decimal, at: dt.datetime) -> str:
        """Book the cash the kiosk dispensed for a ticket; returns the transaction's receipt number.

        Raises TicketRefused("kiosk_empty") and writes nothing if the kiosk's books hold less.
        """
        ...

    def book_ticket(self, *, machine: Machine, ticket: Ticket, at: dt.datetime) -> str:
        """Book the cash a kiosk took in for a ticket it printed; returns the transaction's receipt number."""
        ...

    def totals(
        self, *, machine_ids: list[int], begin: dt.datetime, finish: dt.datetime
    ) -> dict[int, tuple[Decimal, Decimal]]:
        """Per kiosk: (cash dispensed for tickets, cash taken in for tickets) booked in [begin, finish)."""
        ...


# Provided by the app that keeps the books, so tickets never imports it.
KIOSK_CASH: Port[KioskCash] = Port("kiosk cash")


def kiosk_cash() -> KioskCash | None:
    return KIOSK_CASH.get()


def kiosk_payout_refusal(*, machine: Machine, ticket: Ticket) -> tuple[str, str]:
    """Why a kiosk may not pay this (otherwise redeemable) ticket, or ("", ""); call with the ticket locked."""
    casino = machine.casino
    if ticket.ticket_type == TicketType.PROMO:
        return "not_cashable", "A promo ticket is played in a machine; it is never paid in cash."
    ceiling = casino.kiosk_payout_ceiling
    if ticket.amount > ceiling:
        return "over_kiosk_limit", f"Kiosks pay tickets up to {ceiling} EUR; this one is paid at a cash desk."
    books = kiosk_cash()
    if books is None or cash_payout(ticket.amount) > books.available(machine=machine, ticket=ticket):
        return "kiosk_empty", "This kiosk does not hold the cash for this ticket; it is paid at a cash desk."
    return "", ""


def kiosk_issue_refusal(*, amount: Decimal, ticket_type: str) -> TicketRefused | None:
    """A kiosk prints tickets for cash taken in: cashable, in whole cents."""
    if ticket_type != TicketType.CASHABLE:
        return TicketRefused("invalid_request", "A kiosk prints cashable tickets only.")
    if amount != cash_payout(amount):
        return TicketRefused("invalid_amount", "A kiosk's ticket stands for cash taken in: whole cents.")
    return None

"""What compliance needs to know of the desk's transactions, behind an interface the desk implements.

Compliance sits below the cash desk and never imports it: the linked-day
totals, the structuring windows and the FCIS report read the desk's
transactions through the port OPERATION_HISTORY, which the cash desk provides
when it starts (casino_office.ports).
"""

import datetime as dt
from decimal import Decimal
from typing import Any, Protocol

from django.core.exceptions import ImproperlyConfigured

from casino_office.ports import Port
from machines.models import Casino


class OperationHistory(Protocol):
    def person_total(self, *, casino: Casino, person_id: int, since: dt.datetime, until: dt.datetime) -> Decimal:
        """What one identified person exchanged or was paid at the casino's desks in a period (identity kinds)."""
        ...

    def desk_amounts(
        self, *, desk_id: int, low: Decimal, high: Decimal, since: dt.datetime, until: dt.datetime
    ) -> list[tuple[int, Decimal]]:
        """(transaction id, amount) of a desk's identity-kind transactions within [low, high] in (since, until]."""
        ...

    def machine_ticket_amounts(
        self,
        *,
        casino: Casino,
        machine_id: int,
        low: Decimal,
        high: Decimal,
        since: dt.datetime,
        until: dt.datetime,
    ) -> list[tuple[int, Decimal]]:
        """(transaction id, payout) of one machine's tickets cashed within [low, high] in (since, until]."""
        ...

    def casino_unidentified_operations(
        self, *, casino: Casino, low: Decimal, high: Decimal, since: dt.datetime, until: dt.datetime
    ) -> list[dict[str, Any]]:
        """The casino's operations with nobody identified, at every desk and kiosk: the identity kinds and a kiosk's
        notes taken in for a ticket, within [low, high] in (since, until], oldest first. Each is
        {"transaction": id, "amount": Decimal, "at": datetime, "kind": str, "where": desk or kiosk, "receipt": str}.
        """
        ...

    def person_day_operations(
        self, *, casino: Casino, since: dt.datetime, until: dt.datetime, min_total: Decimal
    ) -> list[dict[str, Any]]:
        """Each operation of the persons whose total reached min_total: {"person", "day_total", "transaction"}."""
        ...


OPERATION_HISTORY: Port[OperationHistory] = Port("the desk's operation history")


def operation_history() -> OperationHistory:
    history = OPERATION_HISTORY.get()
    if history is None:  # pragma: no cover - the cash desk provides it at start-up
        raise ImproperlyConfigured("No app provides compliance.history.OPERATION_HISTORY.")
    return history

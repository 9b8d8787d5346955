"""Reading the books: every balance is a sum of legs, read here and nowhere else.

A physical place (a desk, the vault) holds what its legs add up to; a
counterparty (players, tickets outstanding, over/short, ...) is the other side
of those legs, per casino. Balances, the X and Z reports, the dashboard's cash
and the books report all read through these functions.
"""

import datetime as dt
from collections import defaultdict
from decimal import Decimal

from django.db.models import QuerySet, Sum

from cashdesk.items import ALL_ITEMS
from cashdesk.models import Counterparty, Leg, Shift, ShiftCount, ShiftCountLine
from machines.models import Casino, Place

ZERO = Decimal("0.00")


def _totals(legs: QuerySet[Leg]) -> dict[str, Decimal]:
    balances = dict.fromkeys(ALL_ITEMS, ZERO)
    for row in legs.values("item").annotate(total=Sum("amount")).order_by():
        balances[row["item"]] = row["total"]
    return balances


def place_balances(desk: Place, *, at: dt.datetime | None = None, using: str = "default") -> dict[str, Decimal]:
    """What a desk or the vault holds, per item, now or at a moment (transactions up to and including it)."""
    legs = Leg.objects.using(using).filter(desk=desk)
    if at is not None:
        legs = legs.filter(transaction__created_at__lte=at)
    return _totals(legs)


def counterparty_balances(
    casino: Casino, *, at: dt.datetime | None = None, using: str = "default"
) -> dict[str, dict[str, Decimal]]:
    """Each counterparty's side of the casino's books, per item."""
    legs = Leg.objects.using(using).filter(casino=casino, desk__isnull=True)
    if at is not None:
        legs = legs.filter(transaction__created_at__lte=at)
    result: dict[str, dict[str, Decimal]] = {party: dict.fromkeys(ALL_ITEMS, ZERO) for party in Counterparty.values}
    for row in legs.values("counterparty", "item").annotate(total=Sum("amount")).order_by():
        result[row["counterparty"]][row["item"]] = row["total"]
    return result


def physical_balances(
    casino: Casino, *, at: dt.datetime | None = None, using: str = "default"
) -> dict[int, dict[str, Decimal]]:
    """Every desk's and the vault's holdings, per item, keyed by desk id."""
    legs = Leg.objects.using(using).filter(casino=casino, desk__isnull=False)
    if at is not None:
        legs = legs.filter(transaction__created_at__lte=at)
    result: dict[int, dict[str, Decimal]] = defaultdict(lambda: dict.fromkeys(ALL_ITEMS, ZERO))
    for row in legs.values("desk", "item").annotate(total=Sum("amount")).order_by():
        result[row["desk"]][row["item"]] = row["total"]
    return dict(result)


def opening_amounts(shift: Shift) -> dict[str, Decimal]:
    lines = ShiftCountLine.objects.filter(count__shift=shift, count__kind=ShiftCount.Kind.OPENING)
    amounts = dict.fromkeys(ALL_ITEMS, ZERO)
    for line in lines:
        amounts[line.item] = line.counted_amount
    return amounts


def shift_balances(shift: Shift) -> dict[str, Decimal]:
    """What the desk should hold in this shift: its book balance while open, what was expected at its end after."""
    if shift.closed_at is None:
        return place_balances(shift.desk)
    expected = dict.fromkeys(ALL_ITEMS, ZERO)
    for line in ShiftCountLine.objects.filter(
        count__shift=shift, count__kind__in=[ShiftCount.Kind.CLOSING, ShiftCount.Kind.HANDOVER]
    ):
        expected[line.item] = line.expected_amount
    return expected


def vault_balance(vault: Place) -> dict[str, Decimal]:
    return place_balances(vault)


def over_short_by_shift(
    casino: Casino, begin: dt.datetime, end: dt.datetime, using: str = "default"
) -> list[dict[str, object]]:
    """Each shift's over/short (counted minus book) in EUR, with its desk and cashier, for shifts closed in a period."""
    rows = (
        Leg.objects.using(using)
        .filter(
            casino=casino,
            counterparty=Counterparty.OVER_SHORT,
            transaction__shift__closed_at__gte=begin,
            transaction__shift__closed_at__lt=end,
        )
        .values(
            "transaction__shift",
            "transaction__shift__desk__name",
            "transaction__shift__cashier__username",
            "transaction__shift__opened_at",
            "transaction__shift__closed_at",
        )
        .annotate(total=Sum("amount"))
        .order_by("transaction__shift__closed_at")
    )
    # The over/short side is minus what the desk gained: a desk found 10 over gives over/short -10.
    return [
        {
            "shift": row["transaction__shift"],
            "desk": row["transaction__shift__desk__name"],
            "cashier": row["transaction__shift__cashier__username"],
            "opened_at": row["transaction__shift__opened_at"],
            "closed_at": row["transaction__shift__closed_at"],
            "variance": -row["total"],
        }
        for row in rows
    ]

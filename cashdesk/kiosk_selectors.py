"""Reading the kiosks' cash: what each holds in the books, its last drop count, what waits; figures per period.

Reads only, a handful of grouped queries whatever the number of kiosks. The
dashboard and the reports pass `using` (the reports' database); the books are
read from the legs, as everywhere (cashdesk.books).
"""

import datetime as dt
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from django.db.models import Count, OuterRef, Subquery, Sum

from cashdesk.items import Item
from cashdesk.models import CashTransaction, Leg, ShiftCount, ShiftCountLine, TransactionKind, Transfer
from machines.models import Casino, Machine, Place

ZERO = Decimal("0.00")


@dataclass(frozen=True)
class Kiosk:
    """A kiosk and its place in the books (None until the kiosk's cash is first used)."""

    machine: Machine
    place: Place | None


def kiosks_of(casino: Casino, *, using: str = "default") -> list[Kiosk]:
    """The casino's kiosks by asset number: every machine of kind kiosk, and any kiosk place whose machine is not one.

    A retired kiosk is left out unless it has a place in the books (it may still hold cash or have a history).
    """
    places = {
        place.machine_id: place
        for place in Place.objects.using(using).filter(casino=casino, kind=Place.Kind.KIOSK).select_related("machine")
    }
    machines = {
        machine.pk: machine
        for machine in Machine.objects.using(using)
        .filter(casino=casino, kind=Machine.Kind.KIOSK)
        .exclude(status=Machine.Status.RETIRED)
    }
    for place in places.values():
        if place.machine is not None:  # always, for a kiosk's place (the database checks it)
            machines.setdefault(place.machine.pk, place.machine)
    return [
        Kiosk(machine, places.get(machine.pk))
        for machine in sorted(machines.values(), key=lambda machine: machine.asset_number)
    ]


def _place_ids(kiosks: list[Kiosk]) -> list[int]:
    return [kiosk.place.pk for kiosk in kiosks if kiosk.place is not None]


def cash_held(place_ids: list[int], *, before: dt.datetime | None = None, using: str = "default") -> dict[int, Decimal]:
    """Cash each place holds in the books: now, or just before a moment (the end of a period, exclusive)."""
    legs = Leg.objects.using(using).filter(desk_id__in=place_ids, item=Item.CASH)
    if before is not None:
        legs = legs.filter(transaction__created_at__lt=before)
    return {row["desk_id"]: row["total"] for row in legs.values("desk_id").annotate(total=Sum("amount")).order_by()}


@dataclass(frozen=True)
class DropCount:
    """A drop's count: when, what was counted out of the kiosk, what the books expected, and the difference."""

    at: dt.datetime
    counted: Decimal
    expected: Decimal
    variance: Decimal  # counted - expected: over (+) or short (-)


@dataclass(frozen=True)
class KioskCash:
    """One kiosk on the dashboard: its cash against the casino's capacity, its last drop, a fill or drop waiting."""

    machine: Machine
    cash: Decimal
    capacity: Decimal
    ceiling: Decimal  # the largest ticket a kiosk pays (Casino.kiosk_payout_ceiling)
    last_drop: DropCount | None
    waiting: Transfer | None

    @property
    def percent(self) -> int:
        """The cash as a whole percent of the capacity."""
        if self.capacity <= 0:
            return 0
        return int((self.cash * 100 / self.capacity).quantize(Decimal(1), rounding=ROUND_HALF_UP))

    @property
    def waiting_by(self) -> str:
        """Who asked for the waiting fill or drop: the full name, or the username when none is set."""
        if self.waiting is None:
            return ""
        person = self.waiting.requested_by
        return person.get_full_name() or person.get_username()

    @property
    def low(self) -> bool:
        """An active kiosk whose cash is below the largest ticket it pays: it cannot pay a ticket at the limit."""
        return self.machine.status == Machine.Status.ACTIVE and self.cash < self.ceiling


def _last_drops(place_ids: list[int], using: str) -> dict[int, DropCount]:
    latest = (
        ShiftCount.objects.using(using)
        .filter(desk_id=OuterRef("pk"), kind=ShiftCount.Kind.KIOSK)
        .order_by("-counted_at", "-id")
        .values("id")[:1]
    )
    count_ids = [
        count_id
        for count_id in Place.objects.using(using)
        .filter(pk__in=place_ids)
        .annotate(last_count=Subquery(latest))
        .values_list("last_count", flat=True)
        if count_id is not None
    ]
    lines = ShiftCountLine.objects.using(using).filter(count_id__in=count_ids, item=Item.CASH).select_related("count")
    return {
        line.count.desk_id: DropCount(line.count.counted_at, line.counted_amount, line.expected_amount, line.variance)
        for line in lines
    }


def kiosk_cash(casino: Casino, *, using: str = "default") -> list[KioskCash]:
    """Each kiosk's cash now, from the books, against the casino's capacity, with its last drop count and what waits."""
    kiosks = kiosks_of(casino, using=using)
    place_ids = _place_ids(kiosks)
    held = cash_held(place_ids, using=using)
    drops = _last_drops(place_ids, using)
    waiting = {
        transfer.place_id: transfer
        for transfer in Transfer.objects.using(using)
        .filter(place_id__in=place_ids, approved_at__isnull=True, cancelled_at__isnull=True)
        .select_related("requested_by")
    }
    rows = []
    for kiosk in kiosks:
        place_id = kiosk.place.pk if kiosk.place is not None else None
        rows.append(
            KioskCash(
                machine=kiosk.machine,
                cash=held.get(place_id, ZERO) if place_id is not None else ZERO,
                capacity=casino.kiosk_cash_capacity,
                ceiling=casino.kiosk_payout_ceiling,
                last_drop=drops.get(place_id) if place_id is not None else None,
                waiting=waiting.get(place_id) if place_id is not None else None,
            )
        )
    return rows


# The figures of the kiosks report, per kiosk: the keys are the report's columns (and the CSV's header).
PERIOD_COUNTS = ("paid_count", "printed_count", "fill_count", "drop_count")
PERIOD_AMOUNTS = ("paid_amount", "printed_amount", "fill_amount", "drop_counted", "variance", "cash_end")


def kiosk_period(
    casino: Casino, begin: dt.datetime, finish: dt.datetime, *, using: str = "default"
) -> list[dict[str, Any]]:
    """Per kiosk over [begin, finish): tickets it paid and printed, fills, drops and their counts, its cash at the end.

    Paid and printed are the kiosk's own transactions (the cash out for a redeemed ticket, rounded up to the cent;
    the cash in for a ticket it printed); fills are the vault's cash moved into it; drops are its counts (a drop
    counting nothing moves no cash but is a drop), with what was counted and the difference from the books.
    """
    kiosks = kiosks_of(casino, using=using)
    place_ids = _place_ids(kiosks)
    moved = _kiosk_moves(place_ids, begin, finish, using=using)
    counts = _kiosk_drops(place_ids, begin, finish, using=using)
    held = cash_held(place_ids, before=finish, using=using)
    rows = []
    for kiosk in kiosks:
        place_id = kiosk.place.pk if kiosk.place is not None else -1
        paid = moved.get((place_id, TransactionKind.KIOSK_PAYOUT), (0, ZERO))
        printed = moved.get((place_id, TransactionKind.KIOSK_TICKET), (0, ZERO))
        filled = moved.get((place_id, TransactionKind.FILL), (0, ZERO))
        counted: dict[str, Any] = counts.get(place_id, {})
        rows.append(
            {
                "kiosk": kiosk.machine.asset_number,
                "paid_count": paid[0],
                "paid_amount": paid[1],
                "printed_count": printed[0],
                "printed_amount": printed[1],
                "fill_count": filled[0],
                "fill_amount": filled[1],
                "drop_count": counted.get("n", 0),
                "drop_counted": counted.get("counted") or ZERO,
                "variance": counted.get("variance") or ZERO,
                "cash_end": held.get(place_id, ZERO),
            }
        )
    return rows


def _kiosk_moves(
    place_ids: list[int], begin: dt.datetime, finish: dt.datetime, *, using: str
) -> dict[tuple[int, str], tuple[int, Decimal]]:
    """Per kiosk and kind (payout, printed ticket, fill): how many transactions and their total."""
    return {
        (row["desk_id"], row["kind"]): (row["n"], row["total"])
        for row in CashTransaction.objects.using(using)
        .filter(
            desk_id__in=place_ids,
            kind__in=[TransactionKind.KIOSK_PAYOUT, TransactionKind.KIOSK_TICKET, TransactionKind.FILL],
            created_at__gte=begin,
            created_at__lt=finish,
        )
        .values("desk_id", "kind")
        .annotate(n=Count("id"), total=Sum("amount"))
        .order_by()
    }


def _kiosk_drops(
    place_ids: list[int], begin: dt.datetime, finish: dt.datetime, *, using: str
) -> dict[int, dict[str, Any]]:
    """Per kiosk: its drops (counts) in the period, the cash they counted and their difference from the books."""
    return {
        row["count__desk_id"]: dict(row)
        for row in ShiftCountLine.objects.using(using)
        .filter(
            count__desk_id__in=place_ids,
            count__kind=ShiftCount.Kind.KIOSK,
            count__counted_at__gte=begin,
            count__counted_at__lt=finish,
            item=Item.CASH,
        )
        .values("count__desk_id")
        .annotate(n=Count("count_id", distinct=True), counted=Sum("counted_amount"), variance=Sum("variance"))
        .order_by()
    }

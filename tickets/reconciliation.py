"""Each machine's gaming day, its meters against the system's records (machine contract v1.1, "meters").

The day's change of a meter runs from the machine's last reading at or before
the start of the gaming day to its last reading at or before the day's end. A
reset inside the day is bridged: the increases between consecutive readings
are summed, and a reading flagged `reset` counts from zero. Against it:

- `ticket_out_*`: the tickets this machine printed in the day (issued by it
  and print confirmed, or reported printed offline: `printed_at` in the day);
- `ticket_in_*`: the tickets redeemed at it in the day (`redeemed_at`);
- `handpay_*`: its handpays, from the sources provided through the port
  `HANDPAY_SOURCES` (handpays live in cashdesk, which this layer may not
  import). With none provided the system's figure is "not available".
- `attendant_paid_*`: the machine receipts written for it on the floor (credits
  an attendant paid because the machine could not), from the port
  `RECEIPT_SOURCES`, the same way.
- kiosks also: `cash_dispensed_amount` against the cash their books say they
  paid for tickets, and `bills_in_amount` against the cash booked in for the
  tickets they printed (the books provided to `tickets.kiosks`).

A machine without a reading in the day is listed as such ("no_reading").
"""

import datetime as dt
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from django.db import connections
from django.db.models import Count, OuterRef, Q, Subquery, Sum
from django.utils import timezone

from casino_office.ports import Port
from machines.models import Casino, Machine, MeterReading, MeterReconciliation
from tickets.kiosks import kiosk_cash
from tickets.models import Ticket

Figure = int | Decimal
# What the system counts against each pair of meters.
PAIRS: tuple[tuple[str, str, str], ...] = (
    ("ticket_out", "ticket_out_count", "ticket_out_amount"),
    ("ticket_in", "ticket_in_count", "ticket_in_amount"),
    ("handpay", "handpay_count", "handpay_amount"),
    ("receipt", "attendant_paid_count", "attendant_paid_amount"),
)
RECONCILED_METERS: tuple[str, ...] = tuple(meter for _, count, amount in PAIRS for meter in (count, amount))
ZERO = Decimal("0")

# (casino, machine ids, begin, finish) -> {machine id: (handpay count, handpay amount)} for handpays paid in the window.
HandpaySource = Callable[[Casino, list[int], dt.datetime, dt.datetime], dict[int, tuple[int, Decimal]]]
# Provided by the app that keeps handpays, so tickets never imports it.
HANDPAY_SOURCES: Port[HandpaySource] = Port("handpay sources", many=True)


def handpay_sources() -> list[HandpaySource]:
    return HANDPAY_SOURCES.all()


# The same shape for the machine receipts written on the floor, against the attendant-paid meters.
ReceiptSource = HandpaySource
RECEIPT_SOURCES: Port[ReceiptSource] = Port("machine receipt sources", many=True)


def receipt_sources() -> list[ReceiptSource]:
    return RECEIPT_SOURCES.all()


def _from_sources(
    sources: list[HandpaySource], casino: Casino, ids: list[int], begin: dt.datetime, finish: dt.datetime
) -> dict[int, tuple[int, Decimal]] | None:
    """Each machine's (count, amount) summed over the registered sources; None when none is registered."""
    if not sources:
        return None
    totals: dict[int, tuple[int, Decimal]] = {}
    for source in sources:
        for machine_id, (n, total) in source(casino, ids, begin, finish).items():
            before_n, before_total = totals.get(machine_id, (0, ZERO))
            totals[machine_id] = (before_n + n, before_total + total)
    return totals


@dataclass(frozen=True)
class MeterLine:
    meter: str
    change: Figure | None  # None: the machine sent no value for this meter in the window
    system: Figure | None  # None: the system has no figure for it (handpays, until a source is registered)

    @property
    def difference(self) -> Figure | None:
        if self.change is None or self.system is None:
            return None
        return self.change - self.system

    def as_json(self) -> dict[str, Any]:
        def written(value: Figure | None) -> Any:
            return str(value) if isinstance(value, Decimal) else value

        return {
            "meter": self.meter,
            "change": written(self.change),
            "system": written(self.system),
            "difference": written(self.difference),
        }


@dataclass
class MachineDay:
    machine: Machine
    day: dt.date
    readings: int  # readings inside the day
    has_start_reading: bool  # a reading at or before the day's start (else the day's first reading is the start)
    lines: list[MeterLine] = field(default_factory=list)

    @property
    def differences(self) -> int:
        return sum(1 for line in self.lines if line.difference not in (None, 0))

    @property
    def status(self) -> str:
        if not self.readings:
            return MeterReconciliation.Status.NO_READING
        if self.differences:
            return MeterReconciliation.Status.DIFFERENCE
        return MeterReconciliation.Status.MATCHED


def meter_change(readings: list[MeterReading], meter: str) -> Figure | None:
    """The change of one meter over consecutive readings (the first is the starting point), resets bridged.

    None when the meter was never sent. A reading flagged `reset` (or lower than the one before) counts from zero.
    """
    last: Figure | None = readings[0].meter(meter) if readings else None
    total: Figure | None = None
    for reading in readings[1:]:
        value = reading.meter(meter)
        if value is None:
            continue
        if last is not None:
            increase = value if reading.reset or value < last else value - last
            total = (total if total is not None else _zero_like(value)) + increase
        last = value
    if total is None and last is not None:
        return _zero_like(last)
    return total


def _zero_like(value: Figure) -> Figure:
    return ZERO if isinstance(value, Decimal) else 0


def _machines(casino: Casino, extra_ids: Iterable[int], using: str) -> list[Machine]:
    wanted = Q(ticket_enrolled=True) & ~Q(status=Machine.Status.RETIRED) | Q(pk__in=set(extra_ids))
    return list(Machine.objects.using(using).filter(wanted, casino=casino).order_by("asset_number"))


def _ticket_totals(casino: Casino, by: str, field_: str, begin: dt.datetime, finish: dt.datetime, using: str) -> dict:
    rows = (
        Ticket.objects.using(using)
        .filter(casino=casino, **{f"{by}__isnull": False, f"{field_}__gte": begin, f"{field_}__lt": finish})
        .values(by)
        .annotate(n=Count("id"), total=Sum("amount"))
    )
    return {row[by]: (row["n"], row["total"] or ZERO) for row in rows}


def reconcile_day(casino: Casino, day: dt.date, *, using: str = "default") -> list[MachineDay]:
    """Every machine of the casino (enrolled and not retired, or active in the day): its meters against the system."""
    begin, finish = casino.gaming_day_bounds(day)
    return reconcile_window(casino, begin, finish, day=day, using=using)


def _last_readings_at_or_before(casino: Casino, moment: dt.datetime, using: str) -> dict[int, MeterReading]:
    """Each machine's last reading at or before `moment` (DISTINCT ON where the database has it)."""
    before = MeterReading.objects.using(using).filter(machine__casino=casino, read_at__lte=moment)
    if connections[using].features.can_distinct_on_fields:
        return {
            reading.machine_id: reading
            for reading in before.order_by("machine_id", "-read_at", "-id").distinct("machine_id")
        }
    latest = before.filter(machine_id=OuterRef("machine_id")).order_by("-read_at", "-id").values("id")[:1]
    return {reading.machine_id: reading for reading in before.filter(id=Subquery(latest))}


def _readings_in_window(
    casino: Casino, begin: dt.datetime, finish: dt.datetime, using: str
) -> dict[int, list[MeterReading]]:
    """Each machine's readings after `begin` up to `finish`, in time order."""
    found: dict[int, list[MeterReading]] = {}
    for reading in (
        MeterReading.objects.using(using)
        .filter(machine__casino=casino, read_at__gt=begin, read_at__lte=finish)
        .order_by("machine_id", "read_at", "id")
    ):
        found.setdefault(reading.machine_id, []).append(reading)
    return found


def meter_changes(
    casino: Casino, begin: dt.datetime, finish: dt.datetime, meter: str, *, using: str = "default"
) -> dict[int, Figure | None]:
    """Each machine's change of one meter from its last reading at or before `begin` to its last at or before
    `finish` (resets bridged); a machine that sent no reading in the window is left out."""
    in_window = _readings_in_window(casino, begin, finish, using)
    starts = _last_readings_at_or_before(casino, begin, using)
    return {
        machine_id: meter_change(([starts[machine_id]] if machine_id in starts else []) + readings, meter)
        for machine_id, readings in in_window.items()
    }


def reconcile_window(
    casino: Casino, begin: dt.datetime, finish: dt.datetime, *, day: dt.date | None = None, using: str = "default"
) -> list[MachineDay]:
    """As `reconcile_day`, over any window: readings after `begin` up to `finish`, tickets from `begin` to before
    `finish`; the start is each machine's last reading at or before `begin` (the floor simulator's run)."""
    day = day if day is not None else casino.gaming_day(begin)
    in_day = _readings_in_window(casino, begin, finish, using)
    starts = _last_readings_at_or_before(casino, begin, using)
    printed = _ticket_totals(casino, "issuing_machine", "printed_at", begin, finish, using)
    redeemed = _ticket_totals(casino, "redeemed_by_machine", "redeemed_at", begin, finish, using)
    machines = _machines(casino, [*in_day, *printed, *redeemed], using)
    ids = [machine.pk for machine in machines]
    handpays = _from_sources(handpay_sources(), casino, ids, begin, finish)
    receipts = _from_sources(receipt_sources(), casino, ids, begin, finish)
    kiosk_ids = [machine.pk for machine in machines if machine.is_kiosk]
    books = kiosk_cash()
    kiosk_totals = books.totals(machine_ids=kiosk_ids, begin=begin, finish=finish) if books and kiosk_ids else {}
    result = []
    for machine in machines:
        readings = in_day.get(machine.pk, [])
        start = starts.get(machine.pk)
        sequence = ([start] if start else []) + readings
        system: dict[str, tuple[int, Decimal] | None] = {
            "ticket_out": printed.get(machine.pk, (0, ZERO)),
            "ticket_in": redeemed.get(machine.pk, (0, ZERO)),
            "handpay": None if handpays is None else handpays.get(machine.pk, (0, ZERO)),
            "receipt": None if receipts is None else receipts.get(machine.pk, (0, ZERO)),
        }
        entry = MachineDay(machine, day, len(readings), start is not None)
        for label, count_meter, amount_meter in PAIRS:
            figures = system[label]
            for index, meter in enumerate((count_meter, amount_meter)):
                change = meter_change(sequence, meter) if readings else None
                entry.lines.append(MeterLine(meter, change, None if figures is None else figures[index]))
        if machine.is_kiosk:
            dispensed, taken_in = kiosk_totals.get(machine.pk, (ZERO, ZERO))
            for meter, figure in (("cash_dispensed_amount", dispensed), ("bills_in_amount", taken_in)):
                change = meter_change(sequence, meter) if readings else None
                entry.lines.append(MeterLine(meter, change, figure if books else None))
        result.append(entry)
    return result


def reconciliation_store(casino: Casino, day: dt.date, *, now: dt.datetime | None = None) -> int:
    """Reconcile a gaming day and keep the result, one row per machine and day (a re-run replaces it)."""
    now = now or timezone.now()
    rows = [
        MeterReconciliation(
            casino=casino,
            machine=entry.machine,
            gaming_day=day,
            status=entry.status,
            differences=entry.differences,
            lines=[line.as_json() for line in entry.lines],
            reconciled_at=now,
        )
        for entry in reconcile_day(casino, day)
    ]
    MeterReconciliation.objects.bulk_create(
        rows,
        update_conflicts=True,
        unique_fields=["machine", "gaming_day"],
        update_fields=["status", "differences", "lines", "reconciled_at"],
    )
    return len(rows)


def reconcile_finished_days(now: dt.datetime | None = None) -> int:
    """The beat job: every casino's last finished gaming day."""
    now = now or timezone.now()
    stored = 0
    for casino in Casino.objects.all():
        stored += reconciliation_store(casino, casino.gaming_day(now) - dt.timedelta(days=1), now=now)
    return stored


@dataclass(frozen=True)
class KioskDispensed:
    """A kiosk's cash-dispensed meter over a held ticket's time: from its last reading at or before the
    authorize to its latest reading after the hold ran out, less what its books paid for other tickets then."""

    since: dt.datetime
    until: dt.datetime
    meter: Decimal
    other_payouts: Decimal

    @property
    def unexplained(self) -> Decimal:
        """Cash that left the kiosk in the window that no booked payout accounts for."""
        return self.meter - self.other_payouts

    def as_json(self) -> dict[str, str]:
        return {
            "dispensed_since_authorize": str(self.unexplained),
            "dispensed_meter": str(self.meter),
            "other_payouts": str(self.other_payouts),
            "meters_from": self.since.isoformat(),
            "meters_until": self.until.isoformat(),
        }


def kiosk_dispensed_since_authorize(ticket: Ticket) -> KioskDispensed | None:
    """What the holding kiosk's meters say it dispensed while it held `ticket`; None without the readings."""
    machine = ticket.holder_machine
    if machine is None or not machine.is_kiosk or ticket.authorized_at is None or ticket.hold_expires_at is None:
        return None
    readings = MeterReading.objects.filter(machine=machine)
    start = readings.filter(read_at__lte=ticket.authorized_at).order_by("-read_at", "-id").first()
    after = list(readings.filter(read_at__gt=ticket.authorized_at).order_by("read_at", "id"))
    if start is None or not after or after[-1].read_at < ticket.hold_expires_at:
        return None
    change = meter_change([start, *after], "cash_dispensed_amount")
    if change is None or start.cash_dispensed_amount is None:
        return None
    books = kiosk_cash()
    paid = books.totals(machine_ids=[machine.pk], begin=start.read_at, finish=after[-1].read_at) if books else {}
    return KioskDispensed(
        since=start.read_at,
        until=after[-1].read_at,
        meter=Decimal(change),
        other_payouts=paid.get(machine.pk, (ZERO,))[0],
    )

"""The manager's and supervisor's start page: the day at a glance, a handful of aggregate queries.

Liability over 30 days is not 30 liability queries: it is today's outstanding
amount walked back day by day with what was printed and what was closed each
gaming day (L(t) = L(now) − printed in (t, now] + closed in (t, now]), so it
costs five grouped reads on indexed timestamps whatever the table's size.
"""

import datetime as dt
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django.db.models import Count, DateTimeField, ExpressionWrapper, F, Q, Sum
from django.db.models.functions import TruncDate, TruncHour
from django.utils import timezone

from cashdesk.books import physical_balances
from cashdesk.gaming_day import statement
from cashdesk.items import Item
from cashdesk.kiosk_selectors import KioskCash, kiosk_cash
from cashdesk.models import (
    CountRequest,
    DroppedBox,
    DropRun,
    HoldCase,
    LiabilitySnapshot,
    ReversalRequest,
    Shift,
    TableSession,
    Transfer,
)
from cashdesk.reports import outstanding_liability, reports_db
from compliance.models import Alert
from machines.models import BooksVerification, Casino, GamingTable, Machine, MeterReconciliation, Place, TableGame
from tickets.models import Ticket, TicketEvent, TicketEventKind
from tickets.selectors import stuck_redemptions

ZERO = Decimal("0")
TREND_DAYS = 30


@dataclass(frozen=True)
class HourRow:
    """One hour of the gaming day: tickets at the machines, at the desks and at the kiosks, counted apart.

    A kiosk is a machine in the books of the ticket system, but what it does is a desk's work: it pays
    tickets in cash and prints tickets for cash taken in. Its tickets are not "printed by machines" nor
    "played into machines", so they are counted on their own.
    """

    hour: dt.datetime  # local start of the hour
    machine_out_count: int  # printed by machines (cash-outs)
    machine_out_amount: Decimal
    machine_in_count: int  # played into machines
    machine_in_amount: Decimal
    desk_sold_count: int  # sold for cash at a desk
    desk_sold_amount: Decimal
    desk_paid_count: int  # paid out in cash at a desk
    desk_paid_amount: Decimal
    kiosk_paid_count: int = 0  # paid out in cash at a kiosk
    kiosk_paid_amount: Decimal = ZERO
    kiosk_printed_count: int = 0  # printed by a kiosk for cash taken in
    kiosk_printed_amount: Decimal = ZERO


@dataclass(frozen=True)
class LiabilityPoint:
    at: dt.datetime  # end of a gaming day (or now, for the last point)
    day: dt.date
    amount: Decimal


@dataclass(frozen=True)
class DeskCash:
    desk: Place
    shift: Shift | None
    cash: Decimal
    limit: Decimal

    @property
    def over_limit(self) -> bool:
        return self.cash > self.limit

    @property
    def on_shift(self) -> str:
        """Who is on shift at the desk: the cashier's full name, or the username when none is set; "" when closed."""
        if self.shift is None:
            return ""
        cashier = self.shift.cashier
        return cashier.get_full_name() or cashier.get_username()


def tickets_per_hour(casino: Casino, day: dt.date) -> list[HourRow]:
    """Per hour: tickets printed by machines and played into them, tickets sold and paid at the desks, and at kiosks.

    Two grouped reads (printed in the day, redeemed in the day), each split by where it happened.
    """
    begin, finish = casino.gaming_day_bounds(day)
    zone = casino.zoneinfo
    kiosk = Machine.Kind.KIOSK
    splits = {
        "printed_at": {
            "machine_out": Q(issuing_machine__isnull=False) & ~Q(issuing_machine__kind=kiosk),
            "desk_sold": Q(issuing_desk__isnull=False),
            "kiosk_printed": Q(issuing_machine__kind=kiosk),
        },
        "redeemed_at": {
            "machine_in": Q(redeemed_by_machine__isnull=False) & ~Q(redeemed_by_machine__kind=kiosk),
            "desk_paid": Q(redeemed_by_machine__isnull=True),
            "kiosk_paid": Q(redeemed_by_machine__kind=kiosk),
        },
    }
    counts: dict[str, dict[dt.datetime, tuple[int, Decimal]]] = {}
    for field, parts in splits.items():
        aggregates: dict[str, Count | Sum] = {}
        for label, where in parts.items():
            aggregates[f"{label}_n"] = Count("id", filter=where)
            aggregates[f"{label}_total"] = Sum("amount", filter=where)
        rows: list[dict[str, Any]] = [
            dict(row)
            for row in Ticket.objects.using(reports_db())
            .filter(casino=casino, **{f"{field}__gte": begin, f"{field}__lt": finish})
            .annotate(hour=TruncHour(field, tzinfo=zone))
            .values("hour")
            .annotate(**aggregates)
        ]
        for label in parts:
            counts[label] = {
                row["hour"].astimezone(zone): (row[f"{label}_n"], row[f"{label}_total"] or ZERO) for row in rows
            }
    hours = []
    moment = begin
    while moment < finish:
        local = moment.astimezone(zone)
        machine_out, machine_in, desk_sold, desk_paid, kiosk_paid, kiosk_printed = (
            counts[label].get(local, (0, ZERO))
            for label in ("machine_out", "machine_in", "desk_sold", "desk_paid", "kiosk_paid", "kiosk_printed")
        )
        hours.append(HourRow(local, *machine_out, *machine_in, *desk_sold, *desk_paid, *kiosk_paid, *kiosk_printed))
        moment += dt.timedelta(hours=1)
    return hours


def _per_gaming_day(casino: Casino, field: str, since: dt.datetime, extra: Q, using: str) -> dict[dt.date, Decimal]:
    shifted = ExpressionWrapper(
        F(field) - dt.timedelta(hours=casino.gaming_day_start_hour), output_field=DateTimeField()
    )
    rows = (
        Ticket.objects.using(using)
        .filter(extra, casino=casino, **{f"{field}__gt": since})
        .annotate(day=TruncDate(shifted, tzinfo=casino.zoneinfo))
        .values("day")
        .annotate(total=Sum("amount"))
    )
    return {row["day"]: row["total"] for row in rows}


def _walk_back(casino: Casino, now: dt.datetime, oldest: dt.date, using: str) -> dict[dt.date, Decimal]:
    """Liability at the end of each gaming day from `oldest` to yesterday, walked back from now's.

    L(end of day d) = L(now) - what was printed since + what was closed since: five grouped reads
    over the tickets since the end of `oldest`, so its cost grows with the days walked.
    """
    today = casino.gaming_day(now)
    since, _ = casino.gaming_day_bounds(oldest + dt.timedelta(days=1))  # the end of the oldest day
    current = outstanding_liability(casino, now, using=using)["amount"]
    printed = _per_gaming_day(casino, "printed_at", since, Q(printed_at__lte=now), using)
    closed: dict[dt.date, Decimal] = {}
    for field in ("redeemed_at", "expired_at", "voided_at"):
        # Only tickets that were ever outstanding: printed, and printed before they closed.
        extra = Q(printed_at__isnull=False, printed_at__lte=F(field), **{f"{field}__lte": now})
        for day, total in _per_gaming_day(casino, field, since, extra, using).items():
            closed[day] = closed.get(day, ZERO) + total
    amounts: dict[dt.date, Decimal] = {}
    amount = current
    later = today
    while later > oldest:  # the end of day d is the start of day d+1: undo what day d+1 printed and closed
        amount = amount - printed.get(later, ZERO) + closed.get(later, ZERO)
        later -= dt.timedelta(days=1)
        amounts[later] = amount
    return amounts


def _end_of(casino: Casino, day: dt.date) -> dt.datetime:
    return casino.gaming_day_bounds(day)[1]


def liability_trend(casino: Casino, now: dt.datetime | None = None, days: int = TREND_DAYS) -> list[LiabilityPoint]:
    """Outstanding liability at the end of each of the last `days` gaming days, then now.

    Finished days come from LiabilitySnapshot; any the job has not stored yet are walked back
    from now (only as far as the oldest missing one).
    """
    now = now or timezone.now()
    today = casino.gaming_day(now)
    wanted = [today - dt.timedelta(days=offset) for offset in range(days, 0, -1)]
    stored = dict(
        LiabilitySnapshot.objects.using(reports_db())
        .filter(casino=casino, gaming_day__gte=wanted[0], gaming_day__lte=wanted[-1])
        .values_list("gaming_day", "amount")
    )
    missing = [day for day in wanted if day not in stored]
    walked = _walk_back(casino, now, missing[0], reports_db()) if missing else {}
    points = [LiabilityPoint(_end_of(casino, day), day, stored.get(day, walked.get(day, ZERO))) for day in wanted]
    points.append(LiabilityPoint(now, today, outstanding_liability(casino, now)["amount"]))
    return points


def snapshot_liability(casino: Casino, now: dt.datetime | None = None, days: int = TREND_DAYS) -> int:
    """Store the liability at the end of each finished gaming day of the last `days` that has none yet."""
    now = now or timezone.now()
    today = casino.gaming_day(now)
    wanted = [today - dt.timedelta(days=offset) for offset in range(days, 0, -1)]
    have = set(
        LiabilitySnapshot.objects.filter(casino=casino, gaming_day__in=wanted).values_list("gaming_day", flat=True)
    )
    missing = [day for day in wanted if day not in have]
    if not missing:
        return 0
    walked = _walk_back(casino, now, missing[0], "default")  # what is stored for good is read from the primary
    rows = [
        LiabilitySnapshot(casino=casino, gaming_day=day, at=_end_of(casino, day), amount=walked[day]) for day in missing
    ]
    # A second job at the same time may have stored some: the unique key keeps one per day.
    return len(LiabilitySnapshot.objects.bulk_create(rows, ignore_conflicts=True))


def cash_per_desk(casino: Casino) -> list[DeskCash]:
    """Cash each desk holds now, from the books, against its limit, with its open shift if any."""
    desks = list(Place.objects.using(reports_db()).filter(casino=casino, kind=Place.Kind.DESK).order_by("code"))
    shifts = {
        s.desk_id: s
        for s in Shift.objects.using(reports_db())
        .filter(desk__in=desks, closed_at__isnull=True)
        .select_related("cashier")
    }
    held = physical_balances(casino, using=reports_db())
    return [
        DeskCash(desk, shifts.get(desk.pk), held.get(desk.pk, {}).get(Item.CASH, ZERO), desk.cash_limit)
        for desk in desks
    ]


def cash_per_kiosk(casino: Casino) -> list[KioskCash]:
    """Cash each kiosk holds now, from the books, against the casino's capacity; its last drop; what waits."""
    return kiosk_cash(casino, using=reports_db())


@dataclass(frozen=True)
class OpenExceptions:
    holds: int
    overdue_holds: int  # past the decision day: a breach of casino rules §1.7
    stuck: int
    mismatches_today: int
    transfers: int
    reversals: int
    alerts: int
    due_holds: int = 0  # on their decision day, the last one: escalated
    # The last finished gaming day's meter reconciliation (stored by the daily job).
    meters_day: dt.date | None = None
    meter_differences: int = 0  # machines whose meters differ from the system's figures
    meters_silent: int = 0  # machines that sent no reading that day
    counts: int = 0  # counts waiting for a supervisor: write-offs above the limit, hand-overs whose counts differ
    # The last daily verification of the casino's books (machines.verification): None before the first.
    books: BooksVerification | None = None


def open_exceptions(casino: Casino, now: dt.datetime | None = None) -> OpenExceptions:
    now = now or timezone.now()
    begin, finish = casino.gaming_day_bounds(casino.gaming_day(now))
    # From the decision day itself, in the casino's time: the 15-minute job's mark may not have been set yet.
    today = timezone.localtime(now, casino.zoneinfo).date()
    holds = (
        HoldCase.objects.using(reports_db())
        .filter(casino=casino, decision=HoldCase.Decision.PENDING)
        .aggregate(
            n=Count("id"),
            overdue=Count("id", filter=Q(decision_due__lt=today)),
            due=Count("id", filter=Q(decision_due=today)),
        )
    )
    return OpenExceptions(
        holds=holds["n"],
        overdue_holds=holds["overdue"],
        due_holds=holds["due"],
        stuck=stuck_redemptions(casino=casino, now=now).using(reports_db()).count(),
        mismatches_today=TicketEvent.objects.using(reports_db())
        .filter(
            ticket__casino=casino,
            kind=TicketEventKind.AMOUNT_MISMATCH,
            created_at__gte=begin,
            created_at__lt=finish,
        )
        .count(),
        transfers=Transfer.objects.using(reports_db())
        .filter(shift__desk__casino=casino, transaction__isnull=True, shift__closed_at__isnull=True)
        .count(),
        reversals=ReversalRequest.objects.using(reports_db())
        .filter(original__casino=casino, reversal__isnull=True)
        .count(),
        alerts=Alert.objects.using(reports_db()).filter(casino=casino).exclude(status=Alert.Status.CLOSED).count(),
        counts=CountRequest.objects.using(reports_db())
        .filter(casino=casino, status=CountRequest.Status.WAITING)
        .count(),
        books=BooksVerification.objects.using(reports_db()).filter(casino=casino).first(),
        **_meter_exceptions(casino, casino.gaming_day(now) - dt.timedelta(days=1)),
    )


def _meter_exceptions(casino: Casino, day: dt.date) -> dict[str, Any]:
    counts = (
        MeterReconciliation.objects.using(reports_db())
        .filter(casino=casino, gaming_day=day)
        .aggregate(
            differences=Count("id", filter=Q(status=MeterReconciliation.Status.DIFFERENCE)),
            silent=Count("id", filter=Q(status=MeterReconciliation.Status.NO_READING)),
        )
    )
    return {"meters_day": day, "meter_differences": counts["differences"], "meters_silent": counts["silent"]}


# Each game's expected hold (win / drop, per cent) over 30 gaming days: industry-typical bands, the same for every
# casino until they are a setting; a table outside its band is flagged on the dashboard.
HOLD_BAND_DAYS = 30
HOLD_BANDS: dict[str, tuple[Decimal, Decimal]] = {TableGame.AMERICAN_ROULETTE: (Decimal("15"), Decimal("35"))}
DEFAULT_HOLD_BAND = (Decimal("10"), Decimal("30"))


@dataclass(frozen=True)
class OffBand:
    table: str
    hold: Decimal
    low: Decimal
    high: Decimal


@dataclass(frozen=True)
class TablesToday:
    """The gaming tables on the dashboard: how many are open of how many, the win of today's closed sessions, and
    the tables whose hold over the last 30 gaming days is outside their game's band."""

    open: int
    tables: int
    win: Decimal
    off_band: list[OffBand]


def tables_today(casino: Casino, day: dt.date) -> TablesToday:
    begin, finish = casino.gaming_day_bounds(day)
    using = reports_db()
    tables = GamingTable.objects.using(using).filter(casino=casino)
    closed = TableSession.objects.using(using).filter(table__casino=casino, closed_at__isnull=False)
    win = closed.filter(opened_at__gte=begin, opened_at__lt=finish).aggregate(total=Sum("win"))["total"]
    since, _end = casino.gaming_day_bounds(day - dt.timedelta(days=HOLD_BAND_DAYS - 1))
    per_table = (
        closed.filter(opened_at__gte=since, opened_at__lt=finish)
        .values("table__number", "table__game")
        .annotate(win=Sum("win"), drop=Sum("drop"))
        .order_by("table__number")
    )
    off_band = []
    for row in per_table:
        if not row["drop"]:
            continue
        hold = (row["win"] * 100 / row["drop"]).quantize(Decimal("0.1"))
        low, high = HOLD_BANDS.get(row["table__game"], DEFAULT_HOLD_BAND)
        if not low <= hold <= high:
            off_band.append(OffBand(row["table__number"], hold, low, high))
    return TablesToday(
        open=tables.filter(is_open=True).count(), tables=tables.count(), win=win or ZERO, off_band=off_band
    )


@dataclass(frozen=True)
class CountRoom:
    """The count room on the dashboard (issue 25): boxes out and not yet approved, the last approved count's
    differences, and yesterday's result (as closed, or as the books read it now)."""

    waiting: int
    last_count: DropRun | None
    last_differences: list[Decimal]
    yesterday: dt.date
    yesterday_result: Decimal
    yesterday_closed: bool

    @property
    def last_difference(self) -> Decimal:
        return sum(self.last_differences, ZERO)


def count_room_today(casino: Casino, day: dt.date) -> CountRoom:
    waiting = DroppedBox.objects.filter(drop__casino=casino, closed_at__isnull=True).count()
    last = DropRun.objects.filter(casino=casino, approved_at__isnull=False).order_by("-approved_at").first()
    differences = []
    if last is not None:
        differences = [
            box.counted - box.expected
            for box in last.boxes.all()
            if box.counted is not None and box.counted != box.expected
        ]
    yesterday = day - dt.timedelta(days=1)
    figures = statement(casino, yesterday)
    return CountRoom(
        waiting=waiting,
        last_count=last,
        last_differences=differences,
        yesterday=yesterday,
        yesterday_result=figures.result,
        yesterday_closed=figures.closed is not None,
    )

"""Manager reports: reads only, each one or two aggregate queries whatever the data's size."""

import datetime as dt
from decimal import Decimal
from typing import Any

from django.db.models import Count, DateTimeField, ExpressionWrapper, F, Q, Sum
from django.db.models.functions import TruncDate
from django.utils import timezone
from django.utils.translation import gettext as _

from cashdesk.books import counterparty_balances, over_short_by_shift, physical_balances
from cashdesk.items import ALL_ITEMS
from cashdesk.kiosk_selectors import PERIOD_AMOUNTS, PERIOD_COUNTS, kiosk_period
from cashdesk.models import (
    CashTransaction,
    CheckCodeFailure,
    CheckCodeUnlock,
    Counterparty,
    HoldCase,
    Leg,
    MachineReceipt,
    TableSession,
    TransactionKind,
)
from casino_office.replica import reports_alias
from casino_office.vocabulary import VAULT_TRANSFER_KINDS
from machines.models import Casino, Machine, MeterReconciliation, Place
from tickets.models import OUTSTANDING_STATES, Ticket, TicketEvent, TicketEventKind
from tickets.numbers import masked_validation_number
from tickets.reconciliation import reconcile_day
from tickets.selectors import stuck_redemptions


def reports_db() -> str:
    """Where reads for reports and the dashboard go: a read replica when REPORTS_DATABASE_URL is set (the primary
    while it cannot be reached; the page says so, casino_office/replica.py)."""
    return reports_alias()


def _gaming_day(field: str, casino: Casino) -> TruncDate:
    shifted = ExpressionWrapper(
        F(field) - dt.timedelta(hours=casino.gaming_day_start_hour), output_field=DateTimeField()
    )
    return TruncDate(shifted, tzinfo=casino.zoneinfo)


def tickets_per_gaming_day(casino: Casino, start: dt.date, end: dt.date) -> list[dict[str, Any]]:
    begin, finish = casino.gaming_day_bounds(start, end)
    days: dict[dt.date, dict[str, Any]] = {}
    for label, field, extra in (
        ("issued", "printed_at", Q()),
        ("redeemed", "redeemed_at", Q()),
        ("expired", "expired_at", Q()),
    ):
        rows = (
            Ticket.objects.using(reports_db())
            .filter(Q(casino=casino) & extra, **{f"{field}__gte": begin, f"{field}__lt": finish})
            .annotate(day=_gaming_day(field, casino))
            .values("day")
            .annotate(n=Count("id"), total=Sum("amount"))
        )
        for found in rows:
            entry = days.setdefault(found["day"], {"day": found["day"]})
            entry[f"{label}_count"] = found["n"]
            entry[f"{label}_amount"] = found["total"]
    result: list[dict[str, Any]] = []
    for day in sorted(days):
        totals = days[day]
        for label in ("issued", "redeemed", "expired"):
            totals.setdefault(f"{label}_count", 0)
            totals.setdefault(f"{label}_amount", Decimal("0"))
        result.append(totals)
    return result


def outstanding_liability(casino: Casino, at: dt.datetime, using: str | None = None) -> dict[str, Any]:
    """Tickets valid at `at`: printed by then and not redeemed, expired or voided by then.

    Read as "outstanding now, or closed only after `at`", so the query touches
    the open tickets and those closed since `at`, never the whole history.
    """
    open_at = (
        Ticket.objects.using(using or reports_db())
        .filter(casino=casino, printed_at__lte=at)
        .filter(Q(state__in=OUTSTANDING_STATES) | Q(redeemed_at__gt=at) | Q(expired_at__gt=at) | Q(voided_at__gt=at))
    )
    totals = open_at.aggregate(n=Count("id"), total=Sum("amount"))
    return {"at": at, "count": totals["n"], "amount": totals["total"] or Decimal("0")}


def _named_desk(details: dict[str, Any], desk_names: dict[str, str], machine_names: dict[int, str]) -> dict[str, Any]:
    """The desk by its name and a holding machine by its asset number (events record a code and an id)."""
    named = {key: value for key, value in details.items() if key != "desk_name"}
    if "desk" in details:
        named["desk"] = desk_names.get(str(details["desk"]), details["desk"])
    if details.get("holder_machine") is not None:
        named["holder_machine"] = machine_names.get(details["holder_machine"], details["holder_machine"])
    return named


def exceptions(casino: Casino, start: dt.date, end: dt.date) -> list[dict[str, Any]]:
    begin, finish = casino.gaming_day_bounds(start, end)
    rows: list[dict[str, Any]] = []
    rows.extend(_ticket_event_exceptions(casino, begin, finish))
    rows.extend(_still_stuck_exceptions(casino))
    rows.extend(_hold_deadline_exceptions(casino))
    rows.extend(_late_hold_decision_exceptions(casino, begin, finish))
    rows.extend(meter_exceptions(casino, start, end))
    rows.extend(check_code_exceptions(casino, begin, finish))
    rows.extend(tray_count_exceptions(casino, begin, finish))
    return rows


def tray_count_exceptions(casino: Casino, begin: dt.datetime, finish: dt.datetime) -> list[dict[str, Any]]:
    """Tables whose tray, counted at the opening, was off its last closing by more than the casino's tolerance.

    The closing count's difference from the books is the table's result, not an exception.
    """
    sessions = (
        TableSession.objects.using(reports_db())
        .filter(table__casino=casino, opened_at__gte=begin, opened_at__lt=finish)
        .select_related("table", "opened_by", "croupier")
        .annotate(variance=Sum("opening_count__lines__variance"))
        .order_by("opened_at", "pk")
    )
    return [
        {
            "when": session.opened_at,
            "kind": _("Table's tray off its last closing"),
            "ticket": "",
            "amount": session.variance,
            "where": session.table.number,
            "detail": {
                "pit_supervisor": session.opened_by.get_username(),
                "croupier": session.croupier.get_full_name() or session.croupier.get_username(),
                "tolerance": str(casino.table_count_tolerance),
            },
        }
        for session in sessions
        if session.variance is not None and abs(session.variance) > casino.table_count_tolerance
    ]


def _ticket_event_exceptions(casino: Casino, begin: dt.datetime, finish: dt.datetime) -> list[dict[str, Any]]:
    """Amount mismatches, second presentations of a paid ticket and stuck redemptions in the period."""
    events = (
        TicketEvent.objects.using(reports_db())
        .filter(ticket__casino=casino, created_at__gte=begin, created_at__lt=finish)
        .filter(
            Q(kind=TicketEventKind.AMOUNT_MISMATCH)
            | Q(kind=TicketEventKind.REFUSED, reason="already_redeemed")
            | Q(kind=TicketEventKind.STUCK)
        )
        .select_related("ticket", "machine", "user")
    )
    # Events record the desk's code; the report names it as every screen does.
    desk_names = dict(Place.objects.using(reports_db()).filter(casino=casino).values_list("code", "name"))
    machine_names = dict(Machine.objects.using(reports_db()).filter(casino=casino).values_list("pk", "asset_number"))
    labels = {
        TicketEventKind.AMOUNT_MISMATCH: _("Amount mismatch"),
        TicketEventKind.REFUSED: _("Second presentation of a paid ticket"),
        TicketEventKind.STUCK: _("Redemption not committed in time"),
    }
    return [
        {
            "when": event.created_at,
            "kind": labels[TicketEventKind(event.kind)],
            "ticket": masked_validation_number(event.ticket.validation_number),
            "amount": event.ticket.amount,
            "where": event.machine.asset_number
            if event.machine
            else (event.user.get_username() if event.user else _("system")),
            "detail": _named_desk(event.details, desk_names, machine_names),
        }
        for event in events.order_by("created_at")
    ]


def _still_stuck_exceptions(casino: Casino) -> list[dict[str, Any]]:
    """Redemptions stuck at this moment, whatever the period."""
    return [
        {
            "when": ticket.hold_expires_at,
            "kind": _("Still stuck now"),
            "ticket": masked_validation_number(ticket.validation_number),
            "amount": ticket.amount,
            "where": ticket.holder_machine.asset_number if ticket.holder_machine else "",
            "detail": {},
        }
        for ticket in stuck_redemptions(casino=casino).using(reports_db())
    ]


def _hold_deadline_exceptions(casino: Casino) -> list[dict[str, Any]]:
    """Held tickets on their decision day (escalated) or past it (a breach of casino rules §1.7).

    Read from the decision day in the casino's time.
    """
    today = timezone.localtime(timezone.now(), casino.zoneinfo).date()
    rows: list[dict[str, Any]] = []
    for case in (
        HoldCase.objects.using(reports_db())
        .filter(casino=casino, decision=HoldCase.Decision.PENDING, decision_due__lte=today)
        .select_related("ticket", "casino")
        .order_by("decision_due", "pk")
    ):
        breached = case.decision_due < today
        rows.append(
            {
                "when": case.deadline() if breached else case.last_day_starts(),
                "kind": _("Hold decision deadline breached")
                if breached
                else _("Hold decision due today: its last day"),
                "ticket": masked_validation_number(case.ticket.validation_number),
                "amount": case.ticket.amount,
                "where": _("case %(case)s") % {"case": case.pk},
                "detail": {"due": str(case.decision_due)},
            }
        )
    return rows


def _late_hold_decision_exceptions(casino: Casino, begin: dt.datetime, finish: dt.datetime) -> list[dict[str, Any]]:
    """Held tickets decided (cleared or voided) after their deadline, in the period."""
    events = (
        TicketEvent.objects.using(reports_db())
        .filter(
            ticket__casino=casino,
            created_at__gte=begin,
            created_at__lt=finish,
            kind__in=[TicketEventKind.CLEARED_FOR_PAYMENT, TicketEventKind.VOIDED],
            details__late=True,
        )
        .select_related("ticket", "user")
        .order_by("created_at")
    )
    return [
        {
            "when": event.created_at,
            "kind": _("Hold decided after the deadline"),
            "ticket": masked_validation_number(event.ticket.validation_number),
            "amount": event.ticket.amount,
            "where": _("case %(case)s") % {"case": event.details.get("case", "?")},
            "detail": {
                "due": event.details.get("decision_due", ""),
                "by": event.user.get_username() if event.user else "",
                "reason": event.reason,
            },
        }
        for event in events
    ]


def per_machine(casino: Casino, start: dt.date, end: dt.date) -> list[dict[str, Any]]:
    begin, finish = casino.gaming_day_bounds(start, end)
    issued = {
        row["issuing_machine__asset_number"]: row
        for row in Ticket.objects.using(reports_db())
        .filter(casino=casino, issuing_machine__isnull=False, printed_at__gte=begin, printed_at__lt=finish)
        .values("issuing_machine__asset_number")
        .annotate(n=Count("id"), total=Sum("amount"))
    }
    redeemed = {
        row["redeemed_by_machine__asset_number"]: row
        for row in Ticket.objects.using(reports_db())
        .filter(casino=casino, redeemed_by_machine__isnull=False, redeemed_at__gte=begin, redeemed_at__lt=finish)
        .values("redeemed_by_machine__asset_number")
        .annotate(n=Count("id"), total=Sum("amount"))
    }
    result = []
    for asset in sorted(set(issued) | set(redeemed)):
        out: dict[str, Any] = dict(issued.get(asset, {}))
        into: dict[str, Any] = dict(redeemed.get(asset, {}))
        result.append(
            {
                "machine": asset,
                "tickets_out": out.get("n", 0),
                "amount_out": out.get("total") or Decimal("0"),
                "tickets_in": into.get("n", 0),
                "amount_in": into.get("total") or Decimal("0"),
            }
        )
    return result


def per_desk(casino: Casino, start: dt.date, end: dt.date) -> list[dict[str, Any]]:
    """Transactions per desk (by its name, as every screen calls it) and kind: how many and their EUR total.

    The cash desks and the vault; a kiosk's cash is a place in the books but not a desk: its
    transactions are in the kiosks report.
    """
    begin, finish = casino.gaming_day_bounds(start, end)
    # Count differences are signed as each desk saw them (+ over, - short), never summed as absolute values.
    differences = dict(
        Leg.objects.using(reports_db())
        .filter(
            casino=casino,
            transaction__kind=TransactionKind.COUNT,
            transaction__created_at__gte=begin,
            transaction__created_at__lt=finish,
            desk_id=F("transaction__desk_id"),
        )
        .values_list("desk_id")
        .annotate(total=Sum("amount"))
        .order_by()
    )
    return [
        {
            "desk": row["desk__name"],
            "kind": row["kind"],
            "n": row["n"],
            "total": differences.get(row["desk_id"], row["total"])
            if row["kind"] == TransactionKind.COUNT
            else row["total"],
        }
        for row in CashTransaction.objects.using(reports_db())
        .filter(casino=casino, created_at__gte=begin, created_at__lt=finish)
        .exclude(desk__kind=Place.Kind.KIOSK)
        .values("desk__code", "desk_id", "desk__name", "kind")
        .annotate(n=Count("id"), total=Sum("amount"))
        .order_by("desk__code", "kind")
    ]


def transfers(casino: Casino, start: dt.date, end: dt.date) -> list[dict[str, Any]]:
    """Every drop to the vault and fill from it approved in the gaming days: one row per item it moved.

    Read from the desk's legs of each transfer, so the report shows what the books moved; pieces for
    chips and tokens, the value in EUR, who asked for it and who approved it.
    """
    begin, finish = casino.gaming_day_bounds(start, end)
    legs = (
        Leg.objects.using(reports_db())
        .filter(
            casino=casino,
            transaction__kind__in=VAULT_TRANSFER_KINDS,
            transaction__created_at__gte=begin,
            transaction__created_at__lt=finish,
            desk_id=F("transaction__desk_id"),
        )
        .select_related(
            "transaction__casino", "transaction__desk", "transaction__created_by", "transaction__approved_by"
        )
        .order_by("transaction__created_at", "transaction_id", "id")
    )
    return [
        {
            "when": leg.transaction.created_at,
            "receipt": leg.transaction.receipt_number,
            "desk": leg.transaction.desk.name,
            "kind": leg.transaction.kind,
            "item": leg.item,
            "pieces": abs(leg.count) if leg.count is not None else None,
            "amount": abs(leg.amount),
            "cashier": leg.transaction.created_by.get_username() if leg.transaction.created_by else "",
            "approver": leg.transaction.approved_by.get_username() if leg.transaction.approved_by else "",
        }
        for leg in legs
    ]


def kiosks(casino: Casino, start: dt.date, end: dt.date) -> list[dict[str, Any]]:
    """Per kiosk over the gaming days: tickets paid and printed, fills, drops, count differences, cash at the end.

    Then a totals row (marked `_total`): the sums of every column, the cash at the end over all kiosks.
    """
    begin, finish = casino.gaming_day_bounds(start, end)
    rows = kiosk_period(casino, begin, finish, using=reports_db())
    if not rows:
        return rows
    totals: dict[str, Any] = {"kiosk": _("Total"), "_total": True}
    totals.update({column: sum(row[column] for row in rows) for column in PERIOD_COUNTS})
    totals.update({column: sum((row[column] for row in rows), Decimal("0.00")) for column in PERIOD_AMOUNTS})
    return [*rows, totals]


__all__ = [
    "exceptions",
    "kiosks",
    "outstanding_liability",
    "per_desk",
    "per_machine",
    "reports_db",
    "tables",
    "tickets_per_gaming_day",
    "transfers",
]


def books(casino: Casino, at: dt.datetime) -> list[dict[str, Any]]:
    """Every place's holdings per item at a moment, physical places then counterparties, and each item's total.

    The physical places are the vault, the cash desks, then the kiosks (each kiosk's cash is a place of its
    own). Double entry: each item's total over all places is zero, at every moment.
    """
    using = reports_db()
    desks = {desk.pk: desk for desk in Place.objects.using(using).filter(casino=casino)}
    rows: list[dict[str, Any]] = []
    totals = dict.fromkeys(ALL_ITEMS, Decimal("0.00"))
    held = physical_balances(casino, at=at, using=using)
    order: dict[str, int] = {Place.Kind.VAULT: 0, Place.Kind.DESK: 1, Place.Kind.KIOSK: 2}
    for desk_id in sorted(held, key=lambda pk: (order.get(desks[pk].kind, 3), desks[pk].code)):
        for item in ALL_ITEMS:
            if held[desk_id][item]:
                rows.append({"place": desks[desk_id].name, "item": item, "amount": held[desk_id][item]})
                totals[item] += held[desk_id][item]
    for party, balances in counterparty_balances(casino, at=at, using=using).items():
        for item in ALL_ITEMS:
            if balances[item]:
                rows.append({"place": str(Counterparty(party).label), "item": item, "amount": balances[item]})
                totals[item] += balances[item]
    rows.extend(
        {"place": _("Total (always zero)"), "item": item, "amount": total}
        for item, total in totals.items()
        if any(row["item"] == item for row in rows)
    )
    return rows


def over_short(casino: Casino, start: dt.date, end: dt.date) -> list[dict[str, Any]]:
    """Each shift closed in the gaming days' period: its desk, cashier and over (+) or short (-) in EUR."""
    begin, finish = casino.gaming_day_bounds(start, end)
    return over_short_by_shift(casino, begin, finish, using=reports_db())


def meters(casino: Casino, day: dt.date) -> list[dict[str, Any]]:
    """Each machine's meters over a gaming day against the system's figures, one row per machine and meter.

    Read live, so a day still running shows its progress; a machine that sent no reading in the day says so.
    """
    rows: list[dict[str, Any]] = []
    for entry in reconcile_day(casino, day, using=reports_db()):
        silent = entry.status == MeterReconciliation.Status.NO_READING
        for line in entry.lines:
            if silent:
                note = _("No meter reading")
            elif line.system is None:
                note = _("System figure not available yet")
            elif line.change is None:
                note = _("Not sent by the machine")
            elif line.difference:
                note = _("Difference")
            else:
                note = ""
            rows.append(
                {
                    "machine": entry.machine.asset_number,
                    "meter": line.meter,
                    "meter_change": line.change,
                    "system": line.system,
                    "difference": line.difference,
                    "note": note,
                }
            )
    return rows


def meter_exceptions(casino: Casino, start: dt.date, end: dt.date) -> list[dict[str, Any]]:
    """The stored reconciliations of the days with a difference or without a reading, for the exceptions report."""
    rows: list[dict[str, Any]] = []
    for found in (
        MeterReconciliation.objects.using(reports_db())
        .filter(casino=casino, gaming_day__gte=start, gaming_day__lte=end)
        .exclude(status=MeterReconciliation.Status.MATCHED)
        .select_related("machine")
        .order_by("gaming_day", "machine__asset_number")
    ):
        differing = {
            line["meter"]: line["difference"] for line in found.lines if line["difference"] not in (None, 0, "0")
        }
        differing = {meter: value for meter, value in differing.items() if Decimal(str(value)) != 0}
        rows.append(
            {
                "when": casino.gaming_day_bounds(found.gaming_day)[1],
                "kind": _("Meter difference")
                if found.status == MeterReconciliation.Status.DIFFERENCE
                else _("No meter reading"),
                "ticket": "",
                "amount": None,
                "where": found.machine.asset_number,
                "detail": differing,
            }
        )
    return rows


def check_code_exceptions(casino: Casino, begin: dt.datetime, finish: dt.datetime) -> list[dict[str, Any]]:
    """Wrong check codes typed for machine receipts and handpays, the locks still in force and the unlocks.

    The receipt is shown by its last four digits, like a ticket; the code typed was never kept.
    """
    using = reports_db()
    rows: list[dict[str, Any]] = []
    for failure in (
        CheckCodeFailure.objects.using(using)
        .filter(receipt__casino=casino, tried_at__gte=begin, tried_at__lt=finish)
        .select_related("receipt__machine", "desk", "tried_by")
        .order_by("tried_at", "pk")
    ):
        rows.append(
            {
                "when": failure.tried_at,
                "kind": _("Wrong check code"),
                "ticket": masked_validation_number(failure.receipt.number),
                "amount": failure.receipt.amount,
                "where": failure.desk.name,
                "detail": {"cashier": failure.tried_by.get_username(), "machine": failure.receipt.machine.asset_number},
            }
        )
    for receipt in (
        MachineReceipt.objects.using(using)
        .filter(casino=casino, code_locked_at__gte=begin, code_locked_at__lt=finish)
        .select_related("machine")
    ):
        rows.append(
            {
                "when": receipt.code_locked_at,
                "kind": _("Receipt locked after wrong check codes"),
                "ticket": masked_validation_number(receipt.number),
                "amount": receipt.amount,
                "where": receipt.machine.asset_number,
                "detail": {"wrong codes": receipt.wrong_codes},
            }
        )
    for unlock in (
        CheckCodeUnlock.objects.using(using)
        .filter(receipt__casino=casino, unlocked_at__gte=begin, unlocked_at__lt=finish)
        .select_related("receipt__machine", "unlocked_by")
    ):
        rows.append(
            {
                "when": unlock.unlocked_at,
                "kind": _("Receipt unlocked by a supervisor"),
                "ticket": masked_validation_number(unlock.receipt.number),
                "amount": unlock.receipt.amount,
                "where": unlock.unlocked_by.get_username(),
                "detail": {"wrong codes": unlock.failures, "machine": unlock.receipt.machine.asset_number},
            }
        )
    return rows


# A table's figures per gaming day (the sessions opened that day, summed; the opening of the first, the closing of
# the last), per game over the period and in total.
TABLE_AMOUNTS = ("fills", "credits", "drop", "win")


def _hold(win: Decimal, drop: Decimal) -> Decimal | None:
    """The hold in per cent (win / drop), where there was a drop."""
    return (win * 100 / drop).quantize(Decimal("0.1")) if drop else None


def tables(casino: Casino, start: dt.date, end: dt.date) -> list[dict[str, Any]]:
    """Per table and gaming day of its closed sessions: opening tray, fills, credits, buy-ins recorded, drop as
    recorded at the table (the count room's figure is not in the system yet), closing tray, win and hold; then a
    row per game and the totals (marked `_total`)."""
    begin, finish = casino.gaming_day_bounds(start, end)
    sessions = (
        TableSession.objects.using(reports_db())
        .filter(table__casino=casino, opened_at__gte=begin, opened_at__lt=finish, closed_at__isnull=False)
        .select_related("table")
        .annotate(buy_in_count=Count("buy_ins"))
        .order_by("table__number", "opened_at")
    )
    days: dict[tuple[dt.date, int], dict[str, Any]] = {}
    for session in sessions:
        day = casino.gaming_day(session.opened_at)
        row = days.get((day, session.table_id))
        if row is None:
            row = days[(day, session.table_id)] = {
                "day": day,
                "table": session.table.number,
                "game": session.table.get_game_display(),
                "opening": session.opening,
                "buy_ins": 0,
                **dict.fromkeys(TABLE_AMOUNTS, Decimal("0.00")),
            }
        for column in TABLE_AMOUNTS:
            row[column] += getattr(session, column)
        row["buy_ins"] += session.buy_in_count
        row["closing"] = session.closing
    rows = sorted(days.values(), key=lambda row: (row["day"], row["table"]))
    if not rows:
        return rows
    games: dict[str, dict[str, Any]] = {}
    for row in rows:
        row["hold"] = _hold(row["win"], row["drop"])
        game = games.setdefault(
            row["game"], {"game": row["game"], "buy_ins": 0, **dict.fromkeys(TABLE_AMOUNTS, Decimal("0.00"))}
        )
        for column in (*TABLE_AMOUNTS, "buy_ins"):
            game[column] += row[column]
    totals: dict[str, Any] = {"day": _("Total"), "_total": True, "buy_ins": 0}
    totals.update(dict.fromkeys(TABLE_AMOUNTS, Decimal("0.00")))
    for game in games.values():
        game.update(_total=True, hold=_hold(game["win"], game["drop"]))
        for column in (*TABLE_AMOUNTS, "buy_ins"):
            totals[column] += game[column]
    totals["hold"] = _hold(totals["win"], totals["drop"])
    return [*rows, *sorted(games.values(), key=lambda game: game["game"]), totals]

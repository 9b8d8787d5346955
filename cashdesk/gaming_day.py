"""The gaming day's result (issue 25): what each slot machine and table won, and the casino's turnover and result.

Per slot machine: notes dropped (as counted, from the boxes of the day's drop runs) + tickets in − tickets out −
handpays − machine receipts (the system's records of the gaming day); its turnover is its bets (the coin-in meter's
change over the day). Kiosks are left out: they hold the casino's cash, they do not win. Per table: the win of its
sessions opened that day (closing − opening + credits − fills + drop as recorded), with its box's count difference
(the drop as counted); its turnover is the drop as counted. The casino: the sums.

A closed day (`GamingDayClose`) shows the figures as they were closed, and its adjustments below them.
"""

import datetime as dt
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from django.db.models import Sum
from django.utils.translation import gettext as _

from cashdesk.models import DroppedBox, GamingDayAdjustment, GamingDayClose, TableSession
from cashdesk.services.count_room import BoxFindings, box_findings
from machines.models import Casino
from tickets.reconciliation import meter_changes, reconcile_day

ZERO = Decimal("0.00")
AMOUNTS = (
    "notes",
    "tickets_in",
    "tickets_out",
    "handpays",
    "receipts",
    "table_win",
    "count_difference",
    "result",
    "turnover",
)


@dataclass
class Statement:
    casino: Casino
    day: dt.date
    rows: list[dict[str, Any]]
    boxes: list[BoxFindings] = field(default_factory=list)
    uncounted: list[DroppedBox] = field(default_factory=list)
    closed: GamingDayClose | None = None
    adjustments: list[GamingDayAdjustment] = field(default_factory=list)

    @property
    def closable(self) -> bool:
        """Boxes were dropped on the day, all counted and approved, and the day is not closed."""
        return self.closed is None and bool(self.boxes) and not self.uncounted

    @property
    def result(self) -> Decimal:
        return sum((row["result"] or ZERO for row in self.rows if row.get("_total")), ZERO)


def _day_boxes(casino: Casino, day: dt.date) -> list[DroppedBox]:
    return list(
        DroppedBox.objects.filter(drop__casino=casino, drop__gaming_day=day)
        .select_related("drop__casino", "machine", "table")
        .order_by("box_number", "id")
    )


def _machine_rows(casino: Casino, day: dt.date, boxes: list[DroppedBox]) -> list[dict[str, Any]]:
    begin, finish = casino.gaming_day_bounds(day)
    notes: dict[int, Decimal] = {}
    for box in boxes:
        if box.machine_id is not None and box.closed_at is not None and box.counted is not None:
            notes[box.machine_id] = notes.get(box.machine_id, ZERO) + box.counted
    bets = meter_changes(casino, begin, finish, "coin_in_amount")
    rows = []
    for entry in reconcile_day(casino, day):
        machine = entry.machine
        if machine.is_kiosk:
            continue
        system = {line.meter: line.system for line in entry.lines}
        row: dict[str, Any] = {
            "line": _("Machine %(m)s") % {"m": machine.asset_number},
            "key": f"machine:{machine.asset_number}",
            "notes": notes.get(machine.pk, ZERO),
            "tickets_in": Decimal(system.get("ticket_in_amount") or 0),
            "tickets_out": Decimal(system.get("ticket_out_amount") or 0),
            "handpays": Decimal(system.get("handpay_amount") or 0),
            "receipts": Decimal(system.get("attendant_paid_amount") or 0),
            "table_win": None,
            "count_difference": None,
        }
        row["result"] = row["notes"] + row["tickets_in"] - row["tickets_out"] - row["handpays"] - row["receipts"]
        turnover = bets.get(machine.pk)
        row["turnover"] = Decimal(turnover) if turnover is not None else None
        if any(row[name] for name in ("notes", "tickets_in", "tickets_out", "handpays", "receipts", "turnover")):
            rows.append(row)
    # A machine not in the reconciliation (not enrolled, silent all day) whose box was counted: its notes count.
    listed = {row["key"] for row in rows}
    for box in boxes:
        dropped = box.machine
        if dropped is None or dropped.pk not in notes or f"machine:{dropped.asset_number}" in listed:
            continue
        listed.add(f"machine:{dropped.asset_number}")
        rows.append(_notes_only(dropped.asset_number, notes[dropped.pk]))
    return rows


def _notes_only(asset_number: str, notes: Decimal) -> dict[str, Any]:
    row: dict[str, Any] = {
        "line": _("Machine %(m)s") % {"m": asset_number},
        "key": f"machine:{asset_number}",
        **dict.fromkeys(AMOUNTS, ZERO),
        "table_win": None,
        "count_difference": None,
        "turnover": None,
    }
    row["notes"] = row["result"] = notes
    return row


def _table_rows(casino: Casino, day: dt.date, boxes: list[DroppedBox]) -> list[dict[str, Any]]:
    begin, finish = casino.gaming_day_bounds(day)
    sessions = (
        TableSession.objects.filter(table__casino=casino, opened_at__gte=begin, opened_at__lt=finish)
        .filter(closed_at__isnull=False)
        .values("table_id", "table__number")
        .annotate(win=Sum("win"), drop=Sum("drop"))
    )
    tables: dict[int, dict[str, Any]] = {
        s["table_id"]: {"number": s["table__number"], "win": s["win"] or ZERO, "drop": s["drop"] or ZERO}
        for s in sessions
    }
    differences: dict[int, Decimal] = {}
    for box in boxes:
        if box.table_id is not None and box.closed_at is not None and box.counted is not None:
            differences[box.table_id] = differences.get(box.table_id, ZERO) + box.counted - box.expected
            number = box.table.number if box.table else ""
            tables.setdefault(box.table_id, {"number": number, "win": ZERO, "drop": ZERO})
    rows = []
    for table_id, table in sorted(tables.items(), key=lambda item: item[1]["number"]):
        difference = differences.get(table_id, ZERO)
        rows.append(
            {
                "line": _("Table %(t)s") % {"t": table["number"]},
                "key": f"table:{table['number']}",
                **dict.fromkeys(("notes", "tickets_in", "tickets_out", "handpays", "receipts")),
                "table_win": table["win"],
                "count_difference": difference,
                "result": table["win"] + difference,
                "turnover": table["drop"] + difference,
            }
        )
    return rows


def _total(rows: list[dict[str, Any]], label: str) -> dict[str, Any]:
    total: dict[str, Any] = {"line": label, "key": "casino", "_total": True}
    for name in AMOUNTS:
        values = [row[name] for row in rows if row.get(name) is not None]
        total[name] = sum(values, ZERO) if values else None
    return total


def live_rows(casino: Casino, day: dt.date, boxes: list[DroppedBox]) -> list[dict[str, Any]]:
    lines = _machine_rows(casino, day, boxes) + _table_rows(casino, day, boxes)
    return [*lines, _total(lines, _("Casino"))]


def statement(casino: Casino, day: dt.date) -> Statement:
    """The day's statement: live figures while the day is open; the closed figures and the adjustments after."""
    boxes = _day_boxes(casino, day)
    closed = GamingDayClose.objects.filter(casino=casino, gaming_day=day).select_related("closed_by").first()
    result = Statement(casino=casino, day=day, rows=[], closed=closed)
    result.uncounted = [box for box in boxes if box.closed_at is None]
    result.boxes = [box_findings(box) for box in boxes if box.counted is not None]
    if closed is None:
        result.rows = live_rows(casino, day, boxes)
        return result
    result.rows = [_read(row) for row in closed.figures["rows"]]
    result.adjustments = list(closed.adjustments.select_related("made_by").order_by("made_at", "id"))
    for adjustment in result.adjustments:
        result.rows.insert(
            len(result.rows) - 1,
            {
                "line": _("Adjustment of %(line)s: %(reason)s")
                % {"line": adjustment.line, "reason": adjustment.reason},
                "key": adjustment.line,
                **dict.fromkeys(AMOUNTS),
                "result": adjustment.amount,
                "_adjustment": True,
            },
        )
    if result.adjustments:
        total = result.rows[-1]
        total["result"] = (total["result"] or ZERO) + sum(
            (adjustment.amount for adjustment in result.adjustments), ZERO
        )
        total["line"] = _("Casino, with the adjustments")
        total["_adjusted"] = True
    return result


def written(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows as a closed day keeps them (JSON: amounts as strings)."""
    return [
        {name: (str(value) if isinstance(value, Decimal) else value) for name, value in row.items()} for row in rows
    ]


def _read(row: dict[str, Any]) -> dict[str, Any]:
    return {name: (Decimal(value) if name in AMOUNTS and value is not None else value) for name, value in row.items()}

import datetime as dt
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django.db.models import Count, QuerySet, Sum

from casino_office.replica import reports_alias
from compliance.history import operation_history
from compliance.models import EntryRefusal, RefusalReason, RegisterEntry, Visit
from machines.models import Casino, Place


def register_entries(
    *,
    casino: Casino,
    start: dt.date,
    end: dt.date,
    kind: str = "",
    desk_id: int | None = None,
    cashier_id: int | None = None,
    person_id: int | None = None,
) -> QuerySet[RegisterEntry]:
    """Entries of gaming days start..end, filtered; newest first."""
    entries = RegisterEntry.objects.filter(casino=casino, gaming_day__gte=start, gaming_day__lte=end)
    if kind:
        entries = entries.filter(kind=kind)
    if desk_id:
        entries = entries.filter(desk_id=desk_id)
    if cashier_id:
        entries = entries.filter(cashier_id=cashier_id)
    if person_id:
        entries = entries.filter(person_id=person_id)
    return entries.select_related("person", "desk", "cashier").order_by("-sequence")


def register_totals(entries: QuerySet[RegisterEntry]) -> dict[str, Any]:
    totals = entries.aggregate(n=Count("id"), total=Sum("amount"))
    return {"count": totals["n"], "amount": totals["total"] or Decimal("0")}


def fcis_report_rows(*, casino: Casino, day: dt.date) -> list[dict[str, Any]]:
    """Persons whose cash operations on a gaming day reached the FCIS threshold, with each operation."""
    begin, finish = casino.gaming_day_bounds(day)
    return operation_history().person_day_operations(
        casino=casino, since=begin, until=finish, min_total=casino.fcis_report_threshold
    )


@dataclass(frozen=True)
class DeskChoice:
    pk: int
    name: str


def register_desks(casino: Casino) -> list[DeskChoice]:
    """The casino's cash desks, for the register's filter."""
    rows = Place.objects.filter(casino=casino, kind=Place.Kind.DESK).order_by("code").values_list("pk", "name")
    return [DeskChoice(pk, name) for pk, name in rows]


# The door's figures (issue 26): how many visitors were admitted and refused, by gaming day and reason. Counts only.
DOOR_COLUMNS = ["day", "admitted", "overrides", *RefusalReason.values, "refused"]


def door_days(casino: Casino, start: dt.date, end: dt.date) -> list[dict[str, Any]]:
    """One row per gaming day start..end that saw the door: admissions, overrides, refusals by reason and in all."""
    rows: dict[dt.date, dict[str, Any]] = {}

    def row(day: dt.date) -> dict[str, Any]:
        return rows.setdefault(
            day, {"day": day, "admitted": 0, "overrides": 0, **dict.fromkeys(RefusalReason.values, 0)}
        )

    # A report (the dashboard's door tile, the door's page): read where reports read (casino_office/replica.py).
    visits = Visit.objects.using(reports_alias()).filter(casino=casino, gaming_day__gte=start, gaming_day__lte=end)
    for found in visits.values("gaming_day").annotate(n=Count("id"), overridden=Count("override_by")):
        row(found["gaming_day"]).update(admitted=found["n"], overrides=found["overridden"])
    refusals = EntryRefusal.objects.using(reports_alias()).filter(
        casino=casino, gaming_day__gte=start, gaming_day__lte=end
    )
    for refused in refusals.values("gaming_day", "reason").annotate(n=Count("id")):
        row(refused["gaming_day"])[refused["reason"]] = refused["n"]
    for line in rows.values():
        line["refused"] = sum(line[reason] for reason in RefusalReason.values)
    return [rows[day] for day in sorted(rows)]


@dataclass(frozen=True)
class DoorDay:
    admitted: int
    overrides: int
    refusals: list[tuple[str, int]]  # (the reason's label, how many), the reasons that occurred

    @property
    def refused(self) -> int:
        return sum(count for _label, count in self.refusals)


def door_day(casino: Casino, day: dt.date) -> DoorDay:
    rows = door_days(casino, day, day)
    found = rows[0] if rows else {"admitted": 0, "overrides": 0}
    labels = dict(RefusalReason.choices)
    refusals = [(str(labels[reason]), found[reason]) for reason in RefusalReason.values if found.get(reason)]
    return DoorDay(admitted=found["admitted"], overrides=found["overrides"], refusals=refusals)

import datetime as dt
from decimal import Decimal
from typing import Any

from django.db.models import Count, QuerySet, Sum

from compliance.models import RegisterEntry
from machines.models import Casino


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
    from cashdesk.models import IDENTITY_KINDS, CashTransaction

    begin, finish = casino.gaming_day_bounds(day)
    per_person = (
        CashTransaction.objects.filter(
            casino=casino, person__isnull=False, kind__in=IDENTITY_KINDS, created_at__gte=begin, created_at__lt=finish
        )
        .values("person_id")
        .annotate(total=Sum("amount"))
        .filter(total__gte=casino.fcis_report_threshold)
    )
    rows: list[dict[str, Any]] = []
    for group in per_person:
        for tx in (
            CashTransaction.objects.filter(
                casino=casino,
                person_id=group["person_id"],
                kind__in=IDENTITY_KINDS,
                created_at__gte=begin,
                created_at__lt=finish,
            )
            .select_related("person", "desk")
            .order_by("created_at")
        ):
            rows.append({"person": tx.person, "day_total": group["total"], "transaction": tx})
    return rows

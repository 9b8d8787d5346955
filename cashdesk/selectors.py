"""Reads of the cash desk that other layers need, as plain values (balances are in cashdesk.books)."""

import datetime as dt
from decimal import Decimal
from typing import Any

from django.db.models import Sum

from cashdesk.models import IDENTITY_KINDS, CashTransaction, TransactionKind
from machines.models import Casino


class DeskOperationHistory:
    """compliance.history.OperationHistory over the desk's transactions (settings.COMPLIANCE_OPERATION_HISTORY)."""

    def person_total(self, *, casino: Casino, person_id: int, since: dt.datetime, until: dt.datetime) -> Decimal:
        total = CashTransaction.objects.filter(
            casino=casino, person_id=person_id, kind__in=IDENTITY_KINDS, created_at__gte=since, created_at__lt=until
        ).aggregate(total=Sum("amount"))["total"]
        return total or Decimal("0")

    def desk_amounts(
        self, *, desk_id: int, low: Decimal, high: Decimal, since: dt.datetime, until: dt.datetime
    ) -> list[tuple[int, Decimal]]:
        return list(
            CashTransaction.objects.filter(
                desk_id=desk_id,
                kind__in=IDENTITY_KINDS,
                amount__gte=low,
                amount__lte=high,
                created_at__gt=since,
                created_at__lte=until,
            ).values_list("pk", "amount")
        )

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
        return list(
            CashTransaction.objects.filter(
                casino=casino,
                kind=TransactionKind.TICKET_PAYOUT,
                ticket__issuing_machine_id=machine_id,
                amount__gte=low,
                amount__lte=high,
                created_at__gt=since,
                created_at__lte=until,
            ).values_list("pk", "amount")
        )

    def person_day_operations(
        self, *, casino: Casino, since: dt.datetime, until: dt.datetime, min_total: Decimal
    ) -> list[dict[str, Any]]:
        identified = CashTransaction.objects.filter(
            casino=casino, person__isnull=False, kind__in=IDENTITY_KINDS, created_at__gte=since, created_at__lt=until
        )
        per_person = (
            identified.values("person_id").annotate(total=Sum("amount")).filter(total__gte=min_total).order_by()
        )
        rows: list[dict[str, Any]] = []
        for group in per_person:
            for tx in (
                identified.filter(person_id=group["person_id"]).select_related("person", "desk").order_by("created_at")
            ):
                rows.append({"person": tx.person, "day_total": group["total"], "transaction": tx})
        return rows

"""Reads of the cash desk: what its screens show, and what lower layers need as plain values.

Balances are read in cashdesk.books.
"""

import datetime as dt
from decimal import Decimal
from typing import Any

from django.contrib.auth.models import User
from django.db.models import Case, CharField, Count, IntegerField, Q, QuerySet, Sum, Value, When
from django.utils import timezone

from cashdesk.items import ALL_ITEMS, Item
from cashdesk.models import (
    IDENTITY_KINDS,
    CashTransaction,
    CountRequest,
    HoldCase,
    MachineReceipt,
    ReversalRequest,
    Shift,
    TableSlip,
    Transfer,
)
from casino_office.vocabulary import STRUCTURING_KINDS, TICKET_CASH_PAYOUT_KINDS
from machines.models import Casino, Place


class DeskOperationHistory:
    """compliance.history.OperationHistory over the desk's transactions (provided to its OPERATION_HISTORY port)."""

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
                kind__in=TICKET_CASH_PAYOUT_KINDS,
                ticket__issuing_machine_id=machine_id,
                amount__gte=low,
                amount__lte=high,
                created_at__gt=since,
                created_at__lte=until,
            ).values_list("pk", "amount")
        )

    def casino_unidentified_operations(
        self, *, casino: Casino, low: Decimal, high: Decimal, since: dt.datetime, until: dt.datetime
    ) -> list[dict[str, Any]]:
        found = (
            CashTransaction.objects.filter(
                casino=casino,
                person__isnull=True,
                kind__in=STRUCTURING_KINDS,
                amount__gte=low,
                amount__lte=high,
                created_at__gt=since,
                created_at__lte=until,
            )
            .select_related("casino", "desk", "machine")
            .order_by("created_at", "pk")
        )
        return [
            {
                "transaction": tx.pk,
                "amount": tx.amount,
                "at": tx.created_at,
                "kind": tx.kind,
                # A kiosk's place in the books is named after the kiosk; the machine's number is what the floor uses.
                "where": tx.machine.asset_number if tx.machine is not None else tx.desk.name,
                "receipt": tx.receipt_number,
            }
            for tx in found
        ]

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


# --- What the desk's, the floor's and the supervisor's screens read ---------------------------------


def free_desks(casino: Casino) -> QuerySet[Place]:
    """The casino's cash desks with no open shift: where a cashier may open one."""
    busy = Shift.objects.filter(closed_at__isnull=True).values("desk")
    return Place.objects.filter(casino=casino, kind=Place.Kind.DESK).exclude(pk__in=busy)


def recent_transactions(shift: Shift, limit: int = 15) -> QuerySet[CashTransaction]:
    return shift.transactions.select_related("ticket").order_by("-id")[:limit]


def cashiers_to_hand_over_to(casino: Casino, user: User) -> QuerySet[User]:
    return (
        User.objects.filter(assignment__casino=casino, groups__permissions__codename="operate_desk", is_active=True)
        .exclude(pk=user.pk)
        .distinct()
    )


def casino_vault(casino: Casino) -> Place | None:
    return Place.objects.filter(casino=casino, kind=Place.Kind.VAULT).first()


def recent_machine_receipts(casino: Casino, limit: int = 30) -> QuerySet[MachineReceipt]:
    return MachineReceipt.objects.filter(casino=casino).select_related("machine", "paid_by")[:limit]


def awaiting_supervisor(casino: Casino) -> Q:
    """Machine receipts a cashier may not pay until a supervisor confirms them (issue 21, four eyes).

    A floor receipt above the casino's confirmation limit. Handpays are left out: the machine asked for them
    over its authenticated link and counts them on its handpay meters, so they never rest on one word alone.
    """
    return Q(
        source=MachineReceipt.Source.FLOOR,
        amount__gt=casino.receipt_confirmation_limit,
        supervisor_confirmed_at__isnull=True,
    )


def receipts_to_confirm(casino: Casino) -> QuerySet[MachineReceipt]:
    """The supervisor's list: unpaid receipts waiting for their confirmation, the oldest first."""
    return (
        MachineReceipt.objects.filter(awaiting_supervisor(casino), casino=casino, state=MachineReceipt.State.CONFIRMED)
        .select_related("machine", "created_by")
        .order_by("created_at", "pk")
    )


def receipts_at_machines(
    casino: object, machine_ids: list[int], begin: dt.datetime, finish: dt.datetime
) -> dict[int, tuple[int, Decimal]]:
    """The machine receipts written on the floor for each machine in [begin, finish), for the meter reconciliation.

    The machine counts them on its attendant-paid meters when the attendant cancels the credits there, as the
    receipt is written (issue 21: a receipt no longer rests on the attendant's word alone). Handpays the
    machine asked for are on its handpay meters (cashdesk.services.handpays.handpays_at_machines).
    """
    rows = (
        MachineReceipt.objects.filter(
            machine_id__in=machine_ids,
            source=MachineReceipt.Source.FLOOR,
            confirmed_at__gte=begin,
            confirmed_at__lt=finish,
        )
        .exclude(state=MachineReceipt.State.VOID)
        .values("machine_id")
        .annotate(n=Count("pk"), total=Sum("amount"))
        .order_by()
    )
    return {row["machine_id"]: (row["n"], row["total"]) for row in rows}


def locked_receipts(casino: Casino) -> QuerySet[MachineReceipt]:
    """Receipts and handpays locked after wrong check codes, for a supervisor to unlock: the oldest lock first."""
    return (
        MachineReceipt.objects.filter(casino=casino, code_locked_at__isnull=False)
        .exclude(state=MachineReceipt.State.VOID)
        .select_related("machine")
        .order_by("code_locked_at", "pk")
    )


def pending_holds(casino: Casino, now: dt.datetime | None = None) -> QuerySet[HoldCase]:
    """Held tickets awaiting a decision, the overdue first, then by due day.

    `deadline_state` is "breach" past the decision day, "due" on it (the last day), "" before, read from the
    decision day in the casino's time (casino rules §1.7).
    """
    today = timezone.localtime(now or timezone.now(), casino.zoneinfo).date()
    return (
        HoldCase.objects.filter(casino=casino, decision=HoldCase.Decision.PENDING)
        .select_related("ticket", "opened_by")
        .annotate(
            overdue_first=Case(
                When(Q(overdue_since__isnull=False) | Q(decision_due__lt=today), then=Value(0)),
                default=Value(1),
                output_field=IntegerField(),
            ),
            deadline_state=Case(
                When(decision_due__lt=today, then=Value("breach")),
                When(decision_due=today, then=Value("due")),
                default=Value(""),
                output_field=CharField(),
            ),
        )
        .order_by("overdue_first", "decision_due", "id")
    )


def transfers_to_approve(casino: Casino) -> QuerySet[Transfer]:
    return (
        Transfer.objects.filter(shift__desk__casino=casino, transaction__isnull=True, shift__closed_at__isnull=True)
        .select_related("shift__desk", "requested_by")
        .prefetch_related("lines")
    )


def counts_to_approve(casino: Casino) -> list[dict[str, Any]]:
    """Counts waiting for a supervisor, each with its differences per item (and the incoming count of a hand-over);
    and hand-overs still waiting for the incoming cashier's count, which a supervisor may only reject."""
    rows = []
    waiting = CountRequest.objects.filter(casino=casino, status__in=CountRequest.OPEN).select_related(
        "desk", "counted_by", "next_cashier", "asked_by"
    )
    for request in waiting:
        lines = []
        for item in ALL_ITEMS:
            expected = Decimal(request.expected.get(item, "0"))
            counted = Decimal(request.counted.get(item, "0"))
            incoming = Decimal(request.next_counted.get(item, "0")) if request.next_counted else None
            if counted != expected or (incoming is not None and incoming != counted):
                lines.append(
                    {"label": Item(item).label, "expected": expected, "counted": counted, "incoming": incoming}
                )
        rows.append(
            {
                "request": request,
                "lines": lines,
                "counts_differ": request.next_counted not in (None, request.counted),
                "approvable": request.status == CountRequest.Status.WAITING,
            }
        )
    return rows


def handovers_to_count(casino: Casino, cashier: User) -> QuerySet[CountRequest]:
    return CountRequest.objects.filter(
        casino=casino, next_cashier=cashier, status=CountRequest.Status.COUNTING
    ).select_related("desk", "counted_by")


def reversals_to_approve(casino: Casino) -> QuerySet[ReversalRequest]:
    return ReversalRequest.objects.filter(original__casino=casino, reversal__isnull=True).select_related(
        "original", "requested_by"
    )


def open_shifts(casino: Casino) -> QuerySet[Shift]:
    return Shift.objects.filter(desk__casino=casino, closed_at__isnull=True).select_related("desk", "cashier")


def counts_blind(shift: Shift, user: User) -> bool:
    """Whether `user` is this open shift's cashier in a casino that counts blind: then nothing shown to them
    tells what the desk should hold (the side panel, the X report) until the closing count."""
    return shift.closed_at is None and shift.cashier_id == user.pk and shift.desk.casino.blind_count


def _slips_waiting(**where: Any) -> list[TableSlip]:
    return list(
        TableSlip.objects.filter(confirmed_at__isnull=True, voided_at__isnull=True, **where)
        .select_related("table", "issued_by")
        .order_by("number")
    )


def slips_at_cage(cage: Place) -> list[TableSlip]:
    """The tables' fill and credit slips at a desk that are not yet posted or voided (issue 24)."""
    return _slips_waiting(cage=cage)


def slips_at_vault(casino: Casino) -> list[TableSlip]:
    return _slips_waiting(cage__casino=casino, cage__kind=Place.Kind.VAULT)


def slip_voids_to_approve(casino: Casino) -> list[TableSlip]:
    return list(
        TableSlip.objects.filter(casino=casino, void_asked_by__isnull=False, voided_at__isnull=True)
        .select_related("table", "void_asked_by")
        .order_by("number")
    )

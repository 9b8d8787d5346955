"""Alerts: linked-day totals, self-excluded payouts, structuring."""

import datetime as dt
from decimal import Decimal
from typing import Any

from django.contrib.auth.models import User
from django.db import IntegrityError, connection, transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from casino_office.vocabulary import TICKET_CASH_PAYOUT_KINDS
from compliance.history import operation_history
from compliance.models import (
    Alert,
)
from compliance.services.base import PAYOUT_KINDS, PURCHASE_KINDS, STRUCTURING_KINDS, PersonError
from compliance.services.identification import Identification
from compliance.services.register import CashOperation

# The first key of the transaction-scoped advisory lock under which one casino's operations are checked for
# structuring across its desks and kiosks (the second is the casino's id).
_STRUCTURING_LOCK_CLASS = 210_021


def alert_raise(**fields: Any) -> Alert | None:
    try:
        with transaction.atomic():
            return Alert.objects.create(created_at=timezone.now(), **fields)
    except IntegrityError:
        return None  # this person's day already has the alert


def alerts_evaluate(*, operation: CashOperation, identification: Identification | None) -> list[Alert]:
    """Linked-day totals, self-excluded payouts and structuring; inside the money's transaction.

    The desk's other transactions are read through the operation history the
    desk provides (compliance never imports the desk).
    """
    casino = operation.casino
    raised: list[Alert | None] = []
    if identification is not None:
        raised += _person_alerts(operation=operation, identification=identification)
    low = (casino.identity_threshold * casino.structuring_ratio).quantize(Decimal("0.01"))
    just_under = low <= operation.amount <= casino.identity_threshold
    if operation.kind in PURCHASE_KINDS | PAYOUT_KINDS and just_under:
        raised += [_structuring_at_the_desk(operation=operation, low=low)]
        machine_id = operation.ticket_machine_id if operation.kind in TICKET_CASH_PAYOUT_KINDS else None
        if machine_id is not None:
            raised += [_structuring_at_the_machine(operation=operation, machine_id=machine_id, low=low)]
    if identification is None and operation.kind in STRUCTURING_KINDS and just_under:
        raised += [_structuring_across_desks(operation=operation, low=low)]
    return [alert for alert in raised if alert is not None]


def _person_alerts(*, operation: CashOperation, identification: Identification) -> list[Alert | None]:
    """The person's linked-day total against the due-diligence and FCIS thresholds; a payout to a self-excluded
    person."""
    casino = operation.casino
    day = casino.gaming_day(operation.at)
    begin, finish = casino.gaming_day_bounds(day)
    person = identification.person
    total = operation_history().person_total(casino=casino, person_id=person.pk, since=begin, until=finish)
    raised = [
        alert_raise(
            casino=casino,
            kind=kind,
            person=person,
            gaming_day=day,
            amount=total,
            details={"transaction": operation.transaction_id, "threshold": str(threshold)},
        )
        for kind, threshold in (
            (Alert.Kind.DUE_DILIGENCE, casino.due_diligence_threshold),
            (Alert.Kind.FCIS_REPORT, casino.fcis_report_threshold),
        )
        if total >= threshold
    ]
    if identification.self_excluded and operation.kind in PAYOUT_KINDS:
        raised.append(
            alert_raise(
                casino=casino,
                kind=Alert.Kind.SELF_EXCLUDED_PAYOUT,
                person=person,
                gaming_day=day,
                amount=operation.amount,
                desk_id=operation.desk_id,
                details={"transaction": operation.transaction_id},
            )
        )
    return raised


def _structuring_at_the_desk(*, operation: CashOperation, low: Decimal) -> Alert | None:
    """Several transactions just under the threshold at one desk within the window (one alert per window)."""
    casino = operation.casino
    window = dt.timedelta(minutes=casino.structuring_window_minutes)
    near = operation_history().desk_amounts(
        desk_id=operation.desk_id,
        low=low,
        high=casino.identity_threshold,
        since=operation.at - window,
        until=operation.at,
    )
    recent_alert = Alert.objects.filter(
        kind=Alert.Kind.STRUCTURING_DESK, desk_id=operation.desk_id, created_at__gt=timezone.now() - window
    ).exists()
    if len(near) < casino.structuring_count or recent_alert:
        return None
    return alert_raise(
        casino=casino,
        kind=Alert.Kind.STRUCTURING_DESK,
        desk_id=operation.desk_id,
        gaming_day=casino.gaming_day(operation.at),
        amount=sum((amount for _pk, amount in near), Decimal("0")),
        details={"transactions": sorted(pk for pk, _amount in near)},
    )


def _structuring_at_the_machine(*, operation: CashOperation, machine_id: int, low: Decimal) -> Alert | None:
    """Tickets of one machine cashed just under the threshold within the machine's window (one alert per window)."""
    casino = operation.casino
    window = dt.timedelta(hours=casino.machine_structuring_window_hours)
    cashed = operation_history().machine_ticket_amounts(
        casino=casino,
        machine_id=machine_id,
        low=low,
        high=casino.identity_threshold,
        since=operation.at - window,
        until=operation.at,
    )
    recent_alert = Alert.objects.filter(
        kind=Alert.Kind.STRUCTURING_MACHINE, machine_id=machine_id, created_at__gt=timezone.now() - window
    ).exists()
    if len(cashed) < casino.structuring_count or recent_alert:
        return None
    return alert_raise(
        casino=casino,
        kind=Alert.Kind.STRUCTURING_MACHINE,
        machine_id=machine_id,
        gaming_day=casino.gaming_day(operation.at),
        amount=sum((amount for _pk, amount in cashed), Decimal("0")),
        details={"transactions": sorted(pk for pk, _amount in cashed)},
    )


def _structuring_across_desks(*, operation: CashOperation, low: Decimal) -> Alert | None:
    """Unidentified operations just under the threshold at the casino's desks and kiosks whose sum in the window
    passes the threshold (issue 21): one alert per window, listing the operations; a later one joins it.
    """
    casino = operation.casino
    window = dt.timedelta(minutes=casino.structuring_window_minutes)
    if connection.vendor == "postgresql":
        # Two desks at once would each miss the other's uncommitted operation: one casino's checks take turns,
        # and each then reads the other's committed one.
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", [_STRUCTURING_LOCK_CLASS, casino.pk])
    # Up to now, not to this operation's moment: another desk's operation stamped a moment later may have
    # committed while this one waited for the lock, and the two are in one window all the same.
    near = operation_history().casino_unidentified_operations(
        casino=casino,
        low=low,
        high=casino.identity_threshold,
        since=operation.at - window,
        until=max(operation.at, timezone.now()),
    )
    total = sum((row["amount"] for row in near), Decimal("0"))
    if len(near) < 2 or total <= casino.identity_threshold:
        return None
    current = (
        Alert.objects.select_for_update()
        .filter(casino=casino, kind=Alert.Kind.STRUCTURING_CASINO, created_at__gt=operation.at - window)
        .exclude(status=Alert.Status.CLOSED)
        .order_by("-created_at", "-pk")
        .first()
    )
    if current is None:
        return alert_raise(
            casino=casino,
            kind=Alert.Kind.STRUCTURING_CASINO,
            gaming_day=casino.gaming_day(operation.at),
            amount=total,
            details={
                "transactions": [row["transaction"] for row in near],
                "operations": [_listed(row) for row in near],
                "threshold": str(casino.identity_threshold),
                "window_minutes": casino.structuring_window_minutes,
            },
        )
    listed = set(current.details.get("transactions", []))
    joining = [row for row in near if row["transaction"] not in listed]
    if joining:
        details = {
            **current.details,
            "transactions": [*current.details.get("transactions", []), *(row["transaction"] for row in joining)],
            "operations": [*current.details.get("operations", []), *(_listed(row) for row in joining)],
        }
        amount = (current.amount or Decimal("0")) + sum((row["amount"] for row in joining), Decimal("0"))
        Alert.objects.filter(pk=current.pk).update(details=details, amount=amount)
    return None


def _listed(row: dict[str, Any]) -> dict[str, str | int]:
    """One operation as the alert lists it (JSON): what, where, when, how much."""
    return {
        "transaction": row["transaction"],
        "receipt": row["receipt"],
        "kind": row["kind"],
        "where": row["where"],
        "at": row["at"].isoformat(),
        "amount": str(row["amount"]),
    }


def alert_review(*, alert: Alert, user: User) -> Alert:
    if not user.has_perm("compliance.manage_alerts"):
        raise PersonError(_("Only compliance officers handle alerts."))
    updated = Alert.objects.filter(pk=alert.pk, status=Alert.Status.OPEN).update(
        status=Alert.Status.IN_REVIEW, handled_by=user
    )
    if not updated:
        raise PersonError(_("Only an open alert can be taken into review."))
    return Alert.objects.get(pk=alert.pk)


def alert_close(*, alert: Alert, user: User, note: str) -> Alert:
    if not user.has_perm("compliance.manage_alerts"):
        raise PersonError(_("Only compliance officers handle alerts."))
    if not note.strip():
        raise PersonError(_("Close an alert with a note on what was done."))
    updated = (
        Alert.objects.filter(pk=alert.pk)
        .exclude(status=Alert.Status.CLOSED)
        .update(status=Alert.Status.CLOSED, handled_by=user, note=note.strip(), closed_at=timezone.now())
    )
    if not updated:
        raise PersonError(_("This alert is already closed."))
    return Alert.objects.get(pk=alert.pk)

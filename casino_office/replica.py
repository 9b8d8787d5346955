"""How far the reports' read replica is behind the primary (settings.REPORTS_DATABASE).

Reports and the dashboard read a streaming replica when one is named; what they show is then as old as the
replica's last replayed transaction. Every such page says so, and the health probe reports it (ops/health.py).

A replica is caught up when it has replayed everything the primary has written (the primary's current WAL
position). Otherwise it is behind by the time since the last transaction it replayed was committed on the
primary: an idle primary does not make a caught-up replica look late.
"""

import datetime as dt
from dataclasses import dataclass

from django.conf import settings
from django.db import DatabaseError, connections


@dataclass(frozen=True)
class ReplicaState:
    caught_up: bool
    behind_seconds: float | None  # None: caught up, or behind by an unknown time (nothing replayed since it started)
    as_of: dt.datetime | None  # the commit time on the primary of the last transaction the replica replayed


def reports_replica() -> ReplicaState | None:
    """The replica's state, or None when reports read the primary itself. Raises DatabaseError if either is down."""
    alias = str(settings.REPORTS_DATABASE)
    if alias == "default":
        return None
    with connections["default"].cursor() as cursor:
        cursor.execute("SELECT pg_current_wal_lsn()::text")
        (written,) = cursor.fetchone()
    with connections[alias].cursor() as cursor:
        cursor.execute(
            "SELECT NOT pg_is_in_recovery() OR pg_last_wal_replay_lsn() >= %s::pg_lsn,"
            " pg_last_xact_replay_timestamp(), now()",
            [written],
        )
        caught_up, replayed_at, now = cursor.fetchone()
    if caught_up:
        return ReplicaState(True, None, replayed_at)
    behind = None if replayed_at is None else max(0.0, (now - replayed_at).total_seconds())
    return ReplicaState(False, behind, replayed_at)


def replica_notice() -> ReplicaState | None:
    """reports_replica() for a page: None when no replica is named; a replica that cannot be read is behind by an
    unknown time (the page itself fails on its first read of it)."""
    try:
        return reports_replica()
    except DatabaseError:
        return ReplicaState(False, None, None)

"""The reports' read replica (settings.REPORTS_DATABASE): where reports read, and how far behind the primary it is.

Reports and the dashboard read a streaming replica when one is named; what they show is then as old as the
replica's last replayed transaction. Every such page says so, and the health probe reports it (ops/health.py).

A replica is up to date when it has replayed everything the primary has written (the primary's current WAL
position), or when the last transaction it replayed was committed on the primary under UP_TO_DATE_SECONDS ago (at
the peak the primary writes without pause and the replica replays a few milliseconds behind). Otherwise it is
behind by the time since that transaction was committed. After a quiet spell on the primary this overstates, for
the moment it takes the replica to replay the first new transaction, by at most the quiet spell; the beat's
heartbeat commits every HEARTBEAT_SECONDS (60 s), far under the probe's limit (HEALTH_MAX_REPLICA_LAG, 300 s).

A replica that cannot be reached is left aside for RETRY_SECONDS: reports read the primary meanwhile, and say so.
"""

import datetime as dt
import logging
import time
from dataclasses import dataclass

from django.conf import settings
from django.db import DatabaseError, connections

logger = logging.getLogger(__name__)

UP_TO_DATE_SECONDS = 2.0
RETRY_SECONDS = 30.0
_unreachable_until = 0.0  # per process: while the replica was found down, reports read the primary


@dataclass(frozen=True)
class ReplicaState:
    caught_up: bool
    behind_seconds: float | None  # None: up to date, or behind by a time not known
    as_of: dt.datetime | None  # the commit time on the primary of the last transaction the replica replayed
    problem: str = ""  # "unreachable": reports read the primary; "not_a_replica": the database was promoted


def reports_alias() -> str:
    """The database alias reports read: the replica when one is named and it answers, else the primary."""
    global _unreachable_until
    alias = str(settings.REPORTS_DATABASE)
    if alias == "default" or time.monotonic() < _unreachable_until:
        return "default"
    replica = connections[alias]
    try:
        # Once a request (CONN_HEALTH_CHECKS): a kept connection whose server went away is closed, and made again.
        replica.close_if_health_check_failed()
        replica.ensure_connection()
    except DatabaseError as error:
        logger.warning("reports' replica unreachable, reports read the primary for %.0f s: %s", RETRY_SECONDS, error)
        _unreachable_until = time.monotonic() + RETRY_SECONDS
        return "default"
    return alias


def reports_replica() -> ReplicaState | None:
    """The replica's state, or None when reports read the primary by configuration. Raises DatabaseError when the
    replica cannot be read (the health probe's answer); a page asks replica_notice()."""
    alias = str(settings.REPORTS_DATABASE)
    if alias == "default":
        return None
    with connections["default"].cursor() as cursor:
        cursor.execute("SELECT pg_current_wal_lsn()::text")
        (written,) = cursor.fetchone()
    with connections[alias].cursor() as cursor:
        cursor.execute(
            "SELECT pg_is_in_recovery(), pg_last_wal_replay_lsn() >= %s::pg_lsn,"
            " pg_last_xact_replay_timestamp(), now()",
            [written],
        )
        in_recovery, replayed_all, replayed_at, now = cursor.fetchone()
    if not in_recovery:
        return ReplicaState(False, None, None, problem="not_a_replica")
    behind = None if replayed_at is None else max(0.0, (now - replayed_at).total_seconds())
    if replayed_all or (behind is not None and behind < UP_TO_DATE_SECONDS):
        return ReplicaState(True, None, replayed_at)
    return ReplicaState(False, behind, replayed_at)


def replica_notice() -> ReplicaState | None:
    """reports_replica() for a page that read through reports_alias(): None when no replica is named."""
    if str(settings.REPORTS_DATABASE) == "default":
        return None
    if reports_alias() == "default":
        return ReplicaState(False, None, None, problem="unreachable")
    try:
        return reports_replica()
    except DatabaseError as error:
        logger.warning("reports' replica: its state could not be read: %s", error)
        return ReplicaState(False, None, None, problem="unreachable")

"""What /health/ checks: the database, the broker (and the length of the work queue), the scheduler, the books' last
verification and the reports' replica.

The probe is open without login, so a failure is named by its kind only; the
full error goes to the log.
"""

import logging
import time
from dataclasses import asdict, dataclass, field
from typing import Any

from django.apps import apps
from django.conf import settings
from django.db import DatabaseError, connection
from django.utils import timezone

from casino_office.replica import reports_replica
from ops.models import Heartbeat
from ops.tasks import BEAT

logger = logging.getLogger(__name__)


@dataclass
class Check:
    ok: bool
    detail: str = ""
    data: dict[str, Any] = field(default_factory=dict)


def check_database() -> Check:
    started = time.perf_counter()
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except DatabaseError as error:
        logger.warning("health: database check failed: %s", error)
        return Check(False, type(error).__name__)
    return Check(True, data={"ms": round((time.perf_counter() - started) * 1000, 1)})


def queue_lengths(queues: list[str]) -> dict[str, int]:
    """Messages waiting in each queue on the broker (raises if the broker cannot be reached)."""
    from kombu.exceptions import ChannelError

    from casino_office.celery import app

    lengths: dict[str, int] = {}
    with app.connection_for_write(settings.CELERY_BROKER_URL) as conn:
        conn.ensure_connection(max_retries=1, timeout=settings.HEALTH_BROKER_TIMEOUT)
        channel = conn.default_channel
        for queue in queues:
            try:
                _name, count, _consumers = channel.queue_declare(queue=queue, passive=True)
            except ChannelError:  # a queue nobody has sent to yet does not exist: nothing waits
                count = 0
            lengths[queue] = int(count)
    return lengths


def check_broker() -> Check:
    try:
        lengths = queue_lengths(settings.HEALTH_QUEUES)
    except Exception as error:  # any failure to reach the broker is the answer
        logger.warning("health: broker check failed: %s", error)
        return Check(False, type(error).__name__)
    longest = max(lengths.values(), default=0)
    ok = longest <= settings.HEALTH_MAX_QUEUE_LENGTH
    detail = "" if ok else f"queue longer than {settings.HEALTH_MAX_QUEUE_LENGTH}: workers are behind or down"
    return Check(ok, detail, {"queues": lengths})


def check_beat() -> Check:
    try:
        beat = Heartbeat.objects.filter(name=BEAT).first()
    except DatabaseError as error:
        return Check(False, type(error).__name__)
    if beat is None:
        return Check(False, "no heartbeat yet: is celery beat running (and a worker)?")
    age = (timezone.now() - beat.at).total_seconds()
    ok = age <= settings.HEALTH_MAX_HEARTBEAT_AGE
    detail = "" if ok else f"last heartbeat {age:.0f} s ago: beat or the workers stopped"
    return Check(ok, detail, {"last": beat.at.isoformat(), "age_seconds": round(age)})


def check_books() -> Check:
    """The last daily verification of each casino's books: intact, and recent enough (machines.verification).

    ops imports no domain app (pyproject's contracts): the probe reads the runs' table through the app registry.
    """
    verifications = apps.get_model("machines", "BooksVerification")
    try:
        casinos = verifications.objects.order_by().values_list("casino_id", flat=True).distinct()
        found = (verifications.objects.filter(casino_id=casino).select_related("casino").first() for casino in casinos)
        runs = [run for run in found if run is not None]
    except DatabaseError as error:
        return Check(False, type(error).__name__)
    if not runs:
        return Check(True, "not verified yet", {"last": None})
    now = timezone.now()
    broken = [run.casino.code for run in runs if not run.intact]
    stale = [run.casino.code for run in runs if (now - run.started_at).total_seconds() > settings.HEALTH_MAX_BOOKS_AGE]
    runs.sort(key=lambda run: run.casino.code)
    hours = settings.HEALTH_MAX_BOOKS_AGE // 3600
    problems = [f"{code}: the books' verification found a broken record" for code in broken]
    problems += [f"{code}: the books were last verified over {hours} h ago" for code in stale]
    detail = "; ".join(problems)
    last = {run.casino.code: {"at": run.started_at.isoformat(), "intact": run.intact} for run in runs}
    return Check(not broken and not stale, detail, {"last": last})


def check_replica() -> Check:
    """The reports' read replica, when one is named: reachable, and not further behind than the limit."""
    try:
        state = reports_replica()
    except DatabaseError as error:
        logger.warning("health: replica check failed: %s", error)
        return Check(False, type(error).__name__)
    if state is None:
        return Check(True, "no replica named: reports read the primary")
    if state.problem == "not_a_replica":
        return Check(False, "the reports' database is not a replica (promoted?): reports may not be the primary's")
    limit = settings.HEALTH_MAX_REPLICA_LAG
    if state.caught_up:
        return Check(True, data={"behind_seconds": 0})
    if state.behind_seconds is None:
        return Check(False, "the replica has replayed nothing since it started", {"behind_seconds": None})
    ok = state.behind_seconds <= limit
    detail = "" if ok else f"the reports' replica is over {limit} s behind the primary"
    return Check(ok, detail, {"behind_seconds": round(state.behind_seconds, 1)})


CHECKS = {
    "database": check_database,
    "broker": check_broker,
    "beat": check_beat,
    "books": check_books,
    "replica": check_replica,
}


def report(names: list[str] | None = None) -> dict[str, Any]:
    """The named checks (all by default), run in that order."""
    checks = {name: CHECKS[name]() for name in names or CHECKS}
    return {
        "status": "ok" if all(check.ok for check in checks.values()) else "fail",
        "checks": {name: asdict(check) for name, check in checks.items()},
    }

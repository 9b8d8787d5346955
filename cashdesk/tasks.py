import logging

from celery import shared_task

from cashdesk.dashboard import snapshot_liability as liability_snapshot
from cashdesk.services import holds_mark_overdue
from machines.models import Casino

logger = logging.getLogger(__name__)


@shared_task(name="cashdesk.mark_overdue_holds")
def mark_overdue_holds() -> int:
    count = holds_mark_overdue()
    if count:
        logger.warning("%d held tickets passed their 14-day decision day", count)
    return count


@shared_task(name="cashdesk.snapshot_liability")
def snapshot_liability() -> int:
    """Store each casino's liability at the end of finished gaming days (the dashboard's trend reads them)."""
    return sum(liability_snapshot(casino) for casino in Casino.objects.all())

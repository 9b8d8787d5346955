import logging

from celery import shared_task

from cashdesk.services import holds_mark_overdue

logger = logging.getLogger(__name__)


@shared_task(name="cashdesk.mark_overdue_holds")
def mark_overdue_holds() -> int:
    count = holds_mark_overdue()
    if count:
        logger.warning("%d held tickets passed their 14-day decision day", count)
    return count

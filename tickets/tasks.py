import datetime as dt
import logging

from celery import shared_task
from django.conf import settings
from django.utils import timezone

from tickets.models import LookupFailure, MachineRequest
from tickets.reconciliation import reconcile_finished_days
from tickets.services import tickets_expire_due, tickets_report_stuck

logger = logging.getLogger(__name__)


@shared_task(name="tickets.expire_due_tickets")
def expire_due_tickets() -> int:
    count = tickets_expire_due()
    logger.info("expired %d tickets", count)
    return count


@shared_task(name="tickets.report_stuck_redemptions")
def report_stuck_redemptions() -> int:
    count = tickets_report_stuck()
    if count:
        logger.warning("%d redemptions are past their hold time and need a supervisor", count)
    return count


@shared_task(name="tickets.purge_request_records")
def purge_request_records() -> dict[str, int]:
    """Forget request_ids past their retention, and old lookup failures."""
    now = timezone.now()
    requests, _ = MachineRequest.objects.filter(
        created_at__lt=now - dt.timedelta(days=settings.IDEMPOTENCY_RETENTION_DAYS)
    ).delete()
    failures, _ = LookupFailure.objects.filter(
        created_at__lt=now - dt.timedelta(days=settings.LOOKUP_FAILURE_RETENTION_DAYS)
    ).delete()
    return {"requests": requests, "lookup_failures": failures}


@shared_task(name="tickets.reconcile_meters")
def reconcile_meters() -> int:
    """Each machine's last finished gaming day, meters against tickets; re-run hourly so late readings count."""
    stored = reconcile_finished_days()
    logger.info("reconciled %d machine days", stored)
    return stored

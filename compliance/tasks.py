import logging

from celery import shared_task

from compliance.services import persons_pseudonymise

logger = logging.getLogger(__name__)


@shared_task(name="compliance.pseudonymise_expired_persons")
def pseudonymise_expired_persons() -> int:
    count = persons_pseudonymise()
    logger.info("pseudonymised %d persons past the register's retention period", count)
    return count

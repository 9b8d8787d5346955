import logging
from pathlib import Path

from celery import shared_task
from django.conf import settings

from compliance.services import persons_pseudonymise
from compliance.services.anchors import register_anchor_all
from compliance.services.books import books_verification_daily

logger = logging.getLogger(__name__)


@shared_task(name="compliance.pseudonymise_expired_persons")
def pseudonymise_expired_persons() -> int:
    count = persons_pseudonymise()
    logger.info("pseudonymised %d persons past the register's retention period", count)
    return count


@shared_task(name="compliance.anchor_register")
def anchor_register() -> int:
    """The day's anchors; a register that no longer verifies is reported loudly and not anchored."""
    anchored, refused = register_anchor_all(directory=Path(settings.REGISTER_ANCHOR_DIR))
    written = sum(1 for each in anchored if each.written)
    logger.info("anchored the register of %d casinos in %s", written, settings.REGISTER_ANCHOR_DIR)
    for reason in refused:
        logger.error("register not anchored: %s", reason)
    return written


@shared_task(name="compliance.verify_books_daily")
def verify_books_daily(full: bool = False) -> int:
    """The chains since the last run (`full`: all of them) against the anchors, every casino; a broken record
    raises an alert. The number of casinos broken."""
    broken = books_verification_daily(anchor_dir=Path(settings.REGISTER_ANCHOR_DIR), full=full)
    for run in broken:
        logger.error("books verification: %s", run.finding)
    return len(broken)

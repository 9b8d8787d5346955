import logging
from pathlib import Path

from celery import shared_task
from django.conf import settings

from machines.anchors import books_anchor_all

logger = logging.getLogger(__name__)


@shared_task(name="machines.anchor_books")
def anchor_books() -> int:
    """Every casino's chain ends, signed, to REGISTER_ANCHOR_DIR every BOOKS_ANCHOR_MINUTES; a cut chain is reported."""
    written, refused = books_anchor_all(directory=Path(settings.REGISTER_ANCHOR_DIR))
    logger.info("anchored the books of %d casinos in %s", len(written), settings.REGISTER_ANCHOR_DIR)
    for reason in refused:
        logger.error("books not anchored: %s", reason)
    return len(written)

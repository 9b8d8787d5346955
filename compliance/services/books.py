"""The books' daily verification as compliance sees it: a run per casino, an alert on the first broken record."""

from pathlib import Path

from django.utils import timezone

from compliance.models import Alert
from compliance.services.alerts import alert_raise
from machines.models import BooksVerification, Casino
from machines.verification import books_verification_run


def books_verification_daily(*, anchor_dir: Path, full: bool = False) -> list[BooksVerification]:
    """Run every casino's verification (`full`: from each chain's first record); raise an alert for each that
    found a broken record. The broken runs."""
    broken = []
    for casino in Casino.objects.order_by("code"):
        run = books_verification_run(casino=casino, anchor_dir=anchor_dir, full=full)
        if run.intact:
            continue
        broken.append(run)
        alert_raise(
            casino=casino,
            kind=Alert.Kind.BOOKS_BROKEN,
            gaming_day=casino.gaming_day(timezone.now()),
            details={"finding": run.finding, "verification": run.pk},
        )
    return broken

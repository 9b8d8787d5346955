"""The daily verification of the books: each casino's chains walked on from where the last run ended, against the
anchors written since, with every check of what derives from them; each run recorded (machines.BooksVerification).

Compliance runs it every morning (compliance.tasks.verify_books_daily) and raises an alert on the first broken
record; the health probe reports the last run (ops.health).
"""

import datetime as dt
from pathlib import Path

from django.utils import timezone

from machines.anchors import AnchorError, anchors_check, anchors_read
from machines.chains import Finding, books_verify, chain_sources
from machines.models import BooksVerification, Casino

# Anchors a little older than the last run are checked again: one written while it ran is not missed.
_ANCHOR_OVERLAP = dt.timedelta(hours=1)


def _anchors(directory: Path, casino: Casino, after: dt.datetime | None) -> tuple[list[Finding], int]:
    try:
        anchors = [a for a in anchors_read(directory) if a.casino == casino.code]
    except AnchorError as error:
        return [Finding(casino.code, "anchors", str(error))], 0
    if after is not None:
        anchors = [a for a in anchors if a.at >= after - _ANCHOR_OVERLAP]
    return anchors_check(anchors, casino), len(anchors)


def books_verification_run(*, casino: Casino, anchor_dir: Path, full: bool = False) -> BooksVerification:
    """Verify the casino's books since the last intact run (all of them the first time, or `full`) and record it.

    A run walks each chain on from where the last intact run ended: a record verified once and edited later
    is found by the weekly full run (and by `verify_books`), not by the next daily one.
    """
    started = timezone.now()
    last = None if full else BooksVerification.objects.filter(casino=casino, finding="").first()
    ends = {source.name: source.end(casino) for source in chain_sources()}
    since = {name: (int(end[0]), str(end[1])) for name, end in last.ends.items()} if last else {}
    findings = books_verify(casino, since)
    anchor_findings, anchors = _anchors(anchor_dir, casino, last.started_at if last else None)
    findings.extend(anchor_findings)
    return BooksVerification.objects.create(
        casino=casino,
        started_at=started,
        finished_at=timezone.now(),
        ends={name: [sequence, mac] for name, (sequence, mac) in ends.items()},
        records=sum(sequence for sequence, _mac in ends.values()),
        anchors=anchors,
        finding=str(findings[0]) if findings else "",
    )

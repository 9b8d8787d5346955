"""The access log of personal data, and retention."""

import datetime as dt
import hashlib
from typing import Any

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from compliance.models import (
    AccessLogEntry,
    Bar,
    EntryRefusal,
    Person,
    PersonDocument,
    Visit,
)
from compliance.services.person_versions import person_version_record
from machines.models import Casino


def access_log_record(
    *,
    user: User,
    casino: Casino,
    action: str,
    what: str,
    purpose: str,
    ip_address: str | None = None,
    subject: dict[str, Any] | None = None,
) -> None:
    AccessLogEntry.objects.create(
        user=user,
        casino=casino,
        action=action,
        what=what[:255],
        subject=subject or {},
        purpose=purpose[:255] or "(none stated)",
        ip_address=ip_address,
    )


def identity_mismatch_record(*, user: User, casino: Casino, person_id: int) -> None:
    """A personal code or document typed at the desk named a stored person whose details differ (issue 21).

    Written after the refused transaction rolled back: the log keeps who tried which person, not what was typed.
    """
    access_log_record(
        user=user,
        casino=casino,
        action=AccessLogEntry.Action.SEARCH,
        what=f"identification mismatch: person {person_id}",
        purpose="identification at the cash desk",
        subject={"kind": "identity_mismatch", "person": person_id},
    )


def _pseudonymise(person: Person, now: dt.datetime) -> None:
    with transaction.atomic():
        Person.objects.filter(pk=person.pk, pseudonymised_at__isnull=True).update(
            given_names="—",
            surnames=f"PSEUDONYM-{hashlib.sha256(f'{person.pk}'.encode()).hexdigest()[:12]}",
            date_of_birth=dt.date(person.date_of_birth.year, 1, 1),
            personal_code_encrypted="",
            personal_code_index=None,
            document_number_encrypted="",
            document_number_index=None,
            document_expiry=None,
            address="",
            pseudonymised_at=now,
        )
        PersonDocument.objects.filter(person=person).update(document_number_encrypted="", document_expiry=None)
        person_version_record(person.pk, reason="pseudonymised")


def persons_pseudonymise(*, now: dt.datetime | None = None) -> int:
    """Pseudonymise persons once every record naming them is past its casino's retention.

    A register entry is kept for its casino's register retention; a visit or an entry refusal at the door (issue 26)
    for its casino's visit retention. Names, codes, documents (the previous ones too) and address go; the register's
    entries and their amounts stay, still chained (the hash covers no personal data), and so do the visits and
    refusals, naming a pseudonym. A person the casino bars (a bar in force) is kept. A person named by none of these
    (identified at a desk, every transaction at or under the threshold, never at the door) is pseudonymised once
    last seen longer ago than the longest register retention of any casino.
    """
    now = now or timezone.now()
    casinos = {casino.pk: casino for casino in Casino.objects.all()}
    done = 0
    # A bar in force keeps its person whatever the records' age: pseudonymised, they would come back as a stranger.
    barred = Bar.objects.filter(lift__isnull=True).filter(Q(ends_on__isnull=True) | Q(ends_on__gte=now.date()))
    kept = Person.objects.exclude(pk__in=barred.values("person_id"))
    named = (
        kept.filter(pseudonymised_at__isnull=True)
        .filter(Q(register_entries__isnull=False) | Q(visits__isnull=False) | Q(entry_refusals__isnull=False))
        .distinct()
    )
    for person in named.iterator():
        if not _still_kept(person, casinos, now):
            _pseudonymise(person, now)
            done += 1
    longest = max((casino.register_retention_years for casino in casinos.values()), default=None)
    if longest is not None:
        cutoff = _years_before(now, longest)
        unnamed = kept.filter(
            pseudonymised_at__isnull=True,
            register_entries__isnull=True,
            visits__isnull=True,
            entry_refusals__isnull=True,
        ).filter(Q(last_seen_at__lt=cutoff) | Q(last_seen_at__isnull=True, created_at__lt=cutoff))
        for person in unnamed.iterator():
            _pseudonymise(person, now)
            done += 1
    return done


def _still_kept(person: Person, casinos: dict[int, Casino], now: dt.datetime) -> bool:
    """Whether a record naming the person is still within its casino's retention."""
    entries = person.register_entries.values_list("casino_id", "created_at")
    if any(at > _years_before(now, casinos[casino].register_retention_years) for casino, at in entries):
        return True
    door = [
        *Visit.objects.filter(person=person).values_list("casino_id", "admitted_at"),
        *EntryRefusal.objects.filter(person=person).values_list("casino_id", "refused_at"),
    ]
    return any(at > _years_before(now, casinos[casino].visit_retention_years) for casino, at in door)


def _years_before(moment: dt.datetime, years: int) -> dt.datetime:
    try:
        return moment.replace(year=moment.year - years)
    except ValueError:  # 29 February
        return moment.replace(year=moment.year - years, day=28)

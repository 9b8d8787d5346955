"""A person's versions: every change of a person's stored data is a new chained version (compliance.PersonVersion).

`person_version_record` is called by whatever writes a person's row (identification, a new document,
pseudonymisation, a key rotation), in the same transaction; `persons_check` (one of the books' checks) finds a
row that is not its last version: changed by someone who could not write a version (a database superuser).
"""

import datetime as dt
import json
from collections.abc import Iterable, Iterator
from typing import Any

from django.db import connection
from django.db.models import F
from django.utils import timezone

from compliance.models import Person, PersonVersion, RegisterEntry
from machines.chains import Finding, chain_and_save
from machines.models import Casino

# Not the person's data: when the row was made and when the person was last seen (moves with every visit).
_NOT_VERSIONED = frozenset({"id", "created_at", "last_seen_at"})


def _columns() -> list[str]:
    return [str(field.column) for field in Person._meta.concrete_fields if field.attname not in _NOT_VERSIONED]


def _canonical(value: Any) -> Any:
    if isinstance(value, dt.datetime):
        return value.astimezone(dt.UTC).isoformat(timespec="microseconds")
    if isinstance(value, dt.date):
        return value.isoformat()
    return value


def persons_stored(person_ids: Iterable[int] | None = None) -> Iterator[tuple[int, str]]:
    """Each person's stored columns as stored (tokens and digests, never decrypted), as canonical JSON."""
    columns = _columns()
    quoted = ", ".join(connection.ops.quote_name(column) for column in columns)
    sql = f"SELECT {connection.ops.quote_name('id')}, {quoted} FROM {Person._meta.db_table}"  # noqa: S608 - names
    params: list[Any] = []
    if person_ids is not None:
        ids = list(person_ids)
        sql += f" WHERE id IN ({', '.join(['%s'] * len(ids))})"
        params = ids
    with connection.cursor() as cursor:
        cursor.execute(sql + " ORDER BY id", params)
        for row in cursor.fetchall():
            content = {column: _canonical(value) for column, value in zip(columns, row[1:], strict=True)}
            yield row[0], json.dumps(content, sort_keys=True, separators=(",", ":"))


def person_version_record(person: Person | int, *, reason: str, casino: Casino | None = None) -> PersonVersion | None:
    """The person's row as a new version, if it differs from the last one; the last version otherwise.

    In the chain of `casino` (where it was written); a job's version (pseudonymisation, key rotation) goes where
    the person's last version is.
    """
    person_id = person if isinstance(person, int) else person.pk
    content = dict(persons_stored([person_id]))[person_id]
    last = PersonVersion.objects.filter(person_id=person_id).order_by("-version").first()
    if last is not None and last.content == content:
        return last
    casino_id = casino.pk if casino is not None else last.casino_id if last is not None else _first_casino()
    if casino_id is None:
        return None  # no casino yet, so no chain: the first identification at a desk writes the version
    version = PersonVersion(
        person_id=person_id,
        casino_id=casino_id,
        version=last.version + 1 if last is not None else 1,
        content=content,
        reason=reason,
        written_at=timezone.now(),
    )
    chain_and_save(version, casino_id=casino_id)
    return version


def _first_casino() -> int | None:
    return Casino.objects.order_by("pk").values_list("pk", flat=True).first()


def person_version_last(person_id: int) -> int | None:
    return PersonVersion.objects.filter(person_id=person_id).order_by("-version").values_list("pk", flat=True).first()


def persons_check(casino: Casino) -> list[Finding]:
    """Each person whose last version is in this casino's chain is stored as that version says; a person with no
    version at all is named by the first casino's check; a register entry names a version of its own person."""
    last: dict[int, tuple[int, int, str]] = {}
    for person_id, casino_id, number, content in PersonVersion.objects.order_by("person_id", "version").values_list(
        "person_id", "casino_id", "version", "content"
    ):
        last[person_id] = (casino_id, number, content)
    first = casino.pk == _first_casino()
    findings = []
    for person_id, stored in persons_stored():
        version = last.get(person_id)
        if version is None:
            if first:
                findings.append(Finding(casino.code, f"person {person_id}", "it has no version (written unseen)"))
        elif version[0] == casino.pk and version[2] != stored:
            findings.append(
                Finding(
                    casino.code,
                    f"person {person_id}",
                    f"its stored data is not its version {version[1]} (changed without a new version)",
                )
            )
    strays = RegisterEntry.objects.filter(casino=casino, person_version__isnull=False).exclude(
        person_version__person_id=F("person_id")
    )
    findings.extend(
        Finding(casino.code, f"register entry {entry}", "it names a version of another person")
        for entry in strays.values_list("sequence", flat=True)
    )
    return findings

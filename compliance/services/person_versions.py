"""A person's versions: every change of a person's stored data is a new chained version (compliance.PersonVersion).

`person_version_record` is called by whatever writes a person's row (identification, a new document,
pseudonymisation, a key rotation), in the same transaction; `persons_check` (one of the books' checks) finds a
row that is not its last version: changed by someone who could not write a version (a database superuser).
"""

import datetime as dt
import hashlib
import json
from collections.abc import Iterable, Iterator
from typing import Any

from django.db import connection, models
from django.db.models import F
from django.utils import timezone

from compliance.models import Person, PersonDocument, PersonVersion, RegisterEntry
from machines.chains import Finding, chain_and_save
from machines.models import Casino

# Not the person's data: when the row was made and when the person was last seen (moves with every visit).
_NOT_VERSIONED = frozenset({"id", "created_at", "last_seen_at"})


def _columns(model: type[models.Model], skip: frozenset[str]) -> list[str]:
    return [str(field.column) for field in model._meta.concrete_fields if field.attname not in skip]


def _canonical(value: Any) -> Any:
    if isinstance(value, dt.datetime):
        return value.astimezone(dt.UTC).isoformat(timespec="microseconds")
    if isinstance(value, dt.date):
        return value.isoformat()
    return value


def _rows(model: type[models.Model], columns: list[str], key: str, ids: list[int] | None) -> list[tuple[Any, ...]]:
    """The columns as stored (never through the encrypted fields, which would decrypt), with `key` first."""
    quote = connection.ops.quote_name
    selected = ", ".join(quote(column) for column in (key, *columns))
    sql = f"SELECT {selected} FROM {quote(model._meta.db_table)}"  # noqa: S608 - the model's own names, quoted
    params: list[Any] = []
    if ids is not None:
        sql += f" WHERE {quote(key)} IN ({', '.join(['%s'] * len(ids))})"
        params = ids
    with connection.cursor() as cursor:
        cursor.execute(sql + f" ORDER BY {quote(key)}, 2", params)
        return list(cursor.fetchall())


def persons_stored(person_ids: Iterable[int] | None = None) -> Iterator[tuple[int, str]]:
    """Each person's digest: SHA-256 of the stored columns and the replaced documents, as stored."""
    ids = None if person_ids is None else list(person_ids)
    columns = _columns(Person, _NOT_VERSIONED)
    document_columns = ["id", *_columns(PersonDocument, frozenset({"id", "person_id"}))]
    documents: dict[int, list[dict[str, Any]]] = {}
    for person_id, *values in _rows(PersonDocument, document_columns, "person_id", ids):
        documents.setdefault(person_id, []).append(
            {column: _canonical(value) for column, value in zip(document_columns, values, strict=True)}
        )
    for person_id, *values in _rows(Person, columns, "id", ids):
        stored = {column: _canonical(value) for column, value in zip(columns, values, strict=True)}
        text = json.dumps({"person": stored, "documents": documents.get(person_id, [])}, sort_keys=True)
        yield person_id, hashlib.sha256(text.encode()).hexdigest()


def person_version_record(person: Person | int, *, reason: str, casino: Casino | None = None) -> PersonVersion | None:
    """The person's row as a new version, if it differs from the last one; the last version otherwise.

    In the chain of `casino` (where it was written); a job's version (pseudonymisation, key rotation) goes where
    the person's last version is.
    """
    person_id = person if isinstance(person, int) else person.pk
    digest = dict(persons_stored([person_id]))[person_id]
    last = PersonVersion.objects.filter(person_id=person_id).order_by("-version").first()
    if last is not None and last.digest == digest:
        return last
    casino_id = casino.pk if casino is not None else last.casino_id if last is not None else _first_casino()
    if casino_id is None:
        return None  # no casino yet, so no chain: the first identification at a desk writes the version
    version = PersonVersion(
        person_id=person_id,
        casino_id=casino_id,
        version=last.version + 1 if last is not None else 1,
        digest=digest,
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
    """Each person whose last version is in this casino's chain is stored as that version says, and still there;
    a person with no version at all is named by the first casino's check; a register entry names a version of
    its own person."""
    last: dict[int, tuple[int, int, str]] = {}
    for person_id, casino_id, number, digest in PersonVersion.objects.order_by("person_id", "version").values_list(
        "person_id", "casino_id", "version", "digest"
    ):
        last[person_id] = (casino_id, number, digest)
    first = casino.pk == _first_casino()
    findings = []
    stored_ids = set()
    for person_id, stored in persons_stored():
        stored_ids.add(person_id)
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
    findings.extend(
        Finding(casino.code, f"person {person_id}", f"it is gone, its version {version[1]} is not (deleted unseen)")
        for person_id, version in sorted(last.items())
        if version[0] == casino.pk and person_id not in stored_ids
    )
    strays = RegisterEntry.objects.filter(casino=casino, person_version__isnull=False).exclude(
        person_version__person_id=F("person_id")
    )
    findings.extend(
        Finding(casino.code, f"register entry {entry}", "it names a version of another person")
        for entry in strays.values_list("sequence", flat=True)
    )
    return findings

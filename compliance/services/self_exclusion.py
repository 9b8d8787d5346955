"""The regulator's self-exclusion list: import and matching by blind index."""

import csv
import datetime as dt
import io

from django.contrib.auth.models import User
from django.db import transaction
from django.utils.translation import gettext as _
from stdnum.exceptions import ValidationError as StdnumError
from stdnum.lt import asmens

from compliance import crypto
from compliance.models import (
    Person,
    SelfExclusionEntry,
    SelfExclusionList,
)
from compliance.services.base import PersonError
from machines.models import Casino


def name_dob_index(given_names: str, surnames: str, date_of_birth: dt.date) -> str:
    """The entry's index of names and date of birth, diacritics left out: "Rūta Kazlauskienė" and a document's
    machine-readable "RUTA KAZLAUSKIENE" are one index (lists imported before this match by `name_dob_indexes`)."""
    names = f"{crypto.unmarked(given_names)}|{crypto.unmarked(surnames)}"
    return crypto.blind_index("name_dob", f"{names}|{date_of_birth.isoformat()}")


def name_dob_indexes(given_names: str, surnames: str, date_of_birth: dt.date) -> list[str]:
    """The indexes a person's names match: without diacritics, and as written (the entries of older imports)."""
    exact = crypto.blind_index("name_dob", f"{given_names}|{surnames}|{date_of_birth.isoformat()}")
    return [name_dob_index(given_names, surnames, date_of_birth), exact]


def self_exclusion_current(casino: Casino, day: dt.date) -> SelfExclusionList | None:
    return (
        SelfExclusionList.objects.filter(casino=casino, list_date__lte=day)
        .order_by("-list_date", "-imported_at")
        .first()
    )


def self_exclusion_match(person: Person, exclusion_list: SelfExclusionList | None) -> bool:
    if exclusion_list is None:
        return False
    entries = SelfExclusionEntry.objects.filter(exclusion_list=exclusion_list)
    by_name = entries.filter(name_index__in=name_dob_indexes(person.given_names, person.surnames, person.date_of_birth))
    if person.personal_code_index and entries.filter(personal_code_index=person.personal_code_index).exists():
        return True
    return by_name.exists()


def _entries(reader: "csv.DictReader[str]") -> list[SelfExclusionEntry]:
    fields = set(reader.fieldnames or [])
    if not ({"personal_code"} <= fields or {"given_names", "surnames", "date_of_birth"} <= fields):
        raise PersonError(_("Columns needed: personal_code, or given_names, surnames and date_of_birth."))
    entries: list[SelfExclusionEntry] = []
    for line, row in enumerate(reader, start=2):
        code = (row.get("personal_code") or "").strip()
        code_index = ""
        if code:
            try:
                code_index = crypto.blind_index("personal_code", asmens.validate(code))
            except StdnumError:
                raise PersonError(_("Line %(line)s: the personal code is not valid.") % {"line": line}) from None
        name_index = ""
        names = [(row.get(key) or "").strip() for key in ("given_names", "surnames", "date_of_birth")]
        if all(names):
            try:
                born = dt.date.fromisoformat(names[2])
            except ValueError:
                raise PersonError(_("Line %(line)s: the date of birth must be YYYY-MM-DD.") % {"line": line}) from None
            name_index = name_dob_index(names[0], names[1], born)
        if not code_index and not name_index:
            raise PersonError(
                _("Line %(line)s: give a personal code, or names with the date of birth.") % {"line": line}
            )
        entries.append(SelfExclusionEntry(personal_code_index=code_index, name_index=name_index))
    return entries


def self_exclusion_import(
    *, casino: Casino, user: User, data: bytes, list_date: dt.date, source_name: str
) -> SelfExclusionList:
    """Import the regulator's CSV (personal_code, or given_names + surnames + date_of_birth); all or nothing."""
    if not user.has_perm("compliance.import_self_exclusion"):
        raise PersonError(_("Only compliance officers import the self-exclusion list."))
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise PersonError(_("The file is not UTF-8 text.")) from None
    reader = csv.DictReader(io.StringIO(text))
    try:
        entries = _entries(reader)
    except csv.Error:
        # A field over csv's limit (128 KiB), a NUL: not a list the regulator wrote.
        raise PersonError(
            _("Line %(line)s: the file is not a CSV list that can be read.") % {"line": reader.line_num}
        ) from None
    if not entries:
        raise PersonError(_("The file has no entries."))
    with transaction.atomic():
        imported = SelfExclusionList.objects.create(
            casino=casino,
            list_date=list_date,
            source_name=source_name[:255],
            imported_by=user,
            entry_count=len(entries),
        )
        for entry in entries:
            entry.exclusion_list = imported
        SelfExclusionEntry.objects.bulk_create(entries, batch_size=2000)
    return imported

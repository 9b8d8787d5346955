"""Persons identified at the desk: found, created or updated from what the document says."""

import datetime as dt
import unicodedata
from dataclasses import dataclass

from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext as _
from stdnum.exceptions import ValidationError as StdnumError
from stdnum.lt import asmens

from compliance import crypto
from compliance.models import (
    Person,
    PersonDocument,
)
from compliance.services.base import PersonError
from compliance.services.person_versions import person_version_record
from machines.models import Casino

# A date of birth further back than this is a typing error (year 1, 1890), not a player.
OLDEST_AGE = 120


def personal_code_check(code: str, date_of_birth: dt.date | None) -> str:
    """A Lithuanian asmens kodas: its checksum, and the date of birth it encodes."""
    try:
        compact = asmens.validate(code)
    except StdnumError:
        raise PersonError(_("The personal code (asmens kodas) is not valid: check the digits.")) from None
    try:
        encoded = asmens.get_birth_date(compact)
    except StdnumError:
        encoded = None  # codes issued without a birth date (first digit 9) carry none to compare
    if encoded is not None and date_of_birth is not None and encoded != date_of_birth:
        raise PersonError(
            _("The personal code gives the date of birth %(encoded)s, not %(given)s.")
            % {"encoded": f"{encoded:%Y-%m-%d}", "given": f"{date_of_birth:%Y-%m-%d}"}
        )
    return str(compact)


def person_find(
    *, personal_code: str = "", document_type: str = "", document_number: str = "", document_country: str = "LT"
) -> Person | None:
    """Exact search through the blind indexes: by personal code, or by identity document."""
    if personal_code.strip():
        found = Person.objects.filter(personal_code_index=crypto.blind_index("personal_code", personal_code)).first()
        if found is not None:
            return found
    if document_number.strip() and document_type:
        return Person.objects.filter(
            document_country=(document_country or "LT").upper(),
            document_type=document_type,
            document_number_index=crypto.blind_index("document", document_number),
        ).first()
    return None


def _new_person_check(
    *,
    document_type: str,
    document_number: str,
    personal_code: str,
    given_names: str,
    surnames: str,
    date_of_birth: dt.date | None,
    nationality: str,
    document_expiry: dt.date | None,
) -> str:
    """Whether these details may register a new person: the refusal, in order; else the personal code, compact."""
    if document_type not in Person.DocumentType.values or not document_number:
        raise PersonError(_("Enter the identity document's type and number."))
    if not (given_names.strip() and surnames.strip() and date_of_birth and document_expiry):
        raise PersonError(
            _("New person: enter names, date of birth and the document's expiry date as in the document.")
        )
    today = timezone.localdate()
    if not dt.date(today.year - OLDEST_AGE, 1, 1) <= date_of_birth <= today:
        raise PersonError(
            _("The date of birth %(born)s cannot be right (in the future or over %(age)s years ago).")
            % {"born": f"{date_of_birth:%Y-%m-%d}", "age": OLDEST_AGE}
        )
    if personal_code.strip():
        return personal_code_check(personal_code, date_of_birth)
    if (nationality or "LT").upper() == "LT":
        raise PersonError(_("Lithuanian citizens are identified with their personal code (asmens kodas)."))
    return ""


def person_find_or_create(
    *,
    document_type: str = "",
    document_number: str = "",
    document_country: str = "LT",
    personal_code: str = "",
    given_names: str = "",
    surnames: str = "",
    date_of_birth: dt.date | None = None,
    nationality: str = "LT",
    document_expiry: dt.date | None = None,
    address: str = "",
) -> Person:
    """A returning person by personal code or document; otherwise a new one, if every detail is given."""
    existing = person_find(
        personal_code=personal_code,
        document_type=document_type,
        document_number=document_number,
        document_country=document_country,
    )
    if existing is not None:
        return existing
    number = crypto.normalise(document_number)
    code = _new_person_check(
        document_type=document_type,
        document_number=number,
        personal_code=personal_code,
        given_names=given_names,
        surnames=surnames,
        date_of_birth=date_of_birth,
        nationality=nationality,
        document_expiry=document_expiry,
    )
    assert date_of_birth is not None  # the check refuses a new person without one
    _person_insert(
        code=code,
        number=number,
        document_type=document_type,
        document_country=document_country,
        given_names=given_names,
        surnames=surnames,
        date_of_birth=date_of_birth,
        nationality=nationality,
        document_expiry=document_expiry,
        address=address,
    )
    found = person_find(
        personal_code=code, document_type=document_type, document_number=number, document_country=document_country
    )
    if found is None:  # the conflicting row vanished before it could be read: nothing was written
        raise PersonError(_("The person could not be registered just now; try again."))
    return found


def _person_insert(
    *,
    code: str,
    number: str,
    document_type: str,
    document_country: str,
    given_names: str,
    surnames: str,
    date_of_birth: dt.date,
    nationality: str,
    document_expiry: dt.date | None,
    address: str,
) -> None:
    """A new person's row, its personal code and document encrypted; nothing when a concurrent desk wrote it."""
    nationality = (nationality or "LT").upper()
    # A concurrent identification of the same new person may have inserted it first: ON CONFLICT DO NOTHING
    # waits on the unique key for that transaction, then inserts nothing, and the person it wrote is found.
    Person.objects.bulk_create(
        [
            Person(
                given_names=given_names.strip(),
                surnames=surnames.strip(),
                date_of_birth=date_of_birth,
                nationality=nationality,
                personal_code_encrypted=crypto.encrypt(code) if code else "",
                personal_code_index=crypto.blind_index("personal_code", code) if code else None,
                document_type=document_type,
                document_number_encrypted=crypto.encrypt(number),
                document_number_index=crypto.blind_index("document", number),
                document_country=(document_country or "LT").upper(),
                document_expiry=document_expiry,
                address=address.strip(),
            )
        ],
        ignore_conflicts=True,
    )


@dataclass(frozen=True)
class IdentityDetails:
    """What the cashier typed from the identity document: plain values, resolved inside the money's transaction."""

    personal_code: str = ""
    document_type: str = ""
    document_number: str = ""
    document_country: str = "LT"
    given_names: str = ""
    surnames: str = ""
    date_of_birth: dt.date | None = None
    nationality: str = "LT"
    document_expiry: dt.date | None = None
    address: str = ""
    # Names read from a document's machine-readable zone: in Latin capitals without diacritics (ICAO 9303), so
    # they are compared with the stored names letter for letter, diacritics and hyphens aside (issue 26).
    transliterated: bool = False
    # The card of today's visit (issue 26): scanned from the visit card, or picked from today's visitors at the desk.
    visit_card: str = ""

    @property
    def given(self) -> bool:
        return bool(self.personal_code.strip() or self.document_number.strip())


class IdentityMismatch(PersonError):
    """The personal code or document belongs to a stored person whose name or birth date differ.

    `person_id` is that person's, for the personal-data access log (never shown to whoever typed);
    `as_unknown`: the message is the one the same details would get if no person had that code or document.
    """

    def __init__(self, message: str, *, person_id: int, as_unknown: bool = False) -> None:
        super().__init__(message)
        self.person_id = person_id
        self.as_unknown = as_unknown


def _same_text(typed: str, stored: str, *, transliterated: bool = False) -> bool:
    def canonical(text: str) -> str:
        return " ".join(unicodedata.normalize("NFC", text).split()).casefold()

    def folded(text: str) -> str:
        letters = crypto.unmarked(text)
        return " ".join(letters.replace("-", " ").split()).casefold()

    if transliterated:  # the zone's Latin letters (ICAO 9303) against the names as stored, in their own letters
        return folded(typed) in {folded(spelling) for spelling in crypto.mrz_spellings(stored)}
    return canonical(typed) == canonical(stored)


def person_resolve(identity: IdentityDetails, *, at: dt.datetime | None = None, casino: Casino | None = None) -> Person:
    """The person these details name: found, updated with a new document, or created.

    Call inside the transaction that moves the money: if it is refused, no
    personal data stays behind. A code or document typed with a name or birth
    date that differ from the stored person's is refused, not booked to them;
    a new document replaces the stored one and the old one is kept.
    """
    at = at or timezone.now()
    person = _person_locked(identity)
    _identity_check(identity, person)
    _person_document_update(identity, person, at=at)
    person_version_record(person, reason="identified", casino=casino)
    return person


def _person_locked(identity: IdentityDetails) -> Person:
    """The person the code or document names, created if new, locked for the rest of the transaction."""
    existing = person_find(
        personal_code=identity.personal_code,
        document_type=identity.document_type,
        document_number=identity.document_number,
        document_country=identity.document_country,
    )
    if existing is None:
        # A new person, or the one another desk registered a moment ago: checked below like any returning person.
        existing = person_find_or_create(
            personal_code=identity.personal_code,
            document_type=identity.document_type,
            document_number=identity.document_number,
            document_country=identity.document_country,
            given_names=identity.given_names,
            surnames=identity.surnames,
            date_of_birth=identity.date_of_birth,
            nationality=identity.nationality,
            document_expiry=identity.document_expiry,
            address=identity.address,
        )
    return Person.objects.select_for_update().get(pk=existing.pk)


def person_identity_check(identity: IdentityDetails, person: Person) -> None:
    """Refuses (IdentityMismatch) details whose names, birth date or personal code differ from the stored person's:
    checked before anything is decided on the stored person (the door, issue 26) or booked to them (the desk)."""
    _identity_check(identity, person)


def _identity_check(identity: IdentityDetails, person: Person) -> None:
    """Refuses names, a birth date or a personal code that differ from the stored person's."""
    mrz = identity.transliterated
    if (
        (identity.given_names.strip() and not _same_text(identity.given_names, person.given_names, transliterated=mrz))
        or (identity.surnames.strip() and not _same_text(identity.surnames, person.surnames, transliterated=mrz))
        or (identity.date_of_birth is not None and identity.date_of_birth != person.date_of_birth)
        or (
            identity.personal_code.strip()
            and person.personal_code_index
            and crypto.blind_index("personal_code", crypto.normalise(identity.personal_code))
            != person.personal_code_index
        )
    ):
        # Issue 21: the answer must not tell a known code from an unknown one. Details that could not register
        # a new person get the refusal an unknown code would get; only a whole document is told it differs.
        try:
            _new_person_check(
                document_type=identity.document_type,
                document_number=crypto.normalise(identity.document_number),
                personal_code=identity.personal_code,
                given_names=identity.given_names,
                surnames=identity.surnames,
                date_of_birth=identity.date_of_birth,
                nationality=identity.nationality,
                document_expiry=identity.document_expiry,
            )
        except PersonError as unknown:
            raise IdentityMismatch(str(unknown), person_id=person.pk, as_unknown=True) from None
        raise IdentityMismatch(
            _(
                "This personal code or document is registered to a person with another name or date of birth. "
                "Check the document; if the stored record is wrong, ask a compliance officer."
            ),
            person_id=person.pk,
        )


def _person_document_update(identity: IdentityDetails, person: Person, *, at: dt.datetime) -> None:
    """A new document replaces the stored one (kept in the history); the same one may bring a later expiry."""
    number = crypto.normalise(identity.document_number)
    new_document = (
        number
        and identity.document_type in Person.DocumentType.values
        and crypto.blind_index("document", number) != person.document_number_index
    )
    if new_document:
        _person_document_replace(identity, person, number, at=at)
    elif identity.document_expiry is not None and (
        person.document_expiry is None or identity.document_expiry > person.document_expiry
    ):
        # The same document, seen again with its expiry read anew.
        Person.objects.filter(pk=person.pk).update(document_expiry=identity.document_expiry)
        person.document_expiry = identity.document_expiry


def _person_document_replace(identity: IdentityDetails, person: Person, number: str, *, at: dt.datetime) -> None:
    """The stored document goes to the person's history and the new one takes its place, if no one else has it."""
    if identity.document_expiry is None:
        raise PersonError(_("New document: enter its expiry date as in the document."))
    if not (identity.given_names.strip() and identity.surnames.strip() and identity.date_of_birth):
        raise PersonError(_("New document: enter the names and date of birth as in the document."))
    PersonDocument.objects.create(
        person=person,
        document_type=person.document_type,
        document_number_encrypted=person.document_number_encrypted,
        document_country=person.document_country,
        document_expiry=person.document_expiry,
        replaced_at=at,
    )
    person.document_type = identity.document_type
    person.document_number_encrypted = crypto.encrypt(number)
    person.document_number_index = crypto.blind_index("document", number)
    person.document_country = (identity.document_country or "LT").upper()
    person.document_expiry = identity.document_expiry
    try:
        with transaction.atomic():
            person.save(
                update_fields=[
                    "document_type",
                    "document_number_encrypted",
                    "document_number_index",
                    "document_country",
                    "document_expiry",
                ]
            )
    except IntegrityError:
        raise PersonError(_("This document is registered to another person.")) from None


def person_personal_code(person: Person) -> str:
    return crypto.decrypt(person.personal_code_encrypted)


def person_document_number(person: Person) -> str:
    return crypto.decrypt(person.document_number_encrypted)


def age_on(date_of_birth: dt.date, day: dt.date) -> int:
    years = day.year - date_of_birth.year
    if (day.month, day.day) < (date_of_birth.month, date_of_birth.day):
        years -= 1
    return years

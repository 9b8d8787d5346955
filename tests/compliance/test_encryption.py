import datetime as dt
from io import StringIO

import pytest
from cryptography.fernet import Fernet
from django.core.exceptions import FieldError
from django.core.management import call_command
from django.db import connection
from django.utils import timezone

from compliance import crypto
from compliance.models import Person
from compliance.services import (
    IdentityDetails,
    person_document_number,
    person_find,
    person_personal_code,
    person_resolve,
    persons_pseudonymise,
)
from tests.factories import make_person, personal_code

CODE = personal_code(dt.date(1980, 5, 17))


def _raw_person_table() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT * FROM compliance_person")
        return repr(cursor.fetchall())


def test_the_database_holds_no_plain_personal_data(db):
    """Names, date of birth and address were plain text until compliance 0014 (a hostile database superuser)."""
    person = make_person(document_number="LT1234567", address="Gedimino pr. 1, Vilnius")
    raw = _raw_person_table()
    for value in (CODE, "LT1234567", "Jonas", "Jonaitis", "1980-05-17", "Gedimino", "2031-01-01"):
        assert value not in raw
    person.refresh_from_db()
    assert (person.given_names, person.surnames, person.date_of_birth) == ("Jonas", "Jonaitis", dt.date(1980, 5, 17))
    assert (person.address, person.document_expiry) == ("Gedimino pr. 1, Vilnius", dt.date(2031, 1, 1))


def test_an_encrypted_field_cannot_be_searched_in_sql(db):
    """A token never equals another of the same value: a lookup would find nobody, so it is refused outright."""
    make_person()
    with pytest.raises(FieldError):
        Person.objects.filter(surnames="Jonaitis").exists()
    with pytest.raises(FieldError):
        Person.objects.filter(date_of_birth__year=1980).exists()
    assert Person.objects.filter(document_expiry__isnull=False).count() == 1


def test_search_still_finds_the_person(db):
    person = make_person(document_number="LT1234567")
    assert person_find(personal_code=CODE) == person
    assert person_find(document_type="passport", document_number="lt-123 4567") == person
    assert person_find(personal_code=personal_code(dt.date(1980, 5, 18))) is None


def test_reading_needs_the_key(db, settings):
    person = make_person()
    assert person_personal_code(person) == CODE
    settings.PII_ENCRYPTION_KEYS = [Fernet.generate_key().decode()]
    with pytest.raises(crypto.DecryptionError):
        person_personal_code(person)


def test_rotating_the_encryption_key(db, settings):
    person = make_person()
    old_key = settings.PII_ENCRYPTION_KEYS[0]
    new_key = Fernet.generate_key().decode()
    settings.PII_ENCRYPTION_KEYS = [new_key, old_key]

    call_command("rotate_pii_keys")

    settings.PII_ENCRYPTION_KEYS = [new_key]
    person.refresh_from_db()
    assert person_personal_code(person) == CODE
    assert person_document_number(person) == "LT1234567"
    assert (person.given_names, person.surnames, person.date_of_birth) == ("Jonas", "Jonaitis", dt.date(1980, 5, 17))
    assert (person.nationality, person.address, person.document_expiry) == ("LT", "", dt.date(2031, 1, 1))


def test_rotating_the_encryption_key_covers_previous_documents_and_pseudonymised_persons(casino, settings):
    later = timezone.now() + dt.timedelta(days=365 * 30)
    replaced = make_person()
    Person.objects.filter(pk=replaced.pk).update(last_seen_at=later)
    person_resolve(
        IdentityDetails(
            personal_code=CODE,
            document_type="id_card",
            document_number="AB1112223",
            given_names="Jonas",
            surnames="Jonaitis",
            date_of_birth=dt.date(1980, 5, 17),
            document_expiry=dt.date(2036, 6, 6),
        )
    )
    gone = make_person(given_names="Ona", born="1950-02-03", document_number="LT7654321")
    assert persons_pseudonymise(now=later) == 1
    old_key = settings.PII_ENCRYPTION_KEYS[0]
    settings.PII_ENCRYPTION_KEYS = [Fernet.generate_key().decode(), old_key]

    call_command("rotate_pii_keys", stdout=StringIO())

    settings.PII_ENCRYPTION_KEYS = settings.PII_ENCRYPTION_KEYS[:1]
    assert replaced.documents.get().document_expiry == dt.date(2031, 1, 1)
    gone.refresh_from_db()
    assert (gone.given_names, gone.date_of_birth) == ("—", dt.date(1950, 1, 1))


def test_rotating_the_index_key_keeps_search_working(db, settings):
    person = make_person()
    settings.PII_INDEX_KEY = "a-brand-new-index-key"
    assert person_find(personal_code=CODE) is None
    call_command("rotate_pii_keys")
    assert person_find(personal_code=CODE) == person
    assert Person.objects.get(pk=person.pk).personal_code_index == crypto.blind_index("personal_code", CODE)


def test_masking_for_the_cash_desk():
    assert crypto.mask("LT1234567") == "••••••567"

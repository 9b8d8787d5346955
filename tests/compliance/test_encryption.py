import datetime as dt

import pytest
from cryptography.fernet import Fernet
from django.core.management import call_command
from django.db import connection

from compliance import crypto
from compliance.models import Person
from compliance.services import person_document_number, person_find, person_personal_code
from tests.factories import make_person, personal_code

CODE = personal_code(dt.date(1980, 5, 17))


def _raw_person_table() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT * FROM compliance_person")
        return repr(cursor.fetchall())


def test_the_database_holds_no_plain_personal_code_or_document_number(db):
    make_person(document_number="LT1234567")
    raw = _raw_person_table()
    assert CODE not in raw
    assert "LT1234567" not in raw
    assert "Jonaitis" in raw  # names are not encrypted: they are searched and printed


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


def test_rotating_the_index_key_keeps_search_working(db, settings):
    person = make_person()
    settings.PII_INDEX_KEY = "a-brand-new-index-key"
    assert person_find(personal_code=CODE) is None
    call_command("rotate_pii_keys")
    assert person_find(personal_code=CODE) == person
    assert Person.objects.get(pk=person.pk).personal_code_index == crypto.blind_index("personal_code", CODE)


def test_masking_for_the_cash_desk():
    assert crypto.mask("LT1234567") == "••••••567"

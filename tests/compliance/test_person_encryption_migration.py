"""Persons' names, birth dates, nationality, address and document expiries encrypted by compliance 0014, and
decrypted back when it is unapplied.

Persons as the desk leaves them: a Lithuanian with an address and a replaced document, a foreigner known by
document alone, and a pseudonymised person. Unapplied to compliance 0013 the columns hold the plain values with
their old types again; applied again the code reads the same people as before, and the table holds no plain value.
"""

import datetime as dt

import pytest
from django.db import connection, transaction
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

from compliance.models import Person, PersonDocument
from compliance.services import IdentityDetails, person_resolve, persons_pseudonymise
from tests.factories import make_person, personal_code

BEFORE = [("compliance", "0013_books_broken_alert")]
PERSON = ("given_names", "surnames", "date_of_birth", "nationality", "address", "document_expiry")


def _persons() -> list[tuple]:
    return [
        (person.pk, *(getattr(person, name) for name in PERSON), person.pseudonymised_at is not None)
        for person in Person.objects.order_by("pk")
    ]


def _documents() -> list[tuple]:
    return list(PersonDocument.objects.order_by("pk").values_list("pk", "person_id", "document_expiry"))


def _people_as_the_desk_leaves_them(casino) -> None:
    later = timezone.now() + dt.timedelta(days=365 * 30)
    born = dt.date(1977, 8, 30)
    lithuanian = make_person(
        given_names="Žydrūnė", surnames="Kairytė", born=born.isoformat(), address="Laisvės al. 10-3, Kaunas"
    )
    with transaction.atomic():  # the desk resolves the person inside the money's transaction
        person_resolve(
            IdentityDetails(
                personal_code=personal_code(born),
                document_type="id_card",
                document_number="AB3334445",
                given_names="Žydrūnė",
                surnames="Kairytė",
                date_of_birth=born,
                document_expiry=dt.date(2037, 4, 5),
            )
        )
    foreigner = make_person(
        given_names="Jānis", surnames="Bērziņš", nationality="LV", personal_code="", document_number="LV5556667"
    )
    Person.objects.filter(pk__in=[lithuanian.pk, foreigner.pk]).update(last_seen_at=later)
    make_person(given_names="Ona", surnames="Onaitė", born="1950-02-03", document_number="LT7654321")
    assert persons_pseudonymise(now=later) == 1


def _plain_columns() -> list[tuple]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT id, given_names, surnames, date_of_birth, nationality, address, document_expiry, "
            "pseudonymised_at IS NOT NULL FROM compliance_person ORDER BY id"
        )
        return cursor.fetchall()


@pytest.mark.django_db(transaction=True)
def test_persons_encrypted_by_the_migration_come_back_plain_when_it_is_unapplied_and_the_same_again(casino):
    _people_as_the_desk_leaves_them(casino)
    persons, documents = _persons(), _documents()
    assert len(persons) == 3
    assert len(documents) == 1
    assert documents[0][2] == dt.date(2031, 1, 1)
    latest = MigrationExecutor(connection).loader.graph.leaf_nodes()
    MigrationExecutor(connection).migrate(BEFORE)
    try:
        plain = _plain_columns()
        with connection.cursor() as cursor:
            cursor.execute("SELECT id, person_id, document_expiry FROM compliance_persondocument ORDER BY id")
            plain_documents = cursor.fetchall()
    finally:
        MigrationExecutor(connection).migrate(latest)

    # Unapplied: the plain values in columns of their old types (dates as dates).
    assert plain == persons
    assert plain_documents == documents
    # Applied again: the same people, and nothing of them readable in the table.
    assert _persons() == persons
    assert _documents() == documents
    raw = repr(_plain_columns())
    values = [str(value) for person in persons for value in person[1:-1] if value is not None]
    shown = [value for value in values if len(value) > 2 and value in raw]  # "LT" may be in a token
    assert not shown

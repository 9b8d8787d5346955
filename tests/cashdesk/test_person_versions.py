"""A person's data changes only by a new chained version; the register entry names the version it used. A
person renamed (or given another's document) behind the triggers' back is named by the books' verification."""

import datetime as dt

import pytest

from cashdesk import services
from compliance.models import Person, PersonVersion, RegisterEntry
from compliance.services import IdentityDetails
from compliance.services.access import persons_pseudonymise
from compliance.services.person_versions import persons_stored
from machines.chains import books_verify
from tests.factories import personal_code
from tests.machines.test_chains import tamper

pytestmark = pytest.mark.django_db

BORN = dt.date(1979, 3, 14)


def identity(**changes) -> IdentityDetails:
    details = {
        "personal_code": personal_code(BORN, serial=404),
        "document_type": "passport",
        "document_number": "LT7788990",
        "given_names": "Rūta",
        "surnames": "Kazlauskienė",
        "date_of_birth": BORN,
        "document_expiry": dt.date(2032, 1, 1),
        "address": "Gedimino pr. 1, Vilnius",
    }
    return IdentityDetails(**{**details, **changes})


def findings(casino) -> list[str]:
    return [str(finding) for finding in books_verify(casino)]


@pytest.fixture
def entry(shift, cashier) -> RegisterEntry:
    """A purchase over the threshold: the person identified, her first version, the register's entry."""
    bought = services.chips_buy(shift=shift, user=cashier, chips={"chip_500": 3}, identity=identity())
    return RegisterEntry.objects.get(transaction_id=bought.pk)


def test_identification_writes_a_version_and_the_entry_names_it(entry, casino):
    version = PersonVersion.objects.get(person_id=entry.person_id)
    assert (version.version, version.reason, version.casino_id) == (1, "identified", casino.pk)
    assert entry.person_version_id == version.pk
    # A digest of the row as stored: no personal data, not even its tokens (they would outlive pseudonymisation).
    assert version.digest == dict(persons_stored([entry.person_id]))[entry.person_id]
    assert findings(casino) == []


def test_a_new_document_is_a_new_version(entry, shift, cashier, casino):
    services.chips_buy(
        shift=shift,
        user=cashier,
        chips={"chip_500": 3},
        identity=identity(document_number="LT5566771", document_expiry=dt.date(2036, 5, 5)),
    )
    versions = list(PersonVersion.objects.filter(person_id=entry.person_id).values_list("version", flat=True))
    assert versions == [1, 2]
    assert RegisterEntry.objects.order_by("sequence").last().person_version.version == 2
    assert findings(casino) == []


def test_the_person_behind_the_entries_renamed_is_named(entry, casino, shift, cashier):
    other = services.chips_buy(
        shift=shift,
        user=cashier,
        chips={"chip_500": 3},
        identity=identity(
            personal_code=personal_code(BORN, serial=515), document_number="LT1112223", surnames="Petrauskienė"
        ),
    )
    # Another person's surname token copied over hers: no key needed to do it, and it decrypts.
    tamper(
        "UPDATE compliance_person SET surnames = (SELECT surnames FROM compliance_person WHERE id = %s) WHERE id = %s",
        [other.person_id, entry.person_id],
    )
    assert Person.objects.get(pk=entry.person_id).surnames == "Petrauskienė"
    assert findings(casino) == [
        f"{casino.code}: person {entry.person_id}: its stored data is not its version 1 (changed without a new version)"
    ]


def test_a_version_rewritten_or_a_person_inserted_unseen_is_named(entry, casino):
    tamper("UPDATE compliance_personversion SET digest = md5(digest) || md5(digest)")
    assert any("persons record 1" in finding for finding in findings(casino)), findings(casino)
    tamper(
        "INSERT INTO compliance_person (given_names, surnames, date_of_birth, nationality, personal_code_encrypted, "
        "document_type, document_number_encrypted, document_country, address, created_at) "
        "SELECT given_names, surnames, date_of_birth, nationality, '', document_type, '', 'LV', address, now() "
        "FROM compliance_person WHERE id = %s",
        [entry.person_id],
    )
    assert any("it has no version (written unseen)" in finding for finding in findings(casino))


def test_an_entry_pointed_at_another_persons_version_is_named(entry, casino, shift, cashier):
    other = services.chips_buy(
        shift=shift,
        user=cashier,
        chips={"chip_500": 3},
        identity=identity(personal_code=personal_code(BORN, serial=626), document_number="LT3334445"),
    )
    theirs = PersonVersion.objects.get(person_id=other.person_id)
    tamper("UPDATE compliance_registerentry SET person_version_id = %s WHERE id = %s", [theirs.pk, entry.pk])
    assert f"{casino.code}: register entry {entry.sequence}: it names a version of another person" in findings(casino)


def test_pseudonymisation_is_a_version_too(entry, casino):
    later = entry.created_at + dt.timedelta(days=366 * (casino.register_retention_years + 1))
    assert persons_pseudonymise(now=later) == 1
    last = PersonVersion.objects.filter(person_id=entry.person_id).order_by("version").last()
    assert (last.version, last.reason) == (2, "pseudonymised")
    assert findings(casino) == []


def test_a_person_deleted_behind_the_triggers_is_named(entry, casino):
    tamper("DELETE FROM compliance_registerentry WHERE person_id = %s", [entry.person_id])
    tamper("DELETE FROM compliance_person WHERE id = %s", [entry.person_id])
    assert f"{casino.code}: person {entry.person_id}: it is gone, its version 1 is not (deleted unseen)" in findings(
        casino
    )


def test_a_replaced_document_changed_unseen_is_named(entry, shift, cashier, casino):
    services.chips_buy(
        shift=shift,
        user=cashier,
        chips={"chip_500": 3},
        identity=identity(document_number="LT5566771", document_expiry=dt.date(2036, 5, 5)),
    )
    tamper("UPDATE compliance_persondocument SET document_country = 'LV' WHERE person_id = %s", [entry.person_id])
    assert any(f"person {entry.person_id}: its stored data is not its version 2" in f for f in findings(casino))

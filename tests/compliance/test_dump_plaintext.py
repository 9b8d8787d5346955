"""A dump of the database shows no person's personal data in plain text (issue: a hostile database superuser).

Persons are identified at the desk through the real services, with a register entry and a replaced document;
the data is committed (pg_dump sees only committed rows), then the whole database is dumped as text and searched
for every personal value as typed, as stored and as a date is usually written.
"""

import datetime as dt
import os
import shutil
import subprocess

import pytest
from django.db import connection

from cashdesk import services
from compliance.models import Person, RegisterEntry
from compliance.services import IdentityDetails
from tests.factories import personal_code

BORN = dt.date(1983, 11, 27)
EXPIRY = dt.date(2034, 7, 23)
OLD_EXPIRY = dt.date(2033, 2, 14)
IDENTITY = IdentityDetails(
    personal_code=personal_code(BORN, serial=731),
    document_type="id_card",
    document_number="QX 480 1737",
    document_country="LT",
    given_names="Austėja Dovilė",
    surnames="Vaičiulytė-Rimkienė",
    date_of_birth=BORN,
    nationality="LT",
    document_expiry=OLD_EXPIRY,
    address="Žirmūnų g. 131-7, Vilnius",
)
NEW_DOCUMENT = {"document_type": "passport", "document_number": "PW7319904", "document_expiry": EXPIRY}


def _personal_values() -> dict[str, str]:
    values = {
        "personal code": IDENTITY.personal_code,
        "document number": IDENTITY.document_number,
        "document number, normalised": "QX4801737",
        "new document number": NEW_DOCUMENT["document_number"],
        "given names": IDENTITY.given_names,
        "surnames": IDENTITY.surnames,
        "address": IDENTITY.address,
    }
    for name, day in (("date of birth", BORN), ("document expiry", EXPIRY), ("old document expiry", OLD_EXPIRY)):
        values |= {
            f"{name} (ISO)": day.isoformat(),
            f"{name} (dd.mm.yyyy)": f"{day:%d.%m.%Y}",
            f"{name} (yyyy.mm.dd)": f"{day:%Y.%m.%d}",
        }
    return values


def _pg_dump() -> str:
    database = connection.settings_dict
    command = ["pg_dump", "--data-only", "--no-owner", "--dbname", database["NAME"]]
    for option, key in (("--host", "HOST"), ("--port", "PORT"), ("--username", "USER")):
        if database.get(key):
            command += [option, str(database[key])]
    env = {**os.environ, "PGPASSWORD": str(database.get("PASSWORD") or "")}
    done = subprocess.run(command, capture_output=True, env=env, check=True, timeout=120)
    return done.stdout.decode("utf-8")


@pytest.mark.skipif(shutil.which("pg_dump") is None, reason="pg_dump is not on PATH: the dump cannot be taken")
@pytest.mark.django_db(transaction=True)
def test_a_dump_of_the_database_shows_no_personal_data(shift, cashier):
    first = services.chips_buy(shift=shift, user=cashier, chips={"chip_500": 3}, identity=IDENTITY)
    again = services.chips_buy(
        shift=shift,
        user=cashier,
        chips={"chip_500": 3},
        identity=IdentityDetails(**{**IDENTITY.__dict__, **NEW_DOCUMENT}),
    )
    person = Person.objects.get(pk=first.person_id)
    assert again.person_id == person.pk
    assert RegisterEntry.objects.filter(person=person).count() == 2
    assert person.documents.count() == 1

    dump = _pg_dump()

    assert "COPY public.compliance_person " in dump  # the person's table is in the dump, with its row
    shown = {name: value for name, value in _personal_values().items() if value.casefold() in dump.casefold()}
    assert not shown, f"in plain text in the dump: {shown}"

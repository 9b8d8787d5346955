"""Cashiers at several desks identifying the same never-seen person at once: one person, every transaction.

The gate is the first identification caught between its insert of the new
person and its commit. The cashiers at the other desks find nobody yet, reach
the new person's unique key and must wait there (the harness proves it), then
use that person: neither is refused with a message about another document.
"""

import datetime as dt
from decimal import Decimal
from typing import Any

import pytest
from django.db import connection

from cashdesk import services
from cashdesk.errors import CashDeskError
from cashdesk.models import CashTransaction
from compliance import crypto
from compliance.models import Person, RegisterEntry
from compliance.services import IdentityDetails
from machines.models import Place
from tests.cashdesk.conftest import FLOAT
from tests.factories import make_user, personal_code
from tests.races import race

BORN = dt.date(1991, 7, 14)
CODE = personal_code(BORN, serial=321)

LITHUANIAN = {
    "personal_code": CODE,
    "document_type": "id_card",
    "document_number": "LT 778 8990",
    "document_country": "LT",
    "given_names": "Aistė",
    "surnames": "Kazlauskienė",
    "date_of_birth": BORN,
    "nationality": "LT",
    "document_expiry": dt.date(2031, 3, 1),
}
# A foreigner is identified by the document alone: the document's unique key is the contested one.
LATVIAN = {
    **LITHUANIAN,
    "personal_code": "",
    "document_type": "passport",
    "document_number": "LV4455667",
    "document_country": "LV",
    "nationality": "LV",
}

_INSERT_PERSON = """
    INSERT INTO compliance_person (
        given_names, surnames, date_of_birth, nationality, personal_code_encrypted, personal_code_index,
        document_type, document_number_encrypted, document_number_index, document_country, document_expiry,
        address, created_at
    ) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, now())
    RETURNING id
"""


def _first_identification_in_flight(details: dict[str, Any], **differs: Any) -> tuple[str, list[Any]]:
    """The SQL of another desk's insert of the new person, left uncommitted by the harness until both wait."""
    typed = {**details, **differs}
    code = typed["personal_code"]
    number = crypto.normalise(typed["document_number"])
    return (
        _INSERT_PERSON,
        [
            crypto.encrypt(typed["given_names"]),
            crypto.encrypt(typed["surnames"]),
            crypto.encrypt(typed["date_of_birth"].isoformat()),
            crypto.encrypt(typed["nationality"]),
            crypto.encrypt(code) if code else "",
            crypto.blind_index("personal_code", code) if code else None,
            typed["document_type"],
            crypto.encrypt(number),
            crypto.blind_index("document", number),
            typed["document_country"],
            crypto.encrypt(typed["document_expiry"].isoformat()),
            crypto.encrypt(""),
        ],
    )


def _two_desks(casino: Any) -> list[Any]:
    shifts = []
    for i in (1, 2):
        cashier = make_user(f"ident-race-{i}", "cashier")
        desk = Place.objects.create(casino=casino, code=f"IR{i}", name=f"Desk {i}")
        shifts.append((services.shift_open(desk=desk, cashier=cashier, counted=FLOAT), cashier))
    return shifts


def _buy_above_the_threshold(shift: Any, cashier: Any, details: dict[str, Any]) -> Any:
    # Three 500 EUR chips: above the casino's 1 000 EUR threshold, so the person is identified and registered.
    return lambda: services.chips_buy(
        shift=shift, user=cashier, chips={"chip_500": 3}, identity=IdentityDetails(**details)
    )


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("details", [LITHUANIAN, LATVIAN], ids=["by personal code", "foreigner by document"])
def test_the_same_new_person_identified_at_two_desks_at_once_is_one_person_with_both_transactions(casino, details):
    assert connection.vendor == "postgresql"
    (shift_1, cashier_1), (shift_2, cashier_2) = _two_desks(casino)

    results = race(
        [_buy_above_the_threshold(shift_1, cashier_1, details), _buy_above_the_threshold(shift_2, cashier_2, details)],
        gate=_first_identification_in_flight(details),
    )

    assert all(isinstance(result, CashTransaction) for result in results), results
    person = Person.objects.get()
    assert {result.person_id for result in results} == {person.pk}
    assert CashTransaction.objects.filter(kind="chips_buy", person=person).count() == 2
    assert RegisterEntry.objects.filter(person=person).count() == 2
    for shift in (shift_1, shift_2):
        assert services.shift_balances(shift)["cash"] == FLOAT["cash"] + Decimal("1500.00")


@pytest.mark.django_db(transaction=True)
def test_a_desk_that_waited_for_a_new_person_with_another_name_is_told_the_names_differ(casino):
    (shift_1, cashier_1), (shift_2, cashier_2) = _two_desks(casino)

    results = race(
        [
            _buy_above_the_threshold(shift_1, cashier_1, LITHUANIAN),
            _buy_above_the_threshold(shift_2, cashier_2, LITHUANIAN),
        ],
        gate=_first_identification_in_flight(LITHUANIAN, given_names="Rasa"),
    )

    assert all(isinstance(result, CashDeskError) for result in results), results
    assert {result.code for result in results} == {"identity_mismatch"}
    assert Person.objects.get().given_names == "Rasa"
    assert not CashTransaction.objects.filter(kind="chips_buy").exists()

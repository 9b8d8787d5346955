import datetime as dt
from decimal import Decimal

import pytest
import time_machine

from cashdesk import services
from cashdesk.errors import CashDeskError
from compliance.models import Alert, Person
from compliance.services import PersonError, person_find_or_create, personal_code_check, self_exclusion_import
from tests.factories import make_person, personal_code


def test_asmens_kodas_checksum_is_checked():
    good = personal_code(dt.date(1980, 5, 17))
    assert personal_code_check(good, dt.date(1980, 5, 17)) == good
    wrong_digit = good[:-1] + str((int(good[-1]) + 1) % 10)
    with pytest.raises(PersonError, match="not valid"):
        personal_code_check(wrong_digit, dt.date(1980, 5, 17))


def test_asmens_kodas_must_match_the_date_of_birth():
    code = personal_code(dt.date(1980, 5, 17))
    with pytest.raises(PersonError, match="gives the date of birth 1980-05-17"):
        personal_code_check(code, dt.date(1980, 5, 18))


def test_lithuanians_are_identified_with_their_personal_code(db):
    with pytest.raises(PersonError, match="personal code"):
        make_person(personal_code="")


def test_foreigners_may_be_identified_by_document_alone(db):
    person = make_person(nationality="LV", personal_code="", document_number="LV998877")
    assert person.personal_code_index is None


def test_a_returning_person_is_found_by_code_or_document_without_retyping(db):
    first = make_person()
    by_code = person_find_or_create(personal_code=personal_code(dt.date(1980, 5, 17)))
    by_document = person_find_or_create(document_type="passport", document_number="lt 123 4567")
    assert by_code == first == by_document
    assert Person.objects.count() == 1


def _buy_chips(shift, cashier, person):
    return services.chips_buy(shift=shift, user=cashier, chips={"chip_500": 3}, person=person)


def test_expired_document_is_refused(shift, cashier, db):
    person = make_person(expiry="2026-12-01")
    with time_machine.travel(dt.datetime(2026, 12, 2, 12, tzinfo=dt.UTC)), pytest.raises(CashDeskError) as refused:
        _buy_chips(shift, cashier, person)
    assert refused.value.code == "document_expired"


def test_document_valid_through_its_expiry_day(shift, cashier, db):
    person = make_person(expiry="2026-12-02")
    with time_machine.travel(dt.datetime(2026, 12, 2, 12, tzinfo=dt.UTC)):
        assert _buy_chips(shift, cashier, person).person == person


@pytest.mark.parametrize(
    ("today", "allowed"),
    [("2026-12-01", False), ("2026-12-02", True)],
    ids=["day before the 21st birthday", "on the 21st birthday"],
)
def test_minimum_age_for_purchases_at_the_boundary_day(shift, cashier, db, today, allowed):
    person = make_person(born="2005-12-02", document_number="LT5550001")
    with time_machine.travel(dt.datetime.fromisoformat(f"{today}T12:00:00+02:00")):
        if allowed:
            assert _buy_chips(shift, cashier, person)
        else:
            with pytest.raises(CashDeskError) as refused:
                _buy_chips(shift, cashier, person)
            assert refused.value.code == "under_age"


def test_minimum_age_is_a_casino_setting(shift, cashier, casino, db):
    casino.minimum_age = 18
    casino.save()
    person = make_person(born="2007-01-01", document_number="LT5550002")
    with time_machine.travel(dt.datetime(2026, 12, 2, 12, tzinfo=dt.UTC)):
        assert _buy_chips(shift, cashier, person)


@pytest.fixture
def excluded(casino, compliance, db):
    person = make_person(given_names="Petras", surnames="Petraitis", born="1975-02-03", document_number="LT7770001")
    code = personal_code(dt.date(1975, 2, 3))
    self_exclusion_import(
        casino=casino,
        user=compliance,
        data=f"personal_code\n{code}\n".encode(),
        list_date=dt.date(2026, 1, 1),
        source_name="lrt.csv",
    )
    return person


def test_self_excluded_person_cannot_buy(excluded, shift, cashier):
    with pytest.raises(CashDeskError) as refused:
        _buy_chips(shift, cashier, excluded)
    assert refused.value.code == "self_excluded"


def test_self_excluded_person_is_paid_and_an_alert_is_raised(excluded, shift, cashier, api):
    number = api.issued_ticket("1200.00")
    tx = services.ticket_payout(shift=shift, user=cashier, validation_number=number, person=excluded)
    assert tx.register_entry.self_excluded is True
    alert = Alert.objects.get(kind="self_excluded_payout")
    assert alert.person == excluded
    assert alert.amount == Decimal("1200.00")


def test_every_identification_keeps_the_list_it_was_checked_against(excluded, shift, cashier, person):
    tx = _buy_chips(shift, cashier, person)
    entry = tx.register_entry
    assert entry.self_excluded is False
    assert entry.self_exclusion_list is not None
    assert entry.self_exclusion_list.list_date == dt.date(2026, 1, 1)


@pytest.mark.parametrize("born", ["0001-01-01", "1890-01-01", "2099-01-01"])
def test_a_new_person_born_in_an_impossible_year_is_refused(db, born):
    with pytest.raises(PersonError, match="date of birth"):
        person_find_or_create(
            document_type="passport",
            document_number="LV112233",
            document_country="LV",
            nationality="LV",
            given_names="Janis",
            surnames="Berzins",
            date_of_birth=dt.date.fromisoformat(born),
            document_expiry=dt.date(2031, 1, 1),
        )
    assert not Person.objects.exists()

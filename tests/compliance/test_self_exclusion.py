import datetime as dt

import pytest

from compliance.models import SelfExclusionEntry, SelfExclusionList
from compliance.services import PersonError, self_exclusion_current, self_exclusion_import, self_exclusion_match
from tests.factories import make_person, personal_code


def _import(casino, user, text, list_date=dt.date(2026, 11, 1)):
    return self_exclusion_import(
        casino=casino, user=user, data=text.encode(), list_date=list_date, source_name="list.csv"
    )


def test_import_by_code_and_by_names_with_birth_date(casino, compliance):
    by_code = make_person(document_number="LT0000001")
    by_name = make_person(given_names="Ona", surnames="Onaitė", born="1990-01-01", document_number="LT0000002")
    stranger = make_person(given_names="Rasa", surnames="Rasaitė", born="1991-01-01", document_number="LT0000003")
    text = (
        "personal_code,given_names,surnames,date_of_birth\n"
        f"{personal_code(dt.date(1980, 5, 17))},,,\n"
        ",Ona,Onaitė,1990-01-01\n"
    )
    imported = _import(casino, compliance, text)
    assert imported.entry_count == 2
    assert self_exclusion_match(by_code, imported)
    assert self_exclusion_match(by_name, imported)
    assert not self_exclusion_match(stranger, imported)


def test_the_list_holds_no_readable_personal_data(casino, compliance):
    code = personal_code(dt.date(1980, 5, 17))
    _import(casino, compliance, f"personal_code\n{code}\n")
    stored = list(SelfExclusionEntry.objects.values_list("personal_code_index", "name_index"))
    assert code not in repr(stored)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("personal_code\n12345678901\n", "Line 2: the personal code is not valid"),
        ("given_names,surnames,date_of_birth\nOna,Onaitė,01/02/1990\n", "Line 2: the date of birth must be YYYY-MM-DD"),
        ("given_names,surnames,date_of_birth\nOna,,1990-01-01\n", "Line 2: give a personal code"),
        ("name\nOna\n", "Columns needed"),
        ("personal_code\n", "no entries"),
    ],
)
def test_a_bad_file_imports_nothing(casino, compliance, text, message):
    with pytest.raises(PersonError, match=message):
        _import(casino, compliance, text)
    assert not SelfExclusionList.objects.exists()


def test_the_current_list_is_the_newest_in_force(casino, compliance):
    older = _import(casino, compliance, f"personal_code\n{personal_code(dt.date(1980, 5, 17))}\n", dt.date(2026, 10, 1))
    newer = _import(casino, compliance, f"personal_code\n{personal_code(dt.date(1981, 5, 17))}\n", dt.date(2026, 11, 1))
    future = _import(casino, compliance, f"personal_code\n{personal_code(dt.date(1982, 5, 17))}\n", dt.date(2027, 1, 1))
    assert self_exclusion_current(casino, dt.date(2026, 10, 15)) == older
    assert self_exclusion_current(casino, dt.date(2026, 12, 2)) == newer
    assert self_exclusion_current(casino, dt.date(2027, 1, 1)) == future


def test_only_compliance_imports(casino, cashier):
    with pytest.raises(PersonError, match="Only compliance officers"):
        _import(casino, cashier, "personal_code\n")

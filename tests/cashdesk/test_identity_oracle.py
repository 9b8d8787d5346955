"""A cashier cannot learn from the identification form whether a personal code is a customer (issue 21).

A known code typed with another person's name used to answer "registered to a
person with another name", an unknown code "enter the document type and
number". Both now get the same answer and the same form; each mismatch is
written to the personal-data access log.
"""

import datetime as dt
import re

import pytest
from django.test import Client

from cashdesk import services
from cashdesk.errors import CashDeskError
from compliance.models import AccessLogEntry
from compliance.services import IdentityDetails
from compliance.templatetags.access import access_subject
from staff.models import StaffAssignment
from tests.factories import personal_code, with_key

BORN = dt.date(1980, 5, 17)  # the `person` fixture's date of birth; its code has serial 123
KNOWN = personal_code(BORN)
UNKNOWN = personal_code(BORN, serial=999)
KEY = "0123456789abcdef0123456789abcdef"


@pytest.fixture
def desk_client(casino, shift, cashier):
    StaffAssignment.objects.create(user=cashier, casino=casino)
    client = Client()
    client.force_login(cashier)
    return client


def _page(response, code):
    page = response.content.decode().replace(code, "CODE")
    page = re.sub(r'name="csrfmiddlewaretoken" value="[^"]+"', "CSRF", page)
    return re.sub(r'nonce="[^"]+"', "NONCE", page)


def _buy_chips(client, code, **typed):
    body = {"direction": "buy", "chip_500": "3", "personal_code": code, **typed}
    return client.post("/desk/chips/", with_key(body, key=KEY))


@pytest.mark.parametrize(
    "typed",
    [
        {"given_names": "Petras", "surnames": "Petraitis"},
        {"given_names": "Petras", "surnames": "Petraitis", "date_of_birth": BORN.isoformat()},
        {"surnames": "Petraitis", "document_number": "ZZ0000001"},
    ],
    ids=["names", "names and birth date", "surname and a document number without its type"],
)
def test_a_known_code_with_another_name_gets_the_answer_and_the_form_of_an_unknown_code(desk_client, person, typed):
    known = _buy_chips(desk_client, KNOWN, **typed)
    unknown = _buy_chips(desk_client, UNKNOWN, **typed)

    assert known.status_code == unknown.status_code == 200
    known_form, unknown_form = known.context["form"], unknown.context["form"]
    assert known_form.errors == unknown_form.errors
    assert known_form.non_field_errors()  # refused, with a reason
    assert "another name" not in str(known_form.non_field_errors())
    assert (known_form.person_open(), known_form.identity_required) == (
        unknown_form.person_open(),
        unknown_form.identity_required,
    )
    # The whole page, but for the code the cashier typed (and the per-response CSRF and CSP tokens), is the same.
    assert _page(known, KNOWN) == _page(unknown, UNKNOWN)


def test_the_service_answers_both_with_the_same_code_and_message(shift, cashier, person):
    typed = {"given_names": "Petras", "surnames": "Petraitis"}
    answers = []
    for code in (KNOWN, UNKNOWN):
        with pytest.raises(CashDeskError) as refused:
            services.chips_buy(
                shift=shift, user=cashier, chips={"chip_500": 3}, identity=IdentityDetails(personal_code=code, **typed)
            )
        answers.append((refused.value.code, refused.value.message))
    assert answers[0] == answers[1]


def test_each_mismatch_is_written_to_the_access_log_and_an_unknown_code_is_not(desk_client, person, cashier, casino):
    _buy_chips(desk_client, UNKNOWN, given_names="Petras", surnames="Petraitis")
    assert not AccessLogEntry.objects.exists()

    _buy_chips(desk_client, KNOWN, given_names="Petras", surnames="Petraitis")
    _buy_chips(desk_client, KNOWN, given_names="Jonas", surnames="Kitas")

    entries = list(AccessLogEntry.objects.order_by("pk"))
    assert len(entries) == 2
    for entry in entries:
        assert (entry.user, entry.casino, entry.action) == (cashier, casino, AccessLogEntry.Action.SEARCH)
        assert entry.subject == {"kind": "identity_mismatch", "person": person.pk}
        assert entry.purpose
        assert str(person.pk) in access_subject(entry)
    assert KNOWN not in entries[0].what  # the log names the person, never the code typed


def test_a_mismatch_with_the_whole_document_is_refused_logged_and_leaves_nothing(shift, cashier, person):
    typed = IdentityDetails(
        personal_code=KNOWN,
        document_type="passport",
        document_number="LT7654321",
        given_names="Petras",
        surnames="Petraitis",
        date_of_birth=BORN,
        document_expiry=dt.date(2031, 1, 1),
    )
    with pytest.raises(CashDeskError) as refused:
        services.chips_buy(shift=shift, user=cashier, chips={"chip_500": 3}, identity=typed)
    assert refused.value.code == "identity_mismatch"
    assert "Jonas" not in refused.value.message
    entry = AccessLogEntry.objects.get()
    assert entry.subject == {"kind": "identity_mismatch", "person": person.pk}
    assert not person.documents.exists()

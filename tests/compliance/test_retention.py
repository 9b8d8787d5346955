import datetime as dt
from decimal import Decimal

import time_machine
from django.utils import timezone

from cashdesk import services
from compliance.models import Person, RegisterEntry
from compliance.services import person_find, register_verify
from compliance.tasks import pseudonymise_expired_persons
from tests.factories import make_person, personal_code


def test_persons_past_retention_are_pseudonymised_and_the_money_stays(shift, cashier, casino):
    old = make_person(document_number="LT0000001")
    recent = make_person(given_names="Ona", surnames="Onaitė", born="1990-01-01", document_number="LT0000002")
    eight_years_ago = timezone.now() - dt.timedelta(days=8 * 366)
    with time_machine.travel(eight_years_ago, tick=False):
        old_tx = services.ticket_sell(shift=shift, user=cashier, amount=Decimal("1500.00"), person=old)
    services.ticket_sell(shift=shift, user=cashier, amount=Decimal("1700.00"), person=recent)

    assert pseudonymise_expired_persons.apply().get() == 1

    old.refresh_from_db()
    assert old.pseudonymised_at is not None
    assert old.surnames.startswith("PSEUDONYM-")
    assert old.given_names == "—"
    assert old.date_of_birth == dt.date(1980, 1, 1)
    assert old.personal_code_encrypted == old.document_number_encrypted == ""
    assert person_find(personal_code=personal_code(dt.date(1980, 5, 17))) is None
    entry = RegisterEntry.objects.get(transaction=old_tx)
    assert entry.amount == Decimal("1500.00")
    assert entry.person_id == old.pk
    assert register_verify(casino) is None
    assert Person.objects.get(pk=recent.pk).pseudonymised_at is None


def test_retention_is_a_casino_setting_and_the_job_is_idempotent(shift, cashier, casino):
    casino.register_retention_years = 5
    casino.save()
    person = make_person()
    with time_machine.travel(timezone.now() - dt.timedelta(days=6 * 366), tick=False):
        services.ticket_sell(shift=shift, user=cashier, amount=Decimal("1500.00"), person=person)
    assert pseudonymise_expired_persons.apply().get() == 1
    assert pseudonymise_expired_persons.apply().get() == 0

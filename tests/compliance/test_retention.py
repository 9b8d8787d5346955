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
    entry = RegisterEntry.objects.get(transaction_id=old_tx.pk)
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


def test_a_person_never_in_the_register_is_pseudonymised_once_unseen_past_retention(shift, cashier, casino):
    # Identified for a purchase at the threshold: no register entry, only the transaction.
    quiet = make_person(given_names="Rasa", surnames="Rasaitė", born="1975-02-02", document_number="LT0000009")
    nine_years_ago = timezone.now() - dt.timedelta(days=9 * 366)
    with time_machine.travel(nine_years_ago, tick=False):
        Person.objects.filter(pk=quiet.pk).update(created_at=nine_years_ago)
        services.ticket_sell(shift=shift, user=cashier, amount=Decimal("1000.00"), person=quiet)
    seen_lately = make_person(given_names="Eglė", surnames="Eglaitė", born="1982-03-03", document_number="LT0000010")
    Person.objects.filter(pk=seen_lately.pk).update(created_at=nine_years_ago)
    services.ticket_sell(shift=shift, user=cashier, amount=Decimal("1000.00"), person=seen_lately)
    assert not RegisterEntry.objects.exists()

    assert pseudonymise_expired_persons.apply().get() == 1

    assert Person.objects.get(pk=quiet.pk).pseudonymised_at is not None
    assert Person.objects.get(pk=seen_lately.pk).pseudonymised_at is None

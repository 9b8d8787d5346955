from decimal import Decimal

import pytest
from django.core.management import CommandError, call_command
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from cashdesk import services
from cashdesk.errors import CashDeskError
from cashdesk.models import CashTransaction
from compliance.models import RegisterEntry
from compliance.services import GENESIS_HASH, register_correct, register_hash, register_verify
from machines.chains import chain_and_save
from machines.models import Place
from tests.cashdesk.test_identity_threshold import KINDS, _just_above, _run
from tests.factories import make_person, make_user
from tests.races import race


@pytest.mark.parametrize("kind", KINDS)
def test_no_entry_at_the_threshold(kind, api, shift, cashier, floor, person):
    tx = _run(kind, "1000.00", api=api, shift=shift, cashier=cashier, floor=floor, person=person)
    assert not RegisterEntry.objects.filter(transaction_id=tx.pk).exists()


@pytest.mark.parametrize("kind", KINDS)
def test_an_entry_above_the_threshold_in_the_same_transaction(kind, api, shift, cashier, floor, person, casino, desk):
    amount = _just_above(kind)
    tx = _run(kind, amount, api=api, shift=shift, cashier=cashier, floor=floor, person=person)
    entry = RegisterEntry.objects.get(transaction_id=tx.pk)
    assert (entry.person, entry.kind, entry.amount) == (person, kind, Decimal(amount))
    assert (entry.desk, entry.shift_id, entry.cashier) == (desk, shift.pk, cashier)
    assert entry.created_at == tx.created_at
    assert entry.gaming_day == casino.gaming_day(tx.created_at)


def test_a_refused_transaction_leaves_no_entry(shift, cashier, person):
    # 25 000 EUR of chips against a float of 20 000 EUR in cash.
    with pytest.raises(CashDeskError, match="Kasa 1 does not hold enough"):
        services.chips_cashout(shift=shift, user=cashier, chips={"chip_500": 50}, person=person)
    assert not RegisterEntry.objects.exists()


def _unregistered_transaction_committed(**fields):
    """Write a transaction over the threshold with no entry, then run the commit-time checks."""
    with transaction.atomic():
        chain_and_save(CashTransaction(**fields), casino_id=fields["casino"].pk)
        with connection.cursor() as cursor:
            cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")


def test_the_database_refuses_a_transaction_over_the_threshold_without_its_entry(shift, cashier, desk, casino, person):
    with pytest.raises(IntegrityError, match="no register entry"):
        _unregistered_transaction_committed(
            casino=casino,
            desk=desk,
            shift=shift,
            number=999,
            kind="chips_cashout",
            amount=Decimal("1000.01"),
            identity_threshold=Decimal("1000.00"),
            person=person,
            created_by=cashier,
            created_at=timezone.now(),
        )


def _entries(shift, cashier, person, n=3):
    return [
        services.chips_buy(shift=shift, user=cashier, chips={"chip_500": 3}, person=person).register_entry
        for _ in range(n)
    ]


def test_entries_are_chained(shift, cashier, person, casino):
    first, second, third = _entries(shift, cashier, person)
    assert [e.sequence for e in (first, second, third)] == [1, 2, 3]
    assert first.previous_hash == GENESIS_HASH
    assert second.previous_hash == first.entry_hash
    assert third.previous_hash == second.entry_hash
    assert all(register_hash(e) == e.entry_hash for e in (first, second, third))
    assert register_verify(casino) is None


def test_register_rows_cannot_be_changed_or_deleted(shift, cashier, person):
    entry = _entries(shift, cashier, person, 1)[0]
    with pytest.raises(IntegrityError, match="append-only"), transaction.atomic():
        RegisterEntry.objects.filter(pk=entry.pk).update(amount=Decimal("1.00"))
    with pytest.raises(IntegrityError, match="append-only"), transaction.atomic():
        RegisterEntry.objects.filter(pk=entry.pk).delete()


def _tamper(sql, params):
    """Change the register behind the triggers' back, as a database superuser could."""
    with connection.cursor() as cursor:
        cursor.execute("SET session_replication_role = replica")
        cursor.execute(sql, params)
        cursor.execute("SET session_replication_role = DEFAULT")


def test_verify_register_names_the_first_edited_entry(shift, cashier, person, casino, capsys):
    entries = _entries(shift, cashier, person, 4)
    call_command("verify_register")
    assert "TOR: chain intact" in capsys.readouterr().out

    _tamper("UPDATE compliance_registerentry SET amount = 100 WHERE id = %s", [entries[1].pk])

    with pytest.raises(CommandError, match="TOR: entry 2: its content does not match its hash"):
        call_command("verify_register")


def test_verify_register_finds_a_removed_entry(shift, cashier, person):
    entries = _entries(shift, cashier, person, 3)
    # Moved out of the chain (a DELETE would also trip the commit-time check that
    # every transaction over the threshold has its entry).
    _tamper("UPDATE compliance_registerentry SET sequence = 99 WHERE id = %s", [entries[1].pk])
    with pytest.raises(CommandError, match="entry 2 is missing"):
        call_command("verify_register", "--casino", "TOR")


def test_a_correction_is_a_new_entry_referencing_the_original(shift, cashier, person, compliance, casino):
    original = _entries(shift, cashier, person, 1)[0]
    other = make_person(given_names="Ona", surnames="Onaitė", born="1990-01-01", document_number="LT0000002")

    correction = register_correct(entry=original, user=compliance, note="wrong person identified", person=other)

    assert correction.corrects == original
    assert correction.sequence == original.sequence + 1
    assert RegisterEntry.objects.get(pk=original.pk).person == person
    assert register_verify(casino) is None


@pytest.mark.django_db(transaction=True)
def test_two_desks_writing_at_once_keep_one_unbroken_chain(casino):
    person = make_person()
    shifts = []
    for i in range(2):
        cashier = make_user(f"racer{i}", "cashier")
        desk = Place.objects.create(casino=casino, code=f"R{i}", name=f"Race {i}", cash_limit=Decimal("900000"))
        shifts.append(
            (services.shift_open(desk=desk, cashier=cashier, counted={"cash": Decimal("100000.00")}), cashier)
        )

    def work(shift, cashier):
        return [
            services.ticket_sell(shift=shift, user=cashier, amount=Decimal("1100.00"), person=person) for _ in range(10)
        ]

    # Both desks wait on the casino's chain lock (the register's one writer) before either writes.
    results = race(
        [lambda pair=pair: work(*pair) for pair in shifts],
        gate=("SELECT id FROM machines_casino WHERE id = %s FOR UPDATE", [casino.pk]),
    )

    assert all(isinstance(result, list) for result in results), results
    assert RegisterEntry.objects.filter(casino=casino).count() == 20
    assert register_verify(casino) is None

"""Two sealings at once: the second waits for the first (the sealing lock), and no copy is sealed twice."""

from decimal import Decimal

import pytest
from django.db import connection, transaction

from machines.history import _SEAL_LOCK, changed_sealed, config_seal
from machines.models import Casino, ConfigChange, Machine
from tests.factories import MachineFactory
from tests.races import race

pytestmark = pytest.mark.django_db(transaction=True)

GATE = ("SELECT pg_advisory_xact_lock(%s)", [_SEAL_LOCK])


def _threshold(casino_id: int, amount: str) -> None:
    with transaction.atomic():
        casino = Casino.objects.get(pk=casino_id)
        casino.identity_threshold = Decimal(amount)
        casino.save()


def test_two_settings_changed_at_once_are_both_sealed_in_one_chain(casino):
    machine = MachineFactory(casino=casino, asset_number="3003")

    def rename() -> None:
        with transaction.atomic():
            found = Machine.objects.get(pk=machine.pk)
            found.area = "B"
            found.save()

    results = race([lambda: _threshold(casino.pk, "1200.00"), rename], gate=GATE)
    assert results == [None, None]
    changes = ConfigChange.objects.filter(casino=casino).order_by("chain_sequence")
    assert [change.chain_sequence for change in changes] == list(range(1, changes.count() + 1))
    assert {change.object_type for change in changes.filter(action="update")} == {"machines.casino", "machines.machine"}


def test_a_copy_made_by_sql_is_sealed_once_by_the_anchoring_and_the_service_at_once(casino):
    machine = MachineFactory(casino=casino, asset_number="3004")
    with connection.cursor() as cursor:  # committed: a statement sent from psql
        cursor.execute("UPDATE machines_machine SET area = 'C' WHERE id = %s", [machine.pk])

    def anchoring() -> int:
        with transaction.atomic():
            return config_seal()

    def service() -> None:
        with transaction.atomic():
            changed_sealed(Machine, machine.pk)

    results = race([anchoring, service], gate=GATE)
    assert not [result for result in results if isinstance(result, Exception)], results
    sealed = ConfigChange.objects.filter(object_type="machines.machine", object_id=str(machine.pk), action="update")
    assert sealed.count() == 1
    assert sealed.get().changed_via == "database"

"""A machine's kind (slot or kiosk) is fixed once it has worked with the ticket system (issue 14)."""

import pytest
from django.core.exceptions import ValidationError

from machines.models import Machine
from tests.conftest import MachineClient
from tests.factories import MachineFactory


def test_a_machine_that_has_spoken_to_the_host_keeps_its_kind(casino):
    machine = MachineFactory(casino=casino, asset_number="S-1")
    machine.kind = Machine.Kind.KIOSK
    machine.full_clean()  # never used: may still be changed

    MachineClient(Machine.objects.get(pk=machine.pk)).issue("10.00")
    used = Machine.objects.get(pk=machine.pk)
    used.kind = Machine.Kind.KIOSK
    with pytest.raises(ValidationError) as refused:
        used.full_clean()
    assert "kind" in refused.value.message_dict


def test_the_admin_shows_the_kind_read_only_once_the_machine_has_spoken(admin_client, casino):
    machine = MachineFactory(casino=casino, asset_number="S-2")
    page = admin_client.get(f"/admin/machines/machine/{machine.pk}/change/")
    assert 'name="kind"' in page.content.decode()
    MachineClient(machine).issue("10.00")
    page = admin_client.get(f"/admin/machines/machine/{machine.pk}/change/")
    assert page.status_code == 200
    assert 'name="kind"' not in page.content.decode()

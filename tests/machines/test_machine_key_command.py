import pytest
from django.core.management import CommandError, call_command

from tests.factories import MachineFactory


def test_unknown_asset_number_is_an_error(db):
    with pytest.raises(CommandError, match="no machine with asset number '9999'"):
        call_command("machine_key", "9999")


def test_asset_number_in_two_casinos_needs_the_casino(casino, other_casino, capsys):
    MachineFactory(casino=casino, asset_number="1001")
    MachineFactory(casino=other_casino, asset_number="1001")
    with pytest.raises(CommandError, match="exists in casinos ADM, TOR: pass --casino"):
        call_command("machine_key", "1001")
    call_command("machine_key", "1001", "--casino", "adm")
    assert capsys.readouterr().out.strip().startswith("mk_")


def test_each_rotation_gives_a_different_key(machine, capsys):
    call_command("machine_key", machine.asset_number)
    call_command("machine_key", machine.asset_number)
    first, second = capsys.readouterr().out.split()
    assert first != second

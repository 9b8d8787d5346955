"""Machine receipts, handpays and transfers: every change copied by a trigger and sealed into the casino's
`instruments` journal; a receipt or transfer changed behind the triggers' back is named by the verification."""

import json
from decimal import Decimal

import pytest

from cashdesk import services
from cashdesk.models import InstrumentChange, MachineReceipt, Transfer
from machines.chains import books_verify
from tests.machines.test_chains import tamper

pytestmark = pytest.mark.django_db


def findings(casino) -> list[str]:
    return [str(finding) for finding in books_verify(casino)]


def changes_of(obj) -> list[InstrumentChange]:
    kind = obj._meta.concrete_model._meta.label_lower
    return list(InstrumentChange.objects.filter(object_type=kind, object_id=str(obj.pk)).order_by("chain_sequence"))


@pytest.fixture
def paid_receipt(machine, floor, shift, cashier) -> MachineReceipt:
    receipt = services.machine_receipt_record(machine=machine, amount=Decimal("87.00"), reason="jam", user=floor)
    services.machine_receipt_pay(shift=shift, user=cashier, number=receipt.number, check_code=receipt.check_code)
    return MachineReceipt.objects.get(pk=receipt.pk)


def test_a_receipt_written_and_paid_is_two_sealed_changes(paid_receipt, casino, cashier):
    changes = changes_of(paid_receipt)
    assert [(change.action, json.loads(change.after)["state"]) for change in changes] == [
        ("insert", "confirmed"),
        ("update", "paid"),
    ]
    assert changes[1].changed_via == "application"
    assert findings(casino) == []


def test_a_receipts_amount_raised_behind_the_triggers_is_named(paid_receipt, casino):
    tamper("UPDATE cashdesk_machinereceipt SET amount = 2500 WHERE id = %s", [paid_receipt.pk])
    assert findings(casino) == [
        f"{casino.code}: instruments cashdesk.machinereceipt {paid_receipt.pk}: the row is not as its history last "
        "recorded it (changed with the triggers off)"
    ]


def test_a_paid_receipt_set_back_to_payable_is_named(paid_receipt, casino):
    tamper(
        "UPDATE cashdesk_machinereceipt SET state = 'confirmed', paid_by_id = NULL, paid_at = NULL WHERE id = %s",
        [paid_receipt.pk],
    )
    assert any(f"cashdesk.machinereceipt {paid_receipt.pk}" in finding for finding in findings(casino))


def test_a_receipt_forged_in_sql_is_named(paid_receipt, casino):
    tamper(
        "INSERT INTO cashdesk_machinereceipt (casino_id, machine_id, number, check_code, amount, source, kind, state, "
        "reason, created_by_id, created_at, confirmed_by_id, confirmed_at, wrong_codes, void_reason) "
        "SELECT casino_id, machine_id, '999999', check_code, 90, source, kind, 'confirmed', reason, created_by_id, "
        "created_at, confirmed_by_id, confirmed_at, 0, '' FROM cashdesk_machinereceipt WHERE id = %s",
        [paid_receipt.pk],
    )
    forged = MachineReceipt.objects.get(number="999999")
    assert any(f"cashdesk.machinereceipt {forged.pk}" in finding for finding in findings(casino))


def test_a_transfer_approved_is_sealed_and_its_amount_changed_unseen_is_named(
    shift, cashier, supervisor, casino, stocked_vault
):
    fill = services.transfer_request(shift=shift, user=cashier, direction="fill", amount=Decimal("5000.00"))
    services.transfer_approve(transfer=fill, supervisor=supervisor)
    assert [change.action for change in changes_of(Transfer.objects.get(pk=fill.pk))] == ["insert", "update"]
    assert findings(casino) == []
    tamper("UPDATE cashdesk_transfer SET amount = 500 WHERE id = %s", [fill.pk])
    assert any(f"cashdesk.transfer {fill.pk}" in finding for finding in findings(casino))


def test_a_recorded_change_rewritten_is_named(paid_receipt, casino):
    last = changes_of(paid_receipt)[-1]
    tamper("UPDATE cashdesk_instrumentchange SET after = replace(after, '87.00', '8.70') WHERE id = %s", [last.pk])
    assert any("instruments record" in finding for finding in findings(casino)), findings(casino)


def test_a_receipt_deleted_behind_the_triggers_is_named(machine, floor, casino):
    receipt = services.machine_receipt_record(machine=machine, amount=Decimal("40.00"), reason="jam", user=floor)
    tamper("DELETE FROM cashdesk_machinereceipt WHERE id = %s", [receipt.pk])
    assert (
        f"{casino.code}: instruments cashdesk.machinereceipt {receipt.pk}: it is gone, its history never deleted "
        "it (deleted unseen)" in findings(casino)
    )


def test_a_desks_transfer_lines_are_sealed_by_the_request_and_a_line_deleted_unseen_is_named(shift, cashier, casino):
    fill = services.transfer_request(shift=shift, user=cashier, direction="fill", amount=Decimal("300.00"))
    line = fill.lines.get()
    (sealed,) = changes_of(line)
    assert (sealed.action, sealed.changed_via) == ("insert", "application")  # not left to the anchoring
    tamper("DELETE FROM cashdesk_transferline WHERE id = %s", [line.pk])
    assert any(f"cashdesk.transferline {line.pk}: it is gone" in finding for finding in findings(casino))


def test_the_check_code_is_not_copied_into_the_history(paid_receipt):
    assert all("check_code" not in change.after for change in changes_of(paid_receipt))

"""A machine receipt is paid once, with its check code, in its own casino."""

from decimal import Decimal

import pytest
from django.db import connection

from cashdesk import services
from cashdesk.books import place_balances
from cashdesk.errors import CashDeskError
from cashdesk.models import CashTransaction, MachineReceipt
from machines.models import Place
from tests.cashdesk.conftest import FLOAT
from tests.factories import make_user
from tests.races import race


def test_a_machine_receipt_with_a_wrong_or_foreign_check_code_pays_nothing(
    api, shift, cashier, floor, desk, supervisor
):
    """From the adversarial review of the rebuilt money core: a guard of behaviour that held."""
    receipt = services.machine_receipt_record(machine=api.machine, amount=Decimal("50.00"), reason="x", user=floor)
    wrong = f"{(int(receipt.check_code) + 1) % 1_000_000:06d}"
    for code in (wrong, "", " ", receipt.check_code + "0", "0" + receipt.check_code):
        with pytest.raises(CashDeskError) as refused:
            services.machine_receipt_pay(shift=shift, user=cashier, number=receipt.number, check_code=code)
        assert refused.value.code == "wrong_check_code"
    # Five wrong codes lock it (tests/cashdesk/test_receipt_check_codes.py); a supervisor unlocks it.
    services.machine_receipt_unlock(
        receipt_id=receipt.pk, casino_id=receipt.casino_id, user=supervisor, operation_key="a" * 32
    )
    tx = services.machine_receipt_pay(
        shift=shift, user=cashier, number=receipt.number, check_code=f" {receipt.check_code} "
    )
    with pytest.raises(CashDeskError) as again:
        services.machine_receipt_pay(shift=shift, user=cashier, number=receipt.number, check_code=receipt.check_code)
    assert again.value.code == "already_paid"
    assert place_balances(desk)["cash"] == FLOAT["cash"] - tx.amount


def test_a_machine_receipt_of_another_casino_is_not_paid(shift, cashier, other_casino):
    """From the adversarial review of the rebuilt money core: a guard of behaviour that held."""
    from tests.factories import MachineFactory

    floor_b = make_user("floor-b", "floor_attendant")
    receipt = services.machine_receipt_record(
        machine=MachineFactory(casino=other_casino), amount=Decimal("50.00"), reason="x", user=floor_b
    )
    with pytest.raises(CashDeskError) as refused:
        services.machine_receipt_pay(shift=shift, user=cashier, number=receipt.number, check_code=receipt.check_code)
    assert refused.value.code == "not_found"


@pytest.mark.django_db(transaction=True)
def test_a_machine_receipt_paid_from_three_tabs_at_once_is_paid_once(casino, api):
    """Money-core defect found by trying the desk as a cashier, a supervisor and an attacker would (a machine receipt
    paid two or three times); it failed before the money core was rebuilt.
    """
    assert connection.vendor == "postgresql"
    floor = make_user("race-floor", "floor_attendant")
    cashiers = [make_user("race-a", "cashier"), make_user("race-b", "cashier")]
    desks = [Place.objects.create(casino=casino, code=f"R{i}", name=f"Race {i}") for i in (1, 2)]
    shifts = [
        services.shift_open(desk=d, cashier=c, counted={"cash": Decimal("50000.00")})
        for d, c in zip(desks, cashiers, strict=True)
    ]
    receipt = services.machine_receipt_record(
        machine=api.machine, amount=Decimal("400.00"), reason="hopper empty", user=floor
    )
    supervisor = make_user("race-supervisor", "shift_supervisor")
    services.machine_receipt_supervisor_confirm(receipt_id=receipt.pk, casino_id=casino.pk, user=supervisor)

    def pay(shift, cashier, key):
        return lambda: services.machine_receipt_pay(
            shift=shift, user=cashier, number=receipt.number, check_code=receipt.check_code, operation_key=key
        )

    # Two tabs of one cashier (each its own form, so its own key) and one of another cashier.
    results = race(
        [pay(shifts[0], cashiers[0], "tab-1"), pay(shifts[0], cashiers[0], "tab-2"), pay(shifts[1], cashiers[1], "x")],
        gate=("SELECT id FROM cashdesk_machinereceipt WHERE id = %s FOR UPDATE", [receipt.pk]),
    )

    paid = [r for r in results if isinstance(r, CashTransaction)]
    refused = [r for r in results if isinstance(r, CashDeskError)]
    assert len(paid) == 1, results
    assert {r.code for r in refused} == {"already_paid"}
    assert CashTransaction.objects.filter(kind="receipt_payout").count() == 1
    assert MachineReceipt.objects.get(pk=receipt.pk).paid_by == paid[0]
    total_paid = sum(services.shift_balances(s)["cash"] for s in shifts)
    assert total_paid == Decimal("100000.00") - Decimal("400.00")


def test_the_database_refuses_a_second_payout_transaction_of_one_receipt(api, shift, cashier, floor):
    """Money-core defect found by trying the desk as a cashier, a supervisor and an attacker would (a machine receipt
    paid two or three times); it failed before the money core was rebuilt.
    """
    from django.db import IntegrityError, transaction

    receipt = services.machine_receipt_record(machine=api.machine, amount=Decimal("10.00"), reason="x", user=floor)
    first = services.machine_receipt_pay(
        shift=shift, user=cashier, number=receipt.number, check_code=receipt.check_code
    )
    with pytest.raises(IntegrityError), transaction.atomic():
        CashTransaction.objects.create(
            casino=first.casino,
            desk=first.desk,
            shift=first.shift,
            number=first.number + 100,
            kind="receipt_payout",
            amount=first.amount,
            identity_threshold=first.identity_threshold,
            machine_receipt=receipt,
            created_by=cashier,
            created_at=first.created_at,
        )


def test_a_machine_receipt_is_paid_only_with_its_check_code(api, shift, cashier, floor):
    """Money-core defect found by trying the desk as a cashier, a supervisor and an attacker would (a machine receipt
    paid two or three times); it failed before the money core was rebuilt.
    """
    receipt = services.machine_receipt_record(machine=api.machine, amount=Decimal("10.00"), reason="x", user=floor)
    assert len(receipt.check_code) >= 6
    with pytest.raises(CashDeskError) as refused:
        services.machine_receipt_pay(shift=shift, user=cashier, number=receipt.number, check_code="000000")
    assert refused.value.code == "wrong_check_code"
    assert not CashTransaction.objects.filter(kind="receipt_payout").exists()

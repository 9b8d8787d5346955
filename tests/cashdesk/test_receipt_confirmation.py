"""A machine receipt above the casino's confirmation limit is confirmed by a supervisor before it is paid.

Issue 21: a floor attendant recorded a 999.99 EUR hopper-shortfall receipt and a cashier paid it, on one
person's word. Above `Casino.receipt_confirmation_limit` a supervisor other than the attendant who recorded
it confirms it first; who confirmed and when is kept on the receipt.
"""

from decimal import Decimal

import pytest
from django.db import IntegrityError, transaction
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from cashdesk import services
from cashdesk.errors import CashDeskError
from cashdesk.models import MachineReceipt
from staff.models import StaffAssignment
from tests.factories import make_user


def _record(machine, floor, amount="999.99") -> MachineReceipt:
    return services.machine_receipt_record(machine=machine, amount=Decimal(amount), reason="hopper empty", user=floor)


def _pay(shift, cashier, receipt):
    return services.machine_receipt_pay(shift=shift, user=cashier, number=receipt.number, check_code=receipt.check_code)


def _login(user, casino) -> Client:
    StaffAssignment.objects.get_or_create(user=user, casino=casino)
    client = Client()
    client.force_login(user)
    return client


def test_a_receipt_above_the_limit_is_not_paid_until_a_supervisor_confirms_it(
    machine, floor, supervisor, shift, cashier
):
    receipt = _record(machine, floor)
    with pytest.raises(CashDeskError) as refused:
        _pay(shift, cashier, receipt)
    assert refused.value.code == "supervisor_confirmation_required"
    assert "supervisor" in refused.value.message
    assert MachineReceipt.objects.get(pk=receipt.pk).state == "confirmed"

    confirmed = services.machine_receipt_supervisor_confirm(
        receipt_id=receipt.pk, casino_id=machine.casino_id, user=supervisor
    )
    assert confirmed.supervisor_confirmed_by == supervisor
    assert confirmed.supervisor_confirmed_at is not None
    tx = _pay(shift, cashier, receipt)
    assert MachineReceipt.objects.get(pk=receipt.pk).paid_by == tx


def test_a_receipt_at_the_limit_needs_no_supervisor(machine, floor, shift, cashier, casino):
    assert casino.receipt_confirmation_limit == Decimal("100.00")
    receipt = _record(machine, floor, amount="100.00")
    assert _pay(shift, cashier, receipt).amount == Decimal("100.00")


def test_the_limit_is_the_casinos_setting(machine, floor, shift, cashier, casino):
    casino.receipt_confirmation_limit = Decimal("1000.00")
    casino.save(update_fields=["receipt_confirmation_limit"])
    receipt = _record(machine, floor)
    assert _pay(shift, cashier, receipt).amount == Decimal("999.99")


def test_the_attendant_who_recorded_it_cannot_confirm_it(machine, casino):
    both = make_user("dalia", "floor_attendant", "shift_supervisor")
    receipt = _record(machine, both)
    with pytest.raises(CashDeskError) as refused:
        services.machine_receipt_supervisor_confirm(receipt_id=receipt.pk, casino_id=casino.pk, user=both)
    assert refused.value.code == "same_person"
    assert MachineReceipt.objects.get(pk=receipt.pk).supervisor_confirmed_by is None


def test_the_database_refuses_a_confirmation_by_the_recorder(machine, floor):
    receipt = _record(machine, floor)
    with pytest.raises(IntegrityError), transaction.atomic():
        MachineReceipt.objects.filter(pk=receipt.pk).update(
            supervisor_confirmed_by=floor, supervisor_confirmed_at=timezone.now()
        )


def test_the_database_refuses_a_confirmer_without_a_time(machine, floor, supervisor):
    receipt = _record(machine, floor)
    with pytest.raises(IntegrityError), transaction.atomic():
        MachineReceipt.objects.filter(pk=receipt.pk).update(supervisor_confirmed_by=supervisor)


def test_only_a_supervisor_confirms(machine, floor, cashier, casino):
    receipt = _record(machine, floor)
    with pytest.raises(CashDeskError) as refused:
        services.machine_receipt_supervisor_confirm(receipt_id=receipt.pk, casino_id=casino.pk, user=cashier)
    assert refused.value.code == "forbidden"


def test_a_paid_or_unknown_receipt_is_not_confirmed(machine, floor, supervisor, casino, other_casino):
    receipt = _record(machine, floor)
    with pytest.raises(CashDeskError) as refused:
        services.machine_receipt_supervisor_confirm(receipt_id=receipt.pk, casino_id=other_casino.pk, user=supervisor)
    assert refused.value.code == "not_found"
    services.machine_receipt_supervisor_confirm(receipt_id=receipt.pk, casino_id=casino.pk, user=supervisor)
    with pytest.raises(CashDeskError) as again:
        services.machine_receipt_supervisor_confirm(receipt_id=receipt.pk, casino_id=casino.pk, user=supervisor)
    assert again.value.code == "already_confirmed"


def test_the_supervisor_dashboard_lists_receipts_waiting_and_confirms_them(machine, floor, supervisor, casino):
    waiting = _record(machine, floor)
    small = _record(machine, floor, amount="50.00")  # at most the limit: nothing to confirm
    client = _login(supervisor, casino)
    page = client.get(reverse("supervisor")).content.decode()
    assert 'id="receipts-to-confirm"' in page
    assert reverse("confirm-receipt", args=[waiting.pk]) in page
    assert reverse("confirm-receipt", args=[small.pk]) not in page

    response = client.post(reverse("confirm-receipt", args=[waiting.pk]))
    assert response.status_code == 302
    assert MachineReceipt.objects.get(pk=waiting.pk).supervisor_confirmed_by == supervisor
    page = client.get(reverse("supervisor")).content.decode()
    assert reverse("confirm-receipt", args=[waiting.pk]) not in page


def test_the_desk_page_shows_the_refusal(machine, floor, shift, cashier, casino):
    receipt = _record(machine, floor)
    client = _login(cashier, casino)
    response = client.post(
        reverse("desk-receipt-payout"),
        {"receipt_number": receipt.number, "check_code": receipt.check_code, "operation_key": "ab" * 16},
    )
    assert response.status_code == 200
    assert "supervisor" in response.content.decode()
    assert MachineReceipt.objects.get(pk=receipt.pk).state == "confirmed"

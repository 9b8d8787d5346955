"""Four eyes on write-offs: a count difference above the casino's limit posts only on a second supervisor's approval.

Issue 21: one supervisor wrote 186 900 EUR off to over/short with one vault count (cash 100.00).
"""

from decimal import Decimal

import pytest
from django.db import IntegrityError, transaction
from django.utils import timezone

from cashdesk import models, services
from cashdesk.books import counterparty_balances, place_balances
from cashdesk.errors import CashDeskError
from cashdesk.models import CashTransaction, Shift, ShiftCount, TransactionKind
from cashdesk.services.kiosks import kiosk_place, kiosk_transfer_approve, kiosk_transfer_request
from machines.models import Machine
from tests.cashdesk.conftest import FLOAT, VAULT_CASH
from tests.factories import MachineFactory, make_user


@pytest.fixture
def supervisor2(db):
    return make_user("laura", "shift_supervisor")


def _waiting():
    return models.CountRequest.objects.get(status="waiting")


def test_a_vault_count_far_from_the_books_posts_nothing_until_a_second_supervisor_approves(
    stocked_vault, supervisor, supervisor2, casino
):
    services.vault_count(vault=stocked_vault, user=supervisor, counted={"cash": Decimal("100.00")})

    assert place_balances(stocked_vault)["cash"] == VAULT_CASH
    assert not CashTransaction.objects.filter(kind=TransactionKind.COUNT).exists()
    request = _waiting()
    with pytest.raises(CashDeskError) as refused:
        services.count_request_approve(request=request, supervisor=supervisor)
    assert refused.value.code == "own_count"

    services.count_request_approve(request=request, supervisor=supervisor2)

    assert place_balances(stocked_vault)["cash"] == Decimal("100.00")
    posting = CashTransaction.objects.get(kind=TransactionKind.COUNT)
    assert (posting.created_by, posting.approved_by) == (supervisor, supervisor2)
    assert counterparty_balances(casino)["over_short"]["cash"] == VAULT_CASH - Decimal("100.00")
    request.refresh_from_db()
    assert request.status == "approved"
    assert request.decided_by == supervisor2
    assert request.decided_at is not None
    assert request.count.lines.get(item="cash").variance == Decimal("100.00") - VAULT_CASH


def test_a_difference_of_exactly_the_limit_posts_at_once(stocked_vault, supervisor, casino):
    assert casino.count_approval_limit == Decimal("100.00")
    services.vault_count(vault=stocked_vault, user=supervisor, counted={"cash": VAULT_CASH - Decimal("100.00")})
    assert place_balances(stocked_vault)["cash"] == VAULT_CASH - Decimal("100.00")
    assert not models.CountRequest.objects.exists()


def test_the_limit_is_per_item_and_the_casinos_setting(stocked_vault, supervisor, casino):
    casino.count_approval_limit = Decimal("1000.00")
    casino.save()
    stocked_vault.refresh_from_db()
    services.vault_count(vault=stocked_vault, user=supervisor, counted={"cash": VAULT_CASH - Decimal("900.00")})
    assert place_balances(stocked_vault)["cash"] == VAULT_CASH - Decimal("900.00")
    services.vault_count(
        vault=stocked_vault, user=supervisor, counted={"cash": VAULT_CASH - Decimal("900.00"), "chip_500": 3}
    )
    assert _waiting().kind == "vault"  # 1500 in 500 chips found: above the limit for that item


def test_a_rejected_count_posts_nothing_and_records_who_and_when(stocked_vault, supervisor, supervisor2):
    services.vault_count(vault=stocked_vault, user=supervisor, counted={"cash": Decimal("100.00")})
    request = services.count_request_reject(request=_waiting(), supervisor=supervisor2)
    assert (request.status, request.decided_by) == ("rejected", supervisor2)
    assert request.decided_at is not None
    assert place_balances(stocked_vault)["cash"] == VAULT_CASH
    with pytest.raises(CashDeskError) as refused:
        services.count_request_approve(request=request, supervisor=supervisor2)
    assert refused.value.code == "already_decided"


def test_the_database_refuses_the_counter_as_the_approver(stocked_vault, supervisor):
    services.vault_count(vault=stocked_vault, user=supervisor, counted={"cash": Decimal("100.00")})
    with pytest.raises(IntegrityError), transaction.atomic():
        models.CountRequest.objects.filter(status="waiting").update(
            status="approved", decided_by=supervisor, decided_at=timezone.now()
        )


def test_a_closing_count_above_the_limit_keeps_the_shift_open_until_a_supervisor_approves(
    shift, cashier, supervisor, desk
):
    services.shift_close(shift=shift, user=cashier, counted={**FLOAT, "cash": Decimal("15000.00")})

    shift.refresh_from_db()
    assert shift.closed_at is None
    assert place_balances(desk)["cash"] == Decimal("20000.00")
    with pytest.raises(CashDeskError) as refused:
        services.tokens_buy(shift=shift, user=cashier, count=1)
    assert refused.value.code == "count_waiting"

    services.count_request_approve(request=_waiting(), supervisor=supervisor)
    shift.refresh_from_db()
    assert shift.closed_at is not None
    assert place_balances(desk)["cash"] == Decimal("15000.00")
    assert CashTransaction.objects.get(kind=TransactionKind.COUNT, shift=shift).approved_by == supervisor


def test_a_rejected_closing_count_leaves_the_shift_open_to_count_again(shift, cashier, supervisor):
    services.shift_close(shift=shift, user=cashier, counted={**FLOAT, "cash": Decimal("15000.00")})
    services.count_request_reject(request=_waiting(), supervisor=supervisor)
    count = services.shift_close(shift=shift, user=cashier, counted=FLOAT)
    assert count.shift == shift
    assert Shift.objects.get(pk=shift.pk).closed_at is not None


def test_a_kiosk_drop_count_above_the_limit_needs_a_second_supervisor(
    casino, stocked_vault, floor, supervisor, supervisor2
):
    kiosk = MachineFactory(casino=casino, asset_number="K-01", kind=Machine.Kind.KIOSK)
    fill = kiosk_transfer_request(machine=kiosk, user=floor, direction="fill", amount=Decimal("5000.00"))
    kiosk_transfer_approve(transfer=fill, supervisor=supervisor)
    drop = kiosk_transfer_request(machine=kiosk, user=floor, direction="drop", amount=Decimal("4000.00"))

    kiosk_transfer_approve(transfer=drop, supervisor=supervisor)

    drop.refresh_from_db()
    assert drop.approved_at is None
    assert place_balances(kiosk_place(kiosk))["cash"] == Decimal("5000.00")
    request = _waiting()
    assert (request.kind, request.counted_by, request.asked_by) == ("kiosk", floor, supervisor)
    with pytest.raises(CashDeskError):
        services.count_request_approve(request=request, supervisor=supervisor)

    services.count_request_approve(request=request, supervisor=supervisor2)

    drop.refresh_from_db()
    assert drop.approved_at is not None
    assert place_balances(kiosk_place(kiosk))["cash"] == 0
    assert counterparty_balances(casino)["over_short"]["cash"] == Decimal("1000.00")


def test_an_opening_count_far_from_what_the_last_shift_left_waits_and_the_shift_takes_nothing(
    shift, cashier, cashier2, supervisor, desk
):
    services.shift_close(shift=shift, user=cashier, counted=FLOAT)
    reopened = services.shift_open(desk=desk, cashier=cashier2, counted={**FLOAT, "cash": Decimal("14000.00")})

    assert place_balances(desk)["cash"] == Decimal("20000.00")
    assert not CashTransaction.objects.filter(kind=TransactionKind.COUNT).exists()
    with pytest.raises(CashDeskError) as refused:
        services.tokens_buy(shift=reopened, user=cashier2, count=1)
    assert refused.value.code == "count_waiting"

    services.count_request_approve(request=_waiting(), supervisor=supervisor)

    assert place_balances(desk)["cash"] == Decimal("14000.00")
    assert Shift.objects.get(pk=reopened.pk).closed_at is None
    services.tokens_buy(shift=reopened, user=cashier2, count=1)


def test_a_rejected_opening_count_calls_the_shift_off_to_be_opened_again(shift, cashier, cashier2, supervisor, desk):
    services.shift_close(shift=shift, user=cashier, counted=FLOAT)
    reopened = services.shift_open(desk=desk, cashier=cashier2, counted={**FLOAT, "cash": Decimal("14000.00")})
    services.count_request_reject(request=_waiting(), supervisor=supervisor)

    assert Shift.objects.get(pk=reopened.pk).closed_at is not None
    again = services.shift_open(desk=desk, cashier=cashier2, counted=FLOAT)
    assert again.pk != reopened.pk
    assert place_balances(desk)["cash"] == Decimal("20000.00")


def test_differences_split_into_counts_within_the_limit_wait_once_their_sum_passes_it(
    stocked_vault, supervisor, casino
):
    """Found by the adversarial review of issue 21's first fix (four eyes on write-offs): a write-off split into counts
    each within the limit posted at once, however large the sum.
    """
    assert casino.count_approval_limit == Decimal("100.00")
    first = services.vault_count(vault=stocked_vault, user=supervisor, counted={"cash": VAULT_CASH - Decimal("60.00")})
    assert isinstance(first, ShiftCount)

    second = services.vault_count(
        vault=stocked_vault, user=supervisor, counted={"cash": VAULT_CASH - Decimal("120.00")}
    )

    assert isinstance(second, models.CountRequest)
    assert place_balances(stocked_vault)["cash"] == VAULT_CASH - Decimal("60.00")


def test_a_count_approved_by_a_second_supervisor_does_not_count_towards_the_next(
    stocked_vault, supervisor, supervisor2
):
    """Found by the adversarial review of issue 21's first fix (four eyes on write-offs): a write-off split into counts
    each within the limit posted at once, however large the sum.
    """
    services.vault_count(vault=stocked_vault, user=supervisor, counted={"cash": VAULT_CASH - Decimal("500.00")})
    services.count_request_approve(request=models.CountRequest.objects.get(status="waiting"), supervisor=supervisor2)

    later = services.vault_count(vault=stocked_vault, user=supervisor, counted={"cash": VAULT_CASH - Decimal("550.00")})

    assert isinstance(later, ShiftCount)


def test_the_vault_count_form_sent_twice_posts_once(stocked_vault, supervisor, supervisor2, shift, cashier):
    """Found by the adversarial review of issue 21's first fix (four eyes on write-offs): the vault count form sent
    twice posted a second count (its key was kept only when the count waited).
    """
    key = "k" * 32
    first = services.vault_count(
        vault=stocked_vault, user=supervisor, counted={"cash": VAULT_CASH - Decimal("50.00")}, operation_key=key
    )
    drop = services.transfer_request(shift=shift, user=cashier, direction="drop", amount=Decimal("80.00"))
    services.transfer_approve(transfer=drop, supervisor=supervisor2)

    again = services.vault_count(
        vault=stocked_vault, user=supervisor, counted={"cash": VAULT_CASH - Decimal("50.00")}, operation_key=key
    )

    assert again == first
    assert ShiftCount.objects.filter(desk=stocked_vault, kind="vault").count() == 2  # the stocking and this one
    assert place_balances(stocked_vault)["cash"] == VAULT_CASH - Decimal("50.00") + Decimal("80.00")

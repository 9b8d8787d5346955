"""A hand-over is counted by both cashiers; each count is theirs (issue 21, "Trust holes")."""

from decimal import Decimal

import pytest
from django.db import IntegrityError, transaction

from cashdesk import models, services
from cashdesk.books import counterparty_balances, place_balances
from cashdesk.errors import CashDeskError
from cashdesk.models import CashTransaction, Shift, ShiftCount, TransactionKind
from tests.cashdesk.conftest import FLOAT
from tests.factories import make_user


def _open_shift_of(user):
    return Shift.objects.filter(cashier=user, closed_at__isnull=True).first()


def _over_short_of(shift) -> Decimal:
    return sum(
        (
            tx.legs.get(desk=shift.desk, item="cash").amount
            for tx in shift.transactions.filter(kind=TransactionKind.COUNT)
        ),
        Decimal("0"),
    )


def test_the_next_shift_opens_only_once_the_incoming_cashier_has_counted(shift, cashier, cashier2):
    request = services.shift_handover(shift=shift, user=cashier, counted=FLOAT, next_cashier=cashier2)

    assert _open_shift_of(cashier2) is None
    assert _open_shift_of(cashier) == shift
    request = services.handover_take_over(request=request, user=cashier2, counted=FLOAT)

    successor = _open_shift_of(cashier2)
    assert successor is not None
    assert successor.previous == shift
    assert request.status == models.CountRequest.Status.DONE
    assert request.successor == successor
    assert shift.counts.get(kind=ShiftCount.Kind.HANDOVER).counted_by == cashier
    assert successor.counts.get(kind=ShiftCount.Kind.OPENING).counted_by == cashier2
    assert _open_shift_of(cashier) is None


def test_the_incoming_cashier_inherits_no_hole_from_the_outgoing_count(shift, cashier, cashier2, supervisor, desk):
    """Issue 21's probe: the outgoing cashier counted 25 000 against 20 000 in the books and the incoming cashier
    inherited a 5 000 hole without counting anything."""
    inflated = {**FLOAT, "cash": Decimal("25000.00")}
    request = services.shift_handover(shift=shift, user=cashier, counted=inflated, next_cashier=cashier2)
    assert place_balances(desk)["cash"] == Decimal("20000.00")  # nothing posted on one person's count

    request = services.handover_take_over(request=request, user=cashier2, counted=FLOAT)
    assert request.status == models.CountRequest.Status.WAITING  # the counts differ: a supervisor decides
    assert _open_shift_of(cashier2) is None

    services.count_request_approve(request=request, supervisor=supervisor, stands="incoming")

    successor = _open_shift_of(cashier2)
    assert place_balances(desk)["cash"] == Decimal("20000.00")
    assert not successor.transactions.filter(kind=TransactionKind.COUNT).exists()
    assert _over_short_of(shift) == 0
    request.refresh_from_db()
    assert (request.decided_by, request.stands) == (supervisor, "incoming")
    assert request.counted["cash"] == "25000.00"
    assert request.next_counted["cash"] == "20000.00"


def test_a_difference_both_cashiers_count_alike_is_posted_to_the_outgoing_shift(shift, cashier, cashier2, casino):
    short = {**FLOAT, "cash": Decimal("19950.00")}
    request = services.shift_handover(shift=shift, user=cashier, counted=short, next_cashier=cashier2)
    services.handover_take_over(request=request, user=cashier2, counted={**short, "cash": Decimal("19950")})

    successor = _open_shift_of(cashier2)
    assert _over_short_of(shift) == Decimal("-50.00")
    assert not successor.transactions.filter(kind=TransactionKind.COUNT).exists()
    assert services.shift_balances(successor)["cash"] == Decimal("19950.00")
    assert counterparty_balances(casino)["over_short"]["cash"] == Decimal("50.00")


def test_when_the_outgoing_count_stands_the_difference_is_still_the_outgoing_shifts(
    shift, cashier, cashier2, supervisor
):
    short = {**FLOAT, "cash": Decimal("19990.00")}
    request = services.shift_handover(shift=shift, user=cashier, counted=short, next_cashier=cashier2)
    request = services.handover_take_over(request=request, user=cashier2, counted={**FLOAT, "cash": Decimal("19980")})
    with pytest.raises(CashDeskError) as refused:
        services.count_request_approve(request=request, supervisor=supervisor)
    assert refused.value.code == "choose_count"

    services.count_request_approve(request=request, supervisor=supervisor, stands="outgoing")

    successor = _open_shift_of(cashier2)
    assert _over_short_of(shift) == Decimal("-10.00")
    assert services.shift_balances(successor)["cash"] == Decimal("19990.00")
    assert successor.counts.get(kind=ShiftCount.Kind.OPENING).counted_by == cashier  # the figures are his


def test_a_handover_difference_above_the_limit_waits_even_when_both_counts_agree(
    shift, cashier, cashier2, supervisor, desk
):
    counted = {**FLOAT, "cash": Decimal("19800.00")}
    request = services.shift_handover(shift=shift, user=cashier, counted=counted, next_cashier=cashier2)
    request = services.handover_take_over(request=request, user=cashier2, counted=counted)
    assert request.status == models.CountRequest.Status.WAITING
    assert place_balances(desk)["cash"] == Decimal("20000.00")

    services.count_request_approve(request=request, supervisor=supervisor)
    assert _over_short_of(shift) == Decimal("-200.00")
    assert CashTransaction.objects.get(shift=shift, kind=TransactionKind.COUNT).approved_by == supervisor


def test_the_outgoing_shift_takes_nothing_while_its_handover_is_counted(shift, cashier, cashier2):
    services.shift_handover(shift=shift, user=cashier, counted=FLOAT, next_cashier=cashier2)
    with pytest.raises(CashDeskError) as refused:
        services.tokens_buy(shift=shift, user=cashier, count=5)
    assert refused.value.code == "count_waiting"


def test_a_rejected_handover_lets_the_outgoing_cashier_go_on_and_count_again(shift, cashier, cashier2, supervisor):
    request = services.shift_handover(
        shift=shift, user=cashier, counted={**FLOAT, "cash": Decimal("25000")}, next_cashier=cashier2
    )
    request = services.handover_take_over(request=request, user=cashier2, counted=FLOAT)
    services.count_request_reject(request=request, supervisor=supervisor)

    request.refresh_from_db()
    assert request.status == "rejected"
    assert request.decided_by == supervisor
    assert request.decided_at is not None
    services.tokens_buy(shift=shift, user=cashier, count=5)
    assert not CashTransaction.objects.filter(kind=TransactionKind.COUNT).exists()


def test_only_the_named_incoming_cashier_counts_the_take_over(shift, cashier, cashier2):
    request = services.shift_handover(shift=shift, user=cashier, counted=FLOAT, next_cashier=cashier2)
    other = make_user("kitas", "cashier")
    with pytest.raises(CashDeskError) as refused:
        services.handover_take_over(request=request, user=other, counted=FLOAT)
    assert refused.value.code == "forbidden"
    with pytest.raises(CashDeskError):
        services.handover_take_over(request=request, user=cashier, counted=FLOAT)


def test_the_database_refuses_a_cashier_deciding_his_own_handover(shift, cashier, cashier2):
    request = services.shift_handover(shift=shift, user=cashier, counted=FLOAT, next_cashier=cashier2)
    services.handover_take_over(request=request, user=cashier2, counted={**FLOAT, "cash": Decimal("1")})
    from django.utils import timezone

    for user in (cashier, cashier2):
        with pytest.raises(IntegrityError), transaction.atomic():
            models.CountRequest.objects.filter(pk=request.pk).update(
                status="approved", decided_by=user, decided_at=timezone.now()
            )


def test_a_supervisor_calls_off_a_handover_the_incoming_cashier_never_counted(shift, cashier, cashier2, supervisor):
    request = services.shift_handover(shift=shift, user=cashier, counted=FLOAT, next_cashier=cashier2)
    with pytest.raises(CashDeskError) as refused:
        services.count_request_approve(request=request, supervisor=supervisor)
    assert refused.value.code == "already_decided"  # nothing to approve before the second count

    services.count_request_reject(request=request, supervisor=supervisor)

    services.tokens_buy(shift=shift, user=cashier, count=5)
    with pytest.raises(CashDeskError):
        services.handover_take_over(request=request, user=cashier2, counted=FLOAT)

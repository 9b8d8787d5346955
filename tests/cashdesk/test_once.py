"""Once per operation key: a form's key answers its first result, even to a twin that got past the lookup."""

import threading
from decimal import Decimal

import pytest
from django.db import connection, transaction
from django.utils import timezone

from cashdesk import services
from cashdesk.errors import CashDeskError
from cashdesk.models import Transfer
from cashdesk.services.once import TRANSFER

KEY = "0123456789abcdef0123456789abcdef"


def _committed_elsewhere(call):
    """Run `call` on a connection of its own and commit it, as a concurrent twin would."""
    failure: list[BaseException] = []

    def worker():
        try:
            call()
        except BaseException as error:  # handed back to the test
            failure.append(error)
        finally:
            connection.close()

    thread = threading.Thread(target=worker)
    thread.start()
    thread.join()
    assert not failure, failure


def _own_request(shift, user):
    return Transfer.objects.create(
        place_id=shift.desk_id,
        shift=shift,
        direction=Transfer.Direction.DROP,
        amount=Decimal("20.00"),
        requested_by=user,
        requested_at=timezone.now(),
        operation_key=KEY,
    )


@pytest.mark.django_db(transaction=True)
def test_a_twin_that_got_past_the_lookup_answers_the_first_result(shift, cashier):
    def run():
        _committed_elsewhere(
            lambda: services.transfer_request(
                shift=shift, user=cashier, direction="drop", amount=Decimal("10.00"), operation_key=KEY
            )
        )
        return _own_request(shift, cashier)  # refused by the key's unique constraint

    with transaction.atomic():
        answer = TRANSFER.once(KEY, user=cashier, run=run)

    assert answer.amount == Decimal("10.00")
    assert list(Transfer.objects.values_list("amount", flat=True)) == [Decimal("10.00")]


@pytest.mark.django_db(transaction=True)
def test_a_twin_of_someone_elses_form_is_refused(shift, cashier, cashier2):
    def run():
        _committed_elsewhere(
            lambda: Transfer.objects.create(
                place_id=shift.desk_id,
                shift=shift,
                direction=Transfer.Direction.DROP,
                amount=Decimal("10.00"),
                requested_by=cashier2,
                requested_at=timezone.now(),
                operation_key=KEY,
            )
        )
        return _own_request(shift, cashier)

    with pytest.raises(CashDeskError) as refused, transaction.atomic():
        TRANSFER.once(KEY, user=cashier, run=run)

    assert refused.value.code == "operation_key_used"
    assert Transfer.objects.filter(requested_by=cashier).count() == 0


def test_a_form_sent_again_shows_the_first_result_and_runs_nothing(shift, cashier):
    first = services.transfer_request(
        shift=shift, user=cashier, direction="drop", amount=Decimal("10.00"), operation_key=KEY
    )

    again = TRANSFER.once(KEY, user=cashier, run=lambda: pytest.fail("ran twice"))

    assert again == first

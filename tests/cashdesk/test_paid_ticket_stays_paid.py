"""A ticket paid at the desk stays paid: setting it back to `issued` in the database is refused."""

import pytest
from django.db import IntegrityError, connection, transaction

from cashdesk import services
from cashdesk.errors import CashDeskError
from tests.tickets.test_final_states_at_the_database import BACK_TO_ISSUED
from tickets.models import Ticket


def test_a_ticket_paid_at_the_desk_is_never_paid_again(api, shift, cashier):
    number = api.issued_ticket("150.00")
    services.ticket_payout(shift=shift, user=cashier, validation_number=number)
    ticket = Ticket.objects.get(validation_number=number)

    with (
        pytest.raises(IntegrityError, match="is redeemed: it never changes state again"),
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        cursor.execute(BACK_TO_ISSUED, [ticket.pk])

    with pytest.raises(CashDeskError) as refused:
        services.ticket_payout(shift=shift, user=cashier, validation_number=number)
    assert refused.value.code == "already_redeemed"
    assert Ticket.objects.get(pk=ticket.pk).state == "redeemed"

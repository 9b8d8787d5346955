"""A redeemed, void or expired ticket never changes state again, whatever writes to the database."""

import datetime as dt

import pytest
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from tickets.models import Ticket
from tickets.services import tickets_expire_due

# Back to `issued` with every field the constraints tie to the old state cleared: only the state rule refuses it.
BACK_TO_ISSUED = (
    "UPDATE tickets_ticket SET state = 'issued', redeemed_at = NULL, redeemed_by_machine_id = NULL, "
    "redeemed_by_user_id = NULL, voided_at = NULL, expired_at = NULL WHERE id = %s"
)


def _redeemed(api, make_api):
    number = api.issued_ticket()
    player = make_api(asset_number="2002")
    player.authorize(number)
    assert player.commit(number).json()["state"] == "redeemed"
    return number


def _void(api, make_api):
    from tests.factories import make_user
    from tickets.desk import ticket_move_to_void as ticket_void

    number = api.issued_ticket()
    supervisor = make_user("rasa", "shift_supervisor")
    ticket_void(ticket=Ticket.objects.get(validation_number=number), user=supervisor, reason="sold by mistake")
    return number


def _expired(api, make_api):
    number = api.issued_ticket()
    assert tickets_expire_due(now=timezone.now() + dt.timedelta(days=400)) == 1
    return number


@pytest.mark.parametrize(("state", "make"), [("redeemed", _redeemed), ("void", _void), ("expired", _expired)])
def test_a_final_ticket_cannot_be_set_back_to_issued(api, make_api, state, make):
    number = make(api, make_api)
    ticket = Ticket.objects.get(validation_number=number)
    assert ticket.state == state

    with (
        pytest.raises(IntegrityError, match=f"is {state}: it never changes state again"),
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        cursor.execute(BACK_TO_ISSUED, [ticket.pk])

    assert Ticket.objects.get(pk=ticket.pk).state == state


def test_the_orm_cannot_move_a_redeemed_ticket_either(api, make_api):
    ticket = Ticket.objects.get(validation_number=_redeemed(api, make_api))
    with pytest.raises(IntegrityError, match="never changes state again"), transaction.atomic():
        Ticket.objects.filter(pk=ticket.pk).update(state="void", voided_at=timezone.now(), redeemed_at=None)


@pytest.mark.parametrize(
    "change",
    [
        "validation_number = '000000000000000000'",
        "amount = amount + 1",
        "casino_id = casino_id + 1000000",
    ],
)
@pytest.mark.parametrize("make", [_redeemed, lambda api, make_api: api.issued_ticket()], ids=["redeemed", "issued"])
def test_a_tickets_number_amount_and_casino_never_change(api, make_api, make, change):
    """Renaming a paid ticket's number and inserting a fresh `issued` copy would pay it twice."""
    ticket = Ticket.objects.get(validation_number=make(api, make_api))
    with (
        pytest.raises(IntegrityError, match="never change"),
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        cursor.execute(f"UPDATE tickets_ticket SET {change} WHERE id = %s", [ticket.pk])  # noqa: S608
    assert Ticket.objects.get(pk=ticket.pk).validation_number == ticket.validation_number

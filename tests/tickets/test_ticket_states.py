"""The ticket's states are written once (tickets.models.STATES): the lists and the final-state trigger follow."""

import datetime as dt

import pytest
from django.db import connection
from django.utils import timezone

from tickets.desk import _move
from tickets.exceptions import TicketRefused
from tickets.models import (
    _PRINTED_STATES,
    FINAL_STATES,
    FINAL_STATES_SQL,
    OUTSTANDING_STATES,
    STATES,
    Ticket,
    TicketState,
)
from tickets.services import tickets_expire_due


def test_the_ticket_states_are_the_table_exactly():
    """TicketState is spelled out member by member (so its members stay typed): it must match the table."""
    assert [(value, str(label)) for value, label in TicketState.choices] == [(s.value, str(s.label)) for s in STATES]


def test_the_derived_lists():
    assert OUTSTANDING_STATES == ["issued", "redeem_pending", "on_hold"]
    assert _PRINTED_STATES == ["issued", "redeem_pending", "redeemed", "expired", "on_hold"]
    # Expired is final, as the database's trigger has always held it: no path leads out of it.
    assert FINAL_STATES == ["redeemed", "void", "expired"]
    assert not set(FINAL_STATES) & set(OUTSTANDING_STATES)


def test_the_trigger_lists_the_final_states_of_the_table():
    (final_state,) = [trigger for trigger in Ticket._meta.triggers if trigger.name == "final_state"]  # type: ignore[attr-defined]
    assert f"OLD.state IN {FINAL_STATES_SQL}" in final_state.func


@pytest.mark.django_db
def test_the_installed_trigger_refuses_to_leave_exactly_the_final_states():
    (final_state,) = [trigger for trigger in Ticket._meta.triggers if trigger.name == "final_state"]  # type: ignore[attr-defined]
    with connection.cursor() as cursor:
        cursor.execute("SELECT prosrc FROM pg_proc WHERE proname = %s", [final_state.get_pgid(Ticket)])
        (source,) = cursor.fetchone()
    assert f"OLD.state IN {FINAL_STATES_SQL}" in source


def test_an_expired_ticket_is_refused_before_the_database_is_asked(api):
    number = api.issued_ticket()
    assert tickets_expire_due(now=timezone.now() + dt.timedelta(days=400)) == 1
    ticket = Ticket.objects.get(validation_number=number)
    with pytest.raises(TicketRefused) as refused:
        _move(ticket, to=TicketState.VOID, voided_at=timezone.now())
    assert refused.value.code == "invalid_state"
    assert Ticket.objects.get(pk=ticket.pk).state == TicketState.EXPIRED

"""The database itself refuses rows that break the ticket rules, even behind the ORM's back."""

import datetime as dt
from decimal import Decimal

import pytest
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from machines.chains import chain_and_save
from tickets.models import Ticket, TicketEvent


@pytest.fixture
def ticket(api):
    number = api.issued_ticket()
    return Ticket.objects.get(validation_number=number)


BAD_UPDATES = [
    ("amount zero", {"amount": Decimal("0")}),
    ("amount negative", {"amount": Decimal("-1.00")}),
    ("unknown state", {"state": "paid"}),
    ("unknown type", {"ticket_type": "bonus"}),
    ("number too short", {"validation_number": "12345"}),
    ("number with letters", {"validation_number": "00421877931234567a"}),
    ("redeemed without time or redeemer", {"state": "redeemed"}),
    ("redeem_pending without holder", {"state": "redeem_pending"}),
    ("redeemed_at on an issued ticket", {"redeemed_at": timezone.now()}),
    ("void without voided_at", {"state": "void"}),
    ("expired without expired_at", {"state": "expired"}),
    ("issued without printed_at", {"printed_at": None}),
    ("pending_print with printed_at", {"state": "pending_print"}),
    ("expiry before issue", {"expires_at": timezone.now() - dt.timedelta(days=400)}),
    ("no issuer", {"issuing_machine": None}),
]


@pytest.mark.parametrize(("why", "fields"), BAD_UPDATES, ids=[b[0] for b in BAD_UPDATES])
def test_database_refuses_an_inconsistent_ticket(ticket, why, fields):
    with pytest.raises(IntegrityError), transaction.atomic():
        Ticket.objects.filter(pk=ticket.pk).update(**fields)


def test_validation_numbers_are_unique_across_casinos(api, make_api, other_casino):
    first = Ticket.objects.get(validation_number=api.issued_ticket())
    second = Ticket.objects.get(validation_number=make_api(casino=other_casino).issued_ticket())
    with pytest.raises(IntegrityError), transaction.atomic():
        Ticket.objects.filter(pk=second.pk).update(validation_number=first.validation_number)


def test_sequence_is_unique_per_issuing_machine(api):
    first = Ticket.objects.get(validation_number=api.issued_ticket())
    second = Ticket.objects.get(validation_number=api.issued_ticket())
    with pytest.raises(IntegrityError), transaction.atomic():
        Ticket.objects.filter(pk=second.pk).update(sequence=first.sequence)


def test_ticket_events_cannot_be_updated(ticket):
    with pytest.raises(IntegrityError, match="append-only"), transaction.atomic():
        TicketEvent.objects.filter(ticket=ticket).update(reason="rewritten")


def test_ticket_events_cannot_be_deleted(ticket):
    with pytest.raises(IntegrityError, match="append-only"), transaction.atomic():
        TicketEvent.objects.filter(ticket=ticket).delete()


def test_ticket_events_cannot_be_changed_in_raw_sql(ticket):
    with pytest.raises(IntegrityError), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("UPDATE tickets_ticketevent SET kind = 'redeemed' WHERE ticket_id = %s", [ticket.pk])


def test_event_needs_an_actor_unless_written_by_the_system(ticket):
    with pytest.raises(IntegrityError, match="ticketevent_has_actor"), transaction.atomic():
        chain_and_save(
            TicketEvent(ticket=ticket, kind="redeemed", created_at=timezone.now()), casino_id=ticket.casino_id
        )
    chain_and_save(TicketEvent(ticket=ticket, kind="expired", created_at=timezone.now()), casino_id=ticket.casino_id)

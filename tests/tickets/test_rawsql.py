"""casino_office.rawsql: the machine API's hot statements read and write what the ORM would, and are prepared."""

from django.db import connection
from django.test.utils import CaptureQueriesContext

from casino_office import rawsql
from machines.chains import chain_head_update, chain_records
from machines.models import ChainHead, Machine
from tickets.models import Ticket, TicketEvent, TicketEventKind, TicketState


def _ticket(api) -> Ticket:
    return Ticket.objects.get(validation_number=api.issued_ticket("12.345"))


def test_a_row_read_by_select_one_equals_the_orms(api):
    ticket = _ticket(api)
    raw = rawsql.select_one(Ticket, 't."id" = %s', [ticket.pk], lock=True)
    assert raw is not None
    for field in Ticket._meta.concrete_fields:
        assert getattr(raw, field.attname) == getattr(ticket, field.attname), field.name
    assert raw.amount.as_tuple() == ticket.amount.as_tuple()  # a Decimal with its three places, not a float

    machine = rawsql.select_one(Machine, 't."id" = %s', [api.machine.pk], related="casino")
    assert machine is not None
    with CaptureQueriesContext(connection) as queries:
        assert machine.casino.zoneinfo == api.machine.casino.zoneinfo  # read in the same statement
    assert not queries.captured_queries
    assert rawsql.select_one(Ticket, 't."validation_number" = %s', ["000000000000000000"]) is None


def test_a_change_and_its_event_are_written_together(api):
    ticket = _ticket(api)
    ticket.state = TicketState.VOID
    ticket.voided_at = ticket.issued_at
    event = TicketEvent(
        ticket=ticket,
        kind=TicketEventKind.PRINT_FAILED,
        from_state=TicketState.PENDING_PRINT,
        to_state=TicketState.VOID,
        machine=api.machine,
        details={"why": "test"},
        created_at=ticket.issued_at,
    )
    chain_records([event], casino_id=ticket.casino_id)
    with CaptureQueriesContext(connection) as queries:
        rawsql.update_and_insert(ticket, ["state", "voided_at"], event, also=chain_head_update(event))
    assert len(queries.captured_queries) == 1  # one round trip on PostgreSQL
    assert ChainHead.objects.get(pk=event.chain_id).mac == event.chain_mac
    assert Ticket.objects.get(pk=ticket.pk).state == TicketState.VOID
    stored = TicketEvent.objects.get(pk=event.pk)
    assert (stored.kind, stored.details, stored.machine_id) == (
        TicketEventKind.PRINT_FAILED,
        {"why": "test"},
        api.machine.pk,
    )


def test_an_insert_on_a_taken_number_writes_nothing_and_says_so(api):
    ticket = _ticket(api)
    copy = Ticket.objects.get(pk=ticket.pk)
    copy.pk = None
    before = Ticket.objects.count()
    assert rawsql.insert(copy, on_conflict="validation_number") is False
    assert copy.pk is None
    assert Ticket.objects.count() == before


def test_the_hot_statements_are_prepared_on_the_connection(api):
    assert connection.settings_dict["OPTIONS"]["prepare_threshold"] == 5
    for _ in range(6):
        api.issued_ticket()
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements")
        prepared = [row[0] for row in cursor.fetchall()]
    assert any('FROM "machines_machine" t JOIN "machines_casino" r' in text for text in prepared), prepared
    assert any('INSERT INTO "tickets_ticket"' in text for text in prepared), prepared

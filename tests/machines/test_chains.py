"""The journals' chains against the database's own administrator (issue 23).

A superuser can switch the triggers off (`session_replication_role = replica`)
and rewrite any row. Each test below does one such tampering and asserts
that the books' verification names it.
"""

from decimal import Decimal

import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from machines.anchors import AnchorError, anchor_read, books_anchor, books_anchor_all
from machines.chains import JournalChain, books_verify, journals
from machines.models import ChainHead
from tickets.models import Ticket, TicketEvent

pytestmark = pytest.mark.django_db


def tamper(sql: str, params: list | tuple = ()) -> None:
    """Change rows behind the triggers' back, as a database superuser could.

    The checks the test's own writes left for commit (deferred foreign keys, balanced legs) run first.
    """
    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        cursor.execute("SET session_replication_role = replica")
        cursor.execute(sql, params)
        cursor.execute("SET session_replication_role = DEFAULT")
        cursor.execute("SET CONSTRAINTS ALL DEFERRED")  # as the application's transactions expect them


def findings(casino) -> list[str]:
    return [str(finding) for finding in books_verify(casino)]


def set_back(ticket: Ticket) -> None:
    """A redeemed ticket made valid again, every field of its redemption cleared."""
    tamper(
        "UPDATE tickets_ticket SET state = 'issued', redeemed_at = NULL, redeemed_by_machine_id = NULL, "
        "redeemed_by_user_id = NULL WHERE id = %s",
        [ticket.pk],
    )


@pytest.fixture
def redeemed(api, make_api) -> Ticket:
    """A ticket printed by one machine and played into another."""
    number = api.issued_ticket("7.00")
    player = make_api()
    assert player.authorize(number).status_code == 200
    assert player.commit(number).status_code == 200
    return Ticket.objects.get(validation_number=number)


def test_the_journals_are_declared_with_every_field_covered_or_exempt():
    chain_fields = {"chain_id", "chain_sequence", "chain_key", "chain_mac"}
    for model in journals():
        own = {path for path in model.journal_fields if "__" not in path}
        names = {field.attname for field in model._meta.concrete_fields} - chain_fields
        assert names == own | set(model.journal_exempt), model.__name__


def test_untouched_books_verify(redeemed, casino):
    assert findings(casino) == []
    head = ChainHead.objects.get(casino=casino, journal="ticket_events")
    assert head.sequence == TicketEvent.objects.filter(ticket__casino=casino).count() == 4


def test_a_redeemed_ticket_set_back_to_issued_is_named(redeemed, casino):
    set_back(redeemed)
    assert findings(casino) == [f"{casino.code}: ticket {redeemed.pk}: it is issued, its last event left it redeemed"]


def test_a_ticket_set_back_and_paid_again_is_named(redeemed, casino, make_api):
    set_back(redeemed)
    again = make_api()
    assert again.authorize(redeemed.validation_number).status_code == 200
    assert again.commit(redeemed.validation_number).status_code == 200
    found = findings(casino)
    assert len(found) == 1
    assert (
        f"(ticket {redeemed.pk}, authorized): it does not start where the ticket's event before it left it" in found[0]
    )


def test_a_ticket_amount_raised_is_named(redeemed, casino):
    tamper("UPDATE tickets_ticket SET amount = %s WHERE id = %s", [Decimal("7000.00"), redeemed.pk])
    assert findings(casino) == [
        f"{casino.code}: ticket_events record 1: its content does not match its MAC (edited, forged or moved)"
    ]


def test_a_deleted_event_is_named(redeemed, casino):
    last = TicketEvent.objects.filter(ticket=redeemed).order_by("chain_sequence").last()
    tamper("DELETE FROM tickets_ticketevent WHERE id = %s", [last.pk])
    found = findings(casino)
    assert found[0] == (f"{casino.code}: ticket_events: its head says record 4, its records end at 3 (deleted or cut)")


def test_reordered_events_are_named(redeemed, casino):
    first, second = TicketEvent.objects.filter(ticket=redeemed).order_by("chain_sequence")[:2]
    tamper("UPDATE tickets_ticketevent SET chain_sequence = -1 WHERE id = %s", [first.pk])
    tamper("UPDATE tickets_ticketevent SET chain_sequence = 1 WHERE id = %s", [second.pk])
    tamper("UPDATE tickets_ticketevent SET chain_sequence = 2 WHERE id = %s", [first.pk])
    assert findings(casino)[0] == (
        f"{casino.code}: ticket_events record 1: its content does not match its MAC (edited, forged or moved)"
    )


def test_verify_books_exits_non_zero_and_names_it(redeemed, casino, capsys):
    call_command("verify_books")
    assert f"{casino.code}: books intact" in capsys.readouterr().out
    tamper("UPDATE tickets_ticket SET amount = %s WHERE id = %s", [Decimal("7000.00"), redeemed.pk])
    with pytest.raises(CommandError, match="ticket_events record 1: its content does not match its MAC"):
        call_command("verify_books")


# --- Anchors: the chains' ends outside the database ------------------------------------------------------------


def cut_ticket(ticket: Ticket) -> None:
    """Delete a ticket with its events and move the chain's head back, as a superuser hiding it would."""
    events = list(TicketEvent.objects.filter(ticket=ticket).order_by("chain_sequence"))
    before = TicketEvent.objects.filter(chain_id=events[0].chain_id, chain_sequence=events[0].chain_sequence - 1)
    previous = before.values_list("chain_mac", flat=True).first() or "0" * 64
    tamper("DELETE FROM tickets_ticketevent WHERE ticket_id = %s", [ticket.pk])
    tamper("DELETE FROM tickets_ticket WHERE id = %s", [ticket.pk])
    tamper(
        "UPDATE machines_chainhead SET sequence = %s, mac = %s WHERE id = %s",
        [events[0].chain_sequence - 1, previous, events[0].chain_id],
    )


def verify_with_anchors(directory, capsys) -> str:
    call_command("verify_books", "--anchors", str(directory))
    return capsys.readouterr().out


def test_an_anchor_names_every_chain_and_is_never_written_over(redeemed, casino, tmp_path):
    path = books_anchor(casino=casino, directory=tmp_path)
    anchor = anchor_read(path)
    assert anchor.chains["ticket_events"] == JournalChain(TicketEvent).end(casino)
    assert anchor.chains["ticket_events"][0] == 4
    assert "register" in anchor.chains
    assert path.parent == tmp_path / casino.code / "books"
    with pytest.raises(AnchorError, match="exists already"):
        books_anchor(casino=casino, directory=tmp_path, now=anchor.at)
    assert anchor_read(path) == anchor


def test_a_tail_cut_before_the_last_anchor_is_named(redeemed, casino, api, tmp_path, capsys):
    books_anchor(casino=casino, directory=tmp_path)
    cut_ticket(redeemed)
    call_command("verify_books")  # the chain alone cannot tell: what is left is a whole chain
    with pytest.raises(CommandError, match="ticket_events record 4 is missing"):
        verify_with_anchors(tmp_path, capsys)


def test_what_is_written_and_deleted_between_two_anchors_is_the_stated_window(redeemed, casino, api, tmp_path, capsys):
    """docs/operations.md: what is written after the last anchor and deleted before the next is not seen."""
    books_anchor(casino=casino, directory=tmp_path)
    later = Ticket.objects.get(validation_number=api.issued_ticket("5.00"))
    cut_ticket(later)
    assert "TOR: books intact" in verify_with_anchors(tmp_path, capsys)


def test_an_old_backup_restored_over_new_data_is_named(redeemed, casino, api, tmp_path, capsys):
    books_anchor(casino=casino, directory=tmp_path)  # the backup is taken about now
    newer = Ticket.objects.get(validation_number=api.issued_ticket("5.00"))
    books_anchor(casino=casino, directory=tmp_path)  # the books are anchored after it
    cut_ticket(newer)  # the restore brings back the books as they were at the backup
    with pytest.raises(CommandError, match="ticket_events record 6 is missing"):
        verify_with_anchors(tmp_path, capsys)


def test_a_cut_chain_is_reported_not_anchored_over(redeemed, casino, tmp_path):
    books_anchor(casino=casino, directory=tmp_path)
    cut_ticket(redeemed)
    written, refused = books_anchor_all(directory=tmp_path)
    assert written == []
    assert refused == [
        f"{casino.code}: anchor of {anchor_read(next(tmp_path.rglob('*.json'))).at.isoformat()}: "
        "ticket_events record 4 is missing (the chain was cut short, emptied or restored from before)"
    ]


def test_a_forged_anchor_is_named(redeemed, casino, tmp_path, capsys):
    path = books_anchor(casino=casino, directory=tmp_path)
    text = path.read_text().replace('"sequence": 4', '"sequence": 3')
    path.write_text(text)
    with pytest.raises(CommandError, match="its signature does not hold"):
        verify_with_anchors(tmp_path, capsys)


def test_the_register_anchors_ignore_the_books_anchors_beside_them(redeemed, casino, tmp_path, capsys):
    books_anchor(casino=casino, directory=tmp_path)
    # Read and set aside, not refused as a broken register anchor: the register has none yet.
    with pytest.raises(CommandError, match="no anchors in"):
        call_command("verify_register", "--anchors", str(tmp_path))

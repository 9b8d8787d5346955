"""The cash desk's books against the database's own administrator (issue 23).

Each test tampers as a superuser with the triggers off (`session_replication_role
= replica`) and asserts that the books' verification names what was done.
"""

from decimal import Decimal

import pytest
from django.core.management import CommandError, call_command

from cashdesk import services
from cashdesk.models import CashTransaction, Leg
from machines.chains import books_verify
from tests.machines.test_chains import tamper


def findings(casino) -> list[str]:
    return [str(finding) for finding in books_verify(casino)]


@pytest.fixture
def bought(shift, cashier, person) -> CashTransaction:
    """1 500 EUR of chips bought by an identified person: a transaction with its register line."""
    return services.chips_buy(shift=shift, user=cashier, chips={"chip_500": 3}, person=person)


def test_untouched_books_verify(bought, casino, capsys):
    assert bought.chain_sequence >= 1
    assert findings(casino) == []
    call_command("verify_books")
    assert f"{casino.code}: books intact" in capsys.readouterr().out


def test_a_transaction_and_its_legs_changed_behind_a_register_entry_are_named(bought, casino):
    """The issue's probe: the transaction and legs behind a register entry changed (here from 1 500 to 1 000)."""
    tamper("UPDATE cashdesk_cashtransaction SET amount = 1000 WHERE id = %s", [bought.pk])
    tamper(
        "UPDATE cashdesk_leg SET amount = SIGN(amount) * 1000, count = CASE WHEN count IS NULL THEN NULL "
        "ELSE SIGN(count) * 2 END WHERE transaction_id = %s",
        [bought.pk],
    )
    found = findings(casino)
    seq = bought.chain_sequence
    assert f"{casino.code}: cash_transactions record {seq}: its content does not match its MAC" in found[0]
    entry = bought.register_entry
    assert any(
        f"register entry {entry.sequence}: it says 1500.00 EUR, transaction {bought.pk} 1000.00" in f for f in found
    )


def test_a_deleted_leg_is_named(bought, casino):
    leg = Leg.objects.filter(transaction=bought).first()
    tamper("DELETE FROM cashdesk_leg WHERE id = %s", [leg.pk])
    assert (
        f"cash_transactions record {bought.chain_sequence}: its content does not match its MAC" in findings(casino)[0]
    )


def test_a_leg_moved_to_another_transaction_is_named(bought, shift, cashier, person, casino):
    other = services.chips_buy(shift=shift, user=cashier, chips={"chip_500": 1}, person=None)
    leg = Leg.objects.filter(transaction=bought).first()
    tamper("UPDATE cashdesk_leg SET transaction_id = %s WHERE id = %s", [other.pk, leg.pk])
    assert (
        f"cash_transactions record {bought.chain_sequence}: its content does not match its MAC" in findings(casino)[0]
    )


def test_a_forged_transaction_is_named(bought, casino, desk, shift):
    """A transaction inserted with balanced legs and a made-up MAC at the chain's next place."""
    tamper(
        "INSERT INTO cashdesk_cashtransaction (casino_id, desk_id, shift_id, number, kind, amount, identity_threshold, "
        "note, created_by_id, created_at, chain_id, chain_sequence, chain_key, chain_mac) SELECT casino_id, desk_id, "
        "shift_id, number + 100, kind, 10, identity_threshold, '', created_by_id, created_at, chain_id, "
        "chain_sequence + 1, chain_key, %s "
        "FROM cashdesk_cashtransaction WHERE id = %s",
        ["f" * 64, bought.pk],
    )
    forged = CashTransaction.objects.get(chain_sequence=bought.chain_sequence + 1)
    tamper(
        "INSERT INTO cashdesk_leg (transaction_id, casino_id, desk_id, counterparty, item, amount) VALUES "
        "(%s, %s, %s, '', 'cash', -10), (%s, %s, NULL, 'players', 'cash', 10)",
        [forged.pk, casino.pk, desk.pk, forged.pk, casino.pk],
    )
    assert findings(casino)[0] == (
        f"{casino.code}: cash_transactions record {forged.chain_sequence}: "
        "its content does not match its MAC (edited, forged or moved)"
    )


def test_a_deleted_transaction_leaves_its_legs_and_register_line_named(bought, casino):
    tamper("DELETE FROM cashdesk_cashtransaction WHERE id = %s", [bought.pk])
    found = findings(casino)
    assert any(f.endswith("its transaction is gone (deleted)") and ": leg " in f for f in found), found
    assert any(f"its transaction {bought.pk} is gone (deleted)" in f for f in found), found


def test_verify_books_exits_non_zero_on_a_changed_amount(bought, casino):
    tamper("UPDATE cashdesk_cashtransaction SET amount = %s WHERE id = %s", [Decimal("1499.00"), bought.pk])
    with pytest.raises(CommandError, match="cash_transactions record"):
        call_command("verify_books")


def test_a_transaction_appends_to_the_books_before_the_tickets(shift, cashier, supervisor, monkeypatch, casino):
    """Two chain heads taken in opposite orders by two transactions would deadlock: a sale's reversal voided the
    ticket (its event) before posting the reversal, while a payout posts first. Every path now posts first."""
    import machines.chains

    taken: list[str] = []
    advance = machines.chains._advance

    def recorded(casino_id, journal, count):
        taken.append(journal)
        return advance(casino_id, journal, count)

    monkeypatch.setattr(machines.chains, "_advance", recorded)
    sale = services.ticket_sell(shift=shift, user=cashier, amount=Decimal("20.00"), person=None)
    request = services.reversal_request(original=sale, user=cashier, reason="wrong amount")
    taken.clear()
    services.reversal_approve(request=request, supervisor=supervisor)
    assert taken == ["cash_transactions", "ticket_events"]
    assert findings(casino) == []


def test_a_count_line_changed_or_a_count_deleted_is_named(shift, cashier, casino, stocked_vault, supervisor):
    """Counts are a chained journal with their lines: a superuser changing what was counted is named."""
    from cashdesk.models import ShiftCount, ShiftCountLine

    count = ShiftCount.objects.filter(desk__casino=casino).order_by("chain_sequence").last()
    assert count is not None
    assert count.lines.exists()
    assert findings(casino) == []
    line = ShiftCountLine.objects.filter(count=count).first()
    tamper(
        "UPDATE cashdesk_shiftcountline SET counted_amount = counted_amount + 100, variance = variance + 100 "
        "WHERE id = %s",
        [line.pk],
    )
    assert f"counts record {count.chain_sequence}: its content does not match its MAC" in findings(casino)[0]


def test_counts_are_append_only_at_the_database(shift, casino):
    from django.db import IntegrityError, transaction

    from cashdesk.models import ShiftCount

    count = ShiftCount.objects.filter(desk__casino=casino).first()
    with pytest.raises(IntegrityError, match="append-only"), transaction.atomic():
        ShiftCount.objects.filter(pk=count.pk).update(operation_key="changed")


# --- The probes, as a superuser did them on a production-like database ---------------------------------


@pytest.fixture
def played(api, make_api):
    """A 7.00 ticket printed by one machine and redeemed by another."""
    from tickets.models import Ticket

    number = api.issued_ticket("7.00")
    player = make_api()
    assert player.authorize(number).status_code == 200
    assert player.commit(number).status_code == 200
    return Ticket.objects.get(validation_number=number)


def test_a_machine_redeemed_ticket_set_back_to_issued_then_paid_at_the_desk_is_named(played, shift, cashier, casino):
    tamper(
        "UPDATE tickets_ticket SET state = 'issued', redeemed_at = NULL, redeemed_by_machine_id = NULL WHERE id = %s",
        [played.pk],
    )
    services.ticket_payout(shift=shift, user=cashier, validation_number=played.validation_number)
    found = findings(casino)
    assert found == [
        f"{casino.code}: ticket_events record 5 (ticket {played.pk}, redeemed): it does not start where the ticket's "
        "event before it left it (redeemed)"
    ]


def test_a_ticket_raised_from_7_to_7000_then_paid_with_identification_is_named(played, shift, cashier, person, casino):
    tamper(
        "UPDATE tickets_ticket SET amount = 7000, state = 'issued', redeemed_at = NULL, redeemed_by_machine_id = NULL "
        "WHERE id = %s",
        [played.pk],
    )
    paid = services.ticket_payout(shift=shift, user=cashier, validation_number=played.validation_number, person=person)
    assert paid.amount == Decimal("7000.00")
    found = findings(casino)
    assert found[0] == (
        f"{casino.code}: ticket_events record 1: its content does not match its MAC (edited, forged or moved)"
    )


def test_register_entries_deleted_after_the_register_s_daily_anchor_are_named_by_the_books_anchor(
    shift, cashier, person, casino, tmp_path
):
    """The issue's last probe: the register's own anchors are daily; the books' anchors (every 15 minutes) name
    its head too, so entries cut after the daily anchor are found once a books anchor has seen them."""
    from compliance.models import RegisterEntry
    from machines.anchors import books_anchor

    for _ in range(3):
        services.chips_buy(shift=shift, user=cashier, chips={"chip_500": 3}, person=person)
    books_anchor(casino=casino, directory=tmp_path)
    last = RegisterEntry.objects.filter(casino=casino).order_by("-sequence").first()
    tamper("DELETE FROM compliance_registerentry WHERE id = %s", [last.pk])
    with pytest.raises(CommandError, match=f"register record {last.sequence} is missing"):
        call_command("verify_books", "--anchors", str(tmp_path))

"""The drop and the count (issue 25): boxes taken out with their meters, counted twice and blind, approved once
into the vault; tickets in the boxes matched with what the machines redeemed."""

import itertools
from decimal import Decimal

import pytest
from django.contrib.auth.models import Permission
from django.db import IntegrityError, transaction
from django.utils import timezone

from cashdesk.books import counterparty_balances, place_balances
from cashdesk.errors import CashDeskError
from cashdesk.items import Item
from cashdesk.models import Counterparty, DroppedBox, TablePlaces, TransactionKind
from cashdesk.services.count_room import (
    box_arrive,
    box_findings,
    box_remove,
    box_tally,
    count_approve,
    drop_start,
    machine_box,
)
from cashdesk.services.tables import table_buy_in, table_open
from staff.models import StaffAssignment
from tests.cashdesk.test_kiosks import assert_books_balance
from tests.cashdesk.test_table_day import FLOAT
from tests.conftest import MachineClient
from tests.factories import MachineFactory, make_user
from tickets.api.meters import meter_reading_record
from tickets.models import TicketEvent, TicketEventKind

pytestmark = pytest.mark.django_db
_requests = itertools.count(1)


def staff(casino, name, *roles):
    user = make_user(name, *roles)
    StaffAssignment.objects.create(user=user, casino=casino)
    return user


@pytest.fixture
def team(casino, stocked_vault):
    return {
        "attendant": staff(casino, "drop-tomas", "floor_attendant"),
        "security": staff(casino, "drop-saugas", "security_officer"),
        "counter1": staff(casino, "count-ona", "counter"),
        "counter2": staff(casino, "count-jonas", "counter"),
        "supervisor": staff(casino, "count-rasa", "count_supervisor"),
    }


def notes_meter(machine, amount: str) -> None:
    """The machine's meters as it sends them (its door opening, or its regular reading)."""
    meter_reading_record(
        machine=machine,
        read_at=timezone.now(),
        values={
            "ticket_out_count": 0,
            "ticket_out_amount": Decimal("0"),
            "ticket_in_count": 0,
            "ticket_in_amount": Decimal("0"),
            "bills_in_amount": Decimal(amount),
        },
        request_id=f"meters-{next(_requests)}",
    )


def played_in(player_machine: MachineClient, into: MachineClient, amount: str) -> str:
    """A ticket printed by one machine and played into another: redeemed there, in its box."""
    number = player_machine.issued_ticket(amount)
    assert into.authorize(number).status_code == 200
    assert into.commit(number).status_code == 200
    return number


def counted_by_two(box, team, notes, tickets=()):
    box_arrive(box=box, user=team["counter1"], box_number=box.box_number)
    box_tally(box=box, user=team["counter1"], box_number=box.box_number, notes=notes, tickets=list(tickets))
    box_tally(box=box, user=team["counter2"], box_number=box.box_number, notes=notes, tickets=list(tickets))
    box.refresh_from_db()
    return box


@pytest.fixture
def slot(casino, machine, make_api):
    """A slot machine that took 100 EUR of notes since its first reading, and two tickets played into it."""
    printer = make_api(asset_number="2002")
    into = MachineClient(machine)
    notes_meter(machine, "1000")
    tickets = [played_in(printer, into, "12.50"), played_in(printer, into, "7.00")]
    notes_meter(machine, "1100")
    return machine, tickets


def test_a_machine_s_box_is_taken_out_by_its_meter_counted_and_approved_into_the_vault(casino, vault, team, slot):
    machine, tickets = slot
    vault_cash = place_balances(vault)[Item.CASH]
    drop = drop_start(casino=casino, user=team["attendant"], witness=team["security"])
    box = box_remove(drop=drop, user=team["attendant"], machine=machine, box_number="B-1001")
    assert box.expected == Decimal("100.00")
    assert box.removal_transaction.kind == TransactionKind.MACHINE_DROP
    assert place_balances(machine_box(machine))[Item.CASH] == Decimal("100.00")
    assert counterparty_balances(casino)[Counterparty.SLOT_WIN][Item.CASH] == Decimal("-100.00")

    box = counted_by_two(box, team, {"50": 1, "20": 2, "10": 1}, tickets)
    findings = box_findings(box)
    assert (findings.counted, findings.difference, findings.percent) == (Decimal("100.00"), 0, 0)
    assert sorted(t.validation_number for t in findings.matched) == sorted(tickets)
    assert findings.tickets_in == Decimal("19.50")
    assert (findings.suspicious, findings.missing) == ([], [])

    count_approve(drop=drop, user=team["supervisor"], reasons={})
    drop.refresh_from_db()
    assert drop.approved_by == team["supervisor"]
    assert place_balances(vault)[Item.CASH] == vault_cash + 100
    assert place_balances(machine_box(machine))[Item.CASH] == 0
    collected = TicketEvent.objects.filter(kind=TicketEventKind.COLLECTED)
    assert sorted(event.ticket.validation_number for event in collected) == sorted(tickets)
    assert {event.ticket.state for event in collected} == {"redeemed"}
    assert_books_balance(casino)


def test_the_second_count_is_blind_and_a_disagreement_is_counted_again(casino, team, slot):
    machine, tickets = slot
    drop = drop_start(casino=casino, user=team["attendant"], witness=team["security"])
    box = box_remove(drop=drop, user=team["attendant"], machine=machine, box_number="B-1001")
    box_arrive(box=box, user=team["counter1"], box_number="B-1001")
    box_tally(box=box, user=team["counter1"], box_number="B-1001", notes={"50": 2}, tickets=tickets)
    with pytest.raises(CashDeskError, match="another counter"):
        box_tally(box=box, user=team["counter1"], box_number="B-1001", notes={"50": 2}, tickets=tickets)
    box_tally(box=box, user=team["counter2"], box_number="B-1001", notes={"50": 1, "20": 2}, tickets=tickets)
    box.refresh_from_db()
    assert box.counted is None  # they differ: nothing is shown, the box is counted again
    with pytest.raises(CashDeskError, match="not agreed"):
        box_findings(box)
    box_tally(box=box, user=team["counter1"], box_number="B-1001", notes={"50": 1, "20": 2, "10": 1}, tickets=tickets)
    box.refresh_from_db()
    assert box.counted is None
    box_tally(box=box, user=team["counter2"], box_number="B-1001", notes={"50": 1, "20": 2, "10": 1}, tickets=tickets)
    box.refresh_from_db()
    assert box.counted == Decimal("100.00")
    with pytest.raises(CashDeskError, match="counted once per drop"):
        box_tally(box=box, user=team["counter1"], box_number="B-1001", notes={"50": 2}, tickets=tickets)


def test_each_exception_shows_once_a_suspicious_ticket_a_missing_one_and_a_note_too_many(casino, team, slot, make_api):
    machine, tickets = slot
    elsewhere = make_api(asset_number="3003")
    stranger = played_in(make_api(asset_number="4004"), elsewhere, "5.00")  # played at another machine
    drop = drop_start(casino=casino, user=team["attendant"], witness=team["security"])
    box = box_remove(drop=drop, user=team["attendant"], machine=machine, box_number="B-1001")
    # One of the machine's tickets fell on the floor; one never played here is in the box; a 20 too many.
    box = counted_by_two(box, team, {"50": 1, "20": 3, "10": 1}, [tickets[0], stranger])
    findings = box_findings(box)
    assert [t.validation_number for t in findings.missing] == [tickets[1]]
    assert [(s.number, s.ticket.redeemed_by_machine_id) for s in findings.suspicious] == [
        (stranger, elsewhere.machine.pk)
    ]
    assert [t.validation_number for t in findings.matched] == [tickets[0]]
    assert (findings.difference, findings.percent, findings.needs_reason) == (Decimal("20.00"), Decimal("20.00"), True)

    with pytest.raises(CashDeskError, match="reason"):
        count_approve(drop=drop, user=team["supervisor"], reasons={})
    count_approve(drop=drop, user=team["supervisor"], reasons={box.pk: "acceptor_jam"})
    assert counterparty_balances(casino)[Counterparty.OVER_SHORT][Item.CASH] == Decimal("-20.00")
    # Only the machine's own ticket is collected; the stranger is left for the investigation.
    assert list(
        TicketEvent.objects.filter(kind=TicketEventKind.COLLECTED).values_list("ticket__validation_number", flat=True)
    ) == [tickets[0]]
    assert_books_balance(casino)


def test_a_counter_or_the_drop_team_cannot_approve_and_a_count_posts_once(casino, vault, team, slot):
    machine, tickets = slot
    drop = drop_start(casino=casino, user=team["attendant"], witness=team["security"])
    box = box_remove(drop=drop, user=team["attendant"], machine=machine, box_number="B-1001")
    box_arrive(box=box, user=team["counter1"], box_number="B-1001")
    # A count supervisor may count a box; then that supervisor does not approve the run's count.
    counting_supervisor = staff(casino, "count-lina", "count_supervisor")
    for counter in (team["counter1"], counting_supervisor):
        box_tally(box=box, user=counter, box_number="B-1001", notes={"100": 1}, tickets=tickets)
    for someone in (team["counter1"], counting_supervisor, team["attendant"], team["security"]):
        with pytest.raises(CashDeskError):
            count_approve(drop=drop, user=someone, reasons={})
    count_approve(drop=drop, user=team["supervisor"], reasons={}, operation_key="k-1")
    vault_cash = place_balances(vault)[Item.CASH]
    again = count_approve(drop=drop, user=team["supervisor"], reasons={}, operation_key="k-1")
    assert again.approved_at is not None
    with pytest.raises(CashDeskError, match="approved already"):
        count_approve(drop=drop, user=team["supervisor"], reasons={}, operation_key="k-2")
    assert place_balances(vault)[Item.CASH] == vault_cash
    assert DroppedBox.objects.get(pk=box.pk).count_transaction.kind == TransactionKind.BOX_COUNT


def test_a_box_is_out_once_until_counted_and_its_number_is_checked(casino, team, slot):
    machine, _tickets = slot
    drop = drop_start(casino=casino, user=team["attendant"], witness=team["security"])
    box = box_remove(drop=drop, user=team["attendant"], machine=machine, box_number="B-1001")
    assert box_remove(drop=drop, user=team["attendant"], machine=machine, box_number="B-1001") == box
    second = drop_start(casino=casino, user=team["attendant"], witness=team["security"])
    with pytest.raises(CashDeskError, match="another drop run"):
        box_remove(drop=second, user=team["attendant"], machine=machine, box_number="B-1001")
    with pytest.raises(IntegrityError), transaction.atomic():
        DroppedBox.objects.create(
            drop=second,
            place=box.place,
            machine=machine,
            box_number="X",
            removed_by=team["attendant"],
            removed_at=timezone.now(),
            expected=0,
        )
    with pytest.raises(CashDeskError, match="not this box"):
        box_arrive(box=box, user=team["counter1"], box_number="B-9999")
    with pytest.raises(CashDeskError, match="arrival"):
        box_tally(box=box, user=team["counter1"], box_number="B-1001", notes={"100": 1}, tickets=[])


def test_without_a_door_reading_the_team_types_the_meter(casino, team, machine):
    drop = drop_start(casino=casino, user=team["attendant"], witness=team["security"])
    with pytest.raises(CashDeskError, match="type the notes meter"):
        box_remove(drop=drop, user=team["attendant"], machine=machine, box_number="B-1")
    with pytest.raises(CashDeskError, match="check the meter"):  # a misread meter, not a box: nothing written
        box_remove(drop=drop, user=team["attendant"], machine=machine, box_number="B-1", bills_in=Decimal("9" * 15))
    box = box_remove(drop=drop, user=team["attendant"], machine=machine, box_number="B-1", bills_in=Decimal("250"))
    assert (box.expected, box.meters_typed) == (Decimal("250.00"), True)


def test_a_table_s_box_holds_its_buy_ins_and_is_counted_against_them(
    casino, vault, team, table, croupier, pit_supervisor
):
    session = table_open(table=table, croupier=croupier, pieces=FLOAT, user=pit_supervisor)
    table_buy_in(session=session, cash=Decimal("200.00"), pieces={"chip_100": 2}, seat=1, user=pit_supervisor)
    drop = drop_start(casino=casino, user=team["attendant"], witness=team["security"])
    box = box_remove(drop=drop, user=team["attendant"], table=table, box_number="T-AR1")
    assert box.expected == Decimal("200.00")
    # A buy-in after the removal goes into the new box: not this count's.
    table_buy_in(session=session, cash=Decimal("100.00"), pieces={"chip_100": 1}, seat=2, user=pit_supervisor)
    box = counted_by_two(box, team, {"100": 1, "50": 2})
    assert box_findings(box).difference == 0
    count_approve(drop=drop, user=team["supervisor"], reasons={})
    assert place_balances(TablePlaces.objects.get(table=table).drop_box)[Item.CASH] == Decimal("100.00")
    assert_books_balance(casino)


def test_the_drop_team_is_two_people_of_the_casino(casino, team, other_casino):
    with pytest.raises(CashDeskError, match="second person"):
        drop_start(casino=casino, user=team["attendant"], witness=team["attendant"])
    with pytest.raises(CashDeskError, match="drop team"):
        drop_start(casino=casino, user=team["counter1"], witness=team["security"])
    stranger = staff(other_casino, "drop-svetimas", "security_officer")
    with pytest.raises(CashDeskError, match="drop team"):
        drop_start(casino=casino, user=team["attendant"], witness=stranger)
    # The witness is a security officer, unless the casino lets any second member of the drop team witness.
    colleague = staff(casino, "drop-antanas", "floor_attendant")
    with pytest.raises(CashDeskError, match="security officer"):
        drop_start(casino=casino, user=team["attendant"], witness=colleague)
    casino.drop_witness_any = True
    casino.save(update_fields=["drop_witness_any"])
    assert drop_start(casino=casino, user=team["attendant"], witness=colleague).witness == colleague


def test_a_kiosk_has_no_drop_box_of_its_own(casino):
    kiosk = MachineFactory(casino=casino, asset_number="K-9", kind="kiosk")
    with pytest.raises(CashDeskError, match="kiosk"):
        machine_box(kiosk)


# --- Found in the review of the first version -------------------------------------------------------------------


def test_a_reset_meter_is_bridged_over_the_readings_between_two_drops(casino, team, machine):
    drop = drop_start(casino=casino, user=team["attendant"], witness=team["security"])
    notes_meter(machine, "1000")
    box_remove(drop=drop, user=team["attendant"], machine=machine, box_number="B-1")  # the box is empty: 0
    box = DroppedBox.objects.get()
    counted_by_two(box, team, {})
    count_approve(drop=drop, user=team["supervisor"], reasons={})
    notes_meter(machine, "50")  # a RAM clear, then 50 in
    notes_meter(machine, "1200")  # and 1 150 more: past the old figure
    second = drop_start(casino=casino, user=team["attendant"], witness=team["security"])
    box = box_remove(drop=second, user=team["attendant"], machine=machine, box_number="B-1")
    assert box.expected == Decimal("1200.00")  # 50 + 1 150, not 1 200 - 1 000


def test_no_box_joins_an_approved_run_and_a_closed_day_takes_no_box(casino, team, machine):
    drop = drop_start(casino=casino, user=team["attendant"], witness=team["security"])
    count_approve(drop=drop, user=team["supervisor"], reasons={})  # an empty run is approved: closed, nothing posted
    with pytest.raises(CashDeskError, match="counted and closed"):
        box_remove(drop=drop, user=team["attendant"], machine=machine, box_number="B-1", bills_in=Decimal("10"))
    assert not DroppedBox.objects.exists()


def test_machines_whose_asset_numbers_share_their_start_each_have_a_box(casino):
    first = MachineFactory(casino=casino, asset_number="EGM-2024-00017")
    second = MachineFactory(casino=casino, asset_number="EGM-2024-00018")
    assert machine_box(first) != machine_box(second)


def test_the_drop_team_does_not_count_the_boxes_it_took_out(casino, team, slot):
    machine, tickets = slot
    drop = drop_start(casino=casino, user=team["attendant"], witness=team["security"])
    box = box_remove(drop=drop, user=team["attendant"], machine=machine, box_number="B-1")
    box_arrive(box=box, user=team["counter1"], box_number="B-1")
    for member in ("attendant", "security"):
        user = team[member]
        user.user_permissions.add(Permission.objects.get(codename="count_boxes"))
        user = type(user).objects.get(pk=user.pk)
        with pytest.raises(CashDeskError, match="does not count"):
            box_tally(box=box, user=user, box_number="B-1", notes={"100": 1}, tickets=tickets)

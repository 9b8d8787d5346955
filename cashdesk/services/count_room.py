"""The drop and the count (issue 25): the boxes taken out, counted twice and blind, and approved into the vault.

In the books (`docs/architecture.md`, "The count room in the books"):

- a slot machine's drop box is a place (kind drop box, naming the machine). When the drop team takes it out, the
  notes its meter counted since the box's last removal go into it against the slot machines' results (kind
  `machine_drop`); a table's drop box holds its buy-ins' cash already;
- when the count supervisor approves the count, each box's cash goes to the vault as counted, the box is emptied of
  what the books put in it, and the difference goes to over/short (kind `box_count`); the tickets found in a
  machine's box that it redeemed are marked collected (`tickets.desk.tickets_collected`).

Each box is counted by two counters, the second blind to the first: nothing of a box (the other count, the meters,
what the books expect) is shown until two counters' counts agree; a disagreement is counted again.
"""

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from cashdesk.books import ZERO, place_balances
from cashdesk.errors import CashDeskError
from cashdesk.items import NOTES, Item
from cashdesk.models import (
    BoxTally,
    CashTransaction,
    Counterparty,
    DifferenceReason,
    DroppedBox,
    DropRun,
    GamingDayClose,
    TablePlaces,
    TransactionKind,
)
from cashdesk.services.ledger import post_transaction, vault_of
from cashdesk.services.once import BOX_TALLY, DROP_RUN
from cashdesk.services.posting import Legs, cash
from casino_office.money import format_money
from machines.chains import chain_and_save
from machines.models import Casino, GamingTable, Machine, MeterReading, Place
from staff.models import StaffAssignment
from tickets.desk import tickets_collected
from tickets.models import Ticket
from tickets.numbers import InvalidValidationNumber, parse_validation_number
from tickets.reconciliation import meter_change

# A note meter the machine sent this long before the removal counts as read at its door opening.
DOOR_READING_WINDOW = dt.timedelta(minutes=15)
NOTE_VALUES: dict[str, Decimal] = {str(int(value)): value for value in NOTES}
CENT = Decimal("0.01")
# More notes than this in one machine's box since its last drop is a misread meter, not a box.
MOST_NOTES_IN_A_BOX = Decimal("1000000.00")


def staff_of(user: User, casino: Casino, permission: str, refusal: str) -> None:
    """`user` works in `casino` with `permission`; otherwise `refusal`, as a clear error."""
    if (
        not user.is_active
        or not user.has_perm(permission)
        or not StaffAssignment.objects.filter(user=user, casino=casino).exists()
    ):
        raise CashDeskError("not_allowed", refusal)


def machine_box(machine: Machine) -> Place:
    """A slot machine's drop box in the books, made the first time it is taken out. A kiosk's cash is its own place,
    dropped to the vault from the kiosk's page."""
    if machine.is_kiosk:
        raise CashDeskError("kiosk_not_dropped", _("A kiosk's cash goes to the vault from the kiosk's page."))
    place, _created = Place.objects.get_or_create(
        machine=machine,
        defaults={
            "casino": machine.casino,
            "kind": Place.Kind.DROP_BOX,
            "code": f"BOX-M{machine.pk}",  # unique whatever the asset number's length
            "name": (_("Drop box %(machine)s") % {"machine": machine.asset_number})[:64],
            "cash_limit_enforced": False,
        },
    )
    return place


def drop_start(*, casino: Casino, user: User, witness: User, operation_key: str | None = None) -> DropRun:
    """A drop run of the drop team: who records it and the witness, two people of this casino's drop team."""
    staff_of(user, casino, "staff.drop_boxes", _("Only the drop team starts a drop run."))
    if witness.pk == user.pk:
        raise CashDeskError("same_person", _("The witness is the drop team's second person, not you."))
    staff_of(witness, casino, "staff.drop_boxes", _("The witness must be on this casino's drop team."))
    if not casino.drop_witness_any and not witness.has_perm("staff.witness_drop"):
        raise CashDeskError("witness", _("The witness of a drop run is a security officer (as the casino sets)."))
    with transaction.atomic():
        now = timezone.now()
        return DROP_RUN.once(
            operation_key,
            user=user,
            run=lambda: DropRun.objects.create(
                casino=casino,
                gaming_day=casino.gaming_day(now),
                started_by=user,
                witness=witness,
                started_at=now,
                operation_key=operation_key or None,
            ),
        )


def box_remove(
    *,
    drop: DropRun,
    user: User,
    box_number: str,
    machine: Machine | None = None,
    table: GamingTable | None = None,
    bills_in: Decimal | None = None,
) -> DroppedBox:
    """Take one machine's or table's box out on this run, with its number scanned and, for a machine, its notes
    meter (the reading it sent when its door opened, or `bills_in` typed from its screen). A box is taken out once
    per run, and not again until its count is approved; the same removal sent twice returns the first."""
    box_number = box_number.strip()
    if not box_number or len(box_number) > 32:
        raise CashDeskError("box_number", _("Scan the box's number (up to 32 characters)."))
    if (machine is None) == (table is None):
        raise CashDeskError("machine_or_table", _("Choose one slot machine or one table."))
    staff_of(user, drop.casino, "staff.drop_boxes", _("Only the drop team takes boxes out."))
    if user.pk not in (drop.started_by_id, drop.witness_id):
        raise CashDeskError("not_allowed", _("Only this run's drop team takes its boxes out."))
    owner = machine or table
    if owner is None or owner.casino_id != drop.casino_id:
        raise CashDeskError("other_casino", _("That machine or table is not this casino's."))
    with transaction.atomic():
        # The run first (as the approval locks it): a box is never added to a run being approved.
        drop = DropRun.objects.select_for_update(of=("self",)).select_related("casino").get(pk=drop.pk)
        if drop.approved_at is not None:
            raise CashDeskError("drop_counted", _("This drop run is counted and closed."))
        if GamingDayClose.objects.filter(casino_id=drop.casino_id, gaming_day=drop.gaming_day).exists():
            raise CashDeskError("day_closed", _("This run's gaming day is closed."))
        place = machine_box(machine) if machine else TablePlaces.objects.get(table=table).drop_box
        place = Place.objects.select_for_update(of=("self",)).select_related("casino").get(pk=place.pk)
        earlier = DroppedBox.objects.filter(drop=drop, place=place).first()
        if earlier is not None:
            return earlier
        if DroppedBox.objects.filter(drop__approved_at__isnull=True, place=place).exists():
            raise CashDeskError("box_out", _("This box is out on another drop run that is not counted yet."))
        now = timezone.now()
        removal = DroppedBox(
            drop=drop, place=place, machine=machine, table=table, box_number=box_number, removed_by=user, removed_at=now
        )
        if machine is not None:
            return _machine_box_out(removal, machine, bills_in)
        removal.expected = place_balances(place)[Item.CASH]
        removal.save()
        return removal


def _machine_box_out(removal: DroppedBox, machine: Machine, typed: Decimal | None) -> DroppedBox:
    """The machine's notes since its box's last removal go into the box in the books, by its notes meter."""
    if typed is not None:
        if typed < 0 or typed != typed.quantize(Decimal("0.001")):
            raise CashDeskError("meter", _("Type the notes meter as the machine shows it, in euros."))
        removal.bills_in_meter, removal.meters_typed = typed, True
    else:
        reading = (
            MeterReading.objects.filter(
                machine=machine, bills_in_amount__isnull=False, read_at__gte=removal.removed_at - DOOR_READING_WINDOW
            )
            .order_by("-read_at", "-id")
            .first()
        )
        if reading is None:
            raise CashDeskError(
                "no_meter_reading",
                _("The machine sent no notes meter at its door opening: type the notes meter its screen shows."),
            )
        removal.meter_reading, removal.bills_in_meter = reading, reading.bills_in_amount
    removal.expected = _notes_since_last_drop(removal, machine).quantize(CENT)
    if removal.expected > MOST_NOTES_IN_A_BOX:
        raise CashDeskError(
            "meter",
            _("By this meter the box would hold more than %(most)s: check the meter and type it again.")
            % {"most": format_money(MOST_NOTES_IN_A_BOX)},
        )
    if removal.expected > 0:
        removal.removal_transaction = post_transaction(
            shift=None,
            desk=removal.place,
            kind=TransactionKind.MACHINE_DROP,
            amount=removal.expected,
            lines=[cash(removal.expected)],
            user=removal.removed_by,
            note=_("Machine %(machine)s, box %(box)s") % {"machine": machine.asset_number, "box": removal.box_number},
            at=removal.removed_at,
        )
    removal.save()
    return removal


def _notes_since_last_drop(removal: DroppedBox, machine: Machine) -> Decimal:
    """The notes meter's change since the box's last removal (before its first, since the machine's first reading).
    Over the machine's readings in between when both ends are readings, a reset bridged as the reconciliation does
    it (tickets.reconciliation.meter_change); from the two figures when one was typed (a lower one counts from 0)."""
    last = DroppedBox.objects.filter(place=removal.place).select_related("meter_reading").order_by("-removed_at", "-id")
    previous = last.first()
    readings = MeterReading.objects.filter(machine=machine, bills_in_amount__isnull=False).order_by("read_at", "id")
    start = previous.meter_reading if previous is not None else readings.first()
    if start is not None and removal.meter_reading is not None and (previous is None or not previous.meters_typed):
        between = readings.filter(read_at__gt=start.read_at, read_at__lte=removal.meter_reading.read_at)
        return Decimal(meter_change([start, *between], "bills_in_amount") or 0)
    if previous is not None and previous.bills_in_meter is not None:
        before = previous.bills_in_meter
    else:
        before = start.bills_in_amount if start is not None and start.bills_in_amount is not None else ZERO
    meter = removal.bills_in_meter or ZERO
    return meter if meter < before else meter - before


def box_arrive(*, box: DroppedBox, user: User, box_number: str) -> DroppedBox:
    """The box scanned in on arrival in the count room: its number must be the one scanned at its removal."""
    staff_of(user, box.drop.casino, "staff.count_boxes", _("Only the count team receives boxes."))
    if box_number.strip() != box.box_number:
        raise CashDeskError("wrong_box", _("That is not this box's number: check the box."))
    with transaction.atomic():
        box = DroppedBox.objects.select_for_update().get(pk=box.pk)
        if box.arrived_at is None:
            box.arrived_by, box.arrived_at = user, timezone.now()
            box.save(update_fields=["arrived_by", "arrived_at"])
    return box


def scanned_tickets(lines: list[str]) -> list[str]:
    """The validation numbers scanned from a box, each once; a misread or a ticket scanned twice is refused."""
    numbers: list[str] = []
    for position, raw in enumerate((line for line in lines if line.strip()), start=1):
        try:
            number = parse_validation_number(raw)
        except InvalidValidationNumber:
            raise CashDeskError(
                "not_a_ticket", _("Scan %(n)s is not a ticket's number: scan it again.") % {"n": position}
            ) from None
        if number in numbers:
            raise CashDeskError("scanned_twice", _("Scan %(n)s repeats an earlier ticket.") % {"n": position})
        numbers.append(number)
    return sorted(numbers)


def counted_notes(notes: Mapping[str, int]) -> dict[str, int]:
    """Notes by value ("50": pieces), the values a note acceptor takes, none below zero; zeros left out."""
    if any(value not in NOTE_VALUES for value in notes):
        raise CashDeskError("not_a_note", _("Count euro notes of 5 to 500 only."))
    if any(pieces < 0 for pieces in notes.values()):
        raise CashDeskError("negative_count", _("A count cannot be below zero."))
    return {value: pieces for value, pieces in notes.items() if pieces}


def box_tally(
    *,
    box: DroppedBox,
    user: User,
    box_number: str,
    notes: Mapping[str, int],
    tickets: list[str],
    operation_key: str | None = None,
) -> BoxTally:
    """One counter's count of a box, blind: the box's count is set when two counters' counts agree, and then the
    box takes no more. The next count of a box is always another counter's."""
    staff_of(user, box.drop.casino, "staff.count_boxes", _("Only the count team counts boxes."))
    counted, numbers = counted_notes(notes), scanned_tickets(tickets)
    with transaction.atomic():
        box = DroppedBox.objects.select_for_update(of=("self",)).select_related("drop").get(pk=box.pk)
        if (done := BOX_TALLY.earlier(operation_key, user=user)) is not None:
            return done
        if user.pk in (box.drop.started_by_id, box.drop.witness_id):
            raise CashDeskError("drop_team", _("The drop team does not count the boxes it took out."))
        if box.arrived_at is None:
            raise CashDeskError("not_arrived", _("Scan the box in on its arrival first."))
        if box_number.strip() != box.box_number:
            raise CashDeskError("wrong_box", _("That is not this box's number: check the box."))
        if box.counted is not None:
            raise CashDeskError("box_counted", _("This box is counted: a box is counted once per drop."))
        tallies = list(box.tallies.order_by("counted_at", "id"))
        if tallies and tallies[-1].counter_id == user.pk:
            raise CashDeskError("same_counter", _("The next count of this box is another counter's."))
        tally = BoxTally(
            box=box,
            counter=user,
            notes=counted,
            cash=sum((NOTE_VALUES[value] * pieces for value, pieces in counted.items()), ZERO),
            tickets=numbers,
            counted_at=timezone.now(),
            operation_key=operation_key or None,
        )
        chain_and_save(tally, casino_id=box.drop.casino_id)
        for other in tallies:
            if other.counter_id != user.pk and other.notes == tally.notes and other.tickets == tally.tickets:
                box.counted, box.notes, box.tickets = tally.cash, tally.notes, tally.tickets
                box.save(update_fields=["counted", "notes", "tickets"])
                break
    return tally


@dataclass
class Suspicious:
    """A ticket in a machine's box that the system did not record as played there since the last drop."""

    number: str
    ticket: Ticket | None


@dataclass
class BoxFindings:
    """What a counted box shows: its cash against the books, and its tickets against the machine's redemptions."""

    box: DroppedBox
    expected: Decimal
    counted: Decimal
    matched: list[Ticket] = field(default_factory=list)
    suspicious: list[Suspicious] = field(default_factory=list)
    missing: list[Ticket] = field(default_factory=list)

    @property
    def difference(self) -> Decimal:
        return self.counted - self.expected

    @property
    def percent(self) -> Decimal | None:
        if not self.expected:
            return None
        return (self.difference * 100 / self.expected).quantize(CENT)

    @property
    def needs_reason(self) -> bool:
        """Off by more than the casino's limit in euros, or by more than its share of the box."""
        casino = self.box.drop.casino
        off = abs(self.difference)
        if off > casino.count_difference_limit:
            return True
        return off > 0 and (self.percent is None or abs(self.percent) > casino.count_difference_percent)

    @property
    def tickets_in(self) -> Decimal:
        return sum((ticket.amount for ticket in self.matched), ZERO)


def played_since_last_drop(box: DroppedBox) -> list[Ticket]:
    """The tickets the system recorded as redeemed at the box's machine since its box's previous removal."""
    if box.machine_id is None:
        return []
    previous = (
        DroppedBox.objects.filter(place_id=box.place_id, removed_at__lt=box.removed_at).order_by("-removed_at").first()
    )
    played = Ticket.objects.filter(redeemed_by_machine_id=box.machine_id, redeemed_at__lte=box.removed_at)
    if previous is not None:
        played = played.filter(redeemed_at__gt=previous.removed_at)
    return list(played.order_by("redeemed_at", "id"))


def box_findings(box: DroppedBox) -> BoxFindings:
    """The counted box against the books: only once two counters agree (`box.counted`), never before."""
    if box.counted is None:
        raise CashDeskError("not_counted", _("This box's count is not agreed yet."))
    findings = BoxFindings(box=box, expected=box.expected, counted=box.counted)
    played = {ticket.validation_number: ticket for ticket in played_since_last_drop(box)}
    found = set(box.tickets)
    findings.matched = [ticket for number, ticket in played.items() if number in found]
    findings.missing = [ticket for number, ticket in played.items() if number not in found]
    strangers = sorted(found - played.keys())
    known = {
        ticket.validation_number: ticket
        for ticket in Ticket.objects.filter(casino_id=box.drop.casino_id, validation_number__in=strangers)
    }
    findings.suspicious = [Suspicious(number, known.get(number)) for number in strangers]
    return findings


def count_approve(
    *, drop: DropRun, user: User, reasons: Mapping[int, str], operation_key: str | None = None
) -> DropRun:
    """The count supervisor approves the run's count, once: every box counted and agreed, a reason from the list for
    each difference beyond the casino's limit. Each box's cash goes to the vault as counted, its difference to
    over/short, and the tickets its machine redeemed are marked collected. A counter of any of its boxes, or the
    drop team, cannot approve it."""
    staff_of(user, drop.casino, "staff.approve_count", _("Only a count supervisor approves a count."))
    with transaction.atomic():
        vault = (
            Place.objects.select_for_update(of=("self",)).select_related("casino").get(pk=vault_of(drop.casino_id).pk)
        )
        drop = DropRun.objects.select_for_update(of=("self",)).select_related("casino").get(pk=drop.pk)
        if drop.approved_at is not None:
            if operation_key and drop.approval_key == operation_key:
                return drop
            raise CashDeskError("count_approved", _("This count is approved already."))
        findings = _approvable(drop, user, reasons)
        # Every box's place locked now, in id order, before any posting takes the books' chain head: a buy-in
        # holding a table's tray and drop box never waits for the chain head this approval holds while it waits
        # for that drop box.
        list(Place.objects.select_for_update().filter(pk__in=[f.box.place_id for f in findings]).order_by("pk"))
        now = timezone.now()
        for finding in findings:
            tickets_collected(tickets=finding.matched, user=user, box=finding.box.box_number, at=now)
        counters = _counter_names(drop)
        for finding in findings:
            _post_box(finding, vault=vault, user=user, reason=reasons.get(finding.box.pk, ""), names=counters, at=now)
        DropRun.objects.filter(pk=drop.pk).update(approved_by=user, approved_at=now, approval_key=operation_key)
        drop.refresh_from_db()
    return drop


def _approvable(drop: DropRun, user: User, reasons: Mapping[int, str]) -> list[BoxFindings]:
    if user.pk in (drop.started_by_id, drop.witness_id):
        raise CashDeskError("drop_team", _("The drop team does not approve the count of its own run."))
    if BoxTally.objects.filter(box__drop=drop, counter=user).exists():
        raise CashDeskError("counter", _("A counter of this run's boxes does not approve its count."))
    # A run with no box is approved all the same: it is closed, with nothing to post.
    boxes = list(DroppedBox.objects.select_for_update(of=("self",)).filter(drop=drop).order_by("pk"))
    waiting = [box.box_number for box in boxes if box.counted is None]
    if waiting:
        raise CashDeskError(
            "not_counted", _("Boxes not counted and agreed yet: %(boxes)s.") % {"boxes": ", ".join(waiting)}
        )
    findings = [box_findings(box) for box in boxes]
    unexplained = [
        f.box.box_number for f in findings if f.needs_reason and reasons.get(f.box.pk) not in DifferenceReason.values
    ]
    if unexplained:
        raise CashDeskError(
            "reason_needed",
            _("Choose a reason for the difference of box %(boxes)s.") % {"boxes": ", ".join(unexplained)},
        )
    return findings


def _counter_names(drop: DropRun) -> str:
    names = sorted(
        {tally.counter.get_full_name() or tally.counter.username for tally in BoxTally.objects.filter(box__drop=drop)}
    )
    return ", ".join(names)


def _post_box(finding: BoxFindings, *, vault: Place, user: User, reason: str, names: str, at: dt.datetime) -> None:
    """The box's cash into the vault as counted; the box emptied of what the books put in it; the rest over/short."""
    box = finding.box
    posting: CashTransaction | None = None
    if finding.counted or finding.expected:
        legs: Legs = [
            (vault, cash(finding.counted)),
            (box.place, cash(-finding.expected)),
            (Counterparty.OVER_SHORT, cash(-finding.difference)),
        ]
        posting = post_transaction(
            shift=None,
            desk=vault,
            kind=TransactionKind.BOX_COUNT,
            amount=finding.counted or finding.expected,
            lines=[],
            legs=legs,
            user=user,
            note=_("Box %(box)s counted by %(names)s") % {"box": box.box_number, "names": names},
            at=at,
        )
    box.reason, box.count_transaction, box.closed_at = reason, posting, at
    box.save(update_fields=["reason", "count_transaction", "closed_at"])

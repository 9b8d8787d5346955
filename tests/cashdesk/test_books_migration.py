"""Today's cash-desk data moves into the double-entry books, and every shift's figures stay the same.

The project is migrated back to cashdesk 0006 (the single-sided ledger of
movements), a history is written with the historical models the way the
services of that time wrote it (ledger.post_transaction, shifts._write_count,
supervision's transfers and reversals), and the project is migrated forward:
0007 (schema), 0008 (movements to legs, counterparty legs, counts posted) and
0009 (guards). The figures read before are then compared with the books.
"""

import datetime as dt
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from decimal import Decimal

import pytest
from django.db import connection, transaction
from django.db.migrations.executor import MigrationExecutor
from django.db.models import Q, Sum, Value
from django.db.models.functions import Coalesce

from cashdesk import books
from cashdesk.items import ALL_ITEMS, DENOMINATIONS
from cashdesk.models import CashTransaction, Leg, MachineReceipt, Shift, ShiftCount, ShiftCountLine
from machines.models import Casino, Place

# Migrates the test database back to cashdesk 0006 and forward again: a long run.
pytestmark = pytest.mark.slow

OLD_CASHDESK = ("cashdesk", "0006_liability_snapshot")
GUARDS = ("cashdesk", "0009_books_guards")
ZERO = Decimal("0.00")
T0 = dt.datetime(2026, 11, 2, 4, 0, tzinfo=dt.UTC)
# Where the other side of a movement goes, by the kind of its transaction (a reversal: of the original's).
COUNTERPARTY_OF_OLD_KIND = {
    "chips_buy": "players",
    "chips_cashout": "players",
    "tokens_buy": "players",
    "tokens_cashout": "players",
    "smartcard_payout": "smartcards",
    "receipt_payout": "receipts",
}
FLOAT_K1 = {
    "cash": 20000,
    "chip_500": 10,
    "chip_100": 50,
    "chip_25": 100,
    "chip_5": 100,
    "chip_1": 200,
    "chip_0_50": 200,
    "token": 1000,
}
FLOAT_K2 = {"cash": 10000, "chip_100": 20, "chip_25": 40, "chip_5": 50, "chip_1": 100, "chip_0_50": 100, "token": 500}


def at(hours: int, minutes: int = 0, seconds: int = 0) -> dt.datetime:
    return T0 + dt.timedelta(hours=hours, minutes=minutes, seconds=seconds)


def zeros() -> dict[str, Decimal]:
    return dict.fromkeys(ALL_ITEMS, ZERO)


def cash(amount: str) -> tuple[str, Decimal, None]:
    return ("cash", Decimal(amount), None)


def pieces(item: str, count: int) -> tuple[str, Decimal, int]:
    return (item, DENOMINATIONS[item] * count, count)


def amounts(counted: dict[str, int]) -> dict[str, Decimal]:
    """EUR per item from a count in euros (cash) and pieces (chips, tokens); missing items are zero."""
    result = zeros()
    for item, quantity in counted.items():
        result[item] = Decimal(quantity) if item == "cash" else DENOMINATIONS[item] * quantity
    return result


def plus(base: dict[str, Decimal], **changes: str) -> dict[str, Decimal]:
    result = dict(base)
    for item, change in changes.items():
        result[item] += Decimal(change)
    return result


class OldBooks:
    """Writes history as the services of cashdesk 0006 did, with that state's historical models."""

    def __init__(self, apps, casino) -> None:
        self.apps = apps
        self.casino = casino
        self.Place = apps.get_model("cashdesk", "CashDesk")
        self.CashTransaction = apps.get_model("cashdesk", "CashTransaction")
        self.Movement = apps.get_model("cashdesk", "Movement")
        self.Shift = apps.get_model("cashdesk", "Shift")
        self.ShiftCount = apps.get_model("cashdesk", "ShiftCount")
        self.ShiftCountLine = apps.get_model("cashdesk", "ShiftCountLine")
        self.numbers: dict[int, int] = defaultdict(int)

    def post(self, *, shift, kind, amount, lines, user, when, approved_by=None, reverses=None, vault=None, note=""):
        """ledger.post_transaction: the next receipt number of the desk, the transaction, its movements.

        With a vault, each line also moves the other way in the vault (shift NULL): a drop or a fill.
        """
        desk = shift.desk
        self.numbers[desk.pk] += 1
        self.Place.objects.filter(pk=desk.pk).update(last_receipt_number=self.numbers[desk.pk])
        tx = self.CashTransaction.objects.create(
            casino=self.casino,
            desk=desk,
            shift=shift,
            number=self.numbers[desk.pk],
            kind=kind,
            amount=Decimal(amount),
            identity_threshold=self.casino.identity_threshold,
            reverses=reverses,
            note=note,
            created_by=user,
            approved_by=approved_by,
            created_at=when,
        )
        movements = [
            self.Movement(transaction=tx, desk=desk, shift=shift, item=item, count=count, amount=value)
            for item, value, count in lines
        ]
        if vault is not None:
            movements += [
                self.Movement(
                    transaction=tx,
                    desk=vault,
                    shift=None,
                    item=item,
                    count=-count if count is not None else None,
                    amount=-value,
                )
                for item, value, count in lines
            ]
        self.Movement.objects.bulk_create(movements)
        return tx

    def reverse(self, original, *, user, approved_by, when, reason):
        """supervision.reversal_approve: every movement of the original, negated, in the same shift."""
        lines = [
            (m.item, -m.amount, -m.count if m.count is not None else None)
            for m in self.Movement.objects.filter(transaction=original).order_by("pk")
        ]
        return self.post(
            shift=original.shift,
            kind="reversal",
            amount=original.amount,
            lines=lines,
            user=user,
            when=when,
            approved_by=approved_by,
            reverses=original,
            note=reason,
        )

    def balances(self, shift) -> dict[str, Decimal]:
        """ledger.shift_balances: the opening count plus every movement of the shift."""
        result = zeros()
        for line in self.ShiftCountLine.objects.filter(count__shift=shift, count__kind="opening"):
            result[line.item] = line.counted_amount
        for row in self.Movement.objects.filter(shift=shift).values("item").annotate(total=Sum("amount")).order_by():
            result[row["item"]] += row["total"]
        return result

    def count(self, *, shift, kind, user, when, counted, expected):
        """shifts._write_count: a line for every item, variance = counted - expected."""
        count = self.ShiftCount.objects.create(shift=shift, kind=kind, counted_by=user, counted_at=when)
        self.ShiftCountLine.objects.bulk_create(
            self.ShiftCountLine(
                count=count,
                item=item,
                counted_amount=counted[item],
                expected_amount=expected[item],
                variance=counted[item] - expected[item],
            )
            for item in ALL_ITEMS
        )
        return count

    def close(self, shift, *, kind, user, when, counted):
        """shifts.shift_close / shift_handover: a count against the shift's balances, and the shift closed."""
        self.count(shift=shift, kind=kind, user=user, when=when, counted=counted, expected=self.balances(shift))
        self.Shift.objects.filter(pk=shift.pk).update(closed_at=when)


@dataclass
class History:
    casino_id: int = 0
    desk_ids: list[int] = field(default_factory=list)
    vault_id: int = 0
    open_shift_id: int = 0
    receipt_id: int = 0
    receipt_payout_id: int = 0


def write_history(apps) -> History:
    """Two desks and the vault of one casino over a day: exchanges, payouts, transfers, a reversal, counts."""
    User = apps.get_model("auth", "User")
    Casino = apps.get_model("machines", "Casino")
    Machine = apps.get_model("machines", "Machine")
    Place = apps.get_model("cashdesk", "CashDesk")
    Shift = apps.get_model("cashdesk", "Shift")
    Transfer = apps.get_model("cashdesk", "Transfer")
    ReversalRequest = apps.get_model("cashdesk", "ReversalRequest")
    SmartCardRead = apps.get_model("cashdesk", "SmartCardRead")
    MachineReceipt = apps.get_model("cashdesk", "MachineReceipt")

    casino = Casino.objects.create(
        name="Casino Migracija",
        address="Demo g. 1, Vilnius",
        licence_number="L-0008",
        code="MIG",
        identity_threshold=Decimal("1000.00"),
    )
    ona, jonas, petras, rasa = (
        User.objects.create(username=name, password="!") for name in ("ona", "jonas", "petras", "rasa")
    )
    k1 = Place.objects.create(casino=casino, kind="desk", code="K1", name="Kasa 1")
    k2 = Place.objects.create(casino=casino, kind="desk", code="K2", name="Kasa 2")
    vault = Place.objects.create(casino=casino, kind="vault", code="V", name="Saugykla")
    machine = Machine.objects.create(casino=casino, asset_number="1001")
    old = OldBooks(apps, casino)

    # Desk 1, shift 1: the desk's first float, a day's work, a closing short in cash and tokens.
    s1 = Shift.objects.create(desk=k1, cashier=ona, opened_at=at(0))
    float_k1 = amounts(FLOAT_K1)
    old.count(shift=s1, kind="opening", user=ona, when=at(0, 0, 1), counted=float_k1, expected=float_k1)
    lines = [cash("600"), pieces("chip_100", -5), pieces("chip_25", -4)]
    old.post(shift=s1, kind="chips_buy", amount="600", lines=lines, user=ona, when=at(0, 30))
    lines = [pieces("chip_100", 2), pieces("chip_25", 2), cash("-250")]
    old.post(shift=s1, kind="chips_cashout", amount="250", lines=lines, user=ona, when=at(1))
    lines = [cash("150"), pieces("token", -150)]
    old.post(shift=s1, kind="tokens_buy", amount="150", lines=lines, user=ona, when=at(1, 30))
    lines = [pieces("token", 40), cash("-40")]
    old.post(shift=s1, kind="tokens_cashout", amount="40", lines=lines, user=ona, when=at(2))
    tx = old.post(shift=s1, kind="smartcard_payout", amount="73.45", lines=[cash("-73.45")], user=ona, when=at(2, 30))
    SmartCardRead.objects.create(transaction=tx, card_number="SC-77", credits=Decimal("73.450"))
    receipt = MachineReceipt.objects.create(
        casino=casino,
        machine=machine,
        number=1,
        amount=Decimal("120"),
        reason="Hopper empty",
        created_by=rasa,
        created_at=at(2, 50),
    )
    payout = old.post(shift=s1, kind="receipt_payout", amount="120", lines=[cash("-120")], user=ona, when=at(3))
    MachineReceipt.objects.filter(pk=receipt.pk).update(paid_by=payout)
    drop = Transfer.objects.create(
        shift=s1, direction="drop", amount=Decimal("5000"), requested_by=ona, requested_at=at(3, 55)
    )
    tx = old.post(
        shift=s1, kind="drop", amount="5000", lines=[cash("-5000")], user=ona, when=at(4), approved_by=rasa, vault=vault
    )
    Transfer.objects.filter(pk=drop.pk).update(transaction=tx)
    lines = [cash("300"), pieces("chip_5", -40), pieces("chip_1", -90), pieces("chip_0_50", -20)]
    mistake = old.post(shift=s1, kind="chips_buy", amount="300", lines=lines, user=ona, when=at(5))
    request = ReversalRequest.objects.create(
        original=mistake, reason="Wrong chips", requested_by=ona, requested_at=at(5, 5)
    )
    tx = old.reverse(mistake, user=ona, approved_by=rasa, when=at(5, 10), reason="Wrong chips")
    ReversalRequest.objects.filter(pk=request.pk).update(reversal=tx)
    closing = plus(old.balances(s1), cash="-20.00", token="-3")
    old.close(s1, kind="closing", user=ona, when=at(8), counted=closing)

    # Desk 1, shift 2: opened with a float that differs from the last closing, a fill, a handover short.
    s2 = Shift.objects.create(desk=k1, cashier=ona, opened_at=at(9))
    counted = plus(closing, cash="10.00", chip_1="-2")
    old.count(shift=s2, kind="opening", user=ona, when=at(9, 0, 1), counted=counted, expected=closing)
    fill = Transfer.objects.create(
        shift=s2, direction="fill", amount=Decimal("3000"), requested_by=ona, requested_at=at(9, 55)
    )
    tx = old.post(
        shift=s2, kind="fill", amount="3000", lines=[cash("3000")], user=ona, when=at(10), approved_by=rasa, vault=vault
    )
    Transfer.objects.filter(pk=fill.pk).update(transaction=tx)
    lines = [pieces("chip_500", 1), pieces("chip_25", 1), cash("-525")]
    old.post(shift=s2, kind="chips_cashout", amount="525", lines=lines, user=ona, when=at(11))
    old.post(shift=s2, kind="tokens_buy", amount="20", lines=[cash("20"), pieces("token", -20)], user=ona, when=at(12))
    handover = plus(old.balances(s2), cash="-5.50")
    old.close(s2, kind="handover", user=ona, when=at(17), counted=handover)

    # Desk 1, shift 3: the next cashier takes the handover count as the float; still open.
    s3 = Shift.objects.create(desk=k1, cashier=jonas, opened_at=at(17), previous=s2)
    old.count(shift=s3, kind="opening", user=jonas, when=at(17, 0, 1), counted=handover, expected=handover)
    lines = [cash("100"), pieces("chip_25", -4)]
    old.post(shift=s3, kind="chips_buy", amount="100", lines=lines, user=jonas, when=at(18))
    old.post(shift=s3, kind="smartcard_payout", amount="12.30", lines=[cash("-12.30")], user=jonas, when=at(19))

    # Desk 2, one shift alongside desk 1's (same moments as some of its transactions), closed over.
    s4 = Shift.objects.create(desk=k2, cashier=petras, opened_at=at(1))
    float_k2 = amounts(FLOAT_K2)
    old.count(shift=s4, kind="opening", user=petras, when=at(1, 0, 1), counted=float_k2, expected=float_k2)
    lines = [cash("400"), pieces("chip_100", -4)]
    old.post(shift=s4, kind="chips_buy", amount="400", lines=lines, user=petras, when=at(2))
    old.post(
        shift=s4,
        kind="drop",
        amount="2000",
        lines=[cash("-2000")],
        user=petras,
        when=at(5),
        approved_by=rasa,
        vault=vault,
    )
    old.close(s4, kind="closing", user=petras, when=at(7), counted=plus(old.balances(s4), cash="15.00", chip_0_50="1"))

    return History(
        casino_id=casino.pk,
        desk_ids=[k1.pk, k2.pk],
        vault_id=vault.pk,
        open_shift_id=s3.pk,
        receipt_id=receipt.pk,
        receipt_payout_id=payout.pk,
    )


@dataclass
class Before:
    """The figures of the single-sided ledger, per shift and per count."""

    counts: dict[int, dict] = field(default_factory=dict)
    lines: dict[tuple[int, str], tuple[Decimal, Decimal, Decimal]] = field(default_factory=dict)
    movements: list[tuple] = field(default_factory=list)
    shift_movements: dict[int, dict[str, Decimal]] = field(default_factory=dict)
    opening: dict[int, dict[str, Decimal]] = field(default_factory=dict)
    expected_at_end: dict[int, dict[str, Decimal]] = field(default_factory=dict)
    shift_desks: dict[int, int] = field(default_factory=dict)
    tx_kinds: dict[int, str] = field(default_factory=dict)
    last_numbers: dict[int, int] = field(default_factory=dict)
    vault: dict[str, Decimal] = field(default_factory=zeros)


def read_before(apps, history: History) -> Before:
    Shift = apps.get_model("cashdesk", "Shift")
    ShiftCount = apps.get_model("cashdesk", "ShiftCount")
    ShiftCountLine = apps.get_model("cashdesk", "ShiftCountLine")
    Movement = apps.get_model("cashdesk", "Movement")
    CashTransaction = apps.get_model("cashdesk", "CashTransaction")
    Place = apps.get_model("cashdesk", "CashDesk")
    before = Before()
    for count in ShiftCount.objects.filter(shift__desk__casino_id=history.casino_id).select_related("shift"):
        before.counts[count.pk] = {
            "desk": count.shift.desk_id,
            "shift": count.shift_id,
            "kind": count.kind,
            "counted_at": count.counted_at,
            "counted_by": count.counted_by_id,
        }
    for line in ShiftCountLine.objects.filter(count_id__in=before.counts):
        before.lines[(line.count_id, line.item)] = (line.counted_amount, line.expected_amount, line.variance)
    for shift in Shift.objects.filter(desk__casino_id=history.casino_id):
        before.shift_desks[shift.pk] = shift.desk_id
        before.shift_movements[shift.pk] = zeros()
        before.opening[shift.pk] = zeros()
        if shift.closed_at is not None:
            before.expected_at_end[shift.pk] = zeros()
    for (count_id, item), (counted, expected, _variance) in before.lines.items():
        count = before.counts[count_id]
        if count["kind"] == "opening":
            before.opening[count["shift"]][item] = counted
        else:
            before.expected_at_end[count["shift"]][item] = expected
    movements = Movement.objects.filter(transaction__casino_id=history.casino_id)
    before.movements = list(movements.values_list("transaction_id", "desk_id", "shift_id", "item", "count", "amount"))
    for _tx, desk_id, shift_id, item, _count, amount in before.movements:
        if shift_id is not None:
            before.shift_movements[shift_id][item] += amount
        if desk_id == history.vault_id:
            before.vault[item] += amount
    for tx in CashTransaction.objects.filter(casino_id=history.casino_id).select_related("reverses"):
        before.tx_kinds[tx.pk] = tx.reverses.kind if tx.kind == "reversal" else tx.kind
    for desk in Place.objects.filter(casino_id=history.casino_id):
        before.last_numbers[desk.pk] = desk.last_receipt_number
    # What the old ledger said: a closed shift's expected is its opening plus its movements.
    for shift_id, expected in before.expected_at_end.items():
        assert expected == {
            item: before.opening[shift_id][item] + before.shift_movements[shift_id][item] for item in ALL_ITEMS
        }
    return before


def per_item(rows) -> dict[str, Decimal]:
    result = zeros()
    for row in rows.values("item").annotate(total=Sum("amount")).order_by():
        result[row["item"]] = row["total"]
    return result


def migrate(targets) -> None:
    MigrationExecutor(connection).migrate(targets)


def restore_latest(latest) -> None:
    """After a failed migration: empty the tables (the suite's flush does it anyway) and migrate to the latest."""
    tables = [name for name in connection.introspection.table_names() if name != "django_migrations"]
    with connection.cursor() as cursor:
        cursor.execute("TRUNCATE {} CASCADE".format(", ".join(connection.ops.quote_name(t) for t in tables)))
    migrate(latest)


@pytest.mark.django_db(transaction=True)
def test_todays_data_moves_into_the_books_with_every_shifts_figures_unchanged():
    latest = MigrationExecutor(connection).loader.graph.leaf_nodes()
    at_latest = False
    try:
        executor = MigrationExecutor(connection)
        executor.migrate([OLD_CASHDESK])
        executor = MigrationExecutor(connection)
        applied = set(executor.loader.applied_migrations)
        assert OLD_CASHDESK in applied
        assert ("cashdesk", "0007_money_core") not in applied
        old_apps = executor.loader.project_state(sorted(applied)).apps
        with transaction.atomic():
            history = write_history(old_apps)
        before = read_before(old_apps, history)
        migrate(latest)
        at_latest = True
    finally:
        if not at_latest:
            restore_latest(latest)

    # The database is at the latest migrations again, with the books' guards in place.
    executor = MigrationExecutor(connection)
    assert set(latest) <= set(executor.loader.applied_migrations)
    assert not executor.migration_plan(latest)
    assert "cashdesk_movement" not in connection.introspection.table_names()
    with connection.cursor() as cursor:
        cursor.execute("SELECT tgname FROM pg_trigger WHERE tgrelid = 'cashdesk_leg'::regclass AND NOT tgisinternal")
        names = {row[0] for row in cursor.fetchall()}
    # The guards are declared with the model now (pgtrigger names them pgtrigger_<name>_<hash>).
    assert {name.rsplit("_", 1)[0] for name in names} >= {"pgtrigger_balanced", "pgtrigger_append_only"}

    casino_legs = Leg.objects.filter(casino_id=history.casino_id)
    desk_legs = casino_legs.filter(desk__isnull=False)

    # Every count and count line is as it was; each count now names its desk.
    for count in ShiftCount.objects.filter(pk__in=before.counts):
        old = before.counts[count.pk]
        assert (count.desk_id, count.shift_id, count.kind, count.counted_at, count.counted_by_id) == (
            old["desk"],
            old["shift"],
            old["kind"],
            old["counted_at"],
            old["counted_by"],
        )
    after_lines = {
        (line.count_id, line.item): (line.counted_amount, line.expected_amount, line.variance)
        for line in ShiftCountLine.objects.filter(count__desk__casino_id=history.casino_id)
    }
    assert after_lines == before.lines

    # Every movement became a leg at its place, and nothing else is at a place but the counts' postings.
    legs = desk_legs.exclude(transaction__kind__in=["count", "opening_balance"])
    assert Counter(legs.values_list("transaction_id", "desk_id", "shift_id", "item", "count", "amount")) == Counter(
        before.movements
    )

    # Per shift: the desk's legs other than count postings are the old movements; the closed figures are unchanged.
    for shift in Shift.objects.filter(desk__casino_id=history.casino_id).select_related("desk"):
        shift_legs = desk_legs.filter(shift=shift, desk_id=before.shift_desks[shift.pk])
        assert (
            per_item(shift_legs.exclude(transaction__kind__in=["count", "opening_balance"]))
            == before.shift_movements[shift.pk]
        ), shift.pk
        assert books.opening_amounts(shift) == before.opening[shift.pk]
        if shift.closed_at is not None:
            assert books.shift_balances(shift) == before.expected_at_end[shift.pk], shift.pk
    open_shift = Shift.objects.get(pk=history.open_shift_id)
    now_expected = {
        item: before.opening[open_shift.pk][item] + before.shift_movements[open_shift.pk][item] for item in ALL_ITEMS
    }
    assert books.shift_balances(open_shift) == now_expected

    # Every transaction has legs and they balance per item, in value and in pieces.
    transactions = CashTransaction.objects.filter(casino_id=history.casino_id)
    assert not transactions.filter(legs__isnull=True).exists()
    unbalanced = (
        casino_legs.values("transaction", "item")
        .annotate(total=Sum("amount"), pieces=Sum(Coalesce("count", Value(0))))
        .order_by()
        .filter(~Q(total=0) | ~Q(pieces=0))
    )
    assert list(unbalanced) == []

    # Counterparties: the other side of each movement by its transaction's kind; drops and fills have none.
    expected_parties: dict[str, dict[str, Decimal]] = defaultdict(zeros)
    for tx_id, _desk, _shift, item, _count, amount in before.movements:
        party = COUNTERPARTY_OF_OLD_KIND.get(before.tx_kinds[tx_id])
        if party is not None:
            expected_parties[party][item] -= amount
    assert not casino_legs.filter(transaction__kind__in=["drop", "fill"], desk__isnull=True).exists()

    # Counts: each difference from the running book is posted at the count's moment, in its shift;
    # to opening balances for a desk's first count, to over/short after. Old counts were always against
    # the book: a desk's first count is its whole float, each later difference is that count's variance.
    first_count = {}
    for count_id, old in sorted(before.counts.items(), key=lambda kv: (kv[1]["counted_at"], kv[0])):
        first_count.setdefault(old["desk"], count_id)
    for count_id, old in before.counts.items():
        first = first_count[old["desk"]] == count_id
        difference = zeros()
        for item in ALL_ITEMS:
            counted, _expected, variance = before.lines[(count_id, item)]
            difference[item] = counted if first else variance
            party = "opening" if first else "over_short"
            expected_parties[party][item] -= difference[item]
        count = ShiftCount.objects.select_related("transaction").get(pk=count_id)
        if not any(difference.values()):
            assert count.transaction is None, count_id
            continue
        posting = count.transaction
        assert posting is not None, count_id
        assert (posting.kind, posting.desk_id, posting.shift_id, posting.created_at) == (
            "count",
            old["desk"],
            old["shift"],
            old["counted_at"],
        )
        assert (posting.created_by_id, posting.note, posting.casino_id) == (
            old["counted_by"],
            old["kind"],
            history.casino_id,
        )
        assert posting.amount == sum(abs(d) for d in difference.values())
        assert per_item(posting.legs.filter(desk_id=old["desk"], shift_id=old["shift"])) == difference
        assert set(posting.legs.filter(desk__isnull=True).values_list("counterparty", flat=True)) == {party}
        assert posting.legs.count() == 2 * sum(1 for d in difference.values() if d)
        # After its count, the desk's book is what was counted.
        assert books.place_balances(count.desk, at=count.counted_at) == {
            item: before.lines[(count_id, item)][0] for item in ALL_ITEMS
        }
    postings = transactions.filter(kind="count")
    assert postings.count() == sum(
        1 for count in ShiftCount.objects.filter(pk__in=before.counts) if count.transaction_id
    )

    casino = Casino.objects.get(pk=history.casino_id)
    balances = books.counterparty_balances(casino)
    for party in balances:
        assert balances[party] == expected_parties.get(party, zeros()), party
    # Over/short is minus the variances of every count after a desk's first.
    over_short = zeros()
    for (count_id, item), (_counted, _expected, variance) in before.lines.items():
        if first_count[before.counts[count_id]["desk"]] != count_id:
            over_short[item] -= variance
    assert balances["over_short"] == over_short
    assert over_short["cash"] == Decimal("0.50")  # -(-20.00 + 10.00 - 5.50 + 15.00)

    # Receipt numbers stay unique per desk; postings follow each desk's last old number.
    for desk_id in history.desk_ids:
        desk = Place.objects.get(pk=desk_id)
        numbers = sorted(transactions.filter(desk=desk).values_list("number", flat=True))
        assert numbers == list(range(1, len(numbers) + 1))
        assert desk.last_receipt_number == numbers[-1]
        assert (
            sorted(postings.filter(desk=desk).values_list("number", flat=True))
            == numbers[before.last_numbers[desk_id] :]
        )

    # Each desk's book is its last count, plus the movements since; the vault's is its old movements.
    k1, k2 = (Place.objects.get(pk=pk) for pk in history.desk_ids)
    assert books.place_balances(k1) == now_expected
    k2_closing = ShiftCount.objects.get(desk=k2, kind="closing")
    assert books.place_balances(k2) == {item: before.lines[(k2_closing.pk, item)][0] for item in ALL_ITEMS}
    vault = Place.objects.get(pk=history.vault_id)
    assert books.place_balances(vault) == before.vault
    assert before.vault == plus(zeros(), cash="4000")  # dropped 5000 + 2000, filled 3000

    # The paid machine receipt is linked from its payout; old receipts get a check code.
    payout = CashTransaction.objects.get(pk=history.receipt_payout_id)
    assert payout.machine_receipt_id == history.receipt_id
    receipt = MachineReceipt.objects.get(pk=history.receipt_id)
    assert len(receipt.check_code) == 6
    assert receipt.check_code.isdigit()


@pytest.mark.django_db
def test_0009_can_be_unapplied():
    """The SQL of unapplying 0009 (as sqlmigrate --backwards writes it); nothing is run."""
    loader = MigrationExecutor(connection).loader
    statements = loader.collect_sql([(loader.graph.nodes[GUARDS], True)])
    assert any("CREATE TABLE" in sql and "cashdesk_movement" in sql for sql in statements)

"""Hypothesis works the whole cash desk in random order; the books' invariants hold after every step.

Every example is a casino of its own: two slot machines, one desk, the vault,
two cashiers, a supervisor and a floor attendant. The steps are every kind of
cash-desk transaction (ticket payout and sale, chips and tokens both ways,
smart-card payout and load, machine receipts, drops and fills, reversals,
holds), the counts (a shift closed, handed over or opened with a count that
may differ from the books, the vault counted), the machines' side of tickets,
double submissions of one operation key, second payouts of one instrument and
two steps that race connections: for a ticket, and a vault count against a
drop. The vault is counted at the start, or later (after a drop, perhaps).

The test commits for real (transaction=True): the books' deferred guards
(balanced legs, register entries) run at every commit, and the racing step's
connections see the data. A model of what each place holds, and of what
over/short and opening balances hold, predicts every step's outcome: a
refusal must be the predicted one and change nothing; a success must move
exactly what the model moves.
"""

import datetime as dt
import itertools
import uuid
from collections import defaultdict
from collections.abc import Callable
from decimal import ROUND_CEILING, Decimal
from typing import Any

import pytest
import time_machine
from django.db import connection
from django.db.models import Sum
from django.db.models.functions import Coalesce
from django.utils import timezone
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    initialize,
    invariant,
    multiple,
    precondition,
    rule,
    run_state_machine_as_test,
)

from cashdesk import reports, services
from cashdesk.books import counterparty_balances, place_balances
from cashdesk.errors import CashDeskError
from cashdesk.items import ALL_ITEMS, CHIPS, DENOMINATIONS, Item
from cashdesk.models import (
    CashTransaction,
    Counterparty,
    HoldCase,
    Leg,
    MachineReceipt,
    ReversalRequest,
    Shift,
    ShiftCount,
    SmartCardRead,
    TablePlaces,
    TableSession,
    TableSlip,
    TransactionKind,
    Transfer,
)
from cashdesk.services import table_slips, tables
from machines.models import Place, TableGame
from staff.models import StaffAssignment
from tests.factories import CasinoFactory, MachineFactory, make_person, make_user
from tests.races import race
from tickets import services as ticket_services
from tickets.exceptions import TicketError
from tickets.models import Ticket, TicketEvent

# The contract's arrows (machine-api.md), plus the cash desk's (payout, hold,
# sale, a sale reversed: its issued ticket is voided).
ALLOWED = {
    ("", "pending_print"),
    ("", "issued"),
    ("pending_print", "issued"),
    ("pending_print", "void"),
    ("issued", "redeem_pending"),
    ("redeem_pending", "redeem_pending"),
    ("redeem_pending", "redeemed"),
    ("redeem_pending", "issued"),
    ("issued", "redeemed"),
    ("issued", "expired"),
    ("issued", "on_hold"),
    ("issued", "void"),
    ("on_hold", "on_hold"),
    ("on_hold", "redeemed"),
    ("on_hold", "void"),
}
ZERO = Decimal("0.00")
CENT = Decimal("0.01")
CASH_LIMIT = Decimal("10000000.00")
DESK_FLOAT: dict[str, Decimal | int] = {
    "cash": Decimal("20000.00"),
    "chip_500": 20,
    "chip_100": 50,
    "chip_25": 100,
    "chip_5": 100,
    "chip_1": 200,
    "chip_0_50": 200,
    "token": 2000,
}
VAULT_FLOAT: dict[str, Decimal | int] = {"cash": Decimal("150000.00"), "chip_500": 40, "chip_100": 100, "token": 5000}

ticket_amounts = st.decimals(min_value=Decimal("0.001"), max_value=Decimal("3000"), places=3)
card_credits = ticket_amounts
cent_amounts = st.decimals(min_value=Decimal("0.01"), max_value=Decimal("3000"), places=2)
transfer_amounts = st.decimals(min_value=Decimal("0.01"), max_value=Decimal("40000"), places=2)
chip_counts = st.dictionaries(st.sampled_from(CHIPS), st.integers(0, 30), min_size=1, max_size=3)
token_counts = st.integers(1, 3000)
# Chips and tokens a transfer carries besides its cash, in pieces (within the casino's largest transfer).
transfer_pieces = st.dictionaries(st.sampled_from([*CHIPS, Item.TOKEN]), st.integers(0, 20), max_size=3)
# A count's differences from the books, in pieces (cash: in steps of 10.05 EUR).
count_deltas = st.dictionaries(st.sampled_from(ALL_ITEMS), st.integers(-4, 4), max_size=3)
# A fill's or a credit's chips: mostly those the vault and the tray hold, so that most slips go through.
slip_chips = st.dictionaries(
    st.sampled_from(["chip_500", "chip_100", "chip_25"]), st.integers(0, 5), min_size=1, max_size=2
)
tray_deltas = st.dictionaries(st.sampled_from(CHIPS), st.integers(-4, 4), max_size=3)
# A gaming table's tray when it is first counted (issue 24): value chips in pieces.
TRAY_FLOAT = {"chip_500": 2, "chip_100": 10, "chip_25": 40, "chip_5": 60, "chip_1": 50, "chip_0_50": 20}
CASH_DELTA_STEP = Decimal("10.05")


def ceil_cent(amount: Decimal) -> Decimal:
    return amount.quantize(CENT, rounding=ROUND_CEILING)


# Everything a refused step must leave as it was (audit events aside), in one round trip.
SNAPSHOT_SQL = """
SELECT
    (SELECT count(*) FROM cashdesk_leg WHERE casino_id = %(casino)s),
    (SELECT count(*) FROM cashdesk_cashtransaction WHERE casino_id = %(casino)s),
    (SELECT count(*) FROM cashdesk_smartcardread r JOIN cashdesk_cashtransaction t ON t.id = r.transaction_id
        WHERE t.casino_id = %(casino)s),
    (SELECT count(*) FROM cashdesk_shiftcount WHERE desk_id IN (%(desk)s, %(vault)s)),
    (SELECT string_agg(id || ':' || coalesce(closed_at::text, 'open'), ',' ORDER BY id) FROM cashdesk_shift
        WHERE desk_id = %(desk)s),
    (SELECT string_agg(id || ':' || coalesce(paid_by_id, 0), ',' ORDER BY id) FROM cashdesk_machinereceipt
        WHERE casino_id = %(casino)s),
    (SELECT string_agg(id || ':' || decision, ',' ORDER BY id) FROM cashdesk_holdcase WHERE casino_id = %(casino)s),
    (SELECT string_agg(t.id || ':' || coalesce(t.transaction_id, 0), ',' ORDER BY t.id) FROM cashdesk_transfer t
        JOIN cashdesk_shift s ON s.id = t.shift_id WHERE s.desk_id = %(desk)s),
    (SELECT string_agg(r.id || ':' || coalesce(r.reversal_id, 0), ',' ORDER BY r.id) FROM cashdesk_reversalrequest r
        JOIN cashdesk_cashtransaction t ON t.id = r.original_id WHERE t.casino_id = %(casino)s),
    (SELECT string_agg(
        concat_ws(':', id, state, hold_cleared_at, redeemed_by_user_id, redeemed_by_machine_id), ',' ORDER BY id)
        FROM tickets_ticket WHERE casino_id = %(casino)s),
    (SELECT string_agg(s.id || ':' || coalesce(s.closed_at::text, 'open'), ',' ORDER BY s.id)
        FROM cashdesk_tablesession s JOIN machines_gamingtable g ON g.id = s.table_id WHERE g.casino_id = %(casino)s),
    (SELECT count(*) FROM cashdesk_shiftcount c JOIN cashdesk_cashdesk p ON p.id = c.desk_id
        WHERE p.casino_id = %(casino)s)
"""


def zeros() -> dict[str, Decimal]:
    return dict.fromkeys(ALL_ITEMS, ZERO)


def as_counted(amounts: dict[str, Decimal]) -> dict[str, Decimal | int]:
    """A count as the cashier enters it: cash in euros, chips and tokens in pieces."""
    return {
        item: amount if item == Item.CASH else int(amount / DENOMINATIONS[item]) for item, amount in amounts.items()
    }


def counted_amounts(counted: dict[str, Decimal | int]) -> dict[str, Decimal]:
    amounts = zeros()
    for item, quantity in counted.items():
        amounts[item] = Decimal(quantity) if item == Item.CASH else DENOMINATIONS[item] * int(quantity)
    return amounts


class CashDeskMachine(RuleBasedStateMachine):
    tickets = Bundle("tickets")
    receipts = Bundle("receipts")
    transfers = Bundle("transfers")

    def __init__(self) -> None:
        super().__init__()
        self.tag = uuid.uuid4().hex[:10]  # the data is committed: every example's names are its own
        self.serial = itertools.count(1)
        # Counts post at once here: the four eyes above the casino's limit are proved in tests/cashdesk.
        self.casino = CasinoFactory(
            code=f"S{self.tag}", name=f"State machine {self.tag}", count_approval_limit=Decimal("9999999999.99")
        )
        self.machines = [MachineFactory(casino=self.casino, asset_number=str(i)) for i in range(2)]
        self.cashiers = [make_user(f"sm{self.tag}-cashier{i}", "cashier") for i in range(2)]
        self.supervisor = make_user(f"sm{self.tag}-super", "shift_supervisor")
        self.floor = make_user(f"sm{self.tag}-floor", "floor_attendant")
        self.person = make_person()
        self.desk = Place.objects.create(casino=self.casino, code="S1", name="State desk", cash_limit=CASH_LIMIT)
        self.vault = Place.objects.create(casino=self.casino, code="V", name="State vault", kind=Place.Kind.VAULT)
        # A roulette table (issue 24): its tray and drop box are places of the books like the desk and the vault.
        self.table = tables.table_create(casino=self.casino, number="T1", game=TableGame.AMERICAN_ROULETTE)
        table_places = TablePlaces.objects.get(table=self.table)
        self.tray, self.drop_box = table_places.tray, table_places.drop_box
        self.pit = make_user(f"sm{self.tag}-pit", "pit_supervisor")
        self.croupier = make_user(f"sm{self.tag}-croupier")
        for member in (self.pit, self.croupier):
            StaffAssignment.objects.create(user=member, casino=self.casino)
        self.session: TableSession | None = None
        self.session_drop = self.session_fills = self.session_credits = ZERO
        self.places = [self.desk, self.vault, self.tray, self.drop_box]
        # The model: what each place holds, and the counterparties a count posts to.
        self.book = {place.pk: zeros() for place in self.places}
        self.over_short = zeros()
        self.opening = zeros()
        self.table_win = zeros()  # what the tray's closing counts posted as the table's result
        self.colour_win = zeros()  # what colour chips exchanged back left with the table, per item
        self.colour_out = zeros()  # colour chips outstanding, at the value chips they were issued for
        self.counted_places: set[int] = set()
        # What the model remembers of the steps.
        self.paid: list[tuple[str, Any]] = []  # instruments paid: ("ticket", pk), ("receipt", pk), ("card", (n, c))
        self.card_reads: set[tuple[str, int]] = set()
        self.reversible: list[int] = []
        self.reversal_requests: list[int] = []
        self.hold_cases: list[int] = []
        self.submitted: list[tuple[Callable[[str], Any], str, int, int | None]] = []
        self.races = 0
        self.expiry_runs = 0
        self.tried_a_busy_desk = False

        self.cashier = self.cashiers[0]
        self.shift: Shift | None = None
        self._open(self.cashier, counted_amounts(DESK_FLOAT))

    @initialize(vault=st.sampled_from(["counted", "not counted yet", "a drop before its first count"]))
    def the_vault(self, vault: str) -> None:
        """The vault is counted before the first step, or only later (a fill is refused until then)."""
        if vault == "counted":
            self._vault_count(counted_amounts(VAULT_FLOAT))
        elif vault == "a drop before its first count":
            drop = services.transfer_request(
                shift=self.shift, user=self.cashier, direction="drop", amount=Decimal("1234.56")
            )
            self._approve_transfer(drop.pk, by_cashier=False)

    # --- helpers ---------------------------------------------------------------

    def _key(self) -> str:
        return f"sm-{self.tag}-{next(self.serial)}"

    def _snapshot(self) -> tuple[Any, ...]:
        """Everything a refused step must leave as it was (audit events aside), read in one query."""
        with connection.cursor() as cursor:
            cursor.execute(SNAPSHOT_SQL, {"casino": self.casino.pk, "desk": self.desk.pk, "vault": self.vault.pk})
            return tuple(cursor.fetchone())

    def _attempt(self, expected: str | None, call: Callable[[], Any]) -> Any:
        """Run a step the model predicted: `expected` is the refusal's code, or None for success."""
        before = self._snapshot()
        refused: CashDeskError | None = None
        try:
            result = call()
        except CashDeskError as error:
            refused, result = error, None
        if refused is not None:
            assert refused.code == expected, f"expected {expected or 'success'}, refused {refused.code}: {refused}"
            assert self._snapshot() == before, f"the refusal {refused.code} changed something"
            return None
        assert expected is None, f"expected the refusal {expected}, but the step succeeded"
        return result

    def _desk_step(self, expected: str | None, call: Callable[[str], Any], *, twice: bool) -> Any:
        """A desk form submitted with a fresh operation key (and, if `twice`, submitted again at once)."""
        key = self._key()
        result = self._attempt(expected, lambda: call(key))
        if result is not None:
            shift_id = self.shift.pk if self.shift is not None else None
            self.submitted.append((call, key, result.pk, shift_id))
            if twice:
                self._submit_again(call, key, result.pk, shift_id)
        return result

    def _submit_again(self, call: Callable[[str], Any], key: str, pk: int, shift_id: int | None) -> None:
        """The same form (same key) again: the first result comes back and nothing is written."""
        before = self._snapshot()
        refused: CashDeskError | None = None
        try:
            again = call(key)
        except CashDeskError as error:
            refused, again = error, None
        if refused is not None:
            # Only a closed shift may refuse the repeat (it is checked before the key); it writes nothing either.
            assert refused.code == "shift_closed", f"a repeated key was refused: {refused.code}: {refused}"
            assert Shift.objects.get(pk=shift_id).closed_at is not None
        else:
            assert again is not None
            assert again.pk == pk, f"key {key} gave {again.pk}, first {pk}"
        assert self._snapshot() == before, f"the repeated key {key} changed something"

    def _refusal_to_post(
        self,
        amount: Decimal,
        *,
        identified: bool,
        out: dict[str, Decimal] | None = None,
        cash_in: Decimal = ZERO,
        needs_identity: bool = True,
        place: Place | None = None,
    ) -> str | None:
        """Why post_transaction refuses, in its order: identity, a place below zero, the cash limit."""
        book = self.book[(place or self.desk).pk]
        if needs_identity and amount > self.casino.identity_threshold and not identified:
            return "identity_required"
        for item, needed in (out or {}).items():
            if book[item] < needed:
                return "insufficient_stock"
        if cash_in > 0 and self.book[self.desk.pk][Item.CASH] + cash_in > CASH_LIMIT:
            return "over_cash_limit"
        return None

    def _ticket_refusal(self, ticket: Ticket) -> str | None:
        """Whether the desk may pay the ticket now (casino rules §1.7), as the model sees it."""
        state = ticket.state
        if state == "redeemed":
            return "already_redeemed"
        if state == "redeem_pending":
            return "pending_elsewhere"
        if state == "void":
            return "void"
        if state == "pending_print":
            return "not_printed"
        if ticket.ticket_type != "cashable":
            return "not_cashable"
        if state == "on_hold":
            undecided = HoldCase.objects.filter(ticket=ticket, decision=HoldCase.Decision.PENDING).exists()
            return None if ticket.hold_cleared_at is not None and not undecided else "on_hold"
        if state == "expired" or timezone.now() > ticket.expires_at:
            return "expired"
        return None

    def _person(self, identified: bool) -> Any:
        return self.person if identified else None

    def _moved(self, place: Place, changes: dict[str, Decimal]) -> None:
        for item, change in changes.items():
            self.book[place.pk][item] += change

    def _apply_count(self, place: Place, count: ShiftCount, counted: dict[str, Decimal]) -> None:
        """A count: the book becomes what was counted; the difference goes to opening (first) or over/short."""
        first = place.pk not in self.counted_places
        self.counted_places.add(place.pk)
        book = self.book[place.pk]
        lines = {line.item: line for line in count.lines.all()}
        assert set(lines) == set(ALL_ITEMS)
        differences = {}
        for item in ALL_ITEMS:
            line = lines[item]
            difference = counted[item] - book[item]
            assert line.counted_amount == counted[item], (item, line.counted_amount, counted[item])
            if first:  # nothing to compare with: what was there comes from opening balances
                assert line.expected_amount == counted[item], (item, line.expected_amount, counted[item])
                assert line.variance == 0, item
                self.opening[item] -= difference
            else:
                assert line.expected_amount == book[item], (item, line.expected_amount, book[item])
                assert line.variance == difference, (item, line.variance, difference)
                self.over_short[item] -= difference
            book[item] = counted[item]
            if difference:
                differences[item] = difference
        if not differences:
            assert count.transaction_id is None
            return
        posting = CashTransaction.objects.get(pk=count.transaction_id)
        assert posting.kind == (TransactionKind.OPENING_BALANCE if first else TransactionKind.COUNT)
        assert posting.created_at == count.counted_at
        legs: dict[tuple[int | str, str], Decimal] = defaultdict(lambda: ZERO)
        for leg in posting.legs.all():
            legs[(leg.desk_id or leg.counterparty, leg.item)] += leg.amount
        party = Counterparty.OPENING if first else Counterparty.OVER_SHORT
        expected: dict[tuple[int | str, str], Decimal] = {(place.pk, item): d for item, d in differences.items()}
        expected |= {(party, item): -d for item, d in differences.items()}
        assert dict(legs) == expected, (dict(legs), expected)

    def _recount(self, place: Place, deltas: dict[str, int]) -> dict[str, Decimal]:
        """What a count finds: the books, give or take a few pieces (never below zero)."""
        counted = dict(self.book[place.pk])
        if place.pk not in self.counted_places:  # the vault's first count finds its own stock (the desk's is
            # counted when the machine starts, at its first shift's opening)
            counted = {item: counted[item] + amount for item, amount in counted_amounts(VAULT_FLOAT).items()}
        for item, delta in deltas.items():
            step = CASH_DELTA_STEP if item == Item.CASH else DENOMINATIONS[item]
            counted[item] = max(ZERO, counted[item] + delta * step)
        return counted

    def _open(self, cashier: Any, counted: dict[str, Decimal]) -> None:
        self.shift = services.shift_open(desk=self.desk, cashier=cashier, counted=as_counted(counted))
        self.cashier = cashier
        count = ShiftCount.objects.get(shift=self.shift, kind=ShiftCount.Kind.OPENING)
        self._apply_count(self.desk, count, counted)

    def _vault_count(self, counted: dict[str, Decimal]) -> None:
        count = services.vault_count(vault=self.vault, user=self.supervisor, counted=as_counted(counted))
        assert count.kind == ShiftCount.Kind.VAULT
        assert count.shift_id is None
        self._apply_count(self.vault, count, counted)

    def _other_cashier(self) -> Any:
        return self.cashiers[1] if self.cashier.pk == self.cashiers[0].pk else self.cashiers[0]

    def _pay_ticket(self, ticket: Ticket, tx: CashTransaction) -> None:
        payout = ceil_cent(ticket.amount)
        assert tx.kind == TransactionKind.TICKET_PAYOUT
        assert tx.ticket_id == ticket.pk
        assert tx.amount == payout
        self._moved(self.desk, {Item.CASH: -payout})
        self.paid.append(("ticket", ticket.pk))
        paid = Ticket.objects.get(pk=ticket.pk)
        assert paid.state == "redeemed", paid.state
        assert paid.redeemed_by_user_id == tx.created_by_id

    def _payout(self, ticket: int, *, identified: bool, twice: bool, misprinted: bool = False) -> None:
        found = Ticket.objects.get(pk=ticket)
        payout = ceil_cent(found.amount)
        expected = self._ticket_refusal(found) or self._refusal_to_post(
            payout, identified=identified, out={Item.CASH: payout}
        )
        shift, user, person = self.shift, self.cashier, self._person(identified)
        tx = self._desk_step(
            expected,
            lambda key: services.ticket_payout(
                shift=shift,
                user=user,
                validation_number=found.validation_number,
                person=person,
                printed_amount=found.amount + 1 if misprinted else None,
                operation_key=key,
            ),
            twice=twice,
        )
        if tx is not None:
            self._pay_ticket(found, tx)

    def _hold(self, ticket: int, *, twice: bool) -> None:
        found = Ticket.objects.get(pk=ticket)
        expected = self._ticket_refusal(found)
        shift, user = self.shift, self.cashier
        case = self._desk_step(
            expected,
            lambda key: services.ticket_hold(
                shift=shift, user=user, validation_number=found.validation_number, reason="damage", operation_key=key
            ),
            twice=twice,
        )
        if case is not None:
            assert Ticket.objects.get(pk=ticket).state == "on_hold"
            assert case.decision == HoldCase.Decision.PENDING
            self.hold_cases.append(case.pk)

    # --- the machines' side of tickets -------------------------------------------

    def _machine_ticket(self, amount: Decimal, machine: int, *, promo: bool = False, printed: bool = True) -> Ticket:
        ticket = ticket_services.ticket_issue(
            machine=self.machines[machine],
            amount=amount,
            ticket_type="promo" if promo else "cashable",
            request_id=self._key(),
        )
        if printed:
            ticket_services.ticket_confirm_print(
                machine=self.machines[machine],
                validation_number=ticket.validation_number,
                printed=True,
                reason="",
                request_id=self._key(),
            )
        return ticket

    @rule(
        target=tickets,
        amount=ticket_amounts,
        machine=st.integers(0, 1),
        then=st.sampled_from(["", "payout", "hold"]),
    )
    def machine_cashout(self, amount: Decimal, machine: int, then: str) -> int:
        """A machine prints a ticket (then, perhaps, the player takes it straight to the desk)."""
        ticket = self._machine_ticket(amount, machine)
        if then == "payout" and self.shift is not None:
            self._payout(ticket.pk, identified=True, twice=False)
        elif then == "hold" and self.shift is not None:
            self._hold(ticket.pk, twice=False)
        return ticket.pk

    @rule(target=tickets, amount=ticket_amounts, machine=st.integers(0, 1), promo=st.booleans())
    def machine_cashout_not_for_the_desk(self, amount: Decimal, machine: int, promo: bool) -> int:
        """A promotional ticket (played, never paid in cash), or one the machine never confirmed printing."""
        return self._machine_ticket(amount, machine, promo=promo, printed=promo).pk

    @rule(ticket=tickets, machine=st.integers(0, 1), accept=st.booleans())
    def machine_ticket_in(self, ticket: int, machine: int, accept: bool) -> None:
        number = Ticket.objects.get(pk=ticket).validation_number
        try:
            ticket_services.ticket_authorize(
                machine=self.machines[machine], validation_number=number, request_id=self._key()
            )
        except TicketError:
            return
        ticket_services.ticket_commit(
            machine=self.machines[machine], validation_number=number, accepted=accept, reason="", request_id=self._key()
        )

    @rule(ticket=tickets, machine=st.integers(0, 1))
    def machine_authorizes_and_hangs(self, ticket: int, machine: int) -> None:
        number = Ticket.objects.get(pk=ticket).validation_number
        before = self._snapshot()
        try:
            ticket_services.ticket_authorize(
                machine=self.machines[machine], validation_number=number, request_id=self._key()
            )
        except TicketError:
            assert self._snapshot() == before

    @rule(ticket=tickets, credits_taken=st.booleans())
    def supervisor_resolves_stuck(self, ticket: int, credits_taken: bool) -> None:
        found = Ticket.objects.get(pk=ticket)
        expected = None if found.state == "redeem_pending" else "invalid_state"
        # Resolved once the hold and the commit retry's grace have run out (a minute on).
        with time_machine.travel(timezone.now() + dt.timedelta(minutes=1)):
            self._attempt(
                expected,
                lambda: services.ticket_resolve_stuck(
                    ticket=found,
                    user=self.supervisor,
                    credits_taken=credits_taken,
                    meter_reading="12345",
                    reason="meters",
                ),
            )

    @precondition(lambda self: self.expiry_runs < 2)
    @rule(days=st.sampled_from([1, 400]))
    def expiry_job(self, days: int) -> None:
        """The expiry job, run as if `days` later: a day later nothing is due; a year later every issued ticket."""
        valid = set(Ticket.objects.filter(casino=self.casino, state="issued").values_list("pk", flat=True))
        ticket_services.tickets_expire_due(now=timezone.now() + dt.timedelta(days=days))
        still = set(Ticket.objects.filter(casino=self.casino, state="issued").values_list("pk", flat=True))
        assert still == (valid if days == 1 else set()), (days, valid, still)
        self.expiry_runs += 1

    @rule(target=receipts, amount=cent_amounts, machine=st.integers(0, 1))
    def floor_records_receipt(self, amount: Decimal, machine: int) -> int:
        receipt = services.machine_receipt_record(
            machine=self.machines[machine], amount=amount, reason="hopper empty", user=self.floor
        )
        assert receipt.paid_by_id is None
        assert receipt.amount == amount
        if amount > self.casino.receipt_confirmation_limit:  # four eyes before the desk may pay it
            services.machine_receipt_supervisor_confirm(
                receipt_id=receipt.pk, casino_id=self.casino.pk, user=self.supervisor
            )
        return receipt.pk

    # --- tickets at the desk -------------------------------------------------------

    @precondition(lambda self: self.shift is not None)
    @rule(ticket=tickets, identified=st.booleans(), twice=st.booleans(), misprinted=st.booleans())
    def ticket_payout(self, ticket: int, identified: bool, twice: bool, misprinted: bool) -> None:
        self._payout(ticket, identified=identified, twice=twice, misprinted=misprinted)

    @precondition(lambda self: self.shift is not None)
    @rule(target=tickets, amount=cent_amounts, identified=st.booleans(), twice=st.booleans())
    def ticket_sale(self, amount: Decimal, identified: bool, twice: bool) -> Any:
        expected = self._refusal_to_post(amount, identified=identified, cash_in=amount)
        shift, user, person = self.shift, self.cashier, self._person(identified)
        tx = self._desk_step(
            expected,
            lambda key: services.ticket_sell(shift=shift, user=user, amount=amount, person=person, operation_key=key),
            twice=twice,
        )
        if tx is None:
            return multiple()
        assert tx.kind == TransactionKind.TICKET_SALE
        assert tx.amount == amount
        sold = Ticket.objects.get(pk=tx.ticket_id)
        assert (sold.state, sold.amount, sold.issuing_desk_id) == ("issued", amount, self.desk.pk)
        self._moved(self.desk, {Item.CASH: amount})
        self.reversible.append(tx.pk)
        return sold.pk

    @precondition(lambda self: self.shift is not None)
    @rule(ticket=tickets, twice=st.booleans())
    def ticket_hold(self, ticket: int, twice: bool) -> None:
        self._hold(ticket, twice=twice)

    @precondition(lambda self: self.hold_cases)
    @rule(data=st.data(), pay=st.booleans(), then=st.sampled_from(["", "payout", "hold again"]))
    def hold_decide(self, data: st.DataObject, pay: bool, then: str) -> None:
        """A supervisor decides a held ticket (then, perhaps, it is presented again: paid, or held again)."""
        found = HoldCase.objects.get(pk=data.draw(st.sampled_from(self.hold_cases), label="case"))
        ticket = Ticket.objects.get(pk=found.ticket_id)
        expected = None
        if found.decision != HoldCase.Decision.PENDING:
            expected = "already_decided"
        elif ticket.state != "on_hold":
            expected = "invalid_state"
        decided = self._attempt(
            expected, lambda: services.hold_decide(case=found, user=self.supervisor, pay=pay, note="decided")
        )
        if decided is None:
            return
        ticket.refresh_from_db()
        assert decided.decision == ("pay" if pay else "refuse")
        assert ticket.state == ("on_hold" if pay else "void")
        assert (ticket.hold_cleared_at is not None) == pay
        if then and self.shift is not None:
            if then == "hold again":  # a new case: until it is decided, the ticket is not paid
                self._hold(ticket.pk, twice=False)
            self._payout(ticket.pk, identified=True, twice=False)

    # --- chips, tokens, smart cards, machine receipts ---------------------------------

    @precondition(lambda self: self.shift is not None)
    @rule(chips=chip_counts, identified=st.booleans(), twice=st.booleans(), buy=st.booleans())
    def chips_exchange(self, chips: dict[str, int], identified: bool, twice: bool, buy: bool) -> None:
        value = sum((DENOMINATIONS[item] * count for item, count in chips.items()), ZERO)
        pieces = {item: DENOMINATIONS[item] * count for item, count in chips.items() if count}
        if not value:
            expected: str | None = "invalid_count"
        elif buy:
            expected = self._refusal_to_post(value, identified=identified, out=pieces, cash_in=value)
        else:
            expected = self._refusal_to_post(value, identified=identified, out={Item.CASH: value})
        shift, user, person = self.shift, self.cashier, self._person(identified)
        service = services.chips_buy if buy else services.chips_cashout
        tx = self._desk_step(
            expected,
            lambda key: service(shift=shift, user=user, chips=chips, person=person, operation_key=key),
            twice=twice,
        )
        if tx is None:
            return
        assert tx.kind == ("chips_buy" if buy else "chips_cashout")
        assert tx.amount == value
        sign = 1 if buy else -1
        self._moved(self.desk, {Item.CASH: sign * value, **{item: -sign * v for item, v in pieces.items()}})
        self.reversible.append(tx.pk)

    @precondition(lambda self: self.shift is not None)
    @rule(count=token_counts, identified=st.booleans(), twice=st.booleans(), buy=st.booleans())
    def tokens_exchange(self, count: int, identified: bool, twice: bool, buy: bool) -> None:
        value = Decimal(count)
        if buy:
            expected = self._refusal_to_post(value, identified=identified, out={Item.TOKEN: value}, cash_in=value)
        else:
            expected = self._refusal_to_post(value, identified=identified, out={Item.CASH: value})
        shift, user, person = self.shift, self.cashier, self._person(identified)
        service = services.tokens_buy if buy else services.tokens_cashout
        tx = self._desk_step(
            expected,
            lambda key: service(shift=shift, user=user, count=count, person=person, operation_key=key),
            twice=twice,
        )
        if tx is None:
            return
        assert tx.kind == ("tokens_buy" if buy else "tokens_cashout")
        assert tx.amount == value
        sign = 1 if buy else -1
        self._moved(self.desk, {Item.CASH: sign * value, Item.TOKEN: -sign * value})
        self.reversible.append(tx.pk)

    def _card(self, card: int) -> str:
        return f"SM{self.tag}{card}".upper()  # as the desk keeps it

    @precondition(lambda self: self.shift is not None)
    @rule(
        card=st.integers(0, 2),
        counter=st.integers(0, 3),
        amount=card_credits,
        identified=st.booleans(),
        twice=st.booleans(),
        load=st.booleans(),
    )
    def smartcard(self, card: int, counter: int, amount: Decimal, identified: bool, twice: bool, load: bool) -> None:
        """A smart card read at the desk: its credits paid out, or cash loaded onto it."""
        number = self._card(card)
        if load:
            amount = amount.quantize(CENT, rounding=ROUND_CEILING)
        value = amount if load else ceil_cent(amount)
        if (number, counter) in self.card_reads:
            expected: str | None = "already_paid"
        elif load:
            expected = self._refusal_to_post(value, identified=identified, cash_in=value)
        else:
            expected = self._refusal_to_post(value, identified=identified, out={Item.CASH: value})
        shift, user, person = self.shift, self.cashier, self._person(identified)
        if load:

            def call(key: str) -> CashTransaction:
                return services.smartcard_load(
                    shift=shift,
                    user=user,
                    card_number=number,
                    amount=amount,
                    card_counter=counter,
                    person=person,
                    operation_key=key,
                )
        else:

            def call(key: str) -> CashTransaction:
                return services.smartcard_payout(
                    shift=shift,
                    user=user,
                    card_number=number,
                    credits=amount,
                    card_counter=counter,
                    person=person,
                    operation_key=key,
                )

        tx = self._desk_step(expected, call, twice=twice)
        if tx is None:
            return
        assert tx.kind == (TransactionKind.SMARTCARD_LOAD if load else TransactionKind.SMARTCARD_PAYOUT)
        assert tx.amount == value
        read = SmartCardRead.objects.get(transaction=tx)
        assert (read.card_number, read.card_counter, read.credits) == (number, counter, amount)
        self.card_reads.add((number, counter))
        self.paid.append(("card", (number, counter)))  # a read is settled once, loaded or paid
        self._moved(self.desk, {Item.CASH: value if load else -value})
        self.reversible.append(tx.pk)

    @precondition(lambda self: self.shift is not None)
    @rule(
        receipt=receipts,
        right_code=st.sampled_from([True, True, True, False]),
        identified=st.booleans(),
        twice=st.booleans(),
    )
    def receipt_payout(self, receipt: int, right_code: bool, identified: bool, twice: bool) -> None:
        found = MachineReceipt.objects.get(pk=receipt)
        code = found.check_code if right_code else f"{(int(found.check_code) + 1) % 1_000_000:06d}"
        if found.code_locked_at is not None:  # after CHECK_CODE_TRIES wrong codes, even the right one is refused
            expected: str | None = "check_code_locked"
        elif not right_code:
            expected = "wrong_check_code"
        elif found.paid_by_id is not None:
            expected = "already_paid"
        else:
            expected = self._refusal_to_post(found.amount, identified=identified, out={Item.CASH: found.amount})
        shift, user, person = self.shift, self.cashier, self._person(identified)
        tx = self._desk_step(
            expected,
            lambda key: services.machine_receipt_pay(
                shift=shift, user=user, number=found.number, check_code=code, person=person, operation_key=key
            ),
            twice=twice,
        )
        if tx is None:
            return
        assert tx.kind == TransactionKind.RECEIPT_PAYOUT
        assert tx.amount == found.amount
        assert MachineReceipt.objects.get(pk=receipt).paid_by_id == tx.pk
        self.paid.append(("receipt", receipt))
        self._moved(self.desk, {Item.CASH: -found.amount})

    # --- second payouts of one instrument, second submissions of one form ---------------

    @precondition(lambda self: self.shift is not None and self.paid)
    @rule(data=st.data())
    def pay_the_same_instrument_again(self, data: st.DataObject) -> None:
        kind, what = data.draw(st.sampled_from(self.paid), label="paid")
        shift, user, person = self.shift, self.cashier, self.person
        if kind == "ticket":
            ticket = Ticket.objects.get(pk=what)
            self._desk_step(
                "already_redeemed",
                lambda key: services.ticket_payout(
                    shift=shift, user=user, validation_number=ticket.validation_number, person=person, operation_key=key
                ),
                twice=False,
            )
        elif kind == "receipt":
            receipt = MachineReceipt.objects.get(pk=what)
            self._desk_step(
                "check_code_locked" if receipt.code_locked_at is not None else "already_paid",
                lambda key: services.machine_receipt_pay(
                    shift=shift,
                    user=user,
                    number=receipt.number,
                    check_code=receipt.check_code,
                    person=person,
                    operation_key=key,
                ),
                twice=False,
            )
        else:
            number, counter = what
            self._desk_step(
                "already_paid",
                lambda key: services.smartcard_payout(
                    shift=shift,
                    user=user,
                    card_number=number,
                    credits=Decimal("5.00"),
                    card_counter=counter,
                    person=person,
                    operation_key=key,
                ),
                twice=False,
            )

    @precondition(lambda self: self.submitted)
    @rule(data=st.data())
    def submit_a_form_again(self, data: st.DataObject) -> None:
        call, key, pk, shift_id = data.draw(st.sampled_from(self.submitted), label="submitted")
        self._submit_again(call, key, pk, shift_id)

    # --- transfers and reversals -------------------------------------------------------

    @precondition(lambda self: self.shift is not None)
    @rule(
        target=transfers,
        drop=st.booleans(),
        amount=transfer_amounts,
        moved_pieces=transfer_pieces,
        twice=st.booleans(),
        approve_now=st.booleans(),
    )
    def transfer_request(
        self, drop: bool, amount: Decimal, moved_pieces: dict[str, int], twice: bool, approve_now: bool
    ) -> int:
        shift, user = self.shift, self.cashier
        direction = "drop" if drop else "fill"
        transfer = self._desk_step(
            None,
            lambda key: services.transfer_request(
                shift=shift,
                user=user,
                direction=direction,
                amount=amount,
                chips_and_tokens=moved_pieces,
                operation_key=key,
            ),
            twice=twice,
        )
        assert transfer.transaction_id is None
        if approve_now:
            self._approve_transfer(transfer.pk, by_cashier=False)
        return transfer.pk

    @rule(transfer=transfers, by_cashier=st.sampled_from([False, False, False, True]))
    def transfer_approve(self, transfer: int, by_cashier: bool) -> None:
        self._approve_transfer(transfer, by_cashier=by_cashier)

    def _approve_transfer(self, transfer: int, *, by_cashier: bool) -> None:
        found = Transfer.objects.get(pk=transfer)
        shift = Shift.objects.get(pk=found.shift_id)
        drop = found.direction == "drop"
        # Every item the transfer carries leaves one place for the other (cash, chips, tokens).
        carried = {line.item: line.amount for line in found.lines.all()}
        expected: str | None
        if by_cashier:
            expected = "forbidden"
        elif found.transaction_id is not None:
            expected = "already_approved"
        elif shift.closed_at is not None:
            expected = "shift_closed"
        elif drop:
            expected = self._refusal_to_post(found.amount, identified=True, out=carried)
        else:
            expected = self._refusal_to_post(
                found.amount, identified=True, out=carried, place=self.vault
            ) or self._refusal_to_post(found.amount, identified=True, cash_in=carried.get(Item.CASH, ZERO))
        approver = self.cashier if by_cashier else self.supervisor
        tx = self._attempt(expected, lambda: services.transfer_approve(transfer=found, supervisor=approver))
        if tx is None:
            return
        assert tx.kind == found.direction
        assert tx.amount == found.amount
        assert (tx.created_by_id, tx.approved_by_id) == (found.requested_by_id, self.supervisor.pk)
        sign = -1 if drop else 1
        self._moved(self.desk, {item: sign * value for item, value in carried.items()})
        self._moved(self.vault, {item: -sign * value for item, value in carried.items()})

    @precondition(lambda self: self.reversible)
    @rule(
        data=st.data(),
        twice=st.booleans(),
        approve_now=st.booleans(),
        by_another_cashier=st.sampled_from([False, False, False, True]),
    )
    def reversal_request(self, data: st.DataObject, twice: bool, approve_now: bool, by_another_cashier: bool) -> None:
        original = CashTransaction.objects.get(pk=data.draw(st.sampled_from(self.reversible), label="original"))
        requester = original.created_by
        expected = "already_requested" if ReversalRequest.objects.filter(original=original).exists() else None
        if by_another_cashier:  # only the cashier who made a transaction asks to reverse it
            requester = next(cashier for cashier in self.cashiers if cashier.pk != original.created_by_id)
            expected = "forbidden"
        request = self._desk_step(
            expected,
            lambda key: services.reversal_request(
                original=original, user=requester, reason="wrong amount keyed", operation_key=key
            ),
            twice=twice,
        )
        if request is None:
            return
        assert request.reversal_id is None
        self.reversal_requests.append(request.pk)
        if approve_now:
            self._approve_reversal(request.pk)

    @precondition(lambda self: self.reversal_requests)
    @rule(data=st.data())
    def reversal_approve(self, data: st.DataObject) -> None:
        self._approve_reversal(data.draw(st.sampled_from(self.reversal_requests), label="request"))

    def _approve_reversal(self, pk: int) -> None:
        request = ReversalRequest.objects.get(pk=pk)
        original = CashTransaction.objects.get(pk=request.original_id)
        desk_legs = zeros()
        for leg in original.legs.filter(desk=self.desk):
            desk_legs[leg.item] += leg.amount
        expected: str | None = None
        if request.reversal_id is not None:
            expected = "already_approved"
        elif Shift.objects.get(pk=original.shift_id).closed_at is not None:
            expected = "shift_closed"
        elif original.ticket_id is not None and Ticket.objects.get(pk=original.ticket_id).state != "issued":
            expected = "invalid_state"
        else:
            out = {item: amount for item, amount in desk_legs.items() if amount > 0}
            cash_in = max(ZERO, -desk_legs[Item.CASH])  # undoing a cash-out brings the cash back in
            expected = self._refusal_to_post(
                original.amount, identified=True, out=out, cash_in=cash_in, needs_identity=False
            )
        tx = self._attempt(expected, lambda: services.reversal_approve(request=request, supervisor=self.supervisor))
        if tx is None:
            return
        assert tx.kind == TransactionKind.REVERSAL
        assert (tx.reverses_id, tx.amount, tx.shift_id) == (original.pk, original.amount, original.shift_id)
        assert (tx.created_by_id, tx.approved_by_id) == (request.requested_by_id, self.supervisor.pk)
        self._moved(self.desk, {item: -amount for item, amount in desk_legs.items() if amount})
        if original.ticket_id is not None:
            assert Ticket.objects.get(pk=original.ticket_id).state == "void"

    # --- counts --------------------------------------------------------------------------

    @rule(
        which=st.sampled_from(["close", "handover", "vault"]),
        deltas=count_deltas,
        reopen=st.booleans(),
        reopen_deltas=count_deltas,
    )
    def count(self, which: str, deltas: dict[str, int], reopen: bool, reopen_deltas: dict[str, int]) -> None:
        """A count that may differ from the books: the vault counted, or the shift handed over or closed
        (and perhaps a new one opened at once, with a count of its own)."""
        if which == "vault" or self.shift is None:
            self._vault_count(self._recount(self.vault, deltas))
            return
        counted = self._recount(self.desk, deltas)
        book = dict(self.book[self.desk.pk])
        old, successor = self.shift, self._other_cashier()
        if which == "close":
            count = services.shift_close(shift=old, user=self.cashier, counted=as_counted(counted))
            assert count.kind == ShiftCount.Kind.CLOSING
            self._apply_count(self.desk, count, counted)
            self.shift = None
            if reopen:
                self._open(self._other_cashier(), self._recount(self.desk, reopen_deltas))
        else:
            handover = services.shift_handover(
                shift=old, user=self.cashier, counted=as_counted(counted), next_cashier=successor
            )
            # The incoming cashier counts the same: the next shift opens.
            handover = services.handover_take_over(request=handover, user=successor, counted=as_counted(counted))
            new = handover.successor
            assert new is not None
            count = ShiftCount.objects.get(shift=old, kind=ShiftCount.Kind.HANDOVER)
            self._apply_count(self.desk, count, counted)
            opening = ShiftCount.objects.get(shift=new, kind=ShiftCount.Kind.OPENING)
            self._apply_count(self.desk, opening, counted)  # the same count: nothing more to post
            assert (new.previous_id, new.cashier_id) == (old.pk, successor.pk)
            self.shift, self.cashier = new, successor
        closed = Shift.objects.get(pk=old.pk)
        assert closed.closed_at == count.counted_at
        # A closed shift shows what the books expected at its end.
        assert services.shift_balances(closed) == book

    @precondition(lambda self: self.shift is None or not self.tried_a_busy_desk)
    @rule(deltas=count_deltas, other=st.booleans())
    def shift_open(self, deltas: dict[str, int], other: bool) -> None:
        """A cashier opens the desk with a count (refused while a shift is open there)."""
        cashier = self._other_cashier() if other else self.cashier
        if self.shift is not None:
            self.tried_a_busy_desk = True
            self._attempt("desk_busy", lambda: services.shift_open(desk=self.desk, cashier=cashier, counted=DESK_FLOAT))
            return
        self._open(cashier, self._recount(self.desk, deltas))

    # --- a race ----------------------------------------------------------------------------

    @precondition(lambda self: self.shift is not None and self.races < 2)
    @rule(
        ticket=tickets,
        fresh=st.booleans(),
        same_key=st.booleans(),
        machine_at=st.sampled_from([None, 0, 1, 2]),
    )
    def race_for_a_ticket(self, ticket: int, fresh: bool, same_key: bool, machine_at: int | None) -> None:
        """Two submissions at the desk (one key or two), and perhaps a machine, wait on one ticket's lock."""
        self.races += 1
        if fresh:  # a ticket just printed, rather than one the steps so far have drawn
            ticket = self._machine_ticket(Decimal("25.50"), 1).pk
        found = Ticket.objects.get(pk=ticket)
        payout = ceil_cent(found.amount)
        refusal = self._ticket_refusal(found) or self._refusal_to_post(payout, identified=True, out={Item.CASH: payout})
        shift, user, person = self.shift, self.cashier, self.person
        keys = [self._key()] * 2 if same_key else [self._key(), self._key()]

        def pay(key: str) -> Callable[[], Any]:
            return lambda: services.ticket_payout(
                shift=shift, user=user, validation_number=found.validation_number, person=person, operation_key=key
            )

        calls = [pay(key) for key in keys]
        if machine_at is not None:
            request_id = self._key()
            calls.insert(
                machine_at,
                lambda: ticket_services.ticket_authorize(
                    machine=self.machines[0], validation_number=found.validation_number, request_id=request_id
                ),
            )
        results = race(calls, gate=("SELECT id FROM tickets_ticket WHERE id = %s FOR UPDATE", [found.pk]), ordered=True)
        for result in results:
            assert not isinstance(result, Exception) or isinstance(result, CashDeskError | TicketError), result
        machine = results.pop(machine_at) if machine_at is not None else None
        paid = {result.pk for result in results if isinstance(result, CashTransaction)}
        assert len(paid) <= 1, f"one ticket, {len(paid)} payouts"
        assert not (paid and isinstance(machine, Ticket)), "paid at the desk and held by a machine"
        if refusal is None and machine_at != 0:  # the first at the desk pays
            first, second = results
            assert isinstance(first, CashTransaction), results
            if same_key:  # the same form again gets the same payout
                assert isinstance(second, CashTransaction), results
                assert second.pk == first.pk
            else:  # another form finds the ticket paid
                assert isinstance(second, CashDeskError), results
                assert second.code == "already_redeemed"
        if refusal is not None:
            assert not paid, results
        if paid:
            self._pay_ticket(found, CashTransaction.objects.get(pk=paid.pop()))

    @precondition(lambda self: self.shift is not None and self.races < 2 and self.vault.pk in self.counted_places)
    @rule(amount=transfer_amounts, deltas=count_deltas, count_first=st.booleans())
    def race_a_vault_count_and_a_drop(self, amount: Decimal, deltas: dict[str, int], count_first: bool) -> None:
        """The supervisor counts the vault while a drop to it is approved: both wait for the vault."""
        self.races += 1
        transfer = services.transfer_request(
            shift=self.shift, user=self.cashier, direction="drop", amount=amount, operation_key=self._key()
        )
        refusal = self._refusal_to_post(amount, identified=True, out={Item.CASH: amount})
        counted = self._recount(self.vault, deltas)
        calls = [
            lambda: services.vault_count(vault=self.vault, user=self.supervisor, counted=as_counted(counted)),
            lambda: services.transfer_approve(transfer=transfer, supervisor=self.supervisor),
        ]
        count, tx = race(
            calls if count_first else calls[::-1],
            gate=("SELECT id FROM cashdesk_cashdesk WHERE id = %s FOR UPDATE", [self.vault.pk]),
            ordered=True,
        )[:: 1 if count_first else -1]
        assert isinstance(count, ShiftCount), count
        if refusal is not None:
            assert isinstance(tx, CashDeskError), tx
            assert tx.code == refusal
            self._apply_count(self.vault, count, counted)
            return
        assert isinstance(tx, CashTransaction), tx
        self._moved(self.desk, {Item.CASH: -amount})
        if count_first:  # the count did not see the drop, which came after it: in the books too
            self._apply_count(self.vault, count, counted)
            self._moved(self.vault, {Item.CASH: amount})
            assert tx.created_at > count.counted_at
        else:
            self._moved(self.vault, {Item.CASH: amount})
            self._apply_count(self.vault, count, counted)
            assert tx.created_at < count.counted_at

    # --- a gaming table (issue 24) -------------------------------------------------------------

    def _tray_count(self, deltas: dict[str, int]) -> dict[str, Decimal]:
        """What a count of the tray finds: its books (and its float, the first time), give or take a few chips."""
        counted = {item: self.book[self.tray.pk][item] for item in CHIPS}
        if self.tray.pk not in self.counted_places:
            counted = {item: counted[item] + DENOMINATIONS[item] * TRAY_FLOAT[item] for item in CHIPS}
        for item, delta in deltas.items():
            counted[item] = max(ZERO, counted[item] + delta * DENOMINATIONS[item])
        return counted

    def _apply_tray_count(self, count: ShiftCount, counted: dict[str, Decimal], *, closing: bool) -> None:
        """The tray's book becomes the count; the difference comes from opening balances (its first count), goes to
        the table results (a closing) or to over/short (a later opening)."""
        first = self.tray.pk not in self.counted_places
        self.counted_places.add(self.tray.pk)
        book = self.book[self.tray.pk]
        lines = {line.item: line for line in count.lines.all()}
        assert set(lines) == set(CHIPS)
        party = self.opening if first else self.table_win if closing else self.over_short
        for item in CHIPS:
            difference = counted[item] - book[item]
            assert lines[item].counted_amount == counted[item], item
            assert lines[item].variance == (ZERO if first else difference), item
            party[item] -= difference
            book[item] = counted[item]

    @precondition(lambda self: self.session is None)
    @rule(deltas=tray_deltas, twice=st.booleans())
    def table_opened(self, deltas: dict[str, int], twice: bool) -> None:
        counted = self._tray_count(deltas)
        pieces = {item: int(counted[item] / DENOMINATIONS[item]) for item in CHIPS}
        table, croupier, pit = self.table, self.croupier, self.pit
        session = self._desk_step(
            None,
            lambda key: tables.table_open(table=table, croupier=croupier, pieces=pieces, user=pit, operation_key=key),
            twice=twice,
        )
        assert session is not None
        assert session.is_open
        self._apply_tray_count(session.opening_count, counted, closing=False)
        self.session, self.session_drop, self.session_fills, self.session_credits = session, ZERO, ZERO, ZERO

    @precondition(lambda self: self.session is not None)
    @rule(chips=chip_counts, identified=st.booleans(), twice=st.booleans())
    def table_buy_in(self, chips: dict[str, int], identified: bool, twice: bool) -> None:
        value = sum((DENOMINATIONS[item] * count for item, count in chips.items()), ZERO)
        given = {item: DENOMINATIONS[item] * count for item, count in chips.items() if count}
        expected = (
            "invalid_amount"
            if not value
            else self._refusal_to_post(value, identified=identified, out=given, place=self.tray)
        )
        session, pit, person = self.session, self.pit, self._person(identified)
        assert session is not None
        buy_in = self._desk_step(
            expected,
            lambda key: tables.table_buy_in(
                session=session, cash=value, pieces=chips, seat=1, user=pit, person=person, operation_key=key
            ),
            twice=twice,
        )
        if buy_in is None:
            return
        assert buy_in.transaction.kind == TransactionKind.TABLE_BUY_IN
        self._moved(self.drop_box, {Item.CASH: value})
        self._moved(self.tray, {item: -amount for item, amount in given.items()})
        self.session_drop += value

    @precondition(lambda self: self.session is not None)
    @rule(deltas=tray_deltas, twice=st.booleans())
    def table_closed(self, deltas: dict[str, int], twice: bool) -> None:
        counted = self._tray_count(deltas)
        pieces = {item: int(counted[item] / DENOMINATIONS[item]) for item in CHIPS}
        session, pit = self.session, self.pit
        assert session is not None
        closed = self._desk_step(
            None,
            lambda key: tables.table_close(session=session, pieces=pieces, user=pit, operation_key=key),
            twice=twice,
        )
        assert closed is not None
        self._apply_tray_count(closed.closing_count, counted, closing=True)
        assert (closed.fills, closed.credits, closed.drop) == (
            self.session_fills,
            self.session_credits,
            self.session_drop,
        )
        closing = sum(counted.values(), ZERO)
        assert closed.win == closing - closed.opening + self.session_credits - self.session_fills + self.session_drop
        self.session = None

    def _short(self, place: Place, out: dict[str, Decimal]) -> bool:
        return any(self.book[place.pk][item] < amount for item, amount in out.items())

    @precondition(lambda self: self.session is not None)
    @rule(fill=st.booleans(), chips=slip_chips, twice=st.booleans())
    def table_slip(self, fill: bool, chips: dict[str, int], twice: bool) -> None:
        """A fill from the vault (the casino's cage of the tables) or a credit to it: asked for at the table,
        issued at the vault by the shift supervisor, confirmed at the table; a slip the vault cannot issue is
        voided by two people, so the table can close."""
        moved = {item: DENOMINATIONS[item] * count for item, count in chips.items() if count}
        value = sum(moved.values(), ZERO)
        kind = TableSlip.Kind.FILL if fill else TableSlip.Kind.CREDIT
        expected = "invalid_count" if not value else None
        if expected is None and not fill and self._short(self.tray, moved):
            expected = "insufficient_stock"
        session, pit, supervisor = self.session, self.pit, self.supervisor
        assert session is not None
        slip = self._desk_step(
            expected,
            lambda key: table_slips.slip_request(session=session, kind=kind, pieces=chips, user=pit, operation_key=key),
            twice=twice,
        )
        if slip is None:
            return
        assert (slip.cage_id, slip.amount) == (self.vault.pk, value)
        short = fill and self._short(self.vault, moved)
        issued = self._attempt(
            "insufficient_stock" if short else None, lambda: table_slips.slip_issue(slip=slip, user=supervisor)
        )
        if issued is None:
            asked = table_slips.slip_void_ask(slip=slip, user=pit, reason="The vault is short")
            assert table_slips.slip_void(slip=asked, user=supervisor).state == "voided"
            return
        done = self._attempt(None, lambda: table_slips.slip_confirm(slip=issued, user=pit))
        assert done.transaction.kind == (TransactionKind.TABLE_FILL if fill else TransactionKind.TABLE_CREDIT)
        sign = 1 if fill else -1
        self._moved(self.tray, {item: sign * amount for item, amount in moved.items()})
        self._moved(self.vault, {item: -sign * amount for item, amount in moved.items()})
        if fill:
            self.session_fills += value
        else:
            self.session_credits += value

    @precondition(lambda self: self.session is not None)
    @rule(
        chip=st.sampled_from(CHIPS),
        pieces=st.integers(1, 3),
        learning=st.booleans(),
        kept=st.integers(0, 99),
        twice=st.booleans(),
    )
    def colour_chips(self, chip: str, pieces: int, learning: bool, kept: int, twice: bool) -> None:
        """Colour chips issued for value chips into the tray, then exchanged back at the table for value chips out
        of it: the player kept `kept` per cent of them; learning chips are rounded up to whole euros."""
        handed = DENOMINATIONS[chip] * pieces
        value = Decimal("0.01") if learning else DENOMINATIONS[chip]  # learning chips, or one a value chip
        session, pit = self.session, self.pit
        assert session is not None
        issued = self._desk_step(
            None,
            lambda key: tables.colour_chips_issue(
                session=session, colour="red", value=value, pieces={chip: pieces}, seat=2, user=pit, operation_key=key
            ),
            twice=twice,
        )
        self._moved(self.tray, {chip: handed})
        self.colour_out[chip] -= handed
        returned = int(issued.issued * kept / 100)
        due = tables.colour_chips_due(issued, returned)
        paid = self._change(due)
        expected = "insufficient_stock" if self._short(self.tray, paid) else None
        back = self._attempt(
            expected,
            lambda: tables.colour_chips_return(
                chips=issued,
                returned=returned,
                pieces={item: int(amount / DENOMINATIONS[item]) for item, amount in paid.items()},
                user=pit,
            ),
        )
        if back is None:  # the tray cannot make the change: the player lost them all after all
            back = tables.colour_chips_return(chips=issued, returned=0, pieces={}, user=pit)
            paid = {}
        assert back.paid == sum(paid.values(), ZERO)
        self._moved(self.tray, {item: -amount for item, amount in paid.items()})
        self.colour_out[chip] += handed
        self.colour_win[chip] -= handed
        for item, amount in paid.items():
            self.colour_win[item] += amount

    def _change(self, due: Decimal) -> dict[str, Decimal]:
        """Value chips worth `due`, the largest first (0.50 chips for what whole euros leave)."""
        paid: dict[str, Decimal] = {}
        for item in sorted(CHIPS, key=lambda item: -DENOMINATIONS[item]):
            pieces = int(due // DENOMINATIONS[item])
            if pieces:
                paid[item] = DENOMINATIONS[item] * pieces
                due -= paid[item]
        assert due == 0
        return paid

    # --- invariants ------------------------------------------------------------------------

    def _legs(self) -> list[tuple[int | None, str, str, Decimal, int | None, int, dt.datetime]]:
        """Every leg of the casino: place, counterparty, item, amount, pieces, transaction, its time."""
        return list(
            Leg.objects.filter(casino=self.casino).values_list(
                "desk_id", "counterparty", "item", "amount", "count", "transaction_id", "transaction__created_at"
            )
        )

    @invariant()
    def every_transaction_balances_per_item(self) -> None:
        unbalanced = (
            Leg.objects.filter(casino=self.casino)
            .values("transaction", "item")
            .annotate(value=Sum("amount"), pieces=Sum(Coalesce("count", 0)))
            .exclude(value=0, pieces=0)
            .order_by()
        )
        assert not list(unbalanced), list(unbalanced)
        assert not CashTransaction.objects.filter(casino=self.casino, legs__isnull=True).exists()

    @invariant()
    def no_place_below_zero_and_the_books_are_the_model(self) -> None:
        for place in self.places:
            balances = place_balances(place)
            assert all(balances[item] >= 0 for item in ALL_ITEMS), (place.code, balances)
            assert balances == self.book[place.pk], (place.code, balances, self.book[place.pk])
        parties = counterparty_balances(self.casino)
        assert parties[Counterparty.OVER_SHORT] == self.over_short
        assert parties[Counterparty.OPENING] == self.opening
        assert parties[Counterparty.TABLE_WIN] == {
            item: self.table_win[item] + self.colour_win[item] for item in ALL_ITEMS
        }
        assert parties[Counterparty.COLOUR_CHIPS] == self.colour_out
        if self.shift is not None:
            assert services.shift_balances(self.shift) == self.book[self.desk.pk]

    @invariant()
    def no_instrument_is_paid_twice(self) -> None:
        payouts = list(
            CashTransaction.objects.filter(
                casino=self.casino, kind__in=[TransactionKind.TICKET_PAYOUT, TransactionKind.RECEIPT_PAYOUT]
            ).values_list("pk", "kind", "ticket_id", "machine_receipt_id")
        )
        tickets_paid = [ticket for _pk, kind, ticket, _receipt in payouts if kind == TransactionKind.TICKET_PAYOUT]
        receipts_paid = {
            receipt: pk for pk, kind, _ticket, receipt in payouts if kind == TransactionKind.RECEIPT_PAYOUT
        }
        assert len(tickets_paid) == len(set(tickets_paid)), tickets_paid
        assert len(receipts_paid) == len(payouts) - len(tickets_paid), payouts
        # A receipt is paid by its one payout transaction, and by nothing else.
        paid_by = dict(
            MachineReceipt.objects.filter(casino=self.casino, paid_by__isnull=False).values_list("pk", "paid_by_id")
        )
        assert paid_by == receipts_paid, (paid_by, receipts_paid)
        reads = list(
            SmartCardRead.objects.filter(transaction__casino=self.casino).values_list("card_number", "card_counter")
        )
        assert len(reads) == len(set(reads)), reads
        assert set(reads) == self.card_reads
        # A ticket is redeemed once: by a machine or at the desk (its one payout), never both.
        for pk, state, machine, user in Ticket.objects.filter(casino=self.casino).values_list(
            "pk", "state", "redeemed_by_machine_id", "redeemed_by_user_id"
        ):
            assert machine is None or user is None, pk
            assert (pk in tickets_paid) == (user is not None), pk
            assert state == "redeemed" or (machine is None and user is None), (pk, state)

    @invariant()
    def the_books_are_the_last_count_plus_what_moved_since(self) -> None:
        legs = self._legs()

        def held(place: int, at: dt.datetime | None) -> dict[str, Decimal]:
            balances = zeros()
            for desk, _party, item, amount, _count, _tx, created_at in legs:
                if desk == place and (at is None or created_at <= at):
                    balances[item] += amount
            return balances

        posted: dict[int, dict[str, Decimal]] = defaultdict(zeros)  # what each transaction moved into its places
        for desk, _party, item, amount, _count, tx, _at in legs:
            if desk is not None:
                posted[tx][item] += amount
        counts = ShiftCount.objects.filter(desk__in=self.places).prefetch_related("lines").order_by("counted_at", "id")
        closings = set(TableSession.objects.filter(table=self.table).values_list("closing_count_id", flat=True))
        last: dict[int, tuple[ShiftCount, dict[str, Decimal]]] = {}
        variances, openings, results = zeros(), zeros(), zeros()
        first_postings = set()
        for count in counts:
            # A tray's count holds its chips alone; it never holds anything else.
            counted = zeros() | {line.item: line.counted_amount for line in count.lines.all()}
            # Right after each count, the place's book is what was counted.
            assert held(count.desk_id, count.counted_at) == counted, (count.kind, count.counted_at)
            moved = posted[count.transaction_id] if count.transaction_id else zeros()
            first = count.desk_id not in last
            for line in count.lines.all():
                assert line.variance == line.counted_amount - line.expected_amount
                if first:  # the place's first count: what it found enters the books from opening balances
                    assert line.variance == 0, (count.kind, line.item)
                    openings[line.item] += moved[line.item]
                elif count.pk in closings:  # a table's closing posts its variance as the table's result
                    assert moved[line.item] == line.variance, (count.kind, line.item, moved[line.item])
                    results[line.item] += line.variance
                else:  # later counts post their variance, and nothing else, to over/short
                    assert moved[line.item] == line.variance, (count.kind, line.item, moved[line.item])
                    variances[line.item] += line.variance
            if first:
                first_postings.add(count.transaction_id)
            last[count.desk_id] = (count, counted)
        assert set(last) == self.counted_places
        for place in self.places:
            count, counted = last.get(place.pk, (None, zeros()))  # a place never counted: all its legs
            expected = dict(counted)
            for desk, _party, item, amount, _count, _tx, created_at in legs:
                if desk == place.pk and (count is None or created_at > count.counted_at):
                    expected[item] += amount
            assert expected == self.book[place.pk], (place.code, expected)  # == place_balances, checked above
        # What counts found over or short went to over/short; first counts came from opening balances.
        assert self.over_short == {item: -variances[item] for item in ALL_ITEMS}
        assert self.opening == {item: -openings[item] for item in ALL_ITEMS}
        assert self.table_win == {item: -results[item] for item in ALL_ITEMS}
        opening_postings = {tx for _desk, party, *_rest, tx, _at in legs if party == Counterparty.OPENING}
        assert opening_postings <= first_postings, (opening_postings, first_postings)

    @invariant()
    def states_only_move_along_the_arrows(self) -> None:
        states = dict(Ticket.objects.filter(casino=self.casino).values_list("pk", "state"))
        history: dict[int, str] = dict.fromkeys(states, "")
        redeemed: dict[int, int] = defaultdict(int)
        events = (
            TicketEvent.objects.filter(ticket__casino=self.casino)
            .order_by("ticket_id", "id")
            .values_list("ticket_id", "kind", "from_state", "to_state")
        )
        for ticket, kind, from_state, to_state in events:
            state = history[ticket]
            if kind == "refused":
                assert from_state == to_state == state, (ticket, kind)
                continue
            if kind in ("stuck", "cleared_for_payment", "amount_mismatch"):
                assert to_state == state, (ticket, kind)
                continue
            assert (from_state or "", to_state) in ALLOWED, (from_state, to_state)
            assert (from_state or "") == state, (ticket, kind, from_state, state)
            history[ticket] = to_state
            redeemed[ticket] += kind == "redeemed"
        assert history == states
        assert all(n <= 1 for n in redeemed.values()), redeemed

    @invariant()
    def outstanding_liability_is_the_sum_of_valid_tickets(self) -> None:
        valid = Ticket.objects.filter(casino=self.casino, state__in=["issued", "redeem_pending", "on_hold"])
        expected = valid.aggregate(total=Sum("amount"))["total"] or Decimal("0")
        # Measured after every recorded moment (the expiry rule runs "a year later").
        later = timezone.now() + dt.timedelta(days=500)
        assert reports.outstanding_liability(self.casino, later)["amount"] == expected


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_random_sequences_keep_every_invariant() -> None:
    run_state_machine_as_test(
        CashDeskMachine,
        settings=settings(
            max_examples=20,
            stateful_step_count=30,
            deadline=None,
            suppress_health_check=list(HealthCheck),
            report_multiple_bugs=False,
        ),
    )


@pytest.mark.django_db(transaction=True)
def test_a_vault_count_and_a_drop_approved_at_the_same_time_do_not_deadlock(casino) -> None:
    cashier = make_user("sm-deadlock-cashier", "cashier")
    supervisor = make_user("sm-deadlock-super", "shift_supervisor")
    desk = Place.objects.create(casino=casino, code="S1", name="State desk", cash_limit=CASH_LIMIT)
    vault = Place.objects.create(casino=casino, code="V", name="State vault", kind=Place.Kind.VAULT)
    shift = services.shift_open(desk=desk, cashier=cashier, counted=DESK_FLOAT)
    services.vault_count(vault=vault, user=supervisor, counted=VAULT_FLOAT)
    drop = services.transfer_request(shift=shift, user=cashier, direction="drop", amount=Decimal("500.00"))
    # The count waits for the vault first, the approval (holding its desk) behind it. When both locked the
    # casino's row too (a select_related in select_for_update), PostgreSQL aborted one as a deadlock.
    count, approved = race(
        [
            lambda: services.vault_count(vault=vault, user=supervisor, counted=VAULT_FLOAT),
            lambda: services.transfer_approve(transfer=drop, supervisor=supervisor),
        ],
        gate=("SELECT id FROM cashdesk_cashdesk WHERE id = %s FOR UPDATE", [vault.pk]),
        ordered=True,
    )
    assert isinstance(count, ShiftCount), count
    assert isinstance(approved, CashTransaction), approved
    # The count saw the vault before the drop; the drop comes after it, in time as in the books (its
    # created_at is taken once every place it touches is locked, not before waiting for the vault).
    assert count.lines.get(item=Item.CASH).expected_amount == Decimal("150000.00")
    assert approved.created_at > count.counted_at
    assert place_balances(vault)[Item.CASH] == Decimal("150500.00")

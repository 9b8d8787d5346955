"""Hypothesis drives tickets and cash-desk transactions in random order; invariants hold after every step."""

import contextlib
import datetime as dt
from decimal import Decimal

import pytest
from django.db import transaction
from django.utils import timezone
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import Bundle, RuleBasedStateMachine, invariant, rule, run_state_machine_as_test

from cashdesk import reports, services
from cashdesk.errors import CashDeskError
from cashdesk.items import ALL_ITEMS
from cashdesk.models import CashDesk
from tests.factories import CasinoFactory, MachineFactory, make_person, make_user
from tickets import services as ticket_services
from tickets.exceptions import TicketError
from tickets.models import Ticket, TicketEvent
from tickets.money import cash_payout

# The contract's arrows (machine-api.md), plus the cash desk's (payout, hold, sale).
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
    ("on_hold", "on_hold"),
    ("on_hold", "redeemed"),
    ("on_hold", "void"),
}
FLOAT = {"cash": Decimal("50000.00"), "chip_100": 100, "chip_5": 200, "token": 500}
amounts = st.decimals(min_value=Decimal("0.001"), max_value=Decimal("3000"), places=3)


class CashDeskMachine(RuleBasedStateMachine):
    tickets = Bundle("tickets")

    def __init__(self) -> None:
        super().__init__()
        self._atomic = transaction.atomic()
        self._atomic.__enter__()
        casino = CasinoFactory(code="SM")
        self.machines = [MachineFactory(casino=casino, asset_number=str(i)) for i in range(2)]
        self.cashier = make_user(f"sm-cashier-{id(self)}", "cashier")
        self.supervisor = make_user(f"sm-super-{id(self)}", "shift_supervisor")
        self.person = make_person(document_number=f"SM{id(self)}")
        desk = CashDesk.objects.create(casino=casino, code="S1", name="State desk")
        self.casino = casino
        self.shift = services.shift_open(desk=desk, cashier=self.cashier, counted=FLOAT)
        self.expected = services.count_amounts(FLOAT)  # what the model says the desk holds
        self.steps = 0

    def teardown(self) -> None:
        transaction.set_rollback(True)
        self._atomic.__exit__(None, None, None)

    def _request(self) -> str:
        self.steps += 1
        return f"sm-{self.steps}"

    @rule(target=tickets, amount=amounts, machine=st.integers(0, 1), printed=st.booleans())
    def machine_cashout(self, amount: Decimal, machine: int, printed: bool) -> int:
        ticket = ticket_services.ticket_issue(
            machine=self.machines[machine], amount=amount, ticket_type="cashable", request_id=self._request()
        )
        if printed:
            ticket_services.ticket_confirm_print(
                machine=self.machines[machine],
                validation_number=ticket.validation_number,
                printed=True,
                reason="",
                request_id=self._request(),
            )
        return ticket.pk

    @rule(target=tickets, amount=st.integers(1, 2500))
    def desk_sale(self, amount: int) -> int:
        tx = services.ticket_sell(shift=self.shift, user=self.cashier, amount=Decimal(amount), person=self.person)
        self.expected["cash"] += Decimal(amount)
        return tx.ticket_id

    @rule(ticket=tickets, machine=st.integers(0, 1), accept=st.booleans())
    def machine_ticket_in(self, ticket: int, machine: int, accept: bool) -> None:
        number = Ticket.objects.get(pk=ticket).validation_number
        try:
            ticket_services.ticket_authorize(
                machine=self.machines[machine], validation_number=number, request_id=self._request()
            )
        except TicketError:
            return
        ticket_services.ticket_commit(
            machine=self.machines[machine],
            validation_number=number,
            accepted=accept,
            reason="",
            request_id=self._request(),
        )

    @rule(ticket=tickets, machine=st.integers(0, 1))
    def machine_authorizes_and_hangs(self, ticket: int, machine: int) -> None:
        number = Ticket.objects.get(pk=ticket).validation_number
        with contextlib.suppress(TicketError):
            ticket_services.ticket_authorize(
                machine=self.machines[machine], validation_number=number, request_id=self._request()
            )

    @rule(ticket=tickets)
    def cash_payout(self, ticket: int) -> None:
        found = Ticket.objects.get(pk=ticket)
        try:
            services.ticket_payout(
                shift=self.shift, user=self.cashier, validation_number=found.validation_number, person=self.person
            )
        except CashDeskError:
            return
        self.expected["cash"] -= cash_payout(found.amount)

    @rule(ticket=tickets, pay=st.booleans())
    def hold_and_decide(self, ticket: int, pay: bool) -> None:
        found = Ticket.objects.get(pk=ticket)
        try:
            case = services.ticket_hold(
                shift=self.shift, user=self.cashier, validation_number=found.validation_number, reason="damage"
            )
        except CashDeskError:
            return
        services.hold_decide(case=case, user=self.supervisor, pay=pay, note="decided")

    @rule(count=st.integers(1, 20))
    def chips_buy(self, count: int) -> None:
        try:
            services.chips_buy(shift=self.shift, user=self.cashier, chips={"chip_100": count}, person=self.person)
        except CashDeskError:
            return
        self.expected["cash"] += 100 * count
        self.expected["chip_100"] -= 100 * count

    @rule(count=st.integers(1, 100))
    def tokens_cashout(self, count: int) -> None:
        services.tokens_cashout(shift=self.shift, user=self.cashier, count=count)
        self.expected["token"] += count
        self.expected["cash"] -= count

    @rule()
    def expiry_job_a_year_later(self) -> None:
        ticket_services.tickets_expire_due(now=timezone.now() + dt.timedelta(days=400))

    @invariant()
    def states_only_move_along_the_arrows(self) -> None:
        for ticket in Ticket.objects.filter(casino=self.casino):
            state = ""
            for event in TicketEvent.objects.filter(ticket=ticket).order_by("id"):
                if event.kind == "refused":
                    assert event.from_state == event.to_state == state, (ticket.pk, event.kind)
                    continue
                if event.kind in ("stuck", "cleared_for_payment", "amount_mismatch"):
                    assert event.to_state == state
                    continue
                assert (event.from_state or "", event.to_state) in ALLOWED, (event.from_state, event.to_state)
                assert (event.from_state or "") == state, (ticket.pk, event.kind, event.from_state, state)
                state = event.to_state
            assert state == ticket.state
            assert ticket.events.filter(kind="redeemed").count() <= 1

    @invariant()
    def ledger_equals_opening_plus_movements(self) -> None:
        balances = services.shift_balances(self.shift)
        for item in ALL_ITEMS:
            assert balances[item] == self.expected.get(item, Decimal("0")), item

    @invariant()
    def outstanding_liability_is_the_sum_of_valid_tickets(self) -> None:
        valid = Ticket.objects.filter(casino=self.casino, state__in=["issued", "redeem_pending", "on_hold"])
        expected = sum((t.amount for t in valid), Decimal("0"))
        # Measured after every recorded moment (the expiry rule runs "a year later").
        later = timezone.now() + dt.timedelta(days=500)
        assert reports.outstanding_liability(self.casino, later)["amount"] == expected


@pytest.mark.django_db
def test_random_sequences_keep_every_invariant(casino):
    CashDeskMachine.TestCase.settings = settings(
        max_examples=25, stateful_step_count=25, deadline=None, suppress_health_check=list(HealthCheck)
    )
    run_state_machine_as_test(CashDeskMachine, settings=CashDeskMachine.TestCase.settings)

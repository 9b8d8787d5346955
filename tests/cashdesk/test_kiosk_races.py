"""Kiosk races (issue 14): a kiosk and a cashier for one ticket; two payouts for a kiosk's last cash."""

import datetime as dt
from collections import Counter
from decimal import Decimal

import pytest
import time_machine
from django.db import connection
from django.utils import timezone

from cashdesk import services
from cashdesk.books import place_balances
from cashdesk.errors import CashDeskError
from cashdesk.items import Item
from cashdesk.models import CashTransaction, TransactionKind
from cashdesk.services.kiosks import (
    kiosk_place,
    kiosk_transfer_approve,
    kiosk_transfer_request,
)
from machines.models import Machine, Place
from tests.api.test_races import ticket_gate
from tests.cashdesk.conftest import VAULT_CASH
from tests.cashdesk.kiosk_helpers import payouts
from tests.cashdesk.test_kiosks import assert_books_balance, kiosk_cash
from tests.conftest import MachineClient
from tests.factories import MachineFactory, make_user
from tests.races import race
from tickets.models import Ticket, TicketState


def _kiosk_with_cash(casino, amount: str) -> tuple[MachineClient, Place]:
    supervisor = make_user("race-supervisor", "shift_supervisor")
    attendant = make_user("race-attendant", "floor_attendant")
    vault = Place.objects.create(casino=casino, code="V", name="Vault", kind=Place.Kind.VAULT)
    services.vault_count(vault=vault, user=supervisor, counted={"cash": Decimal("100000.00")})
    kiosk = MachineFactory(casino=casino, asset_number="K-RACE", kind=Machine.Kind.KIOSK)
    transfer = kiosk_transfer_request(machine=kiosk, user=attendant, direction="fill", amount=Decimal(amount))
    kiosk_transfer_approve(transfer=transfer, supervisor=supervisor)
    return MachineClient(kiosk), kiosk_place(kiosk)


def _kiosk_redeems(kiosk: MachineClient, number: str) -> str:
    authorized = kiosk.authorize(number)
    if authorized.status_code != 200:
        return f"kiosk refused: {authorized.json()['code']}"
    committed = kiosk.commit(number, dispensed=authorized.json()["payout"])
    return "kiosk" if committed.json()["state"] == "redeemed" else "kiosk rejected"


@pytest.mark.django_db(transaction=True)
def test_a_kiosk_and_a_cashier_racing_for_one_ticket_pay_it_once(casino):
    assert connection.vendor == "postgresql"
    kiosk, place = _kiosk_with_cash(casino, "5000.00")
    cashier = make_user("race-cashier", "cashier")
    desk = Place.objects.create(casino=casino, code="R1", name="Race desk")
    shift = services.shift_open(desk=desk, cashier=cashier, counted={"cash": Decimal("10000.00")})
    issuer = MachineClient(MachineFactory(casino=casino))
    outcomes: Counter[str] = Counter()

    for _ in range(12):
        number = issuer.issued_ticket("10.005")

        def cashier_pays(number: str = number) -> str:
            try:
                services.ticket_payout(shift=shift, user=cashier, validation_number=number)
                return "cashier"
            except CashDeskError as refused:
                return f"cashier refused: {refused.code}"

        results = race([cashier_pays, lambda number=number: _kiosk_redeems(kiosk, number)], gate=ticket_gate(number))

        winners = [result for result in results if result in ("cashier", "kiosk")]
        assert len(winners) == 1, results
        outcomes[winners[0]] += 1
        ticket = Ticket.objects.get(validation_number=number)
        assert ticket.state == "redeemed"
        assert ticket.cash_transactions.filter(kind__in=["ticket_payout", "kiosk_payout"]).count() == 1

    assert place_balances(place)[Item.CASH] == Decimal("5000.00") - Decimal("10.01") * outcomes["kiosk"]
    assert services.shift_balances(shift)["cash"] == Decimal("10000.00") - Decimal("10.01") * outcomes["cashier"]


@pytest.mark.django_db(transaction=True)
def test_two_tickets_for_a_kiosks_last_cash_one_is_paid_the_other_refused(casino):
    """Both authorizations lock the kiosk's place: the second sees the cash the first set aside."""
    kiosk, place = _kiosk_with_cash(casino, "100.00")
    issuer = MachineClient(MachineFactory(casino=casino))
    first, second = issuer.issued_ticket("70.00"), issuer.issued_ticket("60.00")

    results = race(
        [lambda: kiosk.authorize(first).status_code, lambda: kiosk.authorize(second).status_code],
        gate=("SELECT id FROM cashdesk_cashdesk WHERE id = %s FOR UPDATE", [place.pk]),
    )

    assert sorted(results) == [200, 409], results
    held = Ticket.objects.get(state="redeem_pending")
    assert kiosk.commit(held.validation_number, dispensed=f"{held.amount:.2f}").status_code == 200
    assert place_balances(place)[Item.CASH] == Decimal("100.00") - held.amount >= 0
    assert CashTransaction.objects.filter(kind=TransactionKind.KIOSK_PAYOUT).count() == 1


def _kiosk_client_with_cash(casino, asset: str, amount: str, vault: Place | None = None) -> MachineClient:
    supervisor = make_user(f"sup-{asset}", "shift_supervisor")
    if vault is None:
        vault = Place.objects.create(casino=casino, code="V", name="Vault", kind=Place.Kind.VAULT)
        services.vault_count(vault=vault, user=supervisor, counted={"cash": VAULT_CASH})
    machine = MachineFactory(casino=casino, asset_number=asset, kind=Machine.Kind.KIOSK)
    transfer = kiosk_transfer_request(
        machine=machine, user=make_user(f"att-{asset}", "floor_attendant"), direction="fill", amount=Decimal(amount)
    )
    kiosk_transfer_approve(transfer=transfer, supervisor=supervisor)
    return MachineClient(machine)


def _redeem(client: MachineClient, number: str) -> str:
    authorized = client.authorize(number)
    if authorized.status_code != 200:
        return authorized.json()["code"]
    payout = {"dispensed": authorized.json()["payout"]} if client.machine.is_kiosk else {}
    return str(client.commit(number, **payout).json()["state"])


@pytest.mark.django_db(transaction=True)
def test_two_kiosks_and_a_slot_racing_for_one_ticket_pay_it_once(casino):
    """From the kiosk attack review of issue 14 (races): one attempt by a fraudster, a buggy firmware, a careless
    supervisor or a race.
    """
    assert connection.vendor == "postgresql"
    first = _kiosk_client_with_cash(casino, "K-A", "500.00")
    vault = Place.objects.get(casino=casino, kind=Place.Kind.VAULT)
    second = _kiosk_client_with_cash(casino, "K-B", "500.00", vault=vault)
    slot = MachineClient(MachineFactory(casino=casino, asset_number="S-1"))
    issuer = MachineClient(MachineFactory(casino=casino, asset_number="P-1"))
    number = issuer.issued_ticket("25.00")

    results = race([lambda c=c: _redeem(c, number) for c in (first, second, slot)], gate=ticket_gate(number))

    # One holds it and redeems it; the others find it held, or already redeemed if they came after.
    assert results.count("redeemed") == 1, results
    assert set(results) - {"redeemed"} <= {"pending_elsewhere", "already_redeemed"}, results
    assert Ticket.objects.get(validation_number=number).state == TicketState.REDEEMED
    assert len(payouts(number)) <= 1
    total = kiosk_cash(first.machine) + kiosk_cash(second.machine)
    assert total == Decimal("1000.00") - Decimal("25.00") * len(payouts(number))


@pytest.mark.django_db(transaction=True)
def test_a_firmware_committing_twice_at_once_under_two_request_ids_is_paid_once(casino):
    """From the kiosk attack review of issue 14 (races): one attempt by a fraudster, a buggy firmware, a careless
    supervisor or a race.
    """
    kiosk = _kiosk_client_with_cash(casino, "K-A", "500.00")
    issuer = MachineClient(MachineFactory(casino=casino, asset_number="P-1"))
    number = issuer.issued_ticket("40.00")
    assert kiosk.authorize(number).status_code == 200

    results = race([lambda: kiosk.commit(number, dispensed="40.00").json() for _ in range(3)], gate=ticket_gate(number))

    assert sorted(result.get("state") or result["code"] for result in results) == [
        "already_redeemed",
        "already_redeemed",
        "redeemed",
    ], results
    assert payouts(number) == [(TransactionKind.KIOSK_PAYOUT, kiosk.machine.pk)]
    assert kiosk_cash(kiosk.machine) == Decimal("460.00")


@pytest.mark.django_db(transaction=True)
def test_five_tickets_authorized_at_once_never_promise_more_than_the_kiosk_holds(casino):
    """From the kiosk attack review of issue 14 (races): one attempt by a fraudster, a buggy firmware, a careless
    supervisor or a race.
    """
    kiosk = _kiosk_client_with_cash(casino, "K-A", "100.00")
    place = kiosk_place(kiosk.machine)
    issuer = MachineClient(MachineFactory(casino=casino, asset_number="P-1"))
    numbers = [issuer.issued_ticket("30.00") for _ in range(5)]

    results = race(
        [lambda n=n: kiosk.authorize(n).status_code for n in numbers],
        gate=("SELECT id FROM cashdesk_cashdesk WHERE id = %s FOR UPDATE", [place.pk]),
    )

    assert sorted(results) == [200, 200, 200, 409, 409], results
    for number in Ticket.objects.filter(state=TicketState.REDEEM_PENDING).values_list("validation_number", flat=True):
        assert kiosk.commit(number, dispensed="30.00").status_code == 200
    assert place_balances(place)[Item.CASH] == Decimal("10.00")


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("commit_first", [True, False])
def test_a_drop_approved_against_a_commit_counts_what_is_really_left(casino, commit_first):
    """From the kiosk attack review of issue 14 (races): one attempt by a fraudster, a buggy firmware, a careless
    supervisor or a race.
    """
    kiosk = _kiosk_client_with_cash(casino, "K-A", "500.00")
    place = kiosk_place(kiosk.machine)
    issuer = MachineClient(MachineFactory(casino=casino, asset_number="P-1"))
    number = issuer.issued_ticket("120.00")
    assert kiosk.authorize(number).status_code == 200
    drop = kiosk_transfer_request(
        machine=kiosk.machine, user=make_user("dropper", "floor_attendant"), direction="drop", amount=Decimal("380.00")
    )
    approver = make_user("approver", "shift_supervisor")

    def approve() -> str:
        try:
            kiosk_transfer_approve(transfer=drop, supervisor=approver)
            return "approved"
        except CashDeskError as refused:
            return refused.code

    calls = [lambda: kiosk.commit(number, dispensed="120.00").status_code, approve]
    results = race(
        calls if commit_first else calls[::-1],
        gate=("SELECT id FROM cashdesk_cashdesk WHERE id = %s FOR UPDATE", [place.pk]),
        ordered=True,
    )

    assert sorted(map(str, results)) == (["200", "approved"] if commit_first else ["200", "kiosk_busy"]), results
    assert Ticket.objects.get(validation_number=number).state == TicketState.REDEEMED
    if commit_first:
        drop.refresh_from_db()
        assert drop.count.lines.get().variance == Decimal("0.00")
        assert place_balances(place)[Item.CASH] == Decimal("0.00")
    else:
        assert place_balances(place)[Item.CASH] == Decimal("380.00")
        assert approve() == "approved"
    assert_books_balance(casino)


@pytest.mark.django_db(transaction=True)
def test_fills_drops_redemptions_and_desk_transfers_at_once_do_not_deadlock(casino):
    """Ticket, then kiosk place, then vault, everywhere: a fill waits on the vault holding its kiosk, an
    authorize at that kiosk waits on the fill, a drop of another kiosk and a desk's transfer wait on the vault.

    From the kiosk attack review of issue 14 (races): one attempt by a fraudster, a buggy firmware, a careless
    supervisor or a race.
    """
    filled = _kiosk_client_with_cash(casino, "K-A", "100.00")
    vault = Place.objects.get(casino=casino, kind=Place.Kind.VAULT)
    dropped = _kiosk_client_with_cash(casino, "K-B", "300.00", vault=vault)
    attendant, approver = make_user("att", "floor_attendant"), make_user("sup", "shift_supervisor")
    cashier = make_user("cash", "cashier")
    desk = Place.objects.create(casino=casino, code="D1", name="Desk 1", cash_limit=Decimal("500000.00"))
    shift = services.shift_open(desk=desk, cashier=cashier, counted={"cash": Decimal("1000.00")})
    fill_request = kiosk_transfer_request(
        machine=filled.machine, user=attendant, direction="fill", amount=Decimal("200.00")
    )
    drop_request = kiosk_transfer_request(
        machine=dropped.machine, user=attendant, direction="drop", amount=Decimal("300.00")
    )
    desk_drop = services.transfer_request(shift=shift, user=cashier, direction="drop", amount=Decimal("100.00"))
    number = MachineClient(MachineFactory(casino=casino, asset_number="P-1")).issued_ticket("250.00")
    vault_before = place_balances(vault)[Item.CASH]

    results = race(
        [
            lambda: kiosk_transfer_approve(transfer=fill_request, supervisor=approver).approved_at is not None,
            lambda: filled.authorize(number).status_code,
            lambda: kiosk_transfer_approve(transfer=drop_request, supervisor=approver).approved_at is not None,
            lambda: services.transfer_approve(transfer=desk_drop, supervisor=approver).amount,
        ],
        gate=("SELECT id FROM cashdesk_cashdesk WHERE id = %s FOR UPDATE", [vault.pk]),
        ordered=True,
    )

    assert results == [True, 200, True, Decimal("100.00")], results  # the authorize saw the fill's 300
    assert kiosk_cash(dropped.machine) == Decimal("0.00")
    assert kiosk_cash(filled.machine) == Decimal("300.00")
    assert place_balances(vault)[Item.CASH] == vault_before - Decimal("200.00") + Decimal("300.00") + Decimal("100.00")
    assert_books_balance(casino)


@pytest.mark.django_db(transaction=True)
def test_two_supervisors_approving_one_fill_at_once_move_the_cash_once(casino):
    """From the kiosk attack review of issue 14 (races): one attempt by a fraudster, a buggy firmware, a careless
    supervisor or a race.
    """
    kiosk = _kiosk_client_with_cash(casino, "K-A", "100.00")
    fill_request = kiosk_transfer_request(
        machine=kiosk.machine, user=make_user("att", "floor_attendant"), direction="fill", amount=Decimal("50.00")
    )
    supervisors = [make_user(f"sup{i}", "shift_supervisor") for i in range(2)]

    def approve(supervisor) -> str:
        try:
            kiosk_transfer_approve(transfer=fill_request, supervisor=supervisor)
            return "approved"
        except CashDeskError as refused:
            return refused.code

    results = race(
        [lambda s=s: approve(s) for s in supervisors],
        gate=("SELECT id FROM cashdesk_transfer WHERE id = %s FOR UPDATE", [fill_request.pk]),
    )

    assert sorted(results) == ["already_approved", "approved"], results
    assert kiosk_cash(kiosk.machine) == Decimal("150.00")
    assert CashTransaction.objects.filter(kind=TransactionKind.FILL).count() == 2  # the set-up fill and this one


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("supervisor_first", [True, False])
def test_a_supervisor_settling_a_kiosk_redemption_as_it_commits_books_the_cash_once(casino, supervisor_first):
    """From the kiosk attack review of issue 14 (races): one attempt by a fraudster, a buggy firmware, a careless
    supervisor or a race.
    """
    kiosk = _kiosk_client_with_cash(casino, "K-A", "200.00")
    number = MachineClient(MachineFactory(casino=casino, asset_number="P-1")).issued_ticket("75.00")
    assert kiosk.authorize(number).status_code == 200
    ticket = Ticket.objects.get(validation_number=number)
    supervisor = make_user("careless", "shift_supervisor")

    def settle() -> str:
        try:
            services.ticket_resolve_stuck(
                ticket=ticket, user=supervisor, credits_taken=True, meter_reading="cash out 75.00", reason="stuck"
            )
            return "settled"
        except CashDeskError as refused:
            return refused.code

    def commit() -> str:
        answer = kiosk.commit(number, dispensed="75.00").json()
        return str(answer.get("state") or answer["code"])

    with time_machine.travel(timezone.now() + dt.timedelta(minutes=1)):  # past the hold and its grace
        results = race(
            [settle, commit] if supervisor_first else [commit, settle], gate=ticket_gate(number), ordered=True
        )

    # Whoever comes second finds the ticket redeemed: the commit is refused, the settling too.
    assert results == (["settled", "already_redeemed"] if supervisor_first else ["redeemed", "invalid_state"])
    assert payouts(number) == [(TransactionKind.KIOSK_PAYOUT, kiosk.machine.pk)]
    assert kiosk_cash(kiosk.machine) == Decimal("125.00")

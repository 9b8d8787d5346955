"""Kiosk races (issue 14): a kiosk and a cashier for one ticket; two payouts for a kiosk's last cash."""

from collections import Counter
from decimal import Decimal

import pytest
from django.db import connection

from cashdesk import services
from cashdesk.books import place_balances
from cashdesk.errors import CashDeskError
from cashdesk.items import Item
from cashdesk.models import CashTransaction, TransactionKind
from cashdesk.services.kiosks import kiosk_place, kiosk_transfer_approve, kiosk_transfer_request
from machines.models import Machine, Place
from tests.api.test_races import ticket_gate
from tests.conftest import MachineClient
from tests.factories import MachineFactory, make_user
from tests.races import race
from tickets.models import Ticket


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

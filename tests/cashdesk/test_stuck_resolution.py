"""A stuck redemption is resolved only after its hold and the contract's retry have run out, and "not taken"
at a kiosk only from the kiosk's dispensed-cash meter since the authorize (issue 21)."""

import datetime as dt
from decimal import Decimal

import pytest
import time_machine
from django.test import Client

from cashdesk import services
from cashdesk.errors import CashDeskError
from cashdesk.models import CashTransaction
from machines.models import Machine
from staff.models import StaffAssignment
from tests.cashdesk.test_kiosk_meters import KioskMeters
from tests.cashdesk.test_kiosks import fill, kiosk_cash
from tests.conftest import MachineClient
from tests.factories import MachineFactory
from tickets.models import Ticket, TicketState

T0 = dt.datetime(2026, 12, 4, 10, 0, tzinfo=dt.UTC)
HOLD = 15  # the casino's default redemption hold, seconds
GRACE = 30  # settings.STUCK_RESOLUTION_GRACE's default
NOT_TAKEN = {"outcome": "not_taken", "meter_reading": "cash out unchanged", "reason": "kiosk jammed"}


@pytest.fixture
def kiosk(casino) -> Machine:
    return MachineFactory(casino=casino, asset_number="9001", kind=Machine.Kind.KIOSK)


@pytest.fixture
def kiosk_api(kiosk) -> MachineClient:
    return MachineClient(kiosk)


@pytest.fixture
def clock():
    with time_machine.travel(T0, tick=False) as traveller:
        yield traveller


@pytest.fixture
def held(clock, api, kiosk, kiosk_api, stocked_vault, floor, supervisor) -> str:
    """A 40.00 ticket the kiosk authorized at T0 (its meters read just before)."""
    fill(kiosk, floor, supervisor, amount="1000.00")
    KioskMeters(kiosk_api).send(T0 - dt.timedelta(minutes=1))
    number = api.issued_ticket("40.00")
    assert kiosk_api.authorize(number).status_code == 200
    return number


@pytest.fixture
def desk_supervisor(casino, supervisor) -> Client:
    StaffAssignment.objects.create(user=supervisor, casino=casino)
    client = Client()
    client.force_login(supervisor)
    return client


def resolve_url(number: str) -> str:
    return f"/supervisor/tickets/{Ticket.objects.get(validation_number=number).pk}/resolve/"


def state(number: str) -> str:
    return Ticket.objects.get(validation_number=number).state


def test_the_issues_probe_a_resolution_one_second_after_the_authorize_is_refused(
    held, clock, kiosk, kiosk_api, desk_supervisor, shift, cashier
):
    """Issue 21: kiosk 9001 authorized a ticket (hold 15 s); one second later the supervisor resolved it "not
    taken", the ticket was issued again, the kiosk's commit of the cash it had dispensed got 409 invalid_state,
    and a desk paid the same ticket."""
    clock.shift(1)
    page = desk_supervisor.post(resolve_url(held), NOT_TAKEN)

    assert page.status_code == 200
    assert "hold" in " ".join(page.context["form"].non_field_errors())
    assert state(held) == TicketState.REDEEM_PENDING
    assert kiosk_api.commit(held, dispensed="40.00").status_code == 200
    with pytest.raises(CashDeskError):
        services.ticket_payout(shift=shift, user=cashier, validation_number=held)
    assert CashTransaction.objects.filter(ticket__validation_number=held).count() == 1


def test_a_resolution_waits_for_the_hold_and_the_grace_a_commit_retry_fits_in(
    held, clock, kiosk, kiosk_api, desk_supervisor
):
    clock.shift(HOLD + GRACE - 1)
    KioskMeters(kiosk_api).send(dt.datetime.now(dt.UTC))  # nothing dispensed since
    assert desk_supervisor.post(resolve_url(held), NOT_TAKEN).status_code == 200
    assert state(held) == TicketState.REDEEM_PENDING

    clock.shift(2)
    answer = desk_supervisor.post(resolve_url(held), NOT_TAKEN)

    assert answer.status_code == 302
    assert state(held) == TicketState.ISSUED
    event = Ticket.objects.get(validation_number=held).events.get(kind="resolved")
    assert Decimal(event.details["dispensed_since_authorize"]) == 0


def test_a_commit_from_the_kiosk_still_holding_the_ticket_is_accepted_however_late(held, clock, kiosk, kiosk_api):
    clock.shift(3600)

    committed = kiosk_api.commit(held, dispensed="40.00")

    assert committed.status_code == 200, committed.json()
    assert state(held) == TicketState.REDEEMED
    assert kiosk_cash(kiosk) == Decimal("960.00")


def test_not_taken_at_a_kiosk_without_its_meter_since_the_hold_is_a_form_error(held, clock, desk_supervisor):
    clock.shift(HOLD + GRACE + 1)  # the kiosk sent no reading since the authorize

    page = desk_supervisor.post(resolve_url(held), NOT_TAKEN)

    assert page.status_code == 200
    assert "meter" in " ".join(page.context["form"].non_field_errors())
    assert state(held) == TicketState.REDEEM_PENDING


def test_the_resolve_form_shows_the_kiosks_dispensed_cash_since_the_authorize(held, clock, kiosk_api, desk_supervisor):
    clock.shift(HOLD + GRACE + 1)
    meters = KioskMeters(kiosk_api)
    meters.add("cash_dispensed_amount", "40.00")
    meters.send(dt.datetime.now(dt.UTC))

    page = desk_supervisor.get(resolve_url(held))

    assert page.status_code == 200
    assert page.context["dispensed"].unexplained == Decimal("40.00")
    assert "40.00" in page.content.decode()
    # The meter says the cash left the kiosk: "not taken" would pay the ticket twice.
    refused = desk_supervisor.post(resolve_url(held), NOT_TAKEN)
    assert refused.status_code == 200
    assert refused.context["form"].non_field_errors()
    assert state(held) == TicketState.REDEEM_PENDING


def test_a_slot_machines_stuck_redemption_waits_for_its_hold_too(api, make_api, clock, supervisor):
    number = api.issued_ticket()
    holder = make_api(asset_number="2002")
    holder.authorize(number)
    ticket = Ticket.objects.get(validation_number=number)
    with pytest.raises(CashDeskError) as early:
        services.ticket_resolve_stuck(
            ticket=ticket, user=supervisor, credits_taken=True, meter_reading="credit +1250", reason="meters"
        )
    assert early.value.code == "hold_running"
    clock.shift(HOLD + GRACE + 1)
    services.ticket_resolve_stuck(
        ticket=ticket, user=supervisor, credits_taken=True, meter_reading="credit +1250", reason="meters"
    )
    assert state(number) == TicketState.REDEEMED

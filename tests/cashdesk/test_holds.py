import datetime as dt

import pytest
import time_machine
from django.utils import timezone

from cashdesk import services
from cashdesk.errors import CashDeskError
from cashdesk.models import HoldCase
from tickets.models import Ticket


@pytest.fixture
def held(api, shift, cashier):
    number = api.issued_ticket("300.00")
    case = services.ticket_hold(
        shift=shift, user=cashier, validation_number=number, reason="suspected_copy", note="faded print"
    )
    return number, case


def test_hold_puts_the_ticket_on_hold_with_a_14_day_decision(held, casino):
    number, case = held
    ticket = Ticket.objects.get(validation_number=number)
    assert ticket.state == "on_hold"
    presented = timezone.localtime(case.presented_at, casino.zoneinfo).date()
    assert case.decision_due == presented + dt.timedelta(days=14)
    assert ticket.events.get(kind="held").reason == "suspected_copy"


def test_nobody_can_redeem_a_held_ticket(held, make_api, shift, cashier):
    number, _ = held
    response = make_api(asset_number="2002").authorize(number)
    assert response.json()["code"] == "on_hold"
    with pytest.raises(CashDeskError) as refused:
        services.ticket_payout(shift=shift, user=cashier, validation_number=number)
    assert refused.value.code == "on_hold"


def test_decision_to_pay_lets_a_cashier_pay_even_after_expiry(held, shift, cashier, supervisor):
    number, case = held
    services.hold_decide(case=case, user=supervisor, pay=True, note="owner identified, CCTV checked")
    expires_at = Ticket.objects.get(validation_number=number).expires_at

    with time_machine.travel(expires_at + dt.timedelta(days=3)):
        tx = services.ticket_payout(shift=shift, user=cashier, validation_number=number)

    assert tx.amount == 300
    assert Ticket.objects.get(validation_number=number).state == "redeemed"


def test_decision_to_refuse_voids_the_ticket_with_the_reason(held, compliance):
    number, case = held
    services.hold_decide(case=case, user=compliance, pay=False, note="copy: original paid at machine 17")
    ticket = Ticket.objects.get(validation_number=number)
    assert ticket.state == "void"
    assert ticket.events.get(kind="voided").reason == "copy: original paid at machine 17"
    case.refresh_from_db()
    assert (case.decision, case.decided_by) == ("refuse", compliance)


def test_refusing_needs_a_reason_and_deciding_needs_the_role(held, supervisor, cashier):
    _, case = held
    with pytest.raises(CashDeskError, match="reason"):
        services.hold_decide(case=case, user=supervisor, pay=False, note=" ")
    with pytest.raises(CashDeskError, match="Only a shift supervisor or compliance officer"):
        services.hold_decide(case=case, user=cashier, pay=True)


def test_a_case_is_decided_once(held, supervisor):
    _, case = held
    services.hold_decide(case=case, user=supervisor, pay=True)
    with pytest.raises(CashDeskError, match="already been decided"):
        services.hold_decide(case=case, user=supervisor, pay=False, note="changed my mind")


def test_overdue_cases_are_marked_after_the_due_day(held, casino):
    _, case = held
    due_end = dt.datetime.combine(case.decision_due, dt.time(23, 59), tzinfo=casino.zoneinfo)
    assert services.holds_mark_overdue(now=due_end) == 0
    assert services.holds_mark_overdue(now=due_end + dt.timedelta(minutes=2)) == 1
    assert services.holds_mark_overdue(now=due_end + dt.timedelta(days=1)) == 0
    assert HoldCase.objects.get(pk=case.pk).overdue_since is not None


def test_only_a_valid_ticket_is_put_on_hold(api, shift, cashier):
    number = api.issued_ticket()
    services.ticket_payout(shift=shift, user=cashier, validation_number=number)
    with pytest.raises(CashDeskError, match="Already paid") as refused:
        services.ticket_hold(shift=shift, user=cashier, validation_number=number, reason="already_paid")
    assert refused.value.code == "already_redeemed"
    assert not HoldCase.objects.exists()
    assert (
        Ticket.objects.get(validation_number=number).events.filter(kind="refused", reason="already_redeemed").exists()
    )

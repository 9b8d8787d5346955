"""The 14-day decision on a held ticket is a bound, not a flag (casino rules §1.7; issue 21).

The case's decision day is the 14th day after the presentation. From the start
of that last day the case is due (escalated); after it, it is a breach: the
dashboard and the exceptions report say so, and only a manager decides it,
with a reason, recorded as late in the ticket's events.
"""

import datetime as dt

import pytest
import time_machine
from django.test import Client

from cashdesk import reports, services
from cashdesk.dashboard import open_exceptions
from cashdesk.errors import CashDeskError
from cashdesk.models import HoldCase
from staff.models import StaffAssignment
from tickets.models import Ticket


@pytest.fixture
def case(api, shift, cashier):
    number = api.issued_ticket("300.00")
    return services.ticket_hold(shift=shift, user=cashier, validation_number=number, reason="suspected_copy")


def _last_day_starts(case: HoldCase, casino) -> dt.datetime:
    return dt.datetime.combine(case.decision_due, dt.time(0, 0), tzinfo=casino.zoneinfo)


def _deadline(case: HoldCase, casino) -> dt.datetime:
    return dt.datetime.combine(case.decision_due + dt.timedelta(days=1), dt.time(0, 0), tzinfo=casino.zoneinfo)


def _client(user, casino) -> Client:
    """Logged in now: a session from before a 14-day jump in time has expired."""
    StaffAssignment.objects.get_or_create(user=user, casino=casino)
    client = Client()
    client.force_login(user)
    return client


def test_the_dashboard_shows_a_hold_due_from_the_start_of_its_last_day_and_a_breach_after_it(case, casino):
    last_day = _last_day_starts(case, casino)
    before = open_exceptions(casino, last_day - dt.timedelta(minutes=1))
    assert (before.holds, before.due_holds, before.overdue_holds) == (1, 0, 0)
    on_the_day = open_exceptions(casino, last_day)
    assert (on_the_day.due_holds, on_the_day.overdue_holds) == (1, 0)
    late_on_the_day = open_exceptions(casino, _deadline(case, casino) - dt.timedelta(seconds=1))
    assert (late_on_the_day.due_holds, late_on_the_day.overdue_holds) == (1, 0)
    # Past the deadline it is a breach at once, whether or not the 15-minute job has run yet.
    after = open_exceptions(casino, _deadline(case, casino))
    assert (after.due_holds, after.overdue_holds) == (0, 1)


def test_the_dashboard_page_names_the_escalated_and_the_breached_holds(case, casino, manager):
    with time_machine.travel(_last_day_starts(case, casino) + dt.timedelta(hours=1), tick=False):
        page = _client(manager, casino).get("/dashboard/").content.decode()
    assert "1 due today (last day)" in page
    with time_machine.travel(_deadline(case, casino) + dt.timedelta(hours=1), tick=False):
        page = _client(manager, casino).get("/dashboard/").content.decode()
    assert "1 past the deadline (breach)" in page


def test_the_exceptions_report_lists_the_due_hold_as_escalated_and_the_passed_one_as_a_breach(case, casino):
    day = case.decision_due
    with time_machine.travel(_last_day_starts(case, casino) + dt.timedelta(hours=2), tick=False):
        rows = [row for row in reports.exceptions(casino, day, day) if row["where"] == f"case {case.pk}"]
    assert [row["kind"] for row in rows] == ["Hold decision due today: its last day"]
    with time_machine.travel(_deadline(case, casino) + dt.timedelta(minutes=1), tick=False):
        rows = [row for row in reports.exceptions(casino, day, day) if row["where"] == f"case {case.pk}"]
    assert [row["kind"] for row in rows] == ["Hold decision deadline breached"]
    assert rows[0]["when"] == _deadline(case, casino)


def test_on_its_last_day_a_supervisor_still_decides_and_the_decision_is_not_late(case, casino, supervisor):
    with time_machine.travel(_deadline(case, casino) - dt.timedelta(minutes=1), tick=False):
        services.hold_decide(case=case, user=supervisor, pay=True, note="")
    event = Ticket.objects.get(pk=case.ticket_id).events.get(kind="cleared_for_payment")
    assert "late" not in event.details


@pytest.mark.parametrize("decider", ["supervisor", "compliance"])
def test_after_the_deadline_a_supervisor_or_compliance_officer_is_refused(case, casino, decider, request):
    user = request.getfixturevalue(decider)
    late = _deadline(case, casino) + dt.timedelta(minutes=1)
    with time_machine.travel(late, tick=False), pytest.raises(CashDeskError) as refused:
        services.hold_decide(case=case, user=user, pay=False, note="copy")
    assert refused.value.code == "late_decision_manager"
    assert "only a manager" in refused.value.message
    assert HoldCase.objects.get(pk=case.pk).decision == "pending"
    assert Ticket.objects.get(pk=case.ticket_id).state == "on_hold"


def test_after_the_deadline_the_manager_decides_only_with_a_reason_recorded_as_late(case, casino, manager):
    late = _deadline(case, casino) + dt.timedelta(days=2)
    with time_machine.travel(late, tick=False):
        with pytest.raises(CashDeskError) as refused:
            services.hold_decide(case=case, user=manager, pay=True, note="  ")
        assert refused.value.code == "late_reason_required"
        assert HoldCase.objects.get(pk=case.pk).decision == "pending"
        services.hold_decide(case=case, user=manager, pay=False, note="original paid at machine 17; CCTV")
    decided = HoldCase.objects.get(pk=case.pk)
    assert (decided.decision, decided.decided_by, decided.decided_at) == ("refuse", manager, late)
    event = Ticket.objects.get(pk=case.ticket_id).events.get(kind="voided")
    assert (event.user, event.created_at, event.reason) == (manager, late, "original paid at machine 17; CCTV")
    assert event.details["late"] is True
    assert event.details["decision_due"] == case.decision_due.isoformat()


def test_a_late_decision_to_pay_is_recorded_as_late_and_stays_in_the_exceptions_report(case, casino, manager):
    late = _deadline(case, casino) + dt.timedelta(hours=3)
    with time_machine.travel(late, tick=False):
        services.hold_decide(case=case, user=manager, pay=True, note="owner identified")
        day = casino.gaming_day(late)
        rows = [row for row in reports.exceptions(casino, day, day) if row["where"] == f"case {case.pk}"]
    event = Ticket.objects.get(pk=case.ticket_id).events.get(kind="cleared_for_payment")
    assert (event.user, event.reason, event.details["late"]) == (manager, "owner identified", True)
    assert [row["kind"] for row in rows] == ["Hold decided after the deadline"]


def test_a_late_decision_by_a_supervisor_on_the_page_is_a_form_error(case, casino, supervisor):
    with time_machine.travel(_deadline(case, casino) + dt.timedelta(minutes=5), tick=False):
        client = _client(supervisor, casino)
        response = client.post(f"/supervisor/holds/{case.pk}/decide/", {"decision": "refuse", "note": "copy"})
    assert response.status_code == 200
    form = response.context["failed_decision"]
    assert form.non_field_errors() == [
        f"The decision day of case {case.pk} has passed: only a manager decides it now, giving the reason; "
        "the decision is recorded as late."
    ]
    assert "only a manager decides it now" in response.content.decode()
    assert HoldCase.objects.get(pk=case.pk).decision == "pending"


def test_the_manager_decides_a_late_hold_on_the_page_with_a_reason(case, casino, manager):
    with time_machine.travel(_deadline(case, casino) + dt.timedelta(minutes=5), tick=False):
        client = _client(manager, casino)
        page = client.get("/supervisor/")
        assert page.status_code == 200
        assert "BREACH" in page.content.decode()
        refused = client.post(f"/supervisor/holds/{case.pk}/decide/", {"decision": "pay", "note": ""})
        assert refused.context["failed_decision"].non_field_errors() == [
            "The decision day has passed: give the reason the decision comes late."
        ]
        assert HoldCase.objects.get(pk=case.pk).decision == "pending"
        done = client.post(f"/supervisor/holds/{case.pk}/decide/", {"decision": "pay", "note": "owner identified"})
    assert done.status_code == 302
    assert HoldCase.objects.get(pk=case.pk).decision == "pay"


def test_before_the_deadline_the_manager_does_not_decide(case, casino, manager):
    with pytest.raises(CashDeskError) as refused:
        services.hold_decide(case=case, user=manager, pay=True, note="early")
    assert refused.value.code == "forbidden"
    assert HoldCase.objects.get(pk=case.pk).decision == "pending"

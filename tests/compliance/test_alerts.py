import datetime as dt
from decimal import Decimal

import pytest
import time_machine

from cashdesk import services
from compliance.models import Alert
from compliance.services import PersonError, alert_close, alert_review
from tests.factories import make_person

VILNIUS = dt.timezone(dt.timedelta(hours=2))  # December: EET


def _sale(shift, cashier, person, amount, at):
    with time_machine.travel(at, tick=False):
        return services.ticket_sell(shift=shift, user=cashier, amount=Decimal(amount), person=person)


def test_a_persons_day_adds_up_to_the_due_diligence_alert(shift, cashier, person):
    _sale(shift, cashier, person, "1200.00", dt.datetime(2026, 12, 2, 20, 0, tzinfo=VILNIUS))
    assert not Alert.objects.exists()
    _sale(shift, cashier, person, "800.00", dt.datetime(2026, 12, 2, 23, 0, tzinfo=VILNIUS))

    alert = Alert.objects.get()
    assert (alert.kind, alert.person, alert.amount) == ("due_diligence", person, Decimal("2000.00"))
    assert alert.gaming_day == dt.date(2026, 12, 2)


def test_the_gaming_day_starts_at_the_casinos_hour_not_at_midnight(shift, cashier, person):
    # 23:00 and 05:00 the next morning are the same gaming day (it starts at 06:00).
    _sale(shift, cashier, person, "1200.00", dt.datetime(2026, 12, 2, 23, 0, tzinfo=VILNIUS))
    _sale(shift, cashier, person, "900.00", dt.datetime(2026, 12, 3, 5, 59, tzinfo=VILNIUS))
    assert Alert.objects.get().gaming_day == dt.date(2026, 12, 2)


def test_transactions_either_side_of_the_day_boundary_do_not_add_up(shift, cashier, person):
    _sale(shift, cashier, person, "1200.00", dt.datetime(2026, 12, 3, 5, 59, tzinfo=VILNIUS))
    _sale(shift, cashier, person, "900.00", dt.datetime(2026, 12, 3, 6, 0, tzinfo=VILNIUS))
    assert not Alert.objects.exists()


def test_fcis_alert_at_15000_and_each_alert_once_a_day(shift, cashier, person):
    at = dt.datetime(2026, 12, 2, 12, 0, tzinfo=VILNIUS)
    for hour in range(3):
        _sale(shift, cashier, person, "5000.00", at + dt.timedelta(hours=hour))
    _sale(shift, cashier, person, "1500.00", at + dt.timedelta(hours=4))
    kinds = sorted(Alert.objects.values_list("kind", flat=True))
    assert kinds == ["due_diligence", "fcis_report"]
    assert Alert.objects.get(kind="fcis_report").amount == Decimal("15000.00")


def test_thresholds_are_casino_settings(shift, cashier, person, casino):
    casino.due_diligence_threshold = Decimal("1500.00")
    casino.save()
    _sale(shift, cashier, person, "1500.00", dt.datetime(2026, 12, 2, 12, 0, tzinfo=VILNIUS))
    assert Alert.objects.get().kind == "due_diligence"


def test_three_near_threshold_transactions_at_one_desk_within_an_hour(shift, cashier):
    at = dt.datetime(2026, 12, 2, 12, 0, tzinfo=VILNIUS)
    for minutes in (0, 20):
        _sale(shift, cashier, None, "850.00", at + dt.timedelta(minutes=minutes))
    # The pair already passes the threshold: the casino-wide rule has it (test_structuring_across_desks.py).
    assert not Alert.objects.filter(kind="structuring_desk").exists()
    _sale(shift, cashier, None, "999.00", at + dt.timedelta(minutes=50))
    alert = Alert.objects.get(kind="structuring_desk")
    assert (alert.kind, alert.desk) == ("structuring_desk", shift.desk)
    assert len(alert.details["transactions"]) == 3


def test_near_threshold_transactions_spread_over_more_than_the_window_are_not_structuring(shift, cashier):
    at = dt.datetime(2026, 12, 2, 12, 0, tzinfo=VILNIUS)
    for minutes in (0, 40, 80):
        _sale(shift, cashier, None, "900.00", at + dt.timedelta(minutes=minutes))
    assert not Alert.objects.filter(kind="structuring_desk").exists()


def test_below_the_band_is_not_structuring(shift, cashier):
    at = dt.datetime(2026, 12, 2, 12, 0, tzinfo=VILNIUS)
    for minutes in (0, 5, 10):
        _sale(shift, cashier, None, "799.99", at + dt.timedelta(minutes=minutes))
    assert not Alert.objects.exists()


def test_tickets_of_one_machine_cashed_just_under_the_threshold(api, shift, cashier, make_api):
    other_machine = make_api(asset_number="7007")
    numbers = [api.issued_ticket("950.00") for _ in range(2)] + [other_machine.issued_ticket("950.00")]
    third_from_first = api.issued_ticket("960.00")
    start = dt.datetime(2026, 12, 2, 12, 0, tzinfo=VILNIUS)
    # Spread over hours so the desk rule (an hour) does not fire; the machine rule looks at 24 h.
    for i, number in enumerate([*numbers, third_from_first]):
        with time_machine.travel(start + dt.timedelta(hours=2 * i), tick=False):
            services.ticket_payout(shift=shift, user=cashier, validation_number=number)
    alert = Alert.objects.get()
    assert (alert.kind, alert.machine) == ("structuring_machine", api.machine)


def test_alert_is_reviewed_then_closed_with_a_note(shift, cashier, person, compliance):
    _sale(shift, cashier, person, "2500.00", dt.datetime(2026, 12, 2, 12, 0, tzinfo=VILNIUS))
    alert = Alert.objects.get()
    alert = alert_review(alert=alert, user=compliance)
    assert (alert.status, alert.handled_by) == ("in_review", compliance)
    with pytest.raises(PersonError, match="note"):
        alert_close(alert=alert, user=compliance, note="  ")
    alert = alert_close(alert=alert, user=compliance, note="Source of funds: documented win at table 3.")
    assert alert.status == "closed"
    assert alert.closed_at is not None


def test_only_compliance_handles_alerts(shift, cashier, person, manager):
    _sale(shift, cashier, person, "2500.00", dt.datetime(2026, 12, 2, 12, 0, tzinfo=VILNIUS))
    with pytest.raises(PersonError, match="Only compliance officers"):
        alert_review(alert=Alert.objects.get(), user=manager)


def test_a_different_person_has_their_own_day(shift, cashier, person):
    other = make_person(given_names="Ona", surnames="Onaitė", born="1990-01-01", document_number="LT0000002")
    _sale(shift, cashier, person, "1100.00", dt.datetime(2026, 12, 2, 12, 0, tzinfo=VILNIUS))
    _sale(shift, cashier, other, "1100.00", dt.datetime(2026, 12, 2, 12, 5, tzinfo=VILNIUS))
    assert not Alert.objects.exists()

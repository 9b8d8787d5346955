"""Structuring across desks and kiosks (issue 21).

Two 1 000 EUR operations at two desks, or at one desk within minutes, raised
no alert: the rule grouped by desk and needed three. Unidentified operations
just under the threshold at one casino whose sum within the window passes the
threshold now raise one structuring alert per window, listing the operations,
desks and kiosks alike.
"""

import datetime as dt
from decimal import Decimal

import pytest
import time_machine
from django.db import connection
from django.test import Client

from cashdesk import services
from cashdesk.models import CashTransaction
from compliance.models import Alert
from compliance.services.alerts import _STRUCTURING_LOCK_CLASS
from machines.models import Place
from staff.models import StaffAssignment
from tests.cashdesk.conftest import FLOAT, stocked_vault  # noqa: F401 - fixture
from tests.cashdesk.test_kiosks import fill, kiosk, kiosk_api, redeem  # noqa: F401 - fixtures
from tests.races import race

VILNIUS = dt.timezone(dt.timedelta(hours=2))  # December: EET
AT = dt.datetime(2026, 12, 2, 12, 0, tzinfo=VILNIUS)


@pytest.fixture
def second_shift(casino, cashier2):
    desk = Place.objects.create(casino=casino, code="K2", name="Kasa 2", cash_limit=Decimal("500000.00"))
    return services.shift_open(desk=desk, cashier=cashier2, counted=FLOAT)


def _sale(shift, amount, at, person=None):
    with time_machine.travel(at, tick=False):
        return services.ticket_sell(shift=shift, user=shift.cashier, amount=Decimal(amount), person=person)


def _across_desks():
    return Alert.objects.filter(kind="structuring_casino")


def test_two_operations_of_1000_at_two_desks_raise_one_alert_listing_both(shift, second_shift):
    first = _sale(shift, "1000.00", AT)
    assert not _across_desks().exists()
    second = _sale(second_shift, "1000.00", AT + dt.timedelta(minutes=7))

    alert = _across_desks().get()
    assert alert.details["transactions"] == sorted([first.pk, second.pk])
    assert alert.amount == Decimal("2000.00")
    assert alert.gaming_day == dt.date(2026, 12, 2)
    assert alert.desk is None  # the casino's, not one desk's


def test_two_operations_of_1000_at_one_desk_within_minutes_raise_the_alert(shift):
    _sale(shift, "1000.00", AT)
    _sale(shift, "1000.00", AT + dt.timedelta(minutes=3))
    assert _across_desks().count() == 1


def test_more_operations_in_the_window_join_the_one_alert_instead_of_raising_more(shift, second_shift):
    sold = [_sale(shift if i % 2 else second_shift, "950.00", AT + dt.timedelta(minutes=5 * i)).pk for i in range(5)]
    alert = _across_desks().get()
    assert alert.details["transactions"] == sorted(sold)
    assert alert.amount == Decimal("4750.00")


def test_a_new_window_raises_a_new_alert(shift, second_shift):
    _sale(shift, "1000.00", AT)
    _sale(second_shift, "1000.00", AT + dt.timedelta(minutes=1))
    later = AT + dt.timedelta(hours=3)
    _sale(shift, "900.00", later)
    _sale(second_shift, "900.00", later + dt.timedelta(minutes=1))
    assert [alert.amount for alert in _across_desks().order_by("created_at")] == [
        Decimal("2000.00"),
        Decimal("1800.00"),
    ]


def test_operations_further_apart_than_the_window_or_identified_do_not_count(shift, second_shift, person):
    _sale(shift, "1000.00", AT)
    _sale(second_shift, "1000.00", AT + dt.timedelta(minutes=61))
    assert not _across_desks().exists()
    _sale(shift, "1000.00", AT + dt.timedelta(minutes=90), person=person)  # identified: not hidden from anyone
    assert not _across_desks().exists()


def test_operations_whose_sum_stays_at_the_threshold_raise_nothing(shift, second_shift, casino):
    casino.structuring_ratio = Decimal("0.40")
    casino.save()
    _sale(shift, "500.00", AT)
    _sale(second_shift, "500.00", AT + dt.timedelta(minutes=1))  # 1000.00: not more than the threshold
    assert not _across_desks().exists()
    _sale(second_shift, "400.00", AT + dt.timedelta(minutes=2))
    assert _across_desks().get().amount == Decimal("1400.00")


def test_a_kiosk_payout_counts_with_the_desks(api, shift, kiosk, kiosk_api, stocked_vault, floor, supervisor):  # noqa: F811
    fill(kiosk, floor, supervisor)
    sale = _sale(shift, "950.00", AT)
    number = api.issued_ticket("990.00")
    with time_machine.travel(AT + dt.timedelta(minutes=10), tick=False):
        redeem(kiosk_api, number)
    paid = CashTransaction.objects.get(kind="kiosk_payout")

    alert = _across_desks().get()
    assert alert.details["transactions"] == sorted([sale.pk, paid.pk])
    assert alert.amount == Decimal("1940.00")


def test_the_alerts_queue_lists_the_operations_with_their_desk_and_receipt(shift, second_shift, compliance, casino):
    first = _sale(shift, "1000.00", AT)
    second = _sale(second_shift, "990.00", AT + dt.timedelta(minutes=2))
    StaffAssignment.objects.create(user=compliance, casino=casino)
    client = Client()
    client.force_login(compliance)
    client.post("/compliance/purpose/", {"purpose": "AML review", "next": "/compliance/"})

    page = client.get("/compliance/alerts/").content.decode()

    row = page.split("desks and kiosks")[1].split("</tr>")[0]
    assert f"Kasa 1 · {first.receipt_number} · €1,000.00" in row
    assert f"Kasa 2 · {second.receipt_number} · €990.00" in row


@pytest.mark.django_db(transaction=True)
def test_two_desks_at_the_same_moment_still_raise_the_alert(casino, shift, second_shift):
    """Each desk's check would miss the other's uncommitted sale: they take turns on the casino's advisory lock."""
    assert connection.vendor == "postgresql"
    sell = [
        lambda s=s: services.ticket_sell(shift=s, user=s.cashier, amount=Decimal("1000.00"))
        for s in (shift, second_shift)
    ]

    results = race(sell, gate=("SELECT pg_advisory_xact_lock(%s, %s)", [_STRUCTURING_LOCK_CLASS, casino.pk]))

    assert all(isinstance(result, CashTransaction) for result in results), results
    alert = _across_desks().get()
    assert sorted(alert.details["transactions"]) == sorted(result.pk for result in results)  # listed by time

"""Offline validation beyond the machine API: the cash desk, the daily report and the admin."""

import datetime as dt
import re

import pytest
import time_machine
from django.test import Client

from cashdesk import reports, services
from cashdesk.errors import CashDeskError
from machines.models import Place
from staff.models import StaffAssignment
from tests.cashdesk.conftest import FLOAT
from tests.conftest import MachineClient
from tests.factories import make_user
from tickets.models import ReservedNumber, Ticket

VILNIUS = dt.timezone(dt.timedelta(hours=2))
NOW = dt.datetime(2026, 12, 2, 18, 10, 0, tzinfo=VILNIUS)


@pytest.fixture
def cashier(db):
    return make_user("ona", "cashier")


@pytest.fixture
def shift(casino, cashier):
    desk = Place.objects.create(casino=casino, code="K1", name="Kasa 1")
    return services.shift_open(desk=desk, cashier=cashier, counted=FLOAT)


def _reserve(api: MachineClient, count: int = 1) -> list[str]:
    response = api.post("validation-pool", {"request_id": api.next_id(), "count": count})
    assert response.status_code == 200
    return list(response.json()["validation_numbers"])


def _report(api: MachineClient, number: str, printed_at: str = "2026-12-02T18:04:11+02:00") -> dict:
    response = api.post(
        "tickets/offline",
        {
            "request_id": api.next_id(),
            "validation_number": number,
            "amount": "25.00",
            "printed_at": printed_at,
            "sequence": 9,
        },
    )
    assert response.status_code == 201, response.json()
    return dict(response.json())


def test_the_desk_refuses_a_reserved_number_in_plain_words(api, shift, cashier):
    number = _reserve(api)[0]

    with pytest.raises(CashDeskError) as presented:
        services.ticket_present(shift=shift, user=cashier, validation_number=number)
    assert presented.value.code == "not_reported"
    assert "machine 1001" in presented.value.message
    assert "Do not pay it" in presented.value.message

    with pytest.raises(CashDeskError) as paid:
        services.ticket_payout(shift=shift, user=cashier, validation_number=number)
    assert paid.value.code == "not_reported"
    # Holding needs a ticket: there is none until the machine reports it, so the hold is refused the same way.
    with pytest.raises(CashDeskError) as held:
        services.ticket_hold(shift=shift, user=cashier, validation_number=number, reason="suspected_copy")
    assert held.value.code == "not_reported"
    assert not Ticket.objects.exists()


def test_the_desk_screen_shows_the_refusal(api, shift, cashier, casino):
    from staff.models import StaffAssignment

    StaffAssignment.objects.create(user=cashier, casino=casino)
    client = Client()
    client.force_login(cashier)
    number = _reserve(api)[0]

    response = client.post("/desk/ticket/", {"number": number}, follow=True)

    assert response.status_code == 200
    text = response.content.decode()
    assert "reserved by machine 1001" in text
    assert "Do not pay it" in text
    assert number not in text


def test_an_unknown_number_is_still_not_found_at_the_desk(shift, cashier):
    with pytest.raises(CashDeskError) as presented:
        services.ticket_present(shift=shift, user=cashier, validation_number="004218779312345672")
    assert presented.value.code == "not_found"


@time_machine.travel(NOW, tick=False)
def test_the_desk_pays_a_reported_offline_ticket(api, shift, cashier):
    number = _reserve(api)[0]
    _report(api, number)

    ticket, refusal = services.ticket_present(shift=shift, user=cashier, validation_number=number)
    assert refusal is None
    services.ticket_payout(shift=shift, user=cashier, validation_number=number)
    assert Ticket.objects.get(pk=ticket.pk).state == "redeemed"


@time_machine.travel(NOW, tick=False)
def test_an_expired_offline_ticket_is_counted_expired_in_the_daily_report(api, casino):
    numbers = _reserve(api, 2)
    old = (NOW - dt.timedelta(days=casino.ticket_validity_days + 3)).isoformat()
    assert _report(api, numbers[0], printed_at=old)["state"] == "expired"
    assert _report(api, numbers[1])["state"] == "issued"

    today = NOW.date()
    rows = {row["day"]: row for row in reports.tickets_per_gaming_day(casino, today - dt.timedelta(days=60), today)}
    assert rows[today]["expired_count"] == 1
    assert rows[today]["expired_amount"] == 25
    assert rows[today]["issued_count"] == 1  # the valid one, printed today
    # The expired one counts as issued on the day the machine printed it.
    printed_day = dt.datetime.fromisoformat(old).astimezone(casino.zoneinfo).date()
    assert rows[printed_day]["issued_count"] == 1
    # Not owed now.
    assert reports.outstanding_liability(casino, NOW)["count"] == 1


def test_the_admin_lists_reservations_masked_and_filters_offline_tickets(api, make_api, casino):
    admin_user = make_user("admin")
    admin_user.is_staff = admin_user.is_superuser = True
    admin_user.save()
    client = Client()
    client.force_login(admin_user)
    numbers = _reserve(api, 2)
    with time_machine.travel(NOW, tick=False):
        _report(api, numbers[0])
    online = make_api().issued_ticket()

    page = client.get("/admin/tickets/reservednumber/")
    assert page.status_code == 200
    text = page.content.decode()
    assert numbers[1] not in text
    assert numbers[1][-4:] in text
    outstanding = client.get("/admin/tickets/reservednumber/", {"reported": "no", "machine__id__exact": api.machine.pk})
    assert numbers[1][-4:] in outstanding.content.decode()
    assert numbers[0][-4:] not in outstanding.content.decode()

    offline = client.get("/admin/tickets/ticket/", {"offline": "yes"}).content.decode()
    assert numbers[0][-4:] in offline
    assert online[-4:] not in offline
    assert ReservedNumber.objects.filter(ticket__isnull=True).count() == 1


@time_machine.travel(NOW, tick=False)
def test_the_database_keeps_a_reservation_fixed_and_reported_once(api, make_api):
    from django.db import IntegrityError, transaction

    numbers = _reserve(api, 2)
    _report(api, numbers[0])
    reported = ReservedNumber.objects.get(validation_number=numbers[0])
    outstanding = ReservedNumber.objects.get(validation_number=numbers[1])
    other = make_api()
    online = Ticket.objects.get(validation_number=api.issued_ticket())
    attempts = [
        lambda: ReservedNumber.objects.filter(pk=reported.pk).update(
            ticket=None, reported_at=None, reported_sequence=None
        ),
        lambda: ReservedNumber.objects.filter(pk=outstanding.pk).update(machine=other.machine),
        lambda: ReservedNumber.objects.filter(pk=outstanding.pk).update(validation_number="004218779312345672"),
        # Reported as a ticket of another number.
        lambda: ReservedNumber.objects.filter(pk=outstanding.pk).update(
            ticket=online, reported_at=NOW, reported_sequence=1
        ),
    ]
    for attempt in attempts:
        with pytest.raises(IntegrityError), transaction.atomic():
            attempt()


def test_the_supervisor_sees_each_machines_reserved_numbers_and_offline_tickets(api, make_api, casino):
    other = make_api()
    numbers = _reserve(api, 3)
    _reserve(other, 2)
    _report(api, numbers[0])
    supervisor = make_user("rasa", "shift_supervisor")
    StaffAssignment.objects.create(user=supervisor, casino=casino)
    client = Client()
    client.force_login(supervisor)
    page = client.get("/supervisor/").content.decode()
    section = page[page.index('id="offline-validation"') :]
    section = section[: section.index("</table>")]
    rows = re.findall(r"<tr><td>([^<]+)</td><td class=\"num\">(\d+)</td><td class=\"num\">(\d+)</td>", section)
    assert rows == [(api.machine.asset_number, "2", "1"), (other.machine.asset_number, "2", "0")]
    assert numbers[1] not in page  # counts, never the numbers

import datetime as dt
from decimal import Decimal

import pytest
import time_machine

from tickets.models import Ticket, TicketEvent, TicketState
from tickets.numbers import parse_validation_number

VILNIUS = dt.timezone(dt.timedelta(hours=2))


@time_machine.travel(dt.datetime(2026, 12, 2, 18, 4, 11, tzinfo=VILNIUS), tick=False)
def test_issue_reserves_a_number_and_returns_the_print_data(api):
    response = api.issue("123.45")

    assert response.status_code == 201
    body = response.json()
    assert body["state"] == "pending_print"
    assert body["amount"] == "123.45"
    assert body["ticket_type"] == "cashable"
    assert body["issued_at"] == "2026-12-02T18:04:11+02:00"
    assert body["expires_at"] == "2027-01-01T23:59:59+02:00"
    assert parse_validation_number(body["validation_number"]) == body["validation_number"]
    printed = body["print"]
    assert printed["casino_name"] == "Casino Tornado"
    assert printed["casino_address"] == "Demo g. 1, Vilnius"
    assert printed["machine"] == "1001"
    assert printed["sequence"] == 1
    assert printed["amount_words"] == "vienas šimtas dvidešimt trys eurai, keturiasdešimt penki centai"
    assert printed["amount_words_en"] == "one hundred and twenty-three euro, forty-five cents"
    number = body["validation_number"]
    assert printed["validation_display"] == "-".join(
        [number[:2], number[2:6], number[6:10], number[10:14], number[14:18]]
    )


def test_issue_stores_the_ticket_with_its_event(api, machine):
    body = api.issue("1.001").json()

    ticket = Ticket.objects.get(validation_number=body["validation_number"])
    assert ticket.amount == Decimal("1.001")
    assert ticket.state == TicketState.PENDING_PRINT
    assert ticket.issuing_machine == machine
    assert ticket.casino == machine.casino
    assert ticket.printed_at is None
    event = TicketEvent.objects.get(ticket=ticket)
    assert (event.kind, event.machine, event.to_state) == ("issued", machine, "pending_print")
    assert event.request_id == "1001-req-1"


def test_three_decimal_amount_is_answered_as_given(api):
    assert api.issue("1.001").json()["amount"] == "1.001"
    assert api.issue("7.5").json()["amount"] == "7.50"


def test_sequence_numbers_count_up_per_machine(api, make_api):
    other = make_api(asset_number="2002")
    sequences = [api.issue().json()["print"]["sequence"] for _ in range(3)]
    assert sequences == [1, 2, 3]
    assert other.issue().json()["print"]["sequence"] == 1


def test_promo_ticket_type(api):
    body = api.issue("5.00", ticket_type="promo").json()
    assert body["ticket_type"] == "promo"


def test_unknown_ticket_type_is_refused(api, table_counts):
    before = table_counts()
    response = api.issue("5.00", ticket_type="bonus")
    assert response.status_code == 422
    assert response.json()["code"] == "invalid_request"
    assert table_counts() == before


def test_amount_at_the_casino_maximum_is_accepted(api):
    assert api.issue("10000.00").status_code == 201


@pytest.mark.parametrize("amount", ["10000.001", "10000.01", "99999999999.999"])
def test_amount_above_the_casino_maximum_is_over_limit(api, table_counts, amount):
    before = table_counts()
    response = api.issue(amount)
    assert response.status_code == 422
    assert response.json()["code"] == "over_limit"
    assert table_counts() == before


def test_maximum_is_a_casino_setting(api, casino):
    casino.max_ticket_amount = Decimal("500.00")
    casino.save()
    assert api.issue("500.01").json()["code"] == "over_limit"
    assert api.issue("500.00").status_code == 201


@time_machine.travel(dt.datetime(2026, 3, 1, 12, 0, tzinfo=dt.UTC), tick=False)
def test_expiry_is_the_end_of_the_last_valid_local_day_across_dst(api, casino):
    # 2026-03-29 Lithuania moves to summer time (+03:00); the ticket prints local time.
    casino.ticket_validity_days = 30
    casino.save()
    body = api.issue().json()
    assert body["issued_at"] == "2026-03-01T14:00:00+02:00"
    assert body["expires_at"] == "2026-03-31T23:59:59+03:00"


def test_validity_days_is_a_casino_setting(api, casino):
    casino.ticket_validity_days = 180
    casino.save()
    ticket = Ticket.objects.get(validation_number=api.issue().json()["validation_number"])
    local_issue = ticket.issued_at.astimezone(casino.zoneinfo).date()
    assert ticket.expires_at.astimezone(casino.zoneinfo).date() - local_issue == dt.timedelta(days=180)

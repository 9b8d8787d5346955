"""A machine's ticket is a whole number of its credits (machine-api.md, "Money and numbers", addition).

Issue 21: a machine of 0.01 EUR credits issued a 2.005 EUR ticket. The amount printed on a ticket must match
the credits the machine counted (casino rules §1.7); half a credit is no credit a machine can count.
"""

import datetime as dt
from decimal import Decimal

import pytest
import time_machine

from casino_office.money import format_amount
from tests.api.test_offline_validation import pool, report
from tickets.models import ReservedNumber, Ticket

VILNIUS = dt.timezone(dt.timedelta(hours=2))


@pytest.mark.parametrize(
    ("credit", "refused", "accepted"),
    [
        ("0.010", "2.005", "2.01"),
        ("0.050", "1.07", "1.05"),
        ("0.100", "0.15", "0.20"),
        ("1.000", "3.50", "3.00"),
    ],
)
def test_issue_refuses_an_amount_that_is_not_whole_credits(make_api, table_counts, credit, refused, accepted):
    api = make_api(credit_value=Decimal(credit))
    before = table_counts()

    response = api.issue(refused)

    assert response.status_code == 422, response.json()
    assert response.json()["code"] == "amount_not_in_credits"
    assert f"{format_amount(Decimal(credit))} EUR" in response.json()["detail"]
    assert table_counts() == before  # nothing written, not even the answer (a corrected retry is no reuse)
    assert api.issue(accepted).status_code == 201


def test_the_same_request_id_corrected_is_issued(make_api):
    api = make_api(credit_value=Decimal("0.010"))
    body = {"request_id": "cashout-7", "amount": "2.005"}
    assert api.post("tickets/issue", body).json()["code"] == "amount_not_in_credits"

    response = api.post("tickets/issue", {**body, "amount": "2.00"})

    assert response.status_code == 201
    assert Ticket.objects.get().amount == Decimal("2.00")


def test_a_machine_of_mill_credits_issues_a_fraction_of_a_cent(make_api):
    api = make_api(credit_value=Decimal("0.001"))
    assert api.issue("2.005").json()["amount"] == "2.005"


@time_machine.travel(dt.datetime(2026, 12, 2, 18, 10, tzinfo=VILNIUS), tick=False)
def test_an_offline_report_is_whole_credits_too(make_api):
    api = make_api(credit_value=Decimal("0.010"))
    number = pool(api, 1)[0]

    response = report(api, number, amount="2.005")

    assert response.status_code == 422, response.json()
    assert response.json()["code"] == "amount_not_in_credits"
    assert ReservedNumber.objects.get(validation_number=number).ticket is None
    assert not Ticket.objects.exists()
    assert report(api, number, amount="2.01").status_code == 201

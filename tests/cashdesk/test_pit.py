"""The pit's first screen (issue 24): the casino's tables, their limits now and their signs, for the pit supervisor."""

import datetime as dt
from decimal import Decimal

import pytest
from django.test import Client

from cashdesk.services.tables import table_create
from machines.models import TableGame
from machines.services import table_limit_order_record
from staff.models import StaffAssignment
from tests.cashdesk.test_printing import pdf_text
from tests.factories import make_user

pytestmark = pytest.mark.django_db
ONE = Decimal("1")


@pytest.fixture
def pit(casino):
    supervisor = make_user("salesvadove", "pit_supervisor")
    StaffAssignment.objects.create(user=supervisor, casino=casino)
    client = Client()
    client.force_login(supervisor)
    return client


@pytest.fixture
def tables(casino):
    roulette = table_create(casino=casino, number="AR1", game=TableGame.AMERICAN_ROULETTE)
    poker = table_create(casino=casino, number="TP1", game=TableGame.TEXAS_POKER)
    table_limit_order_record(
        casino=casino,
        number="12V",
        signed_on=dt.date(2026, 1, 2),
        effective_from=dt.date(2026, 1, 5),
        lines=[
            {
                "game": TableGame.AMERICAN_ROULETTE,
                "minimum": Decimal("1"),
                "maximum": Decimal("500"),
                "step": Decimal("1"),
            }
        ],
        user=make_user("director"),
    )
    return roulette, poker


def test_a_pit_supervisor_starts_on_the_pit_with_each_table_s_limits_now(pit, tables, other_casino):
    table_create(casino=other_casino, number="XX9", game=TableGame.CASINO_WAR)
    assert pit.get("/")["Location"] == "/pit/"
    page = pit.get("/pit/", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert "AR1" in page
    assert "TP1" in page
    assert "XX9" not in page  # another casino's table
    assert "500,00" in page or "500.00" in page
    assert "No. 12V of 2026-01-02" in page
    assert "No limits are in force for this table." in page  # Texas Poker: the order names roulette only
    assert f"/pit/tables/{tables[0].pk}/sign.pdf" in page


def test_the_sign_shows_the_limits_in_force_in_both_languages(pit, tables):
    roulette, poker = tables
    response = pit.get(f"/pit/tables/{roulette.pk}/sign.pdf")
    assert response["Content-Type"] == "application/pdf"
    text = pdf_text(response.content)
    for words in ("Amerikietiška ruletė / American roulette", "500,00 EUR", "Nr. 12V", "No. 12V", "2026-01-05"):
        assert words in text, text
    assert "Šiam stalui negalioja jokie limitai" in pdf_text(pit.get(f"/pit/tables/{poker.pk}/sign.pdf").content)


def test_another_casino_s_table_sign_is_not_found(pit, other_casino):
    elsewhere = table_create(casino=other_casino, number="XX9", game=TableGame.CASINO_WAR)
    assert pit.get(f"/pit/tables/{elsewhere.pk}/sign.pdf").status_code == 404

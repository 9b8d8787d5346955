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
from tests.factories import make_user, personal_code

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


# The table's day from the pit's pages: open with a count, buy-ins (one refused until the person is identified),
# close with the result.


def _count(**pieces):
    return {"chip_500": 0, "chip_100": 0, "chip_25": 0, "chip_5": 0, "chip_1": 0, "chip_0_50": 0, **pieces}


def _key():
    import uuid

    return uuid.uuid4().hex


def test_a_table_s_day_from_the_pit(casino, tables, pit):
    from cashdesk.models import TableSession
    from compliance.models import RegisterEntry as Entry

    roulette, _poker = tables
    croupier = make_user("krupjė")
    StaffAssignment.objects.create(user=croupier, casino=casino)

    page = pit.get(f"/pit/tables/{roulette.pk}/open/")
    assert page.status_code == 200
    assert "krupjė" in page.content.decode()
    opened = pit.post(
        f"/pit/tables/{roulette.pk}/open/",
        {"croupier": croupier.pk, "operation_key": _key(), **_count(chip_100=20, chip_25=40, chip_1=10)},
    )
    session = TableSession.objects.get(table=roulette)
    assert opened.status_code == 302
    assert opened["Location"] == f"/pit/sessions/{session.pk}/"

    small = {"seat": 2, "amount": "125.00", "operation_key": _key(), **_count(chip_100=1, chip_25=1)}
    assert pit.post(f"/pit/sessions/{session.pk}/buy-in/", small).status_code == 302
    big = {"seat": 4, "amount": "1500.00", "operation_key": _key(), **_count(chip_100=15)}
    refused = pit.post(f"/pit/sessions/{session.pk}/buy-in/", big)
    assert refused.status_code == 200
    assert refused.context["form"].identity_required
    assert not Entry.objects.exists()
    identified = pit.post(
        f"/pit/sessions/{session.pk}/buy-in/",
        {
            **big,
            "personal_code": personal_code(dt.date(1980, 5, 17)),
            "document_type": "passport",
            "document_number": "LT7654321",
            "document_country": "LT",
            "document_expiry": "2031-01-01",
            "given_names": "Jonas",
            "surnames": "Jonaitis",
            "date_of_birth": "1980-05-17",
            "nationality": "LT",
            "address": "Vilnius",
        },
    )
    assert identified.status_code == 302, identified.context["form"].errors
    assert Entry.objects.get().kind == "table_buy_in"

    # Learning chips for 100 EUR, two of them back: a 1 EUR chip in the player's favour.
    issued = pit.post(
        f"/pit/sessions/{session.pk}/colour/",
        {"colour": "red", "value": "0.01", "seat": 5, "operation_key": _key(), **_count(chip_25=4)},
    )
    assert issued.status_code == 302
    chips = session.colour_chips.get()
    assert chips.issued == 10000
    short = pit.post(f"/pit/colour/{chips.pk}/back/", {"returned": 2, "operation_key": _key(), **_count()})
    assert "€1.00" in str(short.context["form"].non_field_errors())
    back = pit.post(f"/pit/colour/{chips.pk}/back/", {"returned": 2, "operation_key": _key(), **_count(chip_1=1)})
    assert back.status_code == 302
    chips.refresh_from_db()
    assert chips.paid == Decimal("1.00")

    closed = pit.post(
        f"/pit/sessions/{session.pk}/close/", {"operation_key": _key(), **_count(chip_100=6, chip_25=45, chip_1=9)}
    )
    assert closed.status_code == 302
    session.refresh_from_db()
    # 600 + 1125 + 9 = 1734 in the tray against 3010 opened, with 1625 dropped: the table won 349.
    assert session.win == Decimal("349.00")
    assert pit.get(f"/pit/colour/{chips.pk}/back/").status_code == 200
    result = pit.get(f"/pit/sessions/{session.pk}/").content.decode()
    assert "349.00" in result


def test_the_pit_refuses_another_casino_s_table_and_a_bad_count(casino, other_casino, tables, pit):
    from cashdesk.services.tables import table_create

    elsewhere = table_create(casino=other_casino, number="AR9", game=TableGame.AMERICAN_ROULETTE)
    assert pit.get(f"/pit/tables/{elsewhere.pk}/open/").status_code == 404
    roulette, _poker = tables
    page = pit.post(f"/pit/tables/{roulette.pk}/open/", {"croupier": "", "operation_key": _key(), **_count(chip_5=-3)})
    assert page.status_code == 200
    assert set(page.context["form"].errors) == {"croupier", "chip_5"}


# The manager records the general director's orders of table limits (issue 24).


def test_a_manager_records_an_order_and_the_pit_shows_its_limits(casino, other_casino, tables, pit):
    from cashdesk.services.tables import table_create
    from machines.models import TableLimitOrder, table_limit_on

    roulette, poker = tables
    elsewhere = table_create(casino=other_casino, number="X1", game=TableGame.BLACK_JACK)
    manager = make_user("vadovas", "manager")
    StaffAssignment.objects.create(user=manager, casino=casino)
    client = Client()
    client.force_login(manager)
    page = client.get("/pit/limits/")
    assert page.status_code == 200
    choices = dict(page.context["form"].fields["target_0"].choices)
    assert f"table:{poker.pk}" in choices
    assert f"table:{elsewhere.pk}" not in choices

    order = {
        "number": "31V",
        "signed_on": "2026-11-30",
        "effective_from": "2026-12-01",
        "target_0": f"table:{poker.pk}",
        "minimum_0": "10",
        "maximum_0": "1000",
        "step_0": "5",
        "target_1": "game:american_roulette",
        "minimum_1": "2",
        "maximum_1": "200",
        "step_1": "1",
    }
    assert client.post("/pit/limits/", order).status_code == 302
    recorded = TableLimitOrder.objects.get(casino=casino, number="31V")
    assert recorded.recorded_by == manager
    assert table_limit_on(poker, dt.date(2026, 12, 2)).maximum == Decimal("1000.00")
    assert table_limit_on(roulette, dt.date(2026, 12, 2)).minimum == Decimal("2.00")
    # The order before stays the history: on 2026-11-30 the roulette's limits were the earlier order's.
    assert table_limit_on(roulette, dt.date(2026, 11, 30)).order.number == "12V"

    again = client.post("/pit/limits/", order)  # the same number again
    assert again.status_code == 200
    assert "number" in again.context["form"].errors
    half = client.post("/pit/limits/", {**order, "number": "32V", "step_1": ""})
    assert half.status_code == 200
    assert half.context["form"].non_field_errors()
    inverted = client.post("/pit/limits/", {**order, "number": "33V", "minimum_0": "2000"})
    assert inverted.status_code == 200
    assert inverted.context["form"].non_field_errors()
    assert TableLimitOrder.objects.filter(casino=casino).count() == 2
    assert pit.get("/pit/limits/").status_code == 403  # the pit supervisor reads limits, does not set them

"""The casino's gaming tables (issue 24): their approved games, their limits by the general director's order, all
recorded in the configuration's history."""

import datetime as dt
import json
from decimal import Decimal

import pytest
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction

from machines.chains import books_verify
from machines.history import acting_as
from machines.models import ConfigChange, GamingTable, TableGame, TableLimit, TableLimitOrder, table_limit_on
from machines.services import table_limit_order_record
from tests.factories import make_user

pytestmark = pytest.mark.django_db

JAN = dt.date(2026, 1, 2)


def table_create(**fields) -> GamingTable:
    """A table alone (the cash desk makes its places: tests/cashdesk/test_table_places.py)."""
    return GamingTable.objects.create(**fields)


def order(casino, number, effective_from, lines, signed_on=None):
    return table_limit_order_record(
        casino=casino,
        number=number,
        signed_on=signed_on or effective_from,
        effective_from=effective_from,
        lines=lines,
        user=User.objects.get_or_create(username=f"director-{number}")[0],
    )


def limits(minimum, maximum, step, **where):
    return {"minimum": Decimal(minimum), "maximum": Decimal(maximum), "step": Decimal(step), **where}


def test_a_table_is_the_casino_s_with_an_approved_game_and_a_number_of_its_own(casino, other_casino):
    table = table_create(casino=casino, number="AR1", game=TableGame.AMERICAN_ROULETTE, area="Salė")
    assert not table.is_open
    assert str(table) == "AR1 (American roulette)"
    assert table_create(casino=other_casino, number="AR1", game=TableGame.BLACK_JACK).casino == other_casino
    with pytest.raises(IntegrityError), transaction.atomic():
        GamingTable.objects.create(casino=casino, number="X1", game="baccarat")
    with pytest.raises(IntegrityError), transaction.atomic():
        GamingTable.objects.create(casino=casino, number="AR1", game=TableGame.BLACK_JACK)
    with pytest.raises(IntegrityError), transaction.atomic():
        GamingTable.objects.create(casino=casino, number="", game=TableGame.BLACK_JACK)


def test_a_table_plays_under_the_latest_order_in_force_its_own_line_before_its_game(casino):
    roulette = table_create(casino=casino, number="AR1", game=TableGame.AMERICAN_ROULETTE)
    other = table_create(casino=casino, number="AR2", game=TableGame.AMERICAN_ROULETTE)
    order(casino, "1V", JAN, [limits("1", "500", "1", game=TableGame.AMERICAN_ROULETTE)])
    order(casino, "7V", dt.date(2026, 3, 1), [limits("2", "1000", "2", table=roulette)])

    assert table_limit_on(roulette, dt.date(2026, 1, 1)) is None  # before any order
    assert table_limit_on(roulette, dt.date(2026, 2, 28)).maximum == Decimal("500.00")
    assert table_limit_on(roulette, dt.date(2026, 3, 1)).maximum == Decimal("1000.00")
    # The later order names AR1 only: AR2 stays under the game's line of the earlier one.
    assert table_limit_on(other, dt.date(2026, 3, 1)).maximum == Decimal("500.00")
    # Both orders stay: the limits' history.
    assert list(TableLimitOrder.objects.filter(casino=casino).values_list("number", flat=True)) == ["7V", "1V"]


def test_an_order_that_does_not_hold_records_nothing(casino, other_casino):
    foreign = table_create(casino=other_casino, number="AR9", game=TableGame.AMERICAN_ROULETTE)
    bad_orders = [
        [],
        [limits("10", "5", "1", game=TableGame.BLACK_JACK)],  # maximum under minimum
        [limits("0", "5", "1", game=TableGame.BLACK_JACK)],  # no minimum
        [limits("1", "5", "1")],  # neither a table nor a game
        [limits("1", "5", "1", table=foreign)],  # another casino's table
    ]
    for lines in bad_orders:
        with pytest.raises(ValidationError):
            order(casino, "9V", JAN, lines)
    assert not TableLimitOrder.objects.filter(number="9V").exists()
    assert not TableLimit.objects.exists()


def test_an_order_is_never_changed(casino):
    recorded = order(casino, "1V", JAN, [limits("1", "500", "1", game=TableGame.BLACK_JACK)])
    with pytest.raises(IntegrityError), transaction.atomic():
        TableLimitOrder.objects.filter(pk=recorded.pk).update(number="2V")
    with pytest.raises(IntegrityError), transaction.atomic():
        TableLimit.objects.filter(order=recorded).update(maximum=Decimal("5000.00"))


def test_tables_and_orders_are_in_the_configuration_history_and_the_books_hold(casino):
    boss = make_user("boss")
    with transaction.atomic(), acting_as(boss.pk, "web POST /admin/machines/gamingtable/add/"):
        table = table_create(casino=casino, number="TP1", game=TableGame.TEXAS_POKER)
    with transaction.atomic(), acting_as(boss.pk, "web POST /admin/machines/tablelimitorder/add/"):
        order(casino, "1V", JAN, [limits("5", "500", "5", table=table)])

    recorded = {
        change.object_type: change for change in ConfigChange.objects.filter(casino=casino).order_by("chain_sequence")
    }
    assert json.loads(recorded["machines.gamingtable"].after)["number"] == "TP1"
    assert recorded["machines.gamingtable"].changed_by == boss
    assert json.loads(recorded["machines.tablelimitorder"].after)["number"] == "1V"
    assert json.loads(recorded["machines.tablelimit"].after)["maximum"] == "500.00"
    assert books_verify(casino) == []

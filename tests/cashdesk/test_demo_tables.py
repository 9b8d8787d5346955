"""The demo's day at the tables (`manage.py table_day`) and the tables' boxes in `manage.py count_room` (issue 25):
what the floor simulator plays and counts at the tables."""

import json
from decimal import Decimal
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from cashdesk import services
from cashdesk.books import place_balances
from cashdesk.items import Item
from cashdesk.management.commands.seed_demo import VAULT_CHIPS
from cashdesk.management.commands.table_day import chips_for
from cashdesk.models import CashTransaction, Counterparty, DroppedBox, Leg, TablePlaces, TableSession
from cashdesk.services.table_slips import slip_confirm, slip_issue, slip_request
from cashdesk.services.tables import table_buy_in, table_create, table_open
from compliance.models import Entrance, Visit
from machines.models import Casino, GamingTable, Place, TableGame
from staff.models import StaffAssignment
from tests.factories import make_user

pytestmark = pytest.mark.django_db


def command(name: str, *args: str) -> str:
    out = StringIO()
    call_command(name, *args, stdout=out)
    return out.getvalue()


@pytest.fixture
def pit(casino: Casino, settings) -> dict:
    """Casino Tornado's pit and count room as seed_demo names them, its vault counted with chips, two tables."""
    settings.DEMO = True
    people = {}
    for username, role in (
        ("salesvadove-tor", "pit_supervisor"),
        ("pamainosvadove-tor", "shift_supervisor"),
        ("krupje-1-tor", None),
        ("salesdarbuotojas-tor", "floor_attendant"),
        ("apsauga-tor", "security_officer"),
        ("skaiciuotoja-tor", "counter"),
        ("skaiciuotojas-tor", "counter"),
        ("skaiciavimovadove-tor", "count_supervisor"),
        ("administratore-tor", "receptionist"),  # the players come in through the door (issue 26)
    ):
        people[username] = make_user(username, *([role] if role else []))
        StaffAssignment.objects.create(user=people[username], casino=casino)
    vault = Place.objects.create(casino=casino, code="V", name="Seifas", kind=Place.Kind.VAULT)
    services.vault_count(
        vault=vault, user=people["pamainosvadove-tor"], counted={Item.CASH: Decimal("50000.00"), **VAULT_CHIPS}
    )
    for number in ("AR1", "BJ1"):
        table_create(casino=casino, number=number, game=TableGame.AMERICAN_ROULETTE)
    Entrance.objects.create(casino=casino, code="MAIN", name="Pagrindinis įėjimas")
    return {"people": people, "vault": vault}


def _table_win(number: str) -> Decimal:
    """The table results the books hold for a table's tray: its closings' postings, read from the legs."""
    tray = TablePlaces.objects.get(table__number=number).tray
    legs = Leg.objects.filter(transaction__desk=tray, counterparty=Counterparty.TABLE_WIN)
    return -sum((leg.amount for leg in legs), Decimal(0))


def test_chips_for_makes_an_amount_from_what_the_tray_holds_or_says_it_cannot():
    assert chips_for(Decimal("137")) == {Item.CHIP_100: 1, Item.CHIP_25: 1, Item.CHIP_5: 2, Item.CHIP_1: 2}
    assert chips_for(Decimal("137"), {Item.CHIP_25: 10, Item.CHIP_1: 20}) == {Item.CHIP_25: 5, Item.CHIP_1: 12}
    assert chips_for(Decimal("30"), {Item.CHIP_25: 1, Item.CHIP_1: 4}) is None
    assert chips_for(Decimal("0")) == {}


def test_a_table_day_is_played_through_the_services_and_its_result_is_what_the_players_lost(pit):
    played = json.loads(command("table_day", "--seed", "7", "--players", "6", "--json"))
    assert set(played) == {"AR1", "BJ1"}
    for number, table in played.items():
        session = TableSession.objects.get(table__number=number)
        assert not session.is_open
        # What the box holds (the notes the players gave) is the buy-ins, and the drop the books recorded.
        notes = sum(Decimal(value) * pieces for value, pieces in table["notes"].items())
        assert notes == Decimal(table["buy_ins"]) == session.drop > 0
        assert place_balances(TablePlaces.objects.get(table__number=number).drop_box)[Item.CASH] == notes
        # The table's result in the books is what the players lost at it, and the session's win.
        assert _table_win(number) == Decimal(table["win"]) == session.win
        assert table["fills"] >= 1  # the trays start empty: their chips come from the vault
    # The vault lent the chips the trays still hold and the players took away; the books balance.
    for item in (Item.CASH, Item.CHIP_100):
        assert sum(leg.amount for leg in Leg.objects.filter(item=item)) == 0
    # The players came in through the door (issue 26): each buy-in is linked to one of their visits.
    buy_ins = CashTransaction.objects.filter(kind="table_buy_in")
    assert buy_ins.exists()
    assert not buy_ins.filter(visit__isnull=True).exists()
    assert Visit.objects.count() == 6


def test_the_same_seed_plays_the_same_day_and_an_open_table_is_left_as_it_is(pit, casino):
    first = json.loads(command("table_day", "--seed", "3", "--json"))
    session = table_open(
        table=GamingTable.objects.get(number="BJ1"),
        croupier=pit["people"]["krupje-1-tor"],
        pieces={},
        user=pit["people"]["salesvadove-tor"],
    )
    out, err = StringIO(), StringIO()
    call_command("table_day", "--seed", "3", "--json", stdout=out, stderr=err)
    again = json.loads(out.getvalue())
    assert set(again) == {"AR1"}
    assert again["AR1"]["notes"] == first["AR1"]["notes"]
    assert "table BJ1 is open: left as it is" in err.getvalue()
    assert session.is_open


def test_table_day_acts_only_in_demo_mode_and_refuses_bad_input(pit, settings):
    settings.DEMO = False
    with pytest.raises(CommandError, match="CASINO_DEMO=1"):
        command("table_day")
    settings.DEMO = True
    with pytest.raises(CommandError, match="--players must be from 1 to 50"):
        command("table_day", "--players", "0")
    with pytest.raises(CommandError, match="no casino XXX"):
        command("table_day", "--casino", "XXX")
    assert not TableSession.objects.exists()


def _count(tmp_path: Path, contents: dict) -> list[dict]:
    file = tmp_path / "boxes.json"
    file.write_text(json.dumps(contents))
    return json.loads(command("count_room", "--count", str(file), "--json"))


def test_count_room_counts_a_tables_box_and_the_opening_drop_empties_one_holding_cash(pit, tmp_path: Path):
    people = pit["people"]
    supervisor = people["salesvadove-tor"]
    session = table_open(
        table=GamingTable.objects.get(number="AR1"), croupier=people["krupje-1-tor"], pieces={}, user=supervisor
    )
    slip = slip_request(session=session, kind="to_table", pieces={Item.CHIP_5: 40}, user=supervisor)
    slip_confirm(slip=slip_issue(slip=slip, user=people["pamainosvadove-tor"]), user=supervisor)
    drop_box = TablePlaces.objects.get(table__number="AR1").drop_box

    def buy_in(cash: str) -> None:
        chips = {Item.CHIP_5: int(Decimal(cash) / 5)}
        table_buy_in(session=session, cash=Decimal(cash), pieces=chips, seat=1, user=supervisor)

    # A buy-in on the pit's page before any simulation: the opening drop empties the box as its books say.
    buy_in("35.00")
    opened = command("count_room", "--opening", "table:AR1", "table:BJ1")
    assert "(table AR1): expected 35.00, counted 35.00, difference 0.00" in opened
    assert place_balances(drop_box)[Item.CASH] == 0
    assert list(DroppedBox.objects.values_list("table__number", flat=True)) == ["AR1"]  # BJ1's box held nothing
    assert command("count_room", "--opening", "table:AR1") == "No box to count.\n"

    # The simulator's count: what the box holds, notes by value.
    buy_in("70.00")
    [box] = _count(tmp_path, {"table:AR1": {"notes": {"50": 1, "20": 1}}})
    assert (box["table"], box["machine"], box["expected"], box["counted"], box["difference"]) == (
        "AR1",
        None,
        "70.00",
        "70.00",
        "0.00",
    )
    assert box["missing"] == box["suspicious"] == []
    # A note short shows as exactly that; a box holds no more than what was counted after its approval.
    buy_in("45.00")
    [box] = _count(tmp_path, {"table:AR1": {"notes": {"20": 1, "5": 1}}})
    assert (box["expected"], box["counted"], box["difference"]) == ("45.00", "25.00", "-20.00")
    assert place_balances(drop_box)[Item.CASH] == 0
    assert _table_win("AR1") == 0  # the table is still open: its result is posted at its closing


def test_count_room_refuses_a_table_it_does_not_know_and_writes_nothing(pit, tmp_path: Path):
    with pytest.raises(CommandError, match="no table:ZZ9 in TOR"):
        _count(tmp_path, {"table:AR1": {"notes": {}}, "table:ZZ9": {"notes": {"50": 1}}})
    assert not DroppedBox.objects.exists()

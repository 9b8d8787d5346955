"""The gaming day's result (issue 25): each machine's and table's result from the counted boxes and the system's
records, the casino's total and turnover; the day closed by a manager once every box is counted, and changed after
only by an adjustment with its reason."""

import datetime as dt
from decimal import Decimal

import pytest
import time_machine
from django.db import IntegrityError, transaction

from cashdesk.dashboard import count_room_today
from cashdesk.errors import CashDeskError
from cashdesk.gaming_day import statement
from cashdesk.models import CashTransaction, DropRun, GamingDayClose, Leg, TransactionKind
from cashdesk.services.count_room import box_remove, count_approve, drop_start
from cashdesk.services.gaming_day import gaming_day_adjust, gaming_day_close
from cashdesk.services.tables import table_buy_in, table_close, table_open
from cashdesk.statement_pdf import statement_pdf
from machines.chains import journals
from machines.models import Machine
from tests.cashdesk.test_count_room import counted_by_two, notes_meter, played_in, staff, team  # noqa: F401
from tests.cashdesk.test_kiosks import assert_books_balance
from tests.cashdesk.test_table_day import FLOAT
from tests.conftest import MachineClient

pytestmark = pytest.mark.django_db
VILNIUS = dt.timezone(dt.timedelta(hours=2))
DAY = dt.date(2026, 12, 3)


@pytest.fixture
def counted_day(casino, machine, make_api, team, table, croupier, pit_supervisor):  # noqa: F811
    """Gaming day 3 December: machine 1001 took 100 EUR of notes and a 12.50 and a 7.00 ticket, printed by
    machine 2002; table AR1 sold 200 EUR of chips and its player left with 50 of them (a win of 150); the drop and
    the count at night, 20 EUR too many notes in the machine's box."""
    with time_machine.travel(dt.datetime(2026, 12, 3, 20, 0, tzinfo=VILNIUS), tick=True):
        printer, into = make_api(asset_number="2002"), MachineClient(machine)
        notes_meter(machine, "1000")
        tickets = [played_in(printer, into, "12.50"), played_in(printer, into, "7.00")]
        notes_meter(machine, "1100")
        session = table_open(table=table, croupier=croupier, pieces=FLOAT, user=pit_supervisor)
        table_buy_in(session=session, cash=Decimal("200.00"), pieces={"chip_100": 2}, seat=1, user=pit_supervisor)
        table_close(
            session=session,
            pieces={**FLOAT, "chip_100": FLOAT["chip_100"] - 2, "chip_25": FLOAT["chip_25"] + 6},
            user=pit_supervisor,
        )
        drop = drop_start(casino=casino, user=team["attendant"], witness=team["security"])
        boxes = [
            box_remove(drop=drop, user=team["attendant"], machine=machine, box_number="B-1001"),
            box_remove(drop=drop, user=team["attendant"], table=table, box_number="T-AR1"),
        ]
        counted_by_two(boxes[0], team, {"100": 1, "20": 1}, tickets)
        counted_by_two(boxes[1], team, {"100": 2})
        count_approve(drop=drop, user=team["supervisor"], reasons={boxes[0].pk: "acceptor_jam"})
    return drop


def test_the_day_s_result_per_machine_table_and_casino(casino, counted_day):
    rows = {row["key"]: row for row in statement(casino, DAY).rows}
    machine = rows["machine:1001"]
    assert (machine["notes"], machine["tickets_in"], machine["tickets_out"]) == (Decimal("120"), Decimal("19.5"), 0)
    assert machine["result"] == Decimal("139.50")
    assert rows["machine:2002"]["result"] == Decimal("-19.50")  # it printed the tickets played into 1001
    table = rows["table:AR1"]
    assert (table["table_win"], table["count_difference"], table["result"]) == (Decimal("150"), 0, Decimal("150"))
    assert table["turnover"] == Decimal("200.00")
    total = rows["casino"]
    assert total["result"] == Decimal("139.50") - Decimal("19.50") + Decimal("150")
    # The notes and the table's drop in the statement are what the count put into the vault.
    into_vault = sum(
        leg.amount for leg in Leg.objects.filter(transaction__kind=TransactionKind.BOX_COUNT, desk__kind="vault")
    )
    assert total["notes"] + table["turnover"] == into_vault
    assert_books_balance(casino)


def test_the_manager_closes_the_day_once_all_is_counted_and_then_only_adjusts_it(casino, counted_day, table):
    manager = staff(casino, "vadovas", "manager")
    with (
        time_machine.travel(dt.datetime(2026, 12, 3, 23, 0, tzinfo=VILNIUS)),
        pytest.raises(CashDeskError, match="once it is over"),
    ):
        gaming_day_close(casino=casino, day=DAY, user=manager)
    with time_machine.travel(dt.datetime(2026, 12, 4, 12, 0, tzinfo=VILNIUS)):
        closed = gaming_day_close(casino=casino, day=DAY, user=manager, operation_key="close-1")
        assert gaming_day_close(casino=casino, day=DAY, user=manager, operation_key="close-1") == closed
        with pytest.raises(CashDeskError, match="closed already"):
            gaming_day_close(casino=casino, day=DAY, user=manager)
        with pytest.raises(IntegrityError), transaction.atomic():
            GamingDayClose.objects.filter(pk=closed.pk).update(figures={})
        before = statement(casino, DAY).rows[-1]["result"]
        gaming_day_adjust(
            closed=closed, line="table:AR1", amount=Decimal("-25.00"), reason="Tray miscounted", user=manager
        )
        after = statement(casino, DAY)
    adjustment = [row for row in after.rows if row.get("_adjustment")]
    assert [(row["key"], row["result"]) for row in adjustment] == [("table:AR1", Decimal("-25.00"))]
    assert after.rows[-1]["result"] == before - 25
    assert GamingDayClose in journals()
    pdf = statement_pdf(after)
    assert pdf.startswith(b"%PDF")


def test_a_day_with_a_box_not_counted_does_not_close(casino, machine, team):  # noqa: F811
    manager = staff(casino, "vadovas", "manager")
    with time_machine.travel(dt.datetime(2026, 12, 3, 20, 0, tzinfo=VILNIUS), tick=True):
        drop = drop_start(casino=casino, user=team["attendant"], witness=team["security"])
        box_remove(drop=drop, user=team["attendant"], machine=machine, box_number="B-1", bills_in=Decimal("50"))
    with time_machine.travel(dt.datetime(2026, 12, 4, 12, 0, tzinfo=VILNIUS)):
        with pytest.raises(CashDeskError, match="B-1"):
            gaming_day_close(casino=casino, day=DAY, user=manager)
        assert statement(casino, DAY).uncounted[0].box_number == "B-1"
    assert not CashTransaction.objects.filter(kind=TransactionKind.BOX_COUNT).exists()


def test_the_dashboard_shows_the_boxes_out_the_last_count_and_yesterday_s_result(casino, counted_day, machine, team):  # noqa: F811
    with time_machine.travel(dt.datetime(2026, 12, 4, 12, 0, tzinfo=VILNIUS)):
        drop = drop_start(casino=casino, user=team["attendant"], witness=team["security"])
        box_remove(drop=drop, user=team["attendant"], machine=machine, box_number="B-2", bills_in=Decimal("1200"))
        tile = count_room_today(casino, dt.date(2026, 12, 4))
    assert tile.waiting == 1
    assert tile.last_differences == [Decimal("20.00")]  # the 20 too many in machine 1001's box on the 3rd
    assert (tile.yesterday, tile.yesterday_result, tile.yesterday_closed) == (DAY, Decimal("270.00"), False)


def test_a_day_with_a_drop_run_not_approved_does_not_close_and_a_closed_day_takes_no_box(casino, counted_day, team):  # noqa: F811
    manager = staff(casino, "vadovas", "manager")
    late = Machine.objects.get(casino=casino, asset_number="2002")
    with time_machine.travel(dt.datetime(2026, 12, 3, 21, 0, tzinfo=VILNIUS)):
        open_run = drop_start(casino=casino, user=team["attendant"], witness=team["security"])
    with time_machine.travel(dt.datetime(2026, 12, 4, 12, 0, tzinfo=VILNIUS)):
        with pytest.raises(CashDeskError, match="not approved"):
            gaming_day_close(casino=casino, day=DAY, user=manager)
        count_approve(drop=open_run, user=team["supervisor"], reasons={})  # nothing was taken out on it
        gaming_day_close(casino=casino, day=DAY, user=manager)
    reopened = DropRun.objects.create(
        casino=casino,
        gaming_day=DAY,
        started_by=team["attendant"],
        witness=team["security"],
        started_at=open_run.started_at,
    )
    with pytest.raises(CashDeskError, match="closed"):
        box_remove(drop=reopened, user=team["attendant"], machine=late, box_number="B-9", bills_in=Decimal("1"))

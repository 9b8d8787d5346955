"""The count at once (issue 25): two approvals of one count post once, and two counters sending the agreeing count
of one box at once set it once. The harness proves the loser waited on the winner's lock."""

from collections import Counter

import pytest

from cashdesk.books import place_balances
from cashdesk.errors import CashDeskError
from cashdesk.items import Item
from cashdesk.models import BoxTally, CashTransaction, DropRun, TransactionKind
from cashdesk.services.count_room import box_arrive, box_remove, box_tally, count_approve, drop_start
from tests.cashdesk.test_count_room import counted_by_two, slot, team  # noqa: F401 (fixtures)
from tests.cashdesk.test_kiosks import assert_books_balance
from tests.races import race

pytestmark = pytest.mark.django_db(transaction=True)


def _outcome(result):
    return result.code if isinstance(result, CashDeskError) else type(result).__name__


def test_a_count_approved_twice_at_once_posts_once(casino, vault, team, slot):  # noqa: F811
    machine, tickets = slot
    drop = drop_start(casino=casino, user=team["attendant"], witness=team["security"])
    counted_by_two(
        box_remove(drop=drop, user=team["attendant"], machine=machine, box_number="B-1"), team, {"100": 1}, tickets
    )
    vault_cash = place_balances(vault)[Item.CASH]
    approve = [
        lambda key=key: count_approve(drop=drop, user=team["supervisor"], reasons={}, operation_key=key)
        for key in ("first", "second")
    ]
    results = race(approve, gate=('SELECT 1 FROM "cashdesk_cashdesk" WHERE "id" = %s FOR UPDATE', [vault.pk]))

    assert Counter(_outcome(result) for result in results) == {"DropRun": 1, "count_approved": 1}
    assert CashTransaction.objects.filter(kind=TransactionKind.BOX_COUNT).count() == 1
    assert place_balances(vault)[Item.CASH] == vault_cash + 100
    assert DropRun.objects.get(pk=drop.pk).approved_by == team["supervisor"]
    assert_books_balance(casino)


def test_two_counters_at_once_on_one_box_take_turns(casino, team, slot):  # noqa: F811
    machine, tickets = slot
    drop = drop_start(casino=casino, user=team["attendant"], witness=team["security"])
    box = box_remove(drop=drop, user=team["attendant"], machine=machine, box_number="B-1")
    box_arrive(box=box, user=team["counter1"], box_number="B-1")
    count = [
        lambda user=user: box_tally(box=box, user=user, box_number="B-1", notes={"100": 1}, tickets=tickets)
        for user in (team["counter1"], team["counter2"])
    ]
    results = race(count, gate=('SELECT 1 FROM "cashdesk_droppedbox" WHERE "id" = %s FOR UPDATE', [box.pk]))

    # Both counts are written one after the other; the second finds the first and the box is agreed, once.
    assert Counter(_outcome(result) for result in results) == {"BoxTally": 2}
    box.refresh_from_db()
    assert box.counted is not None
    assert BoxTally.objects.filter(box=box).count() == 2

"""A count's differences posted to the books: every count of a place (a desk's shift, the vault, a kiosk's drop).

A count records what was counted and what the books expected, item by item, and posts each difference at once:
to over/short (a shortage or a surplus), or, for a place's very first count, to opening balances. After it, the
place's book balance is what was counted.
"""

import datetime as dt
from collections.abc import Mapping
from decimal import Decimal

from django.contrib.auth.models import User

from cashdesk.books import ZERO
from cashdesk.items import ALL_ITEMS, DENOMINATIONS
from cashdesk.models import Counterparty, Shift, ShiftCount, ShiftCountLine, TransactionKind
from cashdesk.services.ledger import Line, post_transaction
from machines.chains import chain_and_save
from machines.models import Place


def difference_lines(counted: Mapping[str, Decimal], book: Mapping[str, Decimal]) -> list[Line]:
    """What the books must move so that each counted item's balance becomes the count."""
    lines = []
    for item in ALL_ITEMS:
        if item not in counted:
            continue
        difference = counted[item] - book[item]
        if difference:
            count = int(difference / DENOMINATIONS[item]) if item in DENOMINATIONS else None
            lines.append(Line(item, difference, count))
    return lines


def _count_lines(counted: Mapping[str, Decimal], expected: Mapping[str, Decimal]) -> list[ShiftCountLine]:
    """A line per counted item: what was counted, what was expected, and the difference."""
    return [
        ShiftCountLine(
            item=item,
            counted_amount=counted[item],
            expected_amount=expected[item],
            variance=counted[item] - expected[item],
        )
        for item in ALL_ITEMS
        if item in counted
    ]


def _posted_as(*, opening: bool, table_result: bool) -> tuple[str, str]:
    """The kind of a count's posting and the other side of its differences."""
    if opening:
        return TransactionKind.OPENING_BALANCE, Counterparty.OPENING
    if table_result:
        return TransactionKind.TABLE_RESULT, Counterparty.TABLE_WIN
    return TransactionKind.COUNT, Counterparty.OVER_SHORT


def count_differences_post(
    *,
    place: Place,
    shift: Shift | None,
    kind: str,
    user: User,
    counted: Mapping[str, Decimal],
    book: Mapping[str, Decimal],
    at: dt.datetime,
    note: str,
    opening: bool = False,
    table_result: bool = False,
    approved_by: User | None = None,
    operation_key: str | None = None,
) -> ShiftCount:
    """Write the count of `place` (the items in `counted`, against the `book` balances) and post its differences.

    Call with the place's row locked. An `opening` count (the place's first) has nothing to compare with: it is its
    own expectation, and what it holds beyond the books enters them from opening balances. A table's closing count
    (`table_result`) posts its differences as the table's result: the chips the players lost to the tray, or won
    from it, during play.
    """
    lines = difference_lines(counted, book)
    posting = None
    posted_as, counterparty = _posted_as(opening=opening, table_result=table_result)
    if lines:
        posting = post_transaction(
            shift=shift,
            desk=place,
            kind=posted_as,
            amount=sum((abs(line.amount) for line in lines), ZERO),
            lines=lines,
            user=user,
            counterparty=counterparty,
            note=note,
            approved_by=approved_by,
            at=at,
        )
    count = ShiftCount(
        desk=place,
        shift=shift,
        kind=kind,
        counted_by=user,
        counted_at=at,
        transaction=posting,
        operation_key=operation_key or None,
    )
    lines_counted = _count_lines(counted, counted if opening else book)
    # One chained record with its lines, after the posting's chain (the chains' one order: machines.chains).
    chain_and_save(count, casino_id=place.casino_id, children={"lines": lines_counted})
    for line in lines_counted:
        line.count = count
    ShiftCountLine.objects.bulk_create(lines_counted)
    return count

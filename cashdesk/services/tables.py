"""The gaming tables as the books see them (issue 24): each made with its chip tray and drop box, opened with a
count of its tray and a croupier named, closed with a count that posts the table's result.

A table's operations take its tray's row lock first (two pit terminals on one table take turns), then the drop
box's (the books lock it, after the tray: they are made in that order, and the books lock in id order).
"""

import datetime as dt
from collections.abc import Mapping
from decimal import ROUND_CEILING, Decimal

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Sum
from django.utils import timezone
from django.utils.translation import gettext as _

from cashdesk.books import ZERO, place_balances
from cashdesk.errors import CashDeskError
from cashdesk.items import CHIPS, DENOMINATIONS, Item
from cashdesk.models import (
    CashTransaction,
    ColourChips,
    Counterparty,
    Leg,
    ShiftCount,
    TableBuyIn,
    TablePlaces,
    TableSession,
    TransactionKind,
)
from cashdesk.models.tables import COLOUR_CHIP_VALUES, LEARNING_CHIP, SEATS, ChipColour
from cashdesk.services.counts import count_differences_post
from cashdesk.services.ledger import identification_logged, post_transaction
from cashdesk.services.once import COLOUR_RETURN, DESK_TRANSACTION, TABLE_CLOSING, TABLE_OPENING
from cashdesk.services.posting import Legs, Line
from casino_office.money import format_money
from compliance.models import Person
from compliance.services import IdentityDetails
from machines.models import Casino, GamingTable, Place, TableGame
from staff.models import StaffAssignment


def table_create(*, casino: Casino, number: str, game: str, area: str = "") -> GamingTable:
    """A gaming table with its chip tray and its drop box (places in the books, empty), in one transaction.

    They hold chips and the buy-ins' cash: no shifts, no cash limit of a desk's.
    """
    with transaction.atomic():
        table = GamingTable.objects.create(casino=casino, number=number, game=game, area=area)
        places = {
            kind: Place.objects.create(
                casino=casino,
                kind=kind,
                code=f"{prefix}-{number}",
                name=name % {"table": number},
                cash_limit_enforced=False,
            )
            for kind, prefix, name in (
                (Place.Kind.TRAY, "TRAY", _("Chip tray %(table)s")),
                (Place.Kind.DROP_BOX, "DROP", _("Drop box %(table)s")),
            )
        }
        TablePlaces.objects.create(table=table, tray=places[Place.Kind.TRAY], drop_box=places[Place.Kind.DROP_BOX])
    return table


def lock_table(table: GamingTable) -> TablePlaces:
    """The table's places with its tray's row locked: the table's operations one at a time. Call in a transaction."""
    books = TablePlaces.objects.select_related("table", "drop_box").get(table_id=table.pk)
    books.tray = Place.objects.select_for_update(of=("self",)).select_related("casino").get(pk=books.tray_id)
    return books


def tray_counted(pieces: Mapping[str, int]) -> dict[str, Decimal]:
    """A tray's count by denomination (pieces of each value chip, a missing one none) as amounts."""
    if any(item not in CHIPS for item in pieces):
        raise CashDeskError("not_a_chip", _("A chip tray holds value chips only."))
    if any(count < 0 for count in pieces.values()):
        raise CashDeskError("negative_count", _("A count cannot be below zero."))
    return {item: DENOMINATIONS[item] * pieces.get(item, 0) for item in CHIPS}


def chip_lines(chips: Mapping[str, Decimal], sign: int) -> list[Line]:
    """A count's chips as lines into (+1) or out of (-1) a place."""
    return [
        Line(item, sign * amount, sign * int(amount / DENOMINATIONS[item])) for item, amount in chips.items() if amount
    ]


def _check_seat(seat: int) -> None:
    if not 1 <= seat <= SEATS:
        raise CashDeskError("invalid_seat", _("Choose a seat from 1 to %(seats)s.") % {"seats": SEATS})


def playing(session_id: int) -> TableSession:
    """The session, re-read under the table's lock, still open: chips change hands only during play."""
    session = TableSession.objects.get(pk=session_id)
    if not session.is_open:
        raise CashDeskError("table_closed", _("This table is closed: open it with a count first."))
    return session


def _check_croupier(casino: Casino, croupier: User, user: User) -> None:
    if croupier.pk == user.pk:
        raise CashDeskError("croupier_is_supervisor", _("The croupier and the pit supervisor are two people."))
    if not croupier.is_active or not StaffAssignment.objects.filter(user=croupier, casino=casino).exists():
        raise CashDeskError("croupier_not_staff", _("The croupier must be a member of this casino's staff."))


def open_session(table: GamingTable) -> TableSession | None:
    return TableSession.objects.filter(table=table, closed_at__isnull=True).first()


def table_open(
    *, table: GamingTable, croupier: User, pieces: Mapping[str, int], user: User, operation_key: str | None = None
) -> TableSession:
    """Open a table: its tray counted by the pit supervisor with the croupier, against the books (its last closing).

    The tray's first count ever brings its chips into the books (opening balances); a later one posts a difference
    from the last closing to over/short, with both names.
    """
    counted = tray_counted(pieces)
    with transaction.atomic():
        books = lock_table(table)
        return TABLE_OPENING.once(
            operation_key,
            user=user,
            run=lambda: _open(books, croupier=croupier, counted=counted, user=user, operation_key=operation_key),
        )


def _open(
    books: TablePlaces, *, croupier: User, counted: dict[str, Decimal], user: User, operation_key: str | None
) -> TableSession:
    table, tray = books.table, books.tray
    if open_session(table) is not None:
        raise CashDeskError("table_open", _("Table %(table)s is open already.") % {"table": table.number})
    _check_croupier(tray.casino, croupier, user)
    at = timezone.now()
    count = count_differences_post(
        place=tray,
        shift=None,
        kind=ShiftCount.Kind.TRAY,
        user=user,
        counted=counted,
        book=place_balances(tray),
        at=at,
        note=_("Table %(table)s opened, croupier %(croupier)s") % {"table": table.number, "croupier": croupier},
        opening=not ShiftCount.objects.filter(desk=tray).exists(),
    )
    session = TableSession.objects.create(
        table=table,
        croupier=croupier,
        opened_by=user,
        opened_at=at,
        opening_count=count,
        opening=sum(counted.values(), ZERO),
        operation_key=operation_key or None,
    )
    GamingTable.objects.filter(pk=table.pk).update(is_open=True)
    return session


def table_close(
    *, session: TableSession, pieces: Mapping[str, int], user: User, operation_key: str | None = None
) -> TableSession:
    """Close a table: its tray counted by the pit supervisor with the croupier; what it holds beyond the books is
    the table's result, posted against the table results (the casino's win or loss); the session keeps the
    result's parts: win = closing - opening + credits - fills + drop."""
    counted = tray_counted(pieces)
    with transaction.atomic():
        books = lock_table(session.table)
        return TABLE_CLOSING.once(
            operation_key,
            user=user,
            run=lambda: _close(books, session_id=session.pk, counted=counted, user=user, key=operation_key),
            pk=session.pk,
        )


def _close(
    books: TablePlaces, *, session_id: int, counted: dict[str, Decimal], user: User, key: str | None
) -> TableSession:
    session = TableSession.objects.get(pk=session_id)
    if not session.is_open:
        raise CashDeskError("table_closed", _("This table is closed already."))
    if user.pk == session.croupier_id:
        raise CashDeskError("croupier_is_supervisor", _("The croupier and the pit supervisor are two people."))
    if ColourChips.objects.filter(table_id=books.table_id, returned__isnull=True).exists():
        raise CashDeskError("colour_chips_out", _("Exchange the players' colour chips back before closing the table."))
    # Chips a slip moved at the cage but not yet in the books would be counted as the table's win or loss.
    if session.slips.filter(issued_at__isnull=False, confirmed_at__isnull=True, voided_at__isnull=True).exists():
        raise CashDeskError("slips_open", _("Confirm or void the table's issued fill and credit slips before closing."))
    tray = books.tray
    at = timezone.now()
    count = count_differences_post(
        place=tray,
        shift=None,
        kind=ShiftCount.Kind.TRAY,
        user=user,
        counted=counted,
        book=place_balances(tray),
        at=at,
        note=_("Table %(table)s closed, croupier %(croupier)s")
        % {"table": books.table.number, "croupier": session.croupier},
        table_result=True,
    )
    fills, credits = _fills_and_credits(tray, since=session.opened_at, until=at)
    session.closed_by, session.closed_at, session.closing_count, session.close_key = user, at, count, key or None
    session.fills, session.credits = fills, credits
    session.drop = _cash_in(books.drop_box, since=session.opened_at, until=at)
    session.closing = sum(counted.values(), ZERO)
    session.win = session.closing - session.opening + credits - fills + session.drop
    session.save()
    GamingTable.objects.filter(pk=books.table_id).update(is_open=False)
    return session


def _fills_and_credits(tray: Place, *, since: dt.datetime, until: dt.datetime) -> tuple[Decimal, Decimal]:
    """The chips a tray took from the cage (fills) and gave back to it (credits) between two moments."""
    legs = Leg.objects.filter(
        desk=tray,
        transaction__kind__in=[TransactionKind.TABLE_FILL, TransactionKind.TABLE_CREDIT],
        transaction__created_at__gte=since,
        transaction__created_at__lte=until,
    )
    fills = legs.filter(amount__gt=0).aggregate(total=Sum("amount"))["total"] or ZERO
    credits = legs.filter(amount__lt=0).aggregate(total=Sum("amount"))["total"] or ZERO
    return fills, -credits


def _cash_in(drop_box: Place, *, since: dt.datetime, until: dt.datetime) -> Decimal:
    """The cash that went into a drop box between two moments, as recorded at the table."""
    legs = Leg.objects.filter(
        desk=drop_box,
        item=Item.CASH,
        amount__gt=0,
        transaction__created_at__gte=since,
        transaction__created_at__lte=until,
    )
    return legs.aggregate(total=Sum("amount"))["total"] or ZERO


def table_buy_in(
    *,
    session: TableSession,
    cash: Decimal,
    pieces: Mapping[str, int],
    seat: int,
    user: User,
    person: Person | None = None,
    identity: IdentityDetails | None = None,
    operation_key: str | None = None,
) -> TableBuyIn:
    """Chips bought for cash at an open table: the cash into its drop box, the chips out of its tray to the player.

    Over the casino's threshold the person is identified first, with the desk's checks, and the buy-in is
    written in the register (`post_transaction`: refused otherwise, and the database refuses it too); the
    structuring and linked-day alerts see it with the desks' operations.
    """
    chips = tray_counted(pieces)
    if cash <= 0 or cash != cash.quantize(Decimal("0.01")):
        raise CashDeskError("invalid_amount", _("Type the cash taken in euros and cents, more than zero."))
    if sum(chips.values(), ZERO) != cash:
        raise CashDeskError(
            "chips_not_cash", _("The chips given must be worth the cash taken: %(cash)s.") % {"cash": cash}
        )
    _check_seat(seat)
    with identification_logged(casino=session.table.casino, user=user), transaction.atomic():
        books = lock_table(session.table)
        done = DESK_TRANSACTION.once(
            operation_key,
            user=user,
            run=lambda: _buy_in(
                books,
                session_id=session.pk,
                cash=cash,
                chips=chips,
                seat=seat,
                user=user,
                person=person,
                identity=identity,
                key=operation_key,
            ),
        )
    return done if isinstance(done, TableBuyIn) else done.buy_in_at_table


def _buy_in(
    books: TablePlaces,
    *,
    session_id: int,
    cash: Decimal,
    chips: dict[str, Decimal],
    seat: int,
    user: User,
    person: Person | None,
    identity: IdentityDetails | None,
    key: str | None,
) -> TableBuyIn:
    session = playing(session_id)
    given = chip_lines(chips, -1)
    legs: Legs = [
        (books.drop_box, Line(Item.CASH, cash)),
        (Counterparty.PLAYERS, Line(Item.CASH, -cash)),
        *((books.tray, line) for line in given),
        *((Counterparty.PLAYERS, line.negated()) for line in given),
    ]
    posting = post_transaction(
        shift=None,
        desk=books.tray,
        kind=TransactionKind.TABLE_BUY_IN,
        amount=cash,
        lines=[],
        legs=legs,
        user=user,
        person=person,
        identity=identity,
        note=_("Table %(table)s, seat %(seat)s") % {"table": books.table.number, "seat": seat},
        operation_key=key,
    )
    return TableBuyIn.objects.create(session=session, transaction=posting, seat=seat)


def table_exchange(
    *,
    session: TableSession,
    handed: Mapping[str, int],
    given: Mapping[str, int],
    seat: int,
    user: User,
    operation_key: str | None = None,
) -> CashTransaction:
    """Value chips for value chips of other denominations at an open table (a buy-in with chips, not cash): the
    chips handed in go into the tray, those given come out of it, worth the same. It moves no value: no cash, no
    drop, no register, and the table's result is what it was."""
    chips_in, chips_out = tray_counted(handed), tray_counted(given)
    value = sum(chips_in.values(), ZERO)
    if value <= 0:
        raise CashDeskError("invalid_count", _("Give the chips handed in by denomination: at least one."))
    if sum(chips_out.values(), ZERO) != value:
        raise CashDeskError(
            "chips_not_equal",
            _("The chips given must be worth the chips handed in: %(value)s.") % {"value": format_money(value)},
        )
    _check_seat(seat)
    with transaction.atomic():
        books = lock_table(session.table)
        return DESK_TRANSACTION.once(
            operation_key,
            user=user,
            run=lambda: _exchange(books, session.pk, chips_in, chips_out, value, seat, user, operation_key),
        )


def _exchange(
    books: TablePlaces,
    session_id: int,
    chips_in: dict[str, Decimal],
    chips_out: dict[str, Decimal],
    value: Decimal,
    seat: int,
    user: User,
    key: str | None,
) -> CashTransaction:
    playing(session_id)
    lines = [*chip_lines(chips_in, +1), *chip_lines(chips_out, -1)]
    return post_transaction(
        shift=None,
        desk=books.tray,
        kind=TransactionKind.TABLE_EXCHANGE,
        amount=value,
        lines=[],
        legs=[*((books.tray, line) for line in lines), *((Counterparty.PLAYERS, line.negated()) for line in lines)],
        user=user,
        note=_("Table %(table)s, seat %(seat)s") % {"table": books.table.number, "seat": seat},
        operation_key=key,
    )


def table_exchanges(session: TableSession) -> list[CashTransaction]:
    """The chip exchanges recorded at a table while the session was open."""
    tray = TablePlaces.objects.get(table_id=session.table_id).tray_id
    moves = CashTransaction.objects.filter(
        kind=TransactionKind.TABLE_EXCHANGE, desk_id=tray, created_at__gte=session.opened_at
    )
    if session.closed_at is not None:
        moves = moves.filter(created_at__lte=session.closed_at)
    return list(moves.order_by("created_at", "pk"))


def _colour_value(value: Decimal) -> Decimal:
    allowed = {Decimal(choice) for choice in COLOUR_CHIP_VALUES}
    if value not in allowed:
        choices = ", ".join(COLOUR_CHIP_VALUES)
        raise CashDeskError("colour_value", _("A colour chip is worth one of: %(values)s EUR.") % {"values": choices})
    return value


def colour_chips_issue(
    *,
    session: TableSession,
    colour: str,
    value: Decimal,
    pieces: Mapping[str, int],
    seat: int,
    user: User,
    operation_key: str | None = None,
) -> ColourChips:
    """Colour chips for a player at a roulette table (learning chips at any table), for value chips into the tray.

    One colour is one player's at one table until the chips are exchanged back.
    """
    value = _colour_value(value)
    if colour not in ChipColour.values:
        raise CashDeskError("colour_invalid", _("Choose one of the table's colours."))
    if value != Decimal(LEARNING_CHIP) and session.table.game != TableGame.AMERICAN_ROULETTE:
        raise CashDeskError("colour_not_roulette", _("Colour chips are played at roulette; learning chips anywhere."))
    _check_seat(seat)
    chips = tray_counted(pieces)
    total = sum(chips.values(), ZERO)
    if total <= 0 or total % value:
        raise CashDeskError(
            "colour_not_whole",
            _("The value chips handed in must make whole colour chips of %(value)s.") % {"value": value},
        )
    with transaction.atomic():
        books = lock_table(session.table)
        done = DESK_TRANSACTION.once(
            operation_key,
            user=user,
            run=lambda: _colour_issue(
                books,
                session_id=session.pk,
                colour=colour,
                value=value,
                chips=chips,
                seat=seat,
                user=user,
                key=operation_key,
            ),
        )
    return done if isinstance(done, ColourChips) else done.colour_chips_issued


def _colour_issue(
    books: TablePlaces,
    *,
    session_id: int,
    colour: str,
    value: Decimal,
    chips: dict[str, Decimal],
    seat: int,
    user: User,
    key: str | None,
) -> ColourChips:
    session = playing(session_id)
    if ColourChips.objects.filter(table_id=books.table_id, colour=colour, returned__isnull=True).exists():
        raise CashDeskError("colour_taken", _("Another player at this table has that colour: choose another."))
    handed = chip_lines(chips, +1)
    total = sum(chips.values(), ZERO)
    posting = post_transaction(
        shift=None,
        desk=books.tray,
        kind=TransactionKind.TABLE_COLOUR,
        amount=total,
        lines=[],
        legs=[
            *((books.tray, line) for line in handed),
            *((Counterparty.COLOUR_CHIPS, line.negated()) for line in handed),
        ],
        user=user,
        note=_("Table %(table)s, seat %(seat)s") % {"table": books.table.number, "seat": seat},
        operation_key=key,
    )
    return ColourChips.objects.create(
        session=session,
        table_id=books.table_id,
        colour=colour,
        value=value,
        seat=seat,
        issued=int(total / value),
        issued_by=user,
        issue=posting,
        operation_key=key or None,
    )


def colour_chips_due(chips: ColourChips, returned: int) -> Decimal:
    """The value chips a player gets back for `returned` colour chips: learning chips' sum rounded up to whole euros
    in the player's favour (2 or 78 of them give 1 EUR)."""
    due = chips.value * returned
    if chips.value == Decimal(LEARNING_CHIP):
        return due.to_integral_value(rounding=ROUND_CEILING).quantize(Decimal("0.01"))
    return due.quantize(Decimal("0.01"))


def colour_chips_return(
    *, chips: ColourChips, returned: int, pieces: Mapping[str, int], user: User, operation_key: str | None = None
) -> ColourChips:
    """A player's colour chips exchanged back to value chips out of the tray, at their table only, never for cash.

    The colour chips' value leaves the colour chips outstanding; what the player gets back beyond (or short of) it
    is the table's loss (or win) on them.
    """
    if returned < 0:
        raise CashDeskError("negative_count", _("A count cannot be below zero."))
    given = tray_counted(pieces)
    with transaction.atomic():
        books = lock_table(chips.table)
        return COLOUR_RETURN.once(
            operation_key,
            user=user,
            run=lambda: _colour_return(
                books, chips_id=chips.pk, returned=returned, given=given, user=user, key=operation_key
            ),
            pk=chips.pk,
        )


def _colour_return(
    books: TablePlaces, *, chips_id: int, returned: int, given: dict[str, Decimal], user: User, key: str | None
) -> ColourChips:
    chips = ColourChips.objects.select_related("issue").get(pk=chips_id)
    if not chips.is_out:
        raise CashDeskError("colour_returned", _("These colour chips were exchanged back already."))
    due = colour_chips_due(chips, returned)
    if sum(given.values(), ZERO) != due:
        raise CashDeskError(
            "chips_not_due", _("Give value chips worth %(due)s for the colour chips.") % {"due": format_money(due)}
        )
    outstanding = [
        Line(leg.item, -leg.amount, -leg.count if leg.count is not None else None)
        for leg in chips.issue.legs.filter(counterparty=Counterparty.COLOUR_CHIPS)
    ]
    paid = chip_lines(given, -1)
    legs: Legs = [
        *((Counterparty.COLOUR_CHIPS, line) for line in outstanding),
        *((Counterparty.TABLE_WIN, line.negated()) for line in outstanding),
        *((books.tray, line) for line in paid),
        *((Counterparty.TABLE_WIN, line.negated()) for line in paid),
    ]
    posting = post_transaction(
        shift=None,
        desk=books.tray,
        kind=TransactionKind.TABLE_COLOUR,
        amount=chips.issue.amount,
        lines=[],
        legs=legs,
        user=user,
        note=_("Table %(table)s, seat %(seat)s") % {"table": books.table.number, "seat": chips.seat},
    )
    chips.returned, chips.paid, chips.returned_by, chips.exchange, chips.return_key = (
        returned,
        due,
        user,
        posting,
        key or None,
    )
    chips.save(update_fields=["returned", "paid", "returned_by", "exchange", "return_key"])
    return chips

"""Fills and credits of a table's tray (issue 24): chips from the cage (a desk or the vault) to the tray and back,
each on a slip that two people sign.

The pit supervisor asks for it; the cashier of the cage's desk (or a shift supervisor at the vault) issues the
chips, or receives them; the books move when the pit supervisor confirms it at the table. Slips are numbered in
one unbroken series per casino and year, under the series' row lock, and are never deleted: a void is asked for
by one person and made by a shift supervisor, and stays in the series. Confirming locks the cage's row, then the
tray's (no table operation locks a cage), so the two never wait on each other in a circle.
"""

from collections.abc import Mapping
from decimal import Decimal

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from cashdesk.books import ZERO
from cashdesk.errors import CashDeskError
from cashdesk.items import DENOMINATIONS
from cashdesk.models import Shift, TablePlaces, TableSession, TableSlip, TableSlipSeries, TransactionKind
from cashdesk.services.ledger import post_transaction, refuse_while_counting
from cashdesk.services.once import SLIP_REQUEST
from cashdesk.services.posting import check_not_negative
from cashdesk.services.tables import chip_lines, lock_table, playing, tray_counted
from machines.models import Casino, Place
from machines.models.floor import cage_kinds

CAGES = cage_kinds()


def slip_request(
    *,
    session: TableSession,
    kind: str,
    pieces: Mapping[str, int],
    user: User,
    operation_key: str | None = None,
) -> TableSlip:
    """Ask for a fill (kind `to_table`) or a credit (`to_cage`) of the table's chips, numbered in the series; the
    cage is the one the casino sets for its tables (`table_cage`)."""
    chips = tray_counted(pieces)
    amount = sum(chips.values(), ZERO)
    if kind not in TableSlip.Kind.values:
        raise CashDeskError("slip_kind", _("A slip is a fill or a credit."))
    if amount <= 0:
        raise CashDeskError("invalid_count", _("Give the chips by denomination: at least one."))
    cage = table_cage(session.table.casino)
    with transaction.atomic():
        books = lock_table(session.table)
        return SLIP_REQUEST.once(
            operation_key,
            user=user,
            run=lambda: _request(books, session.pk, kind=kind, cage=cage, chips=chips, user=user, key=operation_key),
        )


def table_cage(casino: Casino) -> Place:
    """The cage of the casino's tables: the desk or the vault its settings name, the vault while none is named."""
    cage = casino.table_cage or Place.objects.filter(casino=casino, kind=Place.Kind.VAULT).first()
    if cage is None or cage.casino_id != casino.pk or cage.kind not in CAGES:
        raise CashDeskError("not_a_cage", _("Chips come from and go back to one of the casino's desks or its vault."))
    return cage


def _request(
    books: TablePlaces,
    session_id: int,
    *,
    kind: str,
    cage: Place,
    chips: dict[str, Decimal],
    user: User,
    key: str | None,
) -> TableSlip:
    """Under the table's lock: the session still in play, a credit's chips in the tray, the series' next number."""
    session = playing(session_id)
    if kind == TableSlip.Kind.CREDIT:
        check_not_negative(books.tray, chip_lines(chips, -1))
    now = timezone.now()
    year = timezone.localtime(now, books.tray.casino.zoneinfo).year
    series, _created = TableSlipSeries.objects.get_or_create(casino_id=books.table.casino_id, year=year)
    series = TableSlipSeries.objects.select_for_update().get(pk=series.pk)
    series.last_number += 1
    series.save(update_fields=["last_number"])
    return TableSlip.objects.create(
        casino_id=books.table.casino_id,
        year=year,
        number=series.last_number,
        table=books.table,
        session=session,
        kind=kind,
        cage=cage,
        chips={item: int(value / DENOMINATIONS[item]) for item, value in chips.items() if value},
        amount=sum(chips.values(), ZERO),
        requested_by=user,
        requested_at=now,
        operation_key=key or None,
    )


def _slip_chips(slip: TableSlip) -> dict[str, Decimal]:
    return {item: DENOMINATIONS[item] * count for item, count in slip.chips.items()}


def _cage_shift(cage: Place) -> Shift | None:
    return Shift.objects.filter(desk=cage, closed_at__isnull=True).first()


def _check_cage_person(cage: Place, user: User) -> None:
    """The cage's desk is issued from by the cashier of its open shift; the vault by a shift supervisor."""
    if cage.kind == Place.Kind.VAULT:
        if not user.has_perm("staff.supervise_desk"):
            raise CashDeskError("not_the_cage", _("Chips from the vault are issued by a shift supervisor."))
        return
    shift = _cage_shift(cage)
    if shift is None or shift.cashier_id != user.pk or not user.has_perm("staff.operate_desk"):
        raise CashDeskError(
            "not_the_cage", _("Only the cashier of %(desk)s's open shift issues from it.") % {"desk": cage.name}
        )


def slip_issue(*, slip: TableSlip, user: User) -> TableSlip:
    """The cage issues a fill's chips (or receives a credit's) and prints the slip; the books wait for the table."""
    with transaction.atomic():
        cage = Place.objects.select_for_update().get(pk=slip.cage_id)
        slip = TableSlip.objects.select_for_update().get(pk=slip.pk)
        if slip.issued_by_id == user.pk:
            return slip  # the same form again: it is issued already
        if slip.state != "requested" or slip.void_asked_by_id is not None:
            raise CashDeskError("slip_not_waiting", _("This slip is not waiting at the cage."))
        if user.pk == slip.requested_by_id:
            raise CashDeskError("same_person", _("The slip is signed by two people: someone else asked for it."))
        _check_cage_person(cage, user)
        if slip.kind == TableSlip.Kind.FILL:
            check_not_negative(cage, chip_lines(_slip_chips(slip), -1))
        slip.issued_by, slip.issued_at = user, timezone.now()
        slip.save(update_fields=["issued_by", "issued_at"])
        return slip


def slip_confirm(*, slip: TableSlip, user: User) -> TableSlip:
    """The pit supervisor confirms the slip at the table: the chips move in the books, cage to tray or back."""
    with transaction.atomic():
        cage = Place.objects.select_for_update(of=("self",)).select_related("casino").get(pk=slip.cage_id)
        books = lock_table(slip.table)
        slip = TableSlip.objects.select_for_update().get(pk=slip.pk)
        if slip.confirmed_by_id == user.pk:
            return slip  # the same form again: it is posted already
        if slip.state != "issued" or slip.void_asked_by_id is not None:
            raise CashDeskError("slip_not_issued", _("This slip has not been issued at the cage."))
        if user.pk == slip.issued_by_id:
            raise CashDeskError("same_person", _("The slip is signed by two people: someone else issued it."))
        playing(slip.session_id)
        shift = _cage_shift(cage) if cage.kind == Place.Kind.DESK else None
        if cage.kind == Place.Kind.DESK:
            if shift is None:
                raise CashDeskError("cage_closed", _("%(desk)s has no open shift.") % {"desk": cage.name})
            refuse_while_counting(shift)
        fill = slip.kind == TableSlip.Kind.FILL
        posting = post_transaction(
            shift=shift,
            desk=cage,
            kind=TransactionKind.TABLE_FILL if fill else TransactionKind.TABLE_CREDIT,
            amount=slip.amount,
            lines=chip_lines(_slip_chips(slip), -1 if fill else +1),
            user=user,
            other_place=books.tray,
            note=_("Slip %(number)s, table %(table)s") % {"number": slip.number_display, "table": books.table.number},
        )
        slip.confirmed_by, slip.confirmed_at, slip.transaction = user, posting.created_at, posting
        slip.save(update_fields=["confirmed_by", "confirmed_at", "transaction"])
        return slip


def slip_void_ask(*, slip: TableSlip, user: User, reason: str) -> TableSlip:
    """The first signature of a void: who asks, and why. The slip stays in the series."""
    reason = reason.strip()
    if not reason:
        raise CashDeskError("reason_required", _("Say why the slip is voided."))
    with transaction.atomic():
        slip = TableSlip.objects.select_for_update().get(pk=slip.pk)
        if slip.state not in ("requested", "issued") or slip.void_asked_by_id is not None:
            raise CashDeskError(
                "slip_not_voidable", _("Only a slip not yet posted, and not already voided, is voided.")
            )
        slip.void_asked_by, slip.void_reason = user, reason[:255]
        slip.save(update_fields=["void_asked_by", "void_reason"])
        return slip


def slip_void(*, slip: TableSlip, user: User) -> TableSlip:
    """The second signature: a shift supervisor who did not ask for the void."""
    if not user.has_perm("staff.supervise_desk"):
        raise CashDeskError("forbidden", _("A shift supervisor voids a slip."))
    with transaction.atomic():
        slip = TableSlip.objects.select_for_update().get(pk=slip.pk)
        if slip.void_asked_by_id is None or slip.state not in ("requested", "issued"):
            raise CashDeskError(
                "slip_not_voidable", _("Only a slip not yet posted, and not already voided, is voided.")
            )
        if user.pk == slip.void_asked_by_id:
            raise CashDeskError("same_person", _("A void is signed by two people: someone else asked for it."))
        slip.voided_by, slip.voided_at = user, timezone.now()
        slip.save(update_fields=["voided_by", "voided_at"])
        return slip


__all__ = ["slip_confirm", "slip_issue", "slip_request", "slip_void", "slip_void_ask"]

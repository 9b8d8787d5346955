"""Opening, handing over and closing a shift, and counting the vault: each a count posted to the books.

A count's differences from the book balance are posted at once: to over/short
(a shortage or a surplus), or, for a place's very first count, to opening
balances. After every count, a place's book balance is what was counted.
"""

from decimal import Decimal

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.db.models import Sum
from django.db.models.functions import Abs
from django.utils import timezone
from django.utils.translation import gettext as _

from cashdesk.books import ZERO, place_balances
from cashdesk.errors import CashDeskError
from cashdesk.items import ALL_ITEMS, DENOMINATIONS, Item
from cashdesk.models import (
    CountRequest,
    Shift,
    ShiftCount,
    ShiftCountLine,
    Transfer,
)
from cashdesk.services.counts import count_differences_post, difference_lines
from cashdesk.services.ledger import lock_shift
from cashdesk.services.once import COUNT, HANDOVER_TAKE_OVER
from machines.models import Place

MAX_COUNT_VALUE = Decimal("9999999999.99")
CENT = Decimal("0.01")


def count_amounts(counted: dict[str, Decimal | int]) -> dict[str, Decimal]:
    """EUR per item from a count: cash in euros, chips and tokens in pieces."""
    amounts = dict.fromkeys(ALL_ITEMS, ZERO)
    for item, quantity in counted.items():
        if item not in amounts:
            raise CashDeskError("invalid_count", _("Unknown item %(item)r.") % {"item": item})
        if quantity is None or quantity < 0:
            raise CashDeskError(
                "invalid_count", _("%(item)s: a count cannot be negative.") % {"item": Item(item).label}
            )
        if item == Item.CASH:
            value = Decimal(quantity)
            if value != value.quantize(Decimal("0.01")):
                raise CashDeskError("invalid_count", _("Cash is counted in euros and cents."))
            amounts[item] = value
        else:
            if Decimal(quantity) != int(quantity):
                raise CashDeskError("invalid_count", _("%(item)s: count whole pieces.") % {"item": Item(item).label})
            amounts[item] = DENOMINATIONS[item] * int(quantity)
        if amounts[item] > MAX_COUNT_VALUE:
            raise CashDeskError("invalid_count", _("%(item)s: the count is too large.") % {"item": Item(item).label})
    return amounts


def _check_difference_size(counted: dict[str, Decimal], book: dict[str, Decimal]) -> None:
    if sum((abs(line.amount) for line in difference_lines(counted, book)), ZERO) > MAX_COUNT_VALUE:
        raise CashDeskError("invalid_count", _("The count is too large; check the figures."))


def count_post(
    *,
    desk: Place,
    shift: Shift | None,
    kind: str,
    user: User,
    counted: dict[str, Decimal],
    book: dict[str, Decimal] | None = None,
    approved_by: User | None = None,
    operation_key: str | None = None,
) -> ShiftCount:
    """Record the count and post its differences, so that the place's book balance becomes the count.

    Call with the place's row locked. The expected figures are the book
    balance (`book`: the balance when a count that waited for approval was
    made, so what moved since stays in the books; it is posted when approved,
    and its request keeps when each person counted); a place's very first count has
    nothing to compare with, so it is its own expectation and its stock enters
    the books from opening balances.
    """
    book = book if book is not None else place_balances(desk)
    _check_difference_size(counted, book)
    return count_differences_post(
        place=desk,
        shift=shift,
        kind=kind,
        user=user,
        counted=counted,
        book=book,
        at=timezone.now(),
        note=kind,
        opening=not ShiftCount.objects.filter(desk=desk).exists(),
        approved_by=approved_by,
        operation_key=operation_key,
    )


def difference_over_limit(*, desk: Place, counted: dict[str, Decimal], book: dict[str, Decimal]) -> bool:
    """Whether any item's difference is larger than the casino's limit: then a second supervisor approves it.

    A place's first count is its opening balance, not a write-off.
    """
    if not ShiftCount.objects.filter(desk=desk).exists():
        return False
    limit = desk.casino.count_approval_limit
    today = unapproved_differences_today(desk)
    return any(
        today.get(item, ZERO) + abs(counted.get(item, ZERO) - book.get(item, ZERO)) > limit for item in ALL_ITEMS
    )


def unapproved_differences_today(desk: Place) -> dict[str, Decimal]:
    """Per item, the differences (taken whole, over or short) of the place's counts posted this gaming day on one
    person's word: a write-off split into counts each within the limit still reaches it (four eyes)."""
    casino = desk.casino
    begin, _finish = casino.gaming_day_bounds(casino.gaming_day(timezone.now()))
    rows = (
        ShiftCountLine.objects.filter(
            count__desk=desk,
            count__counted_at__gte=begin,
            count__transaction__isnull=False,
            count__transaction__approved_by__isnull=True,
        )
        .values("item")
        .annotate(total=Sum(Abs("variance")))
        .order_by()
    )
    return {row["item"]: row["total"] for row in rows}


def as_figures(amounts: dict[str, Decimal]) -> dict[str, str]:
    """A count as stored on its request: every item in euros and cents, so that equal counts compare equal."""
    return {item: str(amounts.get(item, ZERO).quantize(CENT)) for item in ALL_ITEMS}


def from_figures(figures: dict[str, str]) -> dict[str, Decimal]:
    return {item: Decimal(figures.get(item, "0")) for item in ALL_ITEMS}


def count_request_open(
    *,
    desk: Place,
    shift: Shift | None,
    kind: str,
    user: User,
    counted: dict[str, Decimal],
    book: dict[str, Decimal],
    status: str = CountRequest.Status.WAITING,
    next_cashier: User | None = None,
    operation_key: str | None = None,
    transfer: Transfer | None = None,
    asked_by: User | None = None,
) -> CountRequest:
    _check_difference_size(counted, book)
    try:
        with transaction.atomic():
            return CountRequest.objects.create(
                casino_id=desk.casino_id,
                desk=desk,
                shift=shift,
                kind=kind,
                counted_by=user,
                counted_at=timezone.now(),
                counted=as_figures(counted),
                expected=as_figures(book),
                next_cashier=next_cashier,
                transfer=transfer,
                asked_by=asked_by,
                status=status,
                operation_key=operation_key or None,
            )
    except IntegrityError:
        if operation_key and CountRequest.objects.filter(operation_key=operation_key).exists():
            raise CashDeskError("operation_key_used", _("This form was already used; open it again.")) from None
        raise CashDeskError(
            "count_waiting", _("A count of %(place)s already waits for a decision.") % {"place": desk.name}
        ) from None


def count_or_request(
    *,
    desk: Place,
    shift: Shift | None,
    kind: str,
    user: User,
    counted: dict[str, Decimal],
    book: dict[str, Decimal],
    operation_key: str | None = None,
) -> ShiftCount | CountRequest:
    """A count within the casino's limit posts now; one beyond it waits for a second supervisor (four eyes).

    Call with the place's row locked.
    """
    if difference_over_limit(desk=desk, counted=counted, book=book):
        return count_request_open(
            desk=desk, shift=shift, kind=kind, user=user, counted=counted, book=book, operation_key=operation_key
        )
    return count_post(
        desk=desk, shift=shift, kind=kind, user=user, counted=counted, book=book, operation_key=operation_key
    )


def shift_open(*, desk: Place, cashier: User, counted: dict[str, Decimal | int]) -> Shift:
    """Open a shift at the desk with the counted float. One open shift per desk and per cashier.

    The opening count's variance is against the desk's book balance: what the
    last shift's count left. Above the casino's limit it waits for a supervisor.
    """
    if desk.kind != Place.Kind.DESK:
        raise CashDeskError("not_a_desk", _("Shifts are worked at cash desks, not in the vault."))
    if not cashier.has_perm("staff.operate_desk"):
        raise CashDeskError("forbidden", _("Only cashiers open a cash-desk shift."))
    amounts = count_amounts(counted)
    try:
        with transaction.atomic():
            locked = Place.objects.select_for_update().get(pk=desk.pk)
            shift = Shift.objects.create(desk=locked, cashier=cashier, opened_at=timezone.now())
            book = place_balances(locked)
            # Far from what the last count left, the shift takes nothing until a supervisor approves.
            count_or_request(
                desk=locked, shift=shift, kind=ShiftCount.Kind.OPENING, user=cashier, counted=amounts, book=book
            )
    except IntegrityError:
        if Shift.objects.filter(desk=desk, closed_at__isnull=True).exists():
            raise CashDeskError("desk_busy", _("%(desk)s already has an open shift.") % {"desk": desk.name}) from None
        if Shift.objects.filter(cashier=cashier, closed_at__isnull=True).exists():
            raise CashDeskError("cashier_busy", _("You already have an open shift at another desk.")) from None
        raise
    return shift


def shift_close(
    *, shift: Shift, user: User, counted: dict[str, Decimal | int], operation_key: str | None = None
) -> ShiftCount | CountRequest:
    """Close with a count; each item's variance (counted - expected) is recorded and posted to over/short.

    A difference above the casino's limit is a request: the shift stays open, taking nothing, until a
    supervisor approves it (then it closes) or rejects it (the cashier counts again).
    """
    amounts = count_amounts(counted)
    with transaction.atomic():
        # Asked before the desk's lock: a twin that waited on it finds the shift closed (or its count waiting).
        return COUNT.once(
            operation_key, user=user, run=lambda: _close(shift=shift, user=user, counted=amounts, key=operation_key)
        )


def _close(*, shift: Shift, user: User, counted: dict[str, Decimal], key: str | None) -> ShiftCount | CountRequest:
    shift, desk = lock_shift(shift=shift, user=user)
    count = count_or_request(
        desk=desk,
        shift=shift,
        kind=ShiftCount.Kind.CLOSING,
        user=user,
        counted=counted,
        book=place_balances(desk),
        operation_key=key,
    )
    if isinstance(count, ShiftCount):
        Shift.objects.filter(pk=shift.pk).update(closed_at=count.counted_at)
    return count


def shift_handover(
    *,
    shift: Shift,
    user: User,
    counted: dict[str, Decimal | int],
    next_cashier: User,
    operation_key: str | None = None,
) -> CountRequest:
    """The outgoing cashier's count at a hand-over: the shift takes nothing more until the incoming cashier counts.

    The next shift opens when the incoming cashier's own count agrees (`handover_take_over`).
    """
    if next_cashier.pk == user.pk:
        raise CashDeskError("same_cashier", _("Hand over to another cashier."))
    if not next_cashier.has_perm("staff.operate_desk"):
        raise CashDeskError("forbidden", _("%(user)s is not a cashier.") % {"user": next_cashier})
    amounts = count_amounts(counted)
    with transaction.atomic():
        if (done := COUNT.earlier(operation_key, user=user)) is not None:
            if not isinstance(done, CountRequest):  # the key of another form: a hand-over always waits
                raise CashDeskError("operation_key_used", _("This form was already used; open it again."))
            return done
        shift, desk = lock_shift(shift=shift, user=user)
        if Shift.objects.filter(cashier=next_cashier, closed_at__isnull=True).exists():
            raise CashDeskError("cashier_busy", _("%(user)s already has an open shift.") % {"user": next_cashier})
        return count_request_open(
            desk=desk,
            shift=shift,
            kind=ShiftCount.Kind.HANDOVER,
            user=user,
            counted=amounts,
            book=place_balances(desk),
            status=CountRequest.Status.COUNTING,
            next_cashier=next_cashier,
            operation_key=operation_key,
        )


def handover_complete(*, request: CountRequest, stands: str, decided_by: User | None = None) -> Shift:
    """Close the outgoing shift and open the incoming one at the count that stands. Call with the desk locked.

    The difference from the books is the outgoing shift's (whoever's count stands, it is what was handed
    over); the incoming shift opens at that count, inheriting nothing. Each posted count names whose
    figures it holds.
    """
    outgoing = request.shift
    incoming = request.next_cashier
    if outgoing is None or incoming is None or request.next_counted is None:  # pragma: no cover - by the constraint
        raise CashDeskError("invalid_state", _("This hand-over has no incoming count yet."))
    desk = Place.objects.get(pk=request.desk_id)
    if stands == CountRequest.Stands.INCOMING:
        figures, counter = request.next_counted, incoming
    else:
        figures, counter = request.counted, outgoing.cashier
    standing = from_figures(figures)
    count = count_post(
        desk=desk,
        shift=outgoing,
        kind=ShiftCount.Kind.HANDOVER,
        user=counter,
        counted=standing,
        book=from_figures(request.expected),
        approved_by=decided_by,
    )
    closed_at = count.counted_at
    Shift.objects.filter(pk=outgoing.pk).update(closed_at=closed_at)
    try:
        with transaction.atomic():
            successor = Shift.objects.create(desk=desk, cashier=incoming, opened_at=closed_at, previous=outgoing)
    except IntegrityError:
        raise CashDeskError("cashier_busy", _("%(user)s already has an open shift.") % {"user": incoming}) from None
    count_post(
        desk=desk,
        shift=successor,
        kind=ShiftCount.Kind.OPENING,
        # Whose figures these are: the incoming cashier's, unless the outgoing count stood over theirs.
        user=incoming if request.next_counted == figures else counter,
        counted=standing,
    )
    request.count = count
    request.successor = successor
    request.stands = stands
    return successor


def handover_take_over(
    *, request: CountRequest, user: User, counted: dict[str, Decimal | int], operation_key: str | None = None
) -> CountRequest:
    """The incoming cashier's own count. Agreeing with the outgoing count, within the casino's limit, it opens
    the next shift; otherwise the hand-over waits for a supervisor's decision."""
    amounts = count_amounts(counted)
    if request.next_cashier_id != user.pk or not user.has_perm("staff.operate_desk"):
        raise CashDeskError("forbidden", _("Only the cashier this shift is handed over to counts it."))
    with transaction.atomic():
        Place.objects.select_for_update().get(pk=request.desk_id)
        request = CountRequest.objects.select_for_update().get(pk=request.pk)
        if HANDOVER_TAKE_OVER.earlier(operation_key, user=user, pk=request.pk) is not None:
            return request
        if request.status != CountRequest.Status.COUNTING:
            raise CashDeskError("already_counted", _("This hand-over has already been counted."))
        request.next_counted = as_figures(amounts)
        request.next_counted_at = timezone.now()
        request.next_operation_key = operation_key or None
        agreed = request.next_counted == request.counted
        over = difference_over_limit(
            desk=request.desk, counted=from_figures(request.counted), book=from_figures(request.expected)
        )
        if agreed and not over:
            handover_complete(request=request, stands=CountRequest.Stands.OUTGOING)
            request.status = CountRequest.Status.DONE
        else:
            request.status = CountRequest.Status.WAITING
        request.save()
    return request


def vault_count(
    *, vault: Place, user: User, counted: dict[str, Decimal | int], operation_key: str | None = None
) -> ShiftCount | CountRequest:
    """A supervisor counts the vault: its first count brings its stock into the books, later ones post variances.

    A difference above the casino's limit waits for a second supervisor's approval; the books keep their balance.
    """
    if not user.has_perm("staff.supervise_desk"):
        raise CashDeskError("forbidden", _("Only a shift supervisor counts the vault."))
    if vault.kind != Place.Kind.VAULT:
        raise CashDeskError("not_a_vault", _("Only the vault is counted here; desks count at their shifts."))
    amounts = count_amounts(counted)
    with transaction.atomic():
        locked = Place.objects.select_for_update().get(pk=vault.pk)
        return COUNT.once(
            operation_key,
            user=user,
            run=lambda: count_or_request(
                desk=locked,
                shift=None,
                kind=ShiftCount.Kind.VAULT,
                user=user,
                counted=amounts,
                book=place_balances(locked),
                operation_key=operation_key,
            ),
        )

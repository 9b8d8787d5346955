"""Opening, handing over and closing a shift, and counting the vault: each a count posted to the books.

A count's differences from the book balance are posted at once: to over/short
(a shortage or a surplus), or, for a place's very first count, to opening
balances. After every count, a place's book balance is what was counted.
"""

from decimal import Decimal

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from cashdesk.books import ZERO, place_balances
from cashdesk.errors import CashDeskError
from cashdesk.items import ALL_ITEMS, DENOMINATIONS, Item
from cashdesk.models import CashDesk, Counterparty, Shift, ShiftCount, ShiftCountLine, TransactionKind
from cashdesk.services.ledger import Line, lock_shift, post_transaction

MAX_COUNT_VALUE = Decimal("9999999999.99")


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


def _difference_lines(counted: dict[str, Decimal], expected: dict[str, Decimal]) -> list[Line]:
    lines = []
    for item in ALL_ITEMS:
        difference = counted[item] - expected[item]
        if difference:
            count = int(difference / DENOMINATIONS[item]) if item in DENOMINATIONS else None
            lines.append(Line(item, difference, count))
    return lines


def _write_count(
    *, desk: CashDesk, shift: Shift | None, kind: str, user: User, counted: dict[str, Decimal]
) -> ShiftCount:
    """Record the count and post its differences, so that the place's book balance becomes the count.

    Call with the place's row locked. The expected figures are the book
    balance; a place's very first count has nothing to compare with, so it is
    its own expectation and its stock enters the books from opening balances.
    """
    now = timezone.now()
    book = place_balances(desk)
    first_count = not ShiftCount.objects.filter(desk=desk).exists()
    expected = dict(counted) if first_count else book
    lines = _difference_lines(counted, book)
    if sum((abs(line.amount) for line in lines), ZERO) > MAX_COUNT_VALUE:
        raise CashDeskError("invalid_count", _("The count is too large; check the figures."))
    posting = None
    if lines:
        posting = post_transaction(
            shift=shift,
            desk=desk,
            kind=TransactionKind.OPENING_BALANCE if first_count else TransactionKind.COUNT,
            amount=sum((abs(line.amount) for line in lines), ZERO),
            lines=lines,
            user=user,
            counterparty=Counterparty.OPENING if first_count else Counterparty.OVER_SHORT,
            note=kind,
            at=now,
        )
    count = ShiftCount.objects.create(
        desk=desk, shift=shift, kind=kind, counted_by=user, counted_at=now, transaction=posting
    )
    ShiftCountLine.objects.bulk_create(
        ShiftCountLine(
            count=count,
            item=item,
            counted_amount=counted[item],
            expected_amount=expected[item],
            variance=counted[item] - expected[item],
        )
        for item in ALL_ITEMS
    )
    return count


def shift_open(*, desk: CashDesk, cashier: User, counted: dict[str, Decimal | int]) -> Shift:
    """Open a shift at the desk with the counted float. One open shift per desk and per cashier.

    The opening count's variance is against the desk's book balance: what the
    last shift's count left.
    """
    if desk.kind != CashDesk.Kind.DESK:
        raise CashDeskError("not_a_desk", _("Shifts are worked at cash desks, not in the vault."))
    if not cashier.has_perm("staff.operate_desk"):
        raise CashDeskError("forbidden", _("Only cashiers open a cash-desk shift."))
    amounts = count_amounts(counted)
    try:
        with transaction.atomic():
            locked = CashDesk.objects.select_for_update().get(pk=desk.pk)
            shift = Shift.objects.create(desk=locked, cashier=cashier, opened_at=timezone.now())
            _write_count(
                desk=locked,
                shift=shift,
                kind=ShiftCount.Kind.OPENING,
                user=cashier,
                counted=amounts,
            )
    except IntegrityError:
        if Shift.objects.filter(desk=desk, closed_at__isnull=True).exists():
            raise CashDeskError("desk_busy", _("%(desk)s already has an open shift.") % {"desk": desk.name}) from None
        if Shift.objects.filter(cashier=cashier, closed_at__isnull=True).exists():
            raise CashDeskError("cashier_busy", _("You already have an open shift at another desk.")) from None
        raise
    return shift


def shift_close(*, shift: Shift, user: User, counted: dict[str, Decimal | int]) -> ShiftCount:
    """Close with a count; each item's variance (counted - expected) is recorded and posted to over/short."""
    amounts = count_amounts(counted)
    with transaction.atomic():
        shift, desk = lock_shift(shift=shift, user=user)
        count = _write_count(
            desk=desk,
            shift=shift,
            kind=ShiftCount.Kind.CLOSING,
            user=user,
            counted=amounts,
        )
        Shift.objects.filter(pk=shift.pk).update(closed_at=count.counted_at)
    return count


def shift_handover(*, shift: Shift, user: User, counted: dict[str, Decimal | int], next_cashier: User) -> Shift:
    """Close this shift with a count and open the next cashier's with that count as its float."""
    if next_cashier.pk == user.pk:
        raise CashDeskError("same_cashier", _("Hand over to another cashier."))
    if not next_cashier.has_perm("staff.operate_desk"):
        raise CashDeskError("forbidden", _("%(user)s is not a cashier.") % {"user": next_cashier})
    amounts = count_amounts(counted)
    with transaction.atomic():
        shift, desk = lock_shift(shift=shift, user=user)
        count = _write_count(
            desk=desk,
            shift=shift,
            kind=ShiftCount.Kind.HANDOVER,
            user=user,
            counted=amounts,
        )
        Shift.objects.filter(pk=shift.pk).update(closed_at=count.counted_at)
        try:
            with transaction.atomic():
                successor = Shift.objects.create(
                    desk=desk, cashier=next_cashier, opened_at=count.counted_at, previous=shift
                )
        except IntegrityError:
            raise CashDeskError(
                "cashier_busy", _("%(user)s already has an open shift.") % {"user": next_cashier}
            ) from None
        _write_count(
            desk=desk,
            shift=successor,
            kind=ShiftCount.Kind.OPENING,
            user=next_cashier,
            counted=amounts,
        )
    return successor


def vault_count(*, vault: CashDesk, user: User, counted: dict[str, Decimal | int]) -> ShiftCount:
    """A supervisor counts the vault: its first count brings its stock into the books, later ones post variances."""
    if not user.has_perm("staff.supervise_desk"):
        raise CashDeskError("forbidden", _("Only a shift supervisor counts the vault."))
    if vault.kind != CashDesk.Kind.VAULT:
        raise CashDeskError("not_a_vault", _("Only the vault is counted here; desks count at their shifts."))
    amounts = count_amounts(counted)
    with transaction.atomic():
        locked = CashDesk.objects.select_for_update().get(pk=vault.pk)
        return _write_count(
            desk=locked,
            shift=None,
            kind=ShiftCount.Kind.VAULT,
            user=user,
            counted=amounts,
        )

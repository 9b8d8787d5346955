"""Opening, handing over and closing a shift, each with a count."""

from decimal import Decimal

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from cashdesk.errors import CashDeskError
from cashdesk.items import ALL_ITEMS, DENOMINATIONS, Item
from cashdesk.models import CashDesk, Shift, ShiftCount, ShiftCountLine
from cashdesk.services.ledger import ZERO, lock_shift, shift_balances


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
    return amounts


def _write_count(
    *, shift: Shift, kind: str, user: User, counted: dict[str, Decimal], expected: dict[str, Decimal]
) -> ShiftCount:
    count = ShiftCount.objects.create(shift=shift, kind=kind, counted_by=user, counted_at=timezone.now())
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

    The opening count's variance is against what the desk's last shift left.
    """
    if desk.kind != CashDesk.Kind.DESK:
        raise CashDeskError("not_a_desk", _("Shifts are worked at cash desks, not in the vault."))
    if not cashier.has_perm("cashdesk.operate_desk"):
        raise CashDeskError("forbidden", _("Only cashiers open a cash-desk shift."))
    amounts = count_amounts(counted)
    expected = dict(amounts)
    last = Shift.objects.filter(desk=desk, closed_at__isnull=False).order_by("-closed_at").first()
    if last is not None:
        left = {
            line.item: line.counted_amount
            for line in ShiftCountLine.objects.filter(count__shift=last, count__kind__in=["closing", "handover"])
        }
        expected = {item: left.get(item, ZERO) for item in ALL_ITEMS}
    try:
        with transaction.atomic():
            CashDesk.objects.select_for_update().get(pk=desk.pk)
            shift = Shift.objects.create(desk=desk, cashier=cashier, opened_at=timezone.now())
            _write_count(shift=shift, kind=ShiftCount.Kind.OPENING, user=cashier, counted=amounts, expected=expected)
    except IntegrityError:
        if Shift.objects.filter(desk=desk, closed_at__isnull=True).exists():
            raise CashDeskError("desk_busy", _("%(desk)s already has an open shift.") % {"desk": desk.name}) from None
        if Shift.objects.filter(cashier=cashier, closed_at__isnull=True).exists():
            raise CashDeskError("cashier_busy", _("You already have an open shift at another desk.")) from None
        raise
    return shift


def shift_close(*, shift: Shift, user: User, counted: dict[str, Decimal | int]) -> ShiftCount:
    """Close with a count; each item's variance (counted - expected) is recorded."""
    amounts = count_amounts(counted)
    with transaction.atomic():
        shift, _desk = lock_shift(shift=shift, user=user)
        count = _write_count(
            shift=shift, kind=ShiftCount.Kind.CLOSING, user=user, counted=amounts, expected=shift_balances(shift)
        )
        Shift.objects.filter(pk=shift.pk).update(closed_at=count.counted_at)
    return count


def shift_handover(*, shift: Shift, user: User, counted: dict[str, Decimal | int], next_cashier: User) -> Shift:
    """Close this shift with a count and open the next cashier's with that count as its float."""
    if next_cashier.pk == user.pk:
        raise CashDeskError("same_cashier", _("Hand over to another cashier."))
    if not next_cashier.has_perm("cashdesk.operate_desk"):
        raise CashDeskError("forbidden", _("%(user)s is not a cashier.") % {"user": next_cashier})
    amounts = count_amounts(counted)
    with transaction.atomic():
        shift, desk = lock_shift(shift=shift, user=user)
        count = _write_count(
            shift=shift, kind=ShiftCount.Kind.HANDOVER, user=user, counted=amounts, expected=shift_balances(shift)
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
            shift=successor, kind=ShiftCount.Kind.OPENING, user=next_cashier, counted=amounts, expected=amounts
        )
    return successor

"""The ledger: every cash-desk transaction and its movements are written here, and balances derived.

A transaction locks its desk's row first: receipt numbers stay gapless and
a balance checked before a payout cannot change until the payout commits.
"""

import datetime as dt
from collections import defaultdict
from dataclasses import dataclass
from decimal import Decimal

from django.contrib.auth.models import User
from django.db.models import Sum
from django.utils import timezone
from django.utils.translation import gettext as _

from cashdesk.errors import CashDeskError
from cashdesk.items import ALL_ITEMS, DENOMINATIONS, Item
from cashdesk.models import IDENTITY_KINDS, CashDesk, CashTransaction, Movement, Shift, ShiftCount, ShiftCountLine
from compliance.models import Person
from compliance.services import IdentificationRefused, alerts_evaluate, identification_check, register_entry_write
from tickets.models import Ticket
from tickets.money import format_money

ZERO = Decimal("0.00")


@dataclass(frozen=True)
class Line:
    """One item moving: + into the desk, - out of it. `count` is pieces for chips and tokens."""

    item: str
    amount: Decimal
    count: int | None = None


def cash(amount: Decimal) -> Line:
    return Line(Item.CASH, amount)


def pieces(item: str, count: int) -> Line:
    return Line(item, DENOMINATIONS[item] * count, count)


def lock_shift(*, shift: Shift, user: User) -> tuple[Shift, CashDesk]:
    """The cashier's own open shift, re-read after locking its desk (closing takes the same lock)."""
    desk = CashDesk.objects.select_for_update().select_related("casino").get(pk=shift.desk_id)
    locked = Shift.objects.get(pk=shift.pk)
    if locked.closed_at is not None:
        raise CashDeskError("shift_closed", _("This shift is closed."))
    if locked.cashier_id != user.pk:
        raise CashDeskError("not_your_shift", _("Only the cashier of this shift may work it."))
    if not user.has_perm("cashdesk.operate_desk"):
        raise CashDeskError("forbidden", _("Only cashiers work a cash-desk shift."))
    locked.desk = desk
    return locked, desk


def opening_amounts(shift: Shift) -> dict[str, Decimal]:
    lines = ShiftCountLine.objects.filter(count__shift=shift, count__kind=ShiftCount.Kind.OPENING)
    amounts = dict.fromkeys(ALL_ITEMS, ZERO)
    for line in lines:
        amounts[line.item] = line.counted_amount
    return amounts


def shift_balances(shift: Shift) -> dict[str, Decimal]:
    """Expected holdings of the desk in this shift: the opening count plus every movement."""
    balances = opening_amounts(shift)
    for row in Movement.objects.filter(shift=shift).values("item").annotate(total=Sum("amount")):
        balances[row["item"]] += row["total"]
    return balances


def vault_balance(desk: CashDesk) -> dict[str, Decimal]:
    balances: dict[str, Decimal] = defaultdict(lambda: ZERO)
    for row in Movement.objects.filter(desk=desk, shift__isnull=True).values("item").annotate(total=Sum("amount")):
        balances[row["item"]] = row["total"]
    return dict(balances)


def post_transaction(
    *,
    shift: Shift | None,
    desk: CashDesk,
    kind: str,
    amount: Decimal,
    lines: list[Line],
    user: User,
    person: Person | None = None,
    ticket: Ticket | None = None,
    note: str = "",
    approved_by: User | None = None,
    reverses: CashTransaction | None = None,
    at: dt.datetime | None = None,
    extra_lines: list[tuple[CashDesk, Line]] | None = None,
) -> CashTransaction:
    """Write a transaction with its movements. Call inside transaction.atomic() with the desk locked.

    Refuses an unidentified person above the casino's threshold and any
    movement that would take more of an item out of the desk than it holds.
    """
    casino = desk.casino
    at = at or timezone.now()
    needs_register = kind in IDENTITY_KINDS and amount > casino.identity_threshold
    if needs_register and person is None:
        raise CashDeskError(
            "identity_required",
            _("Over %(threshold)s: identify the person before this transaction.")
            % {"threshold": format_money(casino.identity_threshold)},
        )
    identification = None
    if person is not None:
        try:
            identification = identification_check(person=person, kind=kind, casino=casino, at=at)
        except IdentificationRefused as refused:
            raise CashDeskError(refused.code, refused.message) from None
    if shift is not None:
        balances = shift_balances(shift)
        for line in lines:
            if line.amount < 0 and balances[line.item] + line.amount < 0:
                raise CashDeskError(
                    "insufficient_stock",
                    _("The desk holds %(held)s in %(item)s; %(needed)s is needed.")
                    % {
                        "held": format_money(balances[line.item]),
                        "item": Item(line.item).label,
                        "needed": format_money(-line.amount),
                    },
                )
    desk.last_receipt_number += 1
    CashDesk.objects.filter(pk=desk.pk).update(last_receipt_number=desk.last_receipt_number)
    transaction_ = CashTransaction.objects.create(
        casino=casino,
        desk=desk,
        shift=shift,
        number=desk.last_receipt_number,
        kind=kind,
        amount=amount,
        person=person,
        identity_threshold=casino.identity_threshold,
        ticket=ticket,
        reverses=reverses,
        note=note[:255],
        created_by=user,
        approved_by=approved_by,
        created_at=at,
    )
    movements = [
        Movement(transaction=transaction_, desk=desk, shift=shift, item=line.item, count=line.count, amount=line.amount)
        for line in lines
        if line.amount != 0
    ]
    for other_desk, line in extra_lines or []:
        movements.append(
            Movement(
                transaction=transaction_,
                desk=other_desk,
                shift=None,
                item=line.item,
                count=line.count,
                amount=line.amount,
            )
        )
    Movement.objects.bulk_create(movements)
    if needs_register and identification is not None:
        register_entry_write(tx=transaction_, identification=identification)
    alerts_evaluate(tx=transaction_, identification=identification)
    return transaction_

"""The books: a balanced transaction posted with its legs, its receipt number and the places' limits.

A transaction locks its desk's row first (the caller does): receipt numbers
stay gapless, and a balance checked before money leaves cannot change until
the transaction commits. Every other physical place a transaction touches
(the vault) is locked here, always after the desk and in id order, so two
desks never deadlock on it. Who the money's person is, the register and the
alerts are the desk operation's (ledger.post_transaction), not the books'.
"""

import datetime as dt
from dataclasses import dataclass
from decimal import Decimal

from django.contrib.auth.models import User
from django.utils import timezone
from django.utils.translation import gettext as _

from cashdesk.books import ZERO, place_balances
from cashdesk.errors import CashDeskError
from cashdesk.items import DENOMINATIONS, Item
from cashdesk.models import CASH_IN_KINDS, COUNTERPARTY_OF_KIND, CashTransaction, Leg, MachineReceipt, Shift
from casino_office.money import format_money
from compliance.models import Person, Visit
from machines.chains import chain_and_save
from machines.models import Machine, Place
from tickets.models import Ticket


@dataclass(frozen=True)
class Line:
    """One item moving: + into the place, - out of it. `count` is pieces for chips and tokens."""

    item: str
    amount: Decimal
    count: int | None = None

    def negated(self) -> "Line":
        return Line(self.item, -self.amount, -self.count if self.count is not None else None)


def cash(amount: Decimal) -> Line:
    return Line(Item.CASH, amount)


def pieces(item: str, count: int) -> Line:
    return Line(item, DENOMINATIONS[item] * count, count)


# A leg's side: a physical place, or a counterparty (players, tickets outstanding, over/short...).
Legs = list[tuple[Place | str, Line]]


def desk_legs(*, desk: Place, kind: str, lines: list[Line], other: Place | str | None) -> Legs:
    """`lines` on the desk's side, and the same negated on the other's: a place, or by default the kind's
    counterparty."""
    other = other or COUNTERPARTY_OF_KIND[kind]
    return [(desk, line) for line in lines] + [(other, line.negated()) for line in lines]


@dataclass(frozen=True)
class Posting:
    """A transaction the books accept: its places locked and checked, its moment taken."""

    shift: Shift | None
    desk: Place
    kind: str
    amount: Decimal
    legs: Legs
    at: dt.datetime


def books_lock(
    *, shift: Shift | None, desk: Place, kind: str, amount: Decimal, legs: Legs, at: dt.datetime | None
) -> Posting:
    """Lock the places other than the desk (the caller locked it), then refuse any place going below zero and cash
    in above the desk's limit."""
    places = {place.pk: place for place, _line in legs if isinstance(place, Place)}
    for place_id in sorted(places):
        if place_id != desk.pk:  # the desk is locked by the caller; others after it, in id order
            places[place_id] = Place.objects.select_for_update().get(pk=place_id)
    # The moment is taken once every place is locked: a transaction that waited for a place comes after
    # whatever held it, in time as in the books.
    at = at or timezone.now()
    for place_id, place in places.items():
        check_not_negative(place, [line for p, line in legs if isinstance(p, Place) and p.pk == place_id])
    _check_cash_limit(desk, kind, [line for p, line in legs if isinstance(p, Place) and p.pk == desk.pk])
    return Posting(shift=shift, desk=desk, kind=kind, amount=amount, legs=legs, at=at)


def books_write(
    posting: Posting,
    *,
    user: User | None,
    person: Person | None,
    ticket: Ticket | None,
    machine_receipt: MachineReceipt | None,
    machine: Machine | None,
    note: str,
    approved_by: User | None,
    reverses: CashTransaction | None,
    operation_key: str | None,
    visit: Visit | None = None,
) -> CashTransaction:
    """Write the transaction under the desk's next receipt number, with its legs (each item sums to zero: a deferred
    trigger refuses it otherwise at commit), chained in the casino's books."""
    desk, casino = posting.desk, posting.desk.casino
    desk.last_receipt_number += 1
    Place.objects.filter(pk=desk.pk).update(last_receipt_number=desk.last_receipt_number)
    transaction_ = CashTransaction(
        casino=casino,
        desk=desk,
        shift=posting.shift,
        number=desk.last_receipt_number,
        kind=posting.kind,
        amount=posting.amount,
        person=person,
        identity_threshold=casino.identity_threshold,
        anonymous_limit=casino.anonymous_purchase_limit,
        visit=visit,
        ticket=ticket,
        machine_receipt=machine_receipt,
        reverses=reverses,
        note=note[:255],
        created_by=user,
        machine=machine,
        approved_by=approved_by,
        created_at=posting.at,
        operation_key=operation_key or None,
    )
    legs = [
        Leg(
            casino=casino,
            desk=place if isinstance(place, Place) else None,
            counterparty="" if isinstance(place, Place) else place,
            shift=posting.shift if isinstance(place, Place) and place.pk == desk.pk else None,
            item=line.item,
            count=line.count,
            amount=line.amount,
        )
        for place, line in posting.legs
        if line.amount != 0
    ]
    # The transaction and its legs are one record of the casino's chained books (machines.chains).
    chain_and_save(transaction_, casino_id=casino.pk, children={"legs": legs})
    for leg in legs:
        leg.transaction = transaction_
    Leg.objects.bulk_create(legs)
    return transaction_


def check_not_negative(desk: Place, lines: list[Line]) -> None:
    """A physical place never holds less than zero of anything (checked under its row lock)."""
    needed: dict[str, Decimal] = {}
    for line in lines:
        needed[line.item] = needed.get(line.item, ZERO) + line.amount
    if all(change >= 0 for change in needed.values()):
        return
    balances = place_balances(desk)
    for item, change in needed.items():
        if change < 0 and balances[item] + change < 0:
            # The shortage, not the holding: a blind-counting cashier learns only what is missing.
            short = -(balances[item] + change)
            values = {"place": desk.name, "item": Item(item).label, "short": format_money(short)}
            if item in DENOMINATIONS:
                values["pieces"] = str(int(short / DENOMINATIONS[item]))
                message = _("%(place)s does not hold enough %(item)s: %(pieces)s pcs (%(short)s) short.") % values
            else:
                message = _("%(place)s does not hold enough %(item)s: %(short)s short.") % values
            raise CashDeskError("insufficient_stock", message)


def _check_cash_limit(desk: Place, kind: str, lines: list[Line]) -> None:
    """Cash coming in may not take a desk above its limit (DOMAIN.md, "лимит кассы"); above it goes to the vault."""
    if kind not in CASH_IN_KINDS or desk.kind != Place.Kind.DESK or not desk.cash_limit_enforced:
        return
    incoming = sum((line.amount for line in lines if line.item == Item.CASH), ZERO)
    if incoming <= 0:
        return
    held = place_balances(desk)[Item.CASH]
    if held + incoming > desk.cash_limit:
        values = {"desk": desk.name, "limit": format_money(desk.cash_limit), "held": format_money(held)}
        if desk.casino.blind_count:  # the cashier counts blind: the refusal tells no balance
            message = _(
                "%(desk)s may hold at most %(limit)s and this would take it over: drop cash to the vault first."
            )
        else:
            message = _("%(desk)s may hold at most %(limit)s and holds %(held)s: drop cash to the vault first.")
        raise CashDeskError("over_cash_limit", message % values)

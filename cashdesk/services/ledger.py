"""Posting to the books: every cash-desk transaction and its legs are written here.

A transaction locks its desk's row first: receipt numbers stay gapless, and a
balance checked before money leaves cannot change until the transaction
commits. Every other physical place a transaction touches (the vault) is
locked here too, always after the desk, so two desks never deadlock on it.
"""

import datetime as dt
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from decimal import Decimal

from django.contrib.auth.models import User
from django.utils import timezone
from django.utils.translation import gettext as _

from cashdesk.books import ZERO, place_balances
from cashdesk.errors import CashDeskError
from cashdesk.items import DENOMINATIONS, Item
from cashdesk.models import (
    CASH_IN_KINDS,
    COUNTERPARTY_OF_KIND,
    IDENTITY_KINDS,
    CashTransaction,
    CountRequest,
    Leg,
    MachineReceipt,
    Shift,
)
from compliance.models import Person
from compliance.services import (
    CashOperation,
    IdentificationRefused,
    IdentityDetails,
    IdentityMismatch,
    PersonError,
    alerts_evaluate,
    identification_check,
    identity_mismatch_record,
    person_resolve,
    register_entry_write,
)
from machines.models import Machine, Place
from tickets.models import Ticket
from tickets.money import format_money

__all__ = [
    "ZERO",
    "IdentityMismatchRefused",
    "Line",
    "cash",
    "identification_logged",
    "lock_shift",
    "pieces",
    "post_transaction",
    "vault_of",
]


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


def lock_shift(*, shift: Shift, user: User) -> tuple[Shift, Place]:
    """The cashier's own open shift, re-read after locking its desk (closing takes the same lock).

    The lock is taken on the desk row alone, with no join: after waiting on
    it, PostgreSQL re-reads only the locked row.
    """
    desk = Place.objects.select_for_update().get(pk=shift.desk_id)
    locked = Shift.objects.get(pk=shift.pk)
    if locked.closed_at is not None:
        raise CashDeskError("shift_closed", _("This shift is closed."))
    if locked.cashier_id != user.pk:
        raise CashDeskError("not_your_shift", _("Only the cashier of this shift may work it."))
    if not user.has_perm("staff.operate_desk"):
        raise CashDeskError("forbidden", _("Only cashiers work a cash-desk shift."))
    refuse_while_counting(locked)
    locked.desk = desk
    return locked, desk


def refuse_while_counting(shift: Shift) -> None:
    """Nothing moves in a shift whose count (a close, a hand-over) waits: not the cashier's work, nor a
    supervisor's approval of what the shift asked for, or the count would be written off against moved books.
    Call with the shift's desk locked."""
    if CountRequest.objects.filter(shift=shift, status__in=CountRequest.OPEN).exists():
        raise CashDeskError(
            "count_waiting", _("This shift's count waits for a decision; nothing more is done in it until then.")
        )


def vault_of(casino_id: int) -> Place:
    """The casino's vault, where fills come from and drops go (desks' and kiosks' alike)."""
    vault = Place.objects.filter(casino_id=casino_id, kind=Place.Kind.VAULT).first()
    if vault is None:
        raise CashDeskError("no_vault", _("This casino has no vault set up."))
    return vault


class IdentityMismatchRefused(CashDeskError):
    """The code or document typed names a stored person with other details; `person_id` is for the access log."""

    def __init__(self, code: str, message: str, *, person_id: int) -> None:
        super().__init__(code, message)
        self.person_id = person_id


@contextmanager
def identification_logged(*, shift: Shift, user: User) -> Iterator[None]:
    """Around the money's transaction: a mismatch is written to the personal-data access log once it rolled back."""
    try:
        yield
    except IdentityMismatchRefused as refused:
        identity_mismatch_record(user=user, casino=shift.desk.casino, person_id=refused.person_id)
        raise


def _resolve_person(*, person: Person | None, identity: IdentityDetails | None, at: dt.datetime) -> Person | None:
    if person is not None or identity is None or not identity.given:
        return person
    try:
        return person_resolve(identity, at=at)
    except IdentityMismatch as mismatch:
        # Answered as an unknown code would be, code and all, unless the whole document was typed (issue 21).
        code = "identity_invalid" if mismatch.as_unknown else "identity_mismatch"
        raise IdentityMismatchRefused(code, str(mismatch), person_id=mismatch.person_id) from None
    except PersonError as error:
        raise CashDeskError("identity_invalid", str(error)) from None


def _check_not_negative(desk: Place, lines: list[Line]) -> None:
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


def post_transaction(
    *,
    shift: Shift | None,
    desk: Place,
    kind: str,
    amount: Decimal,
    lines: list[Line],
    user: User | None,
    person: Person | None = None,
    identity: IdentityDetails | None = None,
    ticket: Ticket | None = None,
    machine_receipt: MachineReceipt | None = None,
    note: str = "",
    approved_by: User | None = None,
    reverses: CashTransaction | None = None,
    at: dt.datetime | None = None,
    other_place: Place | None = None,
    counterparty: str | None = None,
    legs: list[tuple[Place | str, Line]] | None = None,
    operation_key: str | None = None,
    machine: Machine | None = None,
) -> CashTransaction:
    """Write a transaction with its legs. Call inside transaction.atomic() with the desk locked.

    `lines` are the desk's side; the other side is `other_place` (a physical
    place, locked here), or `counterparty` (by default the kind's). `legs`
    gives every leg explicitly instead (a reversal). Refuses an unidentified
    person above the casino's threshold, any place going below zero and cash
    in above the desk's limit. The person is found or created from
    `identity` here, inside the money's transaction. A kiosk's own
    transactions name the kiosk (`machine`) and no `user`.
    """
    casino = desk.casino
    if legs is None:
        other: Place | str = other_place or counterparty or COUNTERPARTY_OF_KIND[kind]
        legs = [(desk, line) for line in lines] + [(other, line.negated()) for line in lines]
    needs_register = kind in IDENTITY_KINDS and amount > casino.identity_threshold
    if needs_register and person is None and (identity is None or not identity.given):
        raise CashDeskError(
            "identity_required",
            _("Over %(threshold)s: identify the person before this transaction.")
            % {"threshold": format_money(casino.identity_threshold)},
        )
    places = {place.pk: place for place, _line in legs if isinstance(place, Place)}
    for place_id in sorted(places):
        if place_id != desk.pk:  # the desk is locked by the caller; others after it, in id order
            places[place_id] = Place.objects.select_for_update().get(pk=place_id)
    # The moment is taken once every place is locked: a transaction that waited for a place comes after
    # whatever held it, in time as in the books.
    at = at or timezone.now()
    for place_id, place in places.items():
        _check_not_negative(place, [line for p, line in legs if isinstance(p, Place) and p.pk == place_id])
    _check_cash_limit(desk, kind, [line for p, line in legs if isinstance(p, Place) and p.pk == desk.pk])
    person = _resolve_person(person=person, identity=identity, at=at)
    identification = None
    if person is not None:
        try:
            identification = identification_check(person=person, kind=kind, casino=casino, at=at)
        except IdentificationRefused as refused:
            raise CashDeskError(refused.code, refused.message) from None
    desk.last_receipt_number += 1
    Place.objects.filter(pk=desk.pk).update(last_receipt_number=desk.last_receipt_number)
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
        machine_receipt=machine_receipt,
        reverses=reverses,
        note=note[:255],
        created_by=user,
        machine=machine,
        approved_by=approved_by,
        created_at=at,
        operation_key=operation_key or None,
    )
    Leg.objects.bulk_create(
        Leg(
            transaction=transaction_,
            casino=casino,
            desk=place if isinstance(place, Place) else None,
            counterparty="" if isinstance(place, Place) else place,
            shift=shift if isinstance(place, Place) and place.pk == desk.pk else None,
            item=line.item,
            count=line.count,
            amount=line.amount,
        )
        for place, line in legs
        if line.amount != 0
    )
    operation = CashOperation(
        casino=casino,
        kind=kind,
        amount=amount,
        at=at,
        transaction_id=transaction_.pk,
        desk_id=desk.pk,
        shift_id=shift.pk if shift is not None else None,
        cashier_id=user.pk if user is not None else None,
        ticket_machine_id=ticket.issuing_machine_id if ticket is not None else None,
    )
    if needs_register and identification is not None:
        register_entry_write(operation=operation, identification=identification)
    alerts_evaluate(operation=operation, identification=identification)
    return transaction_

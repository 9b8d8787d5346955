"""The desk's operations on the money: every cash-desk transaction is posted here.

A transaction locks its desk's row first (lock_shift, or the caller): receipt
numbers stay gapless, and a balance checked before money leaves cannot change
until the transaction commits. post_transaction is the desk operation: it
identifies the person (compliance), posts to the books (posting.py), and
writes the register's entry and raises the alerts, in the money's transaction.
"""

import datetime as dt
from collections.abc import Iterator
from contextlib import contextmanager
from decimal import Decimal

from django.contrib.auth.models import User
from django.utils.translation import gettext as _

from cashdesk.books import ZERO
from cashdesk.errors import CashDeskError
from cashdesk.models import (
    IDENTITY_KINDS,
    PURCHASE_KINDS,
    CashTransaction,
    CountRequest,
    MachineReceipt,
    Shift,
)
from cashdesk.services.posting import Legs, Line, Posting, books_lock, books_write, cash, desk_legs, pieces
from casino_office.money import format_money
from compliance.models import Person, Visit
from compliance.services import (
    CashOperation,
    DayPurchases,
    Identification,
    IdentificationRefused,
    IdentityDetails,
    IdentityMismatch,
    PersonError,
    alerts_evaluate,
    identification_check,
    identity_mismatch_record,
    person_resolve,
    register_entry_write,
    register_needed,
)
from compliance.services.entry import visit_of_card
from machines.models import Casino, Machine, Place
from tickets.models import Ticket

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
def identification_logged(*, casino: Casino, user: User) -> Iterator[None]:
    """Around the money's transaction: a mismatch is written to the personal-data access log once it rolled back."""
    try:
        yield
    except IdentityMismatchRefused as refused:
        identity_mismatch_record(user=user, casino=casino, person_id=refused.person_id)
        raise


def _resolve_person(
    *, person: Person | None, identity: IdentityDetails | None, at: dt.datetime, casino: Casino
) -> Person | None:
    if person is not None or identity is None or not identity.given:
        return person
    try:
        return person_resolve(identity, at=at, casino=casino)
    except IdentityMismatch as mismatch:
        # Answered as an unknown code would be, code and all, unless the whole document was typed (issue 21).
        code = "identity_invalid" if mismatch.as_unknown else "identity_mismatch"
        raise IdentityMismatchRefused(code, str(mismatch), person_id=mismatch.person_id) from None
    except PersonError as error:
        raise CashDeskError("identity_invalid", str(error)) from None


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
    legs: Legs | None = None,
    operation_key: str | None = None,
    machine: Machine | None = None,
) -> CashTransaction:
    """The desk operation: identify the person, post to the books, write the register's entry and raise the alerts.

    Call inside transaction.atomic() with the desk locked. `lines` are the desk's side; the other side is
    `other_place` (a physical place, locked by the books), or `counterparty` (by default the kind's); `legs` gives
    every leg explicitly instead (a reversal). Refuses an unidentified person above the casino's threshold; the
    person is found or created from `identity` inside the money's transaction. A kiosk's own transactions name the
    kiosk (`machine`) and no `user`.
    """
    if legs is None:
        legs = desk_legs(desk=desk, kind=kind, lines=lines, other=other_place or counterparty)
    _identity_required(desk=desk, kind=kind, amount=amount, person=person, identity=identity)
    posting = books_lock(shift=shift, desk=desk, kind=kind, amount=amount, legs=legs, at=at)
    person = _resolve_person(person=person, identity=identity, at=posting.at, casino=desk.casino)
    person, visit = _visitor(person=person, identity=identity, at=posting.at, casino=desk.casino)
    identification = _identification(person=person, kind=kind, casino=desk.casino, at=posting.at)
    day = _day_purchases(casino=desk.casino, person=person, kind=kind, at=posting.at)
    transaction_ = books_write(
        posting,
        user=user,
        person=person,
        visit=visit,
        ticket=ticket,
        machine_receipt=machine_receipt,
        machine=machine,
        note=note,
        approved_by=approved_by,
        reverses=reverses,
        operation_key=operation_key,
    )
    _report(
        transaction_,
        posting=posting,
        user=user,
        ticket=ticket,
        identification=identification,
        day=day,
    )
    return transaction_


def _report(
    transaction_: CashTransaction,
    *,
    posting: Posting,
    user: User | None,
    ticket: Ticket | None,
    identification: Identification | None,
    day: DayPurchases | None,
) -> None:
    """The register's entry (an identified transaction over the threshold: a deferred trigger checks at commit that
    it has one) and the alerts, in the money's transaction."""
    operation = CashOperation(
        casino=posting.desk.casino,
        kind=posting.kind,
        amount=posting.amount,
        at=posting.at,
        transaction_id=transaction_.pk,
        desk_id=posting.desk.pk,
        shift_id=posting.shift.pk if posting.shift is not None else None,
        cashier_id=user.pk if user is not None else None,
        ticket_machine_id=ticket.issuing_machine_id if ticket is not None else None,
    )
    if identification is not None and register_needed(
        casino=operation.casino, kind=operation.kind, amount=operation.amount, day=day
    ):
        register_entry_write(operation=operation, identification=identification, day=day)
    alerts_evaluate(operation=operation, identification=identification)


def _identity_required(
    *, desk: Place, kind: str, amount: Decimal, person: Person | None, identity: IdentityDetails | None
) -> None:
    """Refuses a transaction that names nobody when it must: one over the identity threshold (it goes in the
    register), or a purchase for cash over the casino's anonymous limit (issue 26: linked to an admitted visitor)."""
    casino = desk.casino
    named = person is not None or (identity is not None and (identity.given or bool(identity.visit_card.strip())))
    if named:
        return
    if kind in IDENTITY_KINDS and amount > casino.identity_threshold:
        raise CashDeskError(
            "identity_required",
            _("Over %(threshold)s: identify the person before this transaction.")
            % {"threshold": format_money(casino.identity_threshold)},
        )
    if kind in PURCHASE_KINDS and amount > casino.anonymous_purchase_limit:
        raise CashDeskError(
            "visitor_required",
            _("Scan the visit card or pick the visitor: a purchase over %(limit)s is linked to an admitted visitor.")
            % {"limit": format_money(casino.anonymous_purchase_limit)},
        )


def _visitor(
    *, person: Person | None, identity: IdentityDetails | None, at: dt.datetime, casino: Casino
) -> tuple[Person | None, Visit | None]:
    """The admitted visitor the transaction is linked to (a visit card scanned or picked), who is its person."""
    card = identity.visit_card.strip() if identity is not None else ""
    if not card:
        return person, None
    try:
        visit = visit_of_card(casino=casino, card=card, at=at)
    except PersonError as error:
        raise CashDeskError("visit_invalid", str(error)) from None
    if person is not None and person.pk != visit.person_id:
        raise CashDeskError(
            "visit_mismatch", _("The visit card is another person's: identify the person in front of you.")
        )
    return visit.person, visit


def _day_purchases(*, casino: Casino, person: Person | None, kind: str, at: dt.datetime) -> DayPurchases | None:
    """The person's earlier purchases for cash in this gaming day, at every desk and table (issue 26).

    Read with the person's row locked, so two purchases by one person at two desks are added up one after the
    other: the second waits for the first to commit and counts it.
    """
    if person is None or kind not in PURCHASE_KINDS:
        return None
    Person.objects.select_for_update().filter(pk=person.pk).values_list("pk", flat=True).first()
    start, end = casino.gaming_day_bounds(casino.gaming_day(at))
    earlier = list(
        CashTransaction.objects.filter(
            casino=casino,
            person=person,
            kind__in=PURCHASE_KINDS,
            created_at__gte=start,
            created_at__lt=end,
            reversed_by__isnull=True,
        )
        .order_by("created_at", "pk")
        .values_list("pk", "amount")
    )
    return DayPurchases(
        transaction_ids=tuple(pk for pk, _amount in earlier), total=sum((a for _pk, a in earlier), ZERO)
    )


def _identification(*, person: Person | None, kind: str, casino: Casino, at: dt.datetime) -> Identification | None:
    """The person's identification for this operation (compliance refuses a self-excluded or unverified one)."""
    if person is None:
        return None
    try:
        return identification_check(person=person, kind=kind, casino=casino, at=at)
    except IdentificationRefused as refused:
        raise CashDeskError(refused.code, refused.message) from None

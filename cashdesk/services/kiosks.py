"""Kiosks' cash in the books: their redemptions and printed tickets (by the API), fills and drops (by staff).

Each kiosk (a machine of kind `kiosk`) has a place of its own in the books, a
Place of kind `kiosk` made on first use. A redemption moves cash from the
kiosk to the tickets outstanding; a ticket the kiosk printed moves cash in.
The ticket rules call these through `tickets.kiosks` (registered in
CashdeskConfig.ready). Fills and drops are asked for by a floor attendant or a
supervisor and approved by a supervisor who did not ask; a drop carries the
count of everything taken out, and its difference from the books goes to
over/short, leaving the kiosk at zero.

Locks: the ticket (tickets), then the kiosk's place, then the vault: the same
order everywhere, so a kiosk and the cage never deadlock.
"""

import datetime as dt
from decimal import Decimal

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.db.models import Sum
from django.utils import timezone, translation
from django.utils.translation import gettext as _

from cashdesk.books import ZERO, place_balances
from cashdesk.errors import CashDeskError
from cashdesk.items import ALL_ITEMS, Item
from cashdesk.models import (
    KIOSK_KINDS,
    CashTransaction,
    CountRequest,
    ShiftCount,
    TransactionKind,
    Transfer,
    TransferLine,
)
from cashdesk.services.counts import count_differences_post
from cashdesk.services.ledger import cash, post_transaction, vault_of
from cashdesk.services.once import TRANSFER
from cashdesk.services.shifts import count_request_open
from casino_office.money import CENT, cash_payout, format_money
from machines.models import Machine, Place
from tickets.exceptions import TicketRefused
from tickets.models import Ticket, TicketState

REQUESTERS = ("staff.record_receipt", "staff.supervise_desk")
SUPERVISOR = "staff.supervise_desk"


def kiosk_place(machine: Machine) -> Place:
    """The kiosk's place in the books, made on first use (named in the casino's language)."""
    place = Place.objects.filter(machine=machine).first()
    if place is not None:
        return place
    if not machine.is_kiosk:
        raise CashDeskError("not_a_kiosk", _("This machine is not a kiosk."))
    with translation.override(machine.casino.language):
        name = _("Kiosk %(asset)s") % {"asset": machine.asset_number}
    # Its code is KS<id>, or KS<id>-2... when a desk was given that code by hand.
    for code in [f"KS{machine.pk}", *(f"KS{machine.pk}-{n}" for n in range(2, 10))]:
        try:
            with transaction.atomic():
                return Place.objects.create(
                    casino_id=machine.casino_id,
                    kind=Place.Kind.KIOSK,
                    machine=machine,
                    code=code,
                    name=name[:64],
                    cash_limit=machine.casino.kiosk_cash_capacity,
                    cash_limit_enforced=False,
                )
        except IntegrityError:
            if (place := Place.objects.filter(machine=machine).first()) is not None:
                return place  # made at the same moment by another request
    raise CashDeskError("kiosk_code_taken", _("Every code for this kiosk's cash is taken by other desks."))


def _lock_place(machine: Machine) -> Place:
    place = kiosk_place(machine)
    return Place.objects.select_for_update().get(pk=place.pk)


def _held_for_others(machine: Machine, ticket: Ticket | None) -> Decimal:
    """Payouts this kiosk has authorized and not committed yet (other than `ticket`): cash already promised."""
    held = Ticket.objects.filter(state=TicketState.REDEEM_PENDING, holder_machine=machine)
    if ticket is not None:
        held = held.exclude(pk=ticket.pk)
    return sum((cash_payout(amount) for amount in held.values_list("amount", flat=True)), ZERO)


def _waiting_drop(place: Place) -> bool:
    return Transfer.objects.filter(
        place=place, direction=Transfer.Direction.DROP, approved_at__isnull=True, cancelled_at__isnull=True
    ).exists()


class KioskBooks:
    """What `tickets` asks of the books for a kiosk (tickets.kiosks.KioskCash)."""

    def available(self, *, machine: Machine, ticket: Ticket) -> Decimal:
        place = _lock_place(machine)
        held_here = ticket.state == TicketState.REDEEM_PENDING and ticket.holder_machine_id == machine.pk
        # Its cassettes are out for the count: nothing more is promised (a ticket it already holds kept its cash).
        if _waiting_drop(place) and not held_here:
            return ZERO
        return place_balances(place)[Item.CASH] - _held_for_others(machine, ticket)

    def book_payout(self, *, machine: Machine, ticket: Ticket, payout: Decimal, at: dt.datetime) -> str:
        place = _lock_place(machine)
        try:
            with transaction.atomic():
                tx = post_transaction(
                    shift=None,
                    desk=place,
                    kind=TransactionKind.KIOSK_PAYOUT,
                    amount=payout,
                    lines=[cash(-payout)],
                    user=None,
                    machine=machine,
                    ticket=ticket,
                    at=at,
                )
        except CashDeskError as error:
            if error.code == "identity_required":  # the identity threshold was lowered since authorize
                raise TicketRefused(
                    "over_kiosk_limit", "The payout is now above the identity threshold; a cashier pays it.", ticket
                ) from error
            raise TicketRefused("kiosk_empty", "This kiosk's books do not hold the payout.", ticket) from error
        return tx.receipt_number

    def book_ticket(self, *, machine: Machine, ticket: Ticket, at: dt.datetime) -> str:
        place = _lock_place(machine)
        tx = post_transaction(
            shift=None,
            desk=place,
            kind=TransactionKind.KIOSK_TICKET,
            amount=ticket.amount,
            lines=[cash(ticket.amount)],
            user=None,
            machine=machine,
            ticket=ticket,
            at=at,
        )
        return tx.receipt_number

    def totals(
        self, *, machine_ids: list[int], begin: dt.datetime, finish: dt.datetime
    ) -> dict[int, tuple[Decimal, Decimal]]:
        return kiosk_dispensed_and_taken_in(machine_ids, begin, finish)


def kiosk_payout_settled(*, ticket: Ticket, user: User, at: dt.datetime) -> CashTransaction:
    """A supervisor settles a stuck redemption at a kiosk as paid (its meters show the cash went out): book it.

    Call with the ticket locked, inside the transaction that resolves it.
    """
    machine = ticket.holder_machine
    if machine is None:  # pragma: no cover - the caller settles only a ticket a kiosk holds
        raise Machine.DoesNotExist("no machine holds this ticket")
    payout = cash_payout(ticket.amount)
    return post_transaction(
        shift=None,
        desk=_lock_place(machine),
        kind=TransactionKind.KIOSK_PAYOUT,
        amount=payout,
        lines=[cash(-payout)],
        user=user,
        machine=machine,
        ticket=ticket,
        at=at,
        note=_("Stuck redemption settled from the kiosk's meters"),
    )


def kiosk_transfer_request(
    *, machine: Machine, user: User, direction: str, amount: Decimal, operation_key: str | None = None
) -> Transfer:
    """Ask to fill a kiosk from the vault (the amount taken out) or to drop it (the amount counted out of it)."""
    if not any(user.has_perm(perm) for perm in REQUESTERS):
        raise CashDeskError("forbidden", _("Only floor attendants and supervisors fill or drop kiosks."))
    if direction not in Transfer.Direction.values:
        raise CashDeskError("invalid_direction", _("Choose a fill or a drop."))
    fill = direction == Transfer.Direction.FILL
    if fill and machine.status == Machine.Status.RETIRED:
        raise CashDeskError("kiosk_retired", _("A retired kiosk is not filled; the cash it still holds is dropped."))
    if amount < 0 or (fill and amount == 0) or amount != amount.quantize(CENT):
        raise CashDeskError("invalid_amount", _("Enter the amount in euros and cents, more than zero."))
    casino = machine.casino
    if amount > casino.max_transfer_amount:
        raise CashDeskError(
            "over_limit",
            _("A single transfer may be at most %(limit)s.") % {"limit": format_money(casino.max_transfer_amount)},
        )
    with transaction.atomic():
        place = _lock_place(machine)
        return TRANSFER.once(
            operation_key,
            user=user,
            run=lambda: _ask_kiosk_transfer(
                place=place, user=user, direction=direction, amount=amount, key=operation_key
            ),
        )


def _ask_kiosk_transfer(*, place: Place, user: User, direction: str, amount: Decimal, key: str | None) -> Transfer:
    if Transfer.objects.filter(place=place, approved_at__isnull=True, cancelled_at__isnull=True).exists():
        raise CashDeskError(
            "transfer_waiting", _("A fill or drop of this kiosk is waiting for approval: approve or cancel it.")
        )
    if direction == Transfer.Direction.FILL:
        _check_capacity(place, amount)
    transfer = Transfer.objects.create(
        place=place,
        shift=None,
        direction=direction,
        amount=amount,
        requested_by=user,
        requested_at=timezone.now(),
        operation_key=key or None,
    )
    if amount > 0:  # a kiosk moves cash only; a drop that counted nothing moves nothing
        TransferLine.objects.create(transfer=transfer, item=Item.CASH, amount=amount)
    return transfer


def _check_capacity(place: Place, amount: Decimal) -> None:
    capacity = place.casino.kiosk_cash_capacity
    held = place_balances(place)[Item.CASH]
    if held + amount > capacity:
        raise CashDeskError(
            "over_capacity",
            _("%(kiosk)s holds %(held)s and takes at most %(capacity)s: fill at most %(room)s.")
            % {
                "kiosk": place.name,
                "held": format_money(held),
                "capacity": format_money(capacity),
                "room": format_money(max(capacity - held, ZERO)),
            },
        )


def _refuse_a_desks(transfer: Transfer) -> None:
    if transfer.shift_id is not None:
        raise CashDeskError("desk_transfer", _("This is a desk's transfer: it is approved on the supervision page."))


def _lock_transfer(transfer: Transfer, supervisor: User) -> tuple[Transfer, Place]:
    if not supervisor.has_perm(SUPERVISOR):
        raise CashDeskError("forbidden", _("Only a shift supervisor approves this."))
    transfer = Transfer.objects.select_for_update().get(pk=transfer.pk)
    _refuse_a_desks(transfer)
    if transfer.approved_at is not None:
        raise CashDeskError("already_approved", _("This transfer has already been approved."))
    if transfer.cancelled_at is not None:
        raise CashDeskError("cancelled", _("This transfer was cancelled."))
    place = Place.objects.select_for_update().get(pk=transfer.place_id)
    return transfer, place


def kiosk_transfer_approve(*, transfer: Transfer, supervisor: User) -> Transfer:
    """Move the cash between the kiosk and the vault; a drop's count settles the kiosk's books at zero."""
    with transaction.atomic():
        transfer, place = _lock_transfer(transfer, supervisor)
        if transfer.requested_by_id == supervisor.pk:
            raise CashDeskError("own_request", _("A transfer is approved by someone other than who asked for it."))
        if (
            place.machine_id is not None
            and Ticket.objects.filter(state=TicketState.REDEEM_PENDING, holder_machine_id=place.machine_id).exists()
        ):
            raise CashDeskError("kiosk_busy", _("The kiosk is paying a ticket right now; approve again in a moment."))
        if transfer.direction == Transfer.Direction.DROP and _drop_over_limit(transfer, place):
            # Four eyes on the write-off: a second supervisor approves the drop's count (count_request_approve).
            count_request_open(
                desk=place,
                shift=None,
                kind=ShiftCount.Kind.KIOSK,
                user=transfer.requested_by,
                counted={**dict.fromkeys(ALL_ITEMS, ZERO), Item.CASH: transfer.amount},
                book=place_balances(place),
                transfer=transfer,
                asked_by=supervisor,
            )
            return transfer
        return kiosk_transfer_post(transfer=transfer, place=place, supervisor=supervisor)


def _drop_over_limit(transfer: Transfer, place: Place) -> bool:
    return abs(transfer.amount - place_balances(place)[Item.CASH]) > place.casino.count_approval_limit


def kiosk_transfer_post(*, transfer: Transfer, place: Place, supervisor: User) -> Transfer:
    """Post an approved fill or drop. Call with the transfer and the kiosk's place locked."""
    vault = vault_of(place.casino_id)
    now = timezone.now()
    if transfer.direction == Transfer.Direction.FILL:
        _check_capacity(place, transfer.amount)
        tx: CashTransaction | None = post_transaction(
            shift=None,
            desk=place,
            kind=TransactionKind.FILL,
            amount=transfer.amount,
            lines=[cash(transfer.amount)],
            user=transfer.requested_by,
            approved_by=supervisor,
            other_place=vault,
            at=now,
        )
        count = None
    else:
        tx, count = _drop(transfer, place, vault, supervisor, now)
    transfer.transaction = tx
    transfer.count = count
    transfer.approved_by = supervisor
    transfer.approved_at = now
    transfer.save(update_fields=["transaction", "count", "approved_by", "approved_at"])
    return transfer


def _drop(
    transfer: Transfer, place: Place, vault: Place, supervisor: User, now: dt.datetime
) -> tuple[CashTransaction | None, ShiftCount]:
    counted = transfer.amount
    # The books come to the count first: the difference is the kiosk's over (+) or short (-).
    count = count_differences_post(
        place=place,
        shift=None,
        kind=ShiftCount.Kind.KIOSK,
        user=transfer.requested_by,
        counted={Item.CASH: counted},
        book={Item.CASH: place_balances(place)[Item.CASH]},
        at=now,
        note=_("Kiosk drop count"),
    )
    if counted == 0:
        return None, count
    tx = post_transaction(
        shift=None,
        desk=place,
        kind=TransactionKind.DROP,
        amount=counted,
        lines=[cash(-counted)],
        user=transfer.requested_by,
        approved_by=supervisor,
        other_place=vault,
        at=now,
    )
    return tx, count


def kiosk_transfer_cancel(*, transfer: Transfer, user: User) -> Transfer:
    """Withdraw a waiting fill or drop: who asked for it, or a supervisor."""
    with transaction.atomic():
        transfer = Transfer.objects.select_for_update().get(pk=transfer.pk)
        _refuse_a_desks(transfer)
        if transfer.requested_by_id != user.pk and not user.has_perm(SUPERVISOR):
            raise CashDeskError("forbidden", _("Only who asked for it, or a supervisor, cancels a transfer."))
        if transfer.approved_at is not None:
            raise CashDeskError("already_approved", _("This transfer has already been approved."))
        if transfer.cancelled_at is not None:
            return transfer
        if CountRequest.objects.filter(transfer=transfer, status__in=CountRequest.OPEN).exists():
            raise CashDeskError(
                "count_waiting", _("Its count waits for a second supervisor, who approves or rejects it.")
            )
        transfer.cancelled_by = user
        transfer.cancelled_at = timezone.now()
        transfer.save(update_fields=["cancelled_by", "cancelled_at"])
    return transfer


def kiosk_dispensed_and_taken_in(
    machine_ids: list[int], begin: dt.datetime, finish: dt.datetime
) -> dict[int, tuple[Decimal, Decimal]]:
    """Per kiosk: the cash its books say it dispensed for tickets and took in for tickets, in [begin, finish)."""
    result: dict[int, tuple[Decimal, Decimal]] = {}
    rows = (
        CashTransaction.objects.filter(
            machine_id__in=machine_ids,
            kind__in=KIOSK_KINDS,
            created_at__gte=begin,
            created_at__lt=finish,
        )
        .values("machine_id", "kind")
        .annotate(total=Sum("amount"))
        .order_by()
    )
    for row in rows:
        dispensed, taken_in = result.get(row["machine_id"], (ZERO, ZERO))
        if row["kind"] == TransactionKind.KIOSK_PAYOUT:
            dispensed += row["total"]
        else:
            taken_in += row["total"]
        result[row["machine_id"]] = (dispensed, taken_in)
    return result

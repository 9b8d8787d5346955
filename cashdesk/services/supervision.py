"""Transfers between a desk and the vault, reversals, and the vault's count: what a supervisor approves or does."""

from collections.abc import Mapping
from decimal import Decimal

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from cashdesk.errors import CashDeskError
from cashdesk.items import DENOMINATIONS, Item
from cashdesk.models import (
    CashTransaction,
    Leg,
    ReversalRequest,
    Shift,
    TransactionKind,
    Transfer,
    TransferLine,
)
from cashdesk.services.ledger import Line, cash, lock_shift, pieces, post_transaction, refuse_while_counting, vault_of
from cashdesk.services.once import REVERSAL, TRANSFER
from casino_office.money import CENT, format_money
from casino_office.vocabulary import REVERSIBLE_KINDS
from machines.history import changed_sealed, created_sealed
from machines.models import Place
from tickets import desk as ticket_rules
from tickets.exceptions import TicketError
from tickets.models import Ticket

# The most pieces of one item a transfer moves (as a count takes at most: cashdesk.forms.CountForm).
MAX_PIECES = 10_000_000
MAX_CASH = Decimal("10000000000")  # what an amount of the books (12 digits, 2 of them cents) can hold


def _require_supervisor(user: User) -> None:
    if not user.has_perm("staff.supervise_desk"):
        raise CashDeskError("forbidden", _("Only a shift supervisor approves this."))


def _transfer_lines(amount: Decimal | None, chips_and_tokens: Mapping[str, int] | None) -> list[Line]:
    """What a transfer moves, as the desk's lines of a drop: cash in EUR, chips and tokens in pieces."""
    lines = []
    if amount is not None and amount != 0:
        if amount < 0 or amount >= MAX_CASH or amount != amount.quantize(CENT):
            raise CashDeskError("invalid_amount", _("Enter the cash in euros and cents, not below zero."))
        lines.append(cash(amount))
    for item, count in (chips_and_tokens or {}).items():
        if item not in DENOMINATIONS:
            raise CashDeskError(
                "invalid_item", _("%(item)r is not a value chip or a slot token.") % {"item": str(item)[:40]}
            )
        if isinstance(count, bool) or not isinstance(count, int) or count < 0 or count > MAX_PIECES:
            raise CashDeskError("invalid_count", _("%(item)s: count whole pieces.") % {"item": Item(item).label})
        if count:
            lines.append(pieces(item, count))
    if not lines:
        raise CashDeskError("nothing_to_move", _("Enter the cash or the pieces to move."))
    return lines


def transfer_request(
    *,
    shift: Shift,
    user: User,
    direction: str,
    amount: Decimal | None = None,
    chips_and_tokens: Mapping[str, int] | None = None,
    operation_key: str | None = None,
) -> Transfer:
    """The cashier asks to drop items to the vault or to be filled from it: `amount` is the cash in EUR,
    `chips_and_tokens` the pieces of each chip denomination and of slot tokens."""
    if direction not in Transfer.Direction.values:
        raise CashDeskError("invalid_direction", _("Choose a drop or a fill."))
    lines = _transfer_lines(amount, chips_and_tokens)
    with transaction.atomic():
        shift, desk = lock_shift(shift=shift, user=user)
        return TRANSFER.once(
            operation_key,
            user=user,
            run=lambda: _ask_transfer(
                shift=shift, desk=desk, user=user, direction=direction, lines=lines, key=operation_key
            ),
        )


def _ask_transfer(
    *, shift: Shift, desk: Place, user: User, direction: str, lines: list[Line], key: str | None
) -> Transfer:
    value = sum((line.amount for line in lines), Decimal("0.00"))
    limit = desk.casino.max_transfer_amount
    if value > limit:
        raise CashDeskError(
            "over_limit", _("A single transfer may be at most %(limit)s.") % {"limit": format_money(limit)}
        )
    transfer = Transfer.objects.create(
        place=desk,
        shift=shift,
        direction=direction,
        amount=value,
        requested_by=user,
        requested_at=timezone.now(),
        operation_key=key or None,
    )
    created = TransferLine.objects.bulk_create(
        TransferLine(transfer=transfer, item=line.item, count=line.count, amount=line.amount) for line in lines
    )
    created_sealed(TransferLine, created)
    return transfer


def transfer_approve(*, transfer: Transfer, supervisor: User) -> CashTransaction:
    """Move the transfer's items between the desk and the vault; neither may go below zero in any item."""
    _require_supervisor(supervisor)
    with transaction.atomic():
        # The transfer's row alone, then the desk; the vault is locked after the desk by the posting.
        transfer = Transfer.objects.select_for_update().get(pk=transfer.pk)
        if transfer.shift_id is None:
            raise CashDeskError("kiosk_transfer", _("This is a kiosk's transfer: it is approved on the kiosks page."))
        if transfer.approved_at is not None:
            raise CashDeskError("already_approved", _("This transfer has already been approved."))
        if transfer.requested_by_id == supervisor.pk:
            raise CashDeskError("own_request", _("A transfer is approved by someone other than who asked for it."))
        desk_id = Shift.objects.values_list("desk_id", flat=True).get(pk=transfer.shift_id)
        desk = Place.objects.select_for_update().get(pk=desk_id)
        # Read under the desk's lock: a close or handover that held it has committed by now.
        shift = Shift.objects.get(pk=transfer.shift_id)
        if shift.closed_at is not None:
            raise CashDeskError("shift_closed", _("The shift that asked for this transfer is closed."))
        refuse_while_counting(shift)
        vault = vault_of(desk.casino_id)
        moved = [Line(line.item, line.amount, line.count) for line in transfer.lines.all()]
        tx = post_transaction(
            shift=shift,
            desk=desk,
            kind=transfer.direction,
            amount=transfer.amount,
            lines=[line.negated() for line in moved] if transfer.direction == Transfer.Direction.DROP else moved,
            user=transfer.requested_by,
            approved_by=supervisor,
            other_place=vault,
        )
        approved = Transfer.objects.filter(pk=transfer.pk, approved_at__isnull=True).update(
            transaction=tx, approved_by=supervisor, approved_at=tx.created_at
        )
        if approved != 1:
            raise CashDeskError("already_approved", _("This transfer has already been approved."))
        changed_sealed(Transfer, transfer.pk)
    return tx


def reversal_request(
    *, original: CashTransaction, user: User, reason: str, operation_key: str | None = None
) -> ReversalRequest:
    if original.kind not in REVERSIBLE_KINDS:
        raise CashDeskError("not_reversible", _("%(kind)s cannot be reversed.") % {"kind": original.get_kind_display()})
    if not reason.strip():
        raise CashDeskError("reason_required", _("Say what went wrong."))
    if original.created_by_id != user.pk:
        raise CashDeskError("forbidden", _("Only the cashier who made a transaction asks to reverse it."))
    try:
        with transaction.atomic():
            return REVERSAL.once(
                operation_key,  # the same form sent again, or at the same moment: the first request
                user=user,
                original=original,
                run=lambda: ReversalRequest.objects.create(
                    original=original,
                    reason=reason[:255],
                    requested_by=user,
                    requested_at=timezone.now(),
                    operation_key=operation_key or None,
                ),
            )
    except IntegrityError:
        # Another request for the same transaction won.
        raise CashDeskError("already_requested", _("A reversal of this transaction was already asked for.")) from None


def reversal_approve(*, request: ReversalRequest, supervisor: User) -> CashTransaction:
    """Write the reversing transaction: every leg of the original, negated, in the same shift."""
    _require_supervisor(supervisor)
    with transaction.atomic():
        request = ReversalRequest.objects.select_for_update().get(pk=request.pk)
        original = CashTransaction.objects.get(pk=request.original_id)
        if request.reversal_id is not None:
            raise CashDeskError("already_approved", _("This reversal has already been approved."))
        if supervisor.pk in (request.requested_by_id, original.created_by_id):
            raise CashDeskError("own_request", _("A reversal is approved by someone other than the cashier."))
        ticket = None
        if original.ticket_id is not None:
            ticket = Ticket.objects.select_for_update().get(pk=original.ticket_id)
        desk = Place.objects.select_for_update().get(pk=original.desk_id)
        if original.shift_id is None:
            raise CashDeskError("not_reversible", _("Only a desk's own transactions are reversed."))
        shift = Shift.objects.get(pk=original.shift_id)
        if shift.closed_at is not None:
            raise CashDeskError(
                "shift_closed", _("The transaction's shift is closed; reversals are made within the shift.")
            )
        refuse_while_counting(shift)
        legs: list[tuple[Place | str, Line]] = [
            (
                desk if leg.desk_id == desk.pk else (leg.desk or leg.counterparty),
                Line(leg.item, leg.amount, leg.count).negated(),
            )
            for leg in Leg.objects.filter(transaction=original).select_related("desk")
        ]
        # The books first, then the ticket: every transaction that appends to both chains appends in this order
        # (machines.chains), so two of them never wait on each other's chain head.
        tx = post_transaction(
            shift=shift,
            desk=desk,
            kind=TransactionKind.REVERSAL,
            amount=original.amount,
            lines=[],
            legs=legs,
            user=request.requested_by,
            approved_by=supervisor,
            reverses=original,
            note=request.reason,
        )
        if ticket is not None:
            try:
                ticket_rules.ticket_move_to_void(
                    ticket=ticket, user=supervisor, reason=f"sale reversed: {request.reason}"
                )
            except TicketError:
                raise CashDeskError(
                    "invalid_state",
                    _("The sold ticket is %(state)s; it can no longer be taken back.")
                    % {"state": ticket.get_state_display()},
                ) from None
        if ReversalRequest.objects.filter(pk=request.pk, reversal__isnull=True).update(reversal=tx) != 1:
            raise CashDeskError("already_approved", _("This reversal has already been approved."))
    return tx

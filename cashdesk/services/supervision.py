"""Transfers between a desk and the vault, reversals, and the vault's count: what a supervisor approves or does."""

from decimal import Decimal

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from cashdesk.errors import CashDeskError
from cashdesk.models import CashDesk, CashTransaction, Leg, ReversalRequest, Shift, TransactionKind, Transfer
from cashdesk.services.ledger import Line, cash, lock_shift, post_transaction, vault_of
from tickets import desk as ticket_rules
from tickets.exceptions import TicketError
from tickets.models import Ticket
from tickets.money import CENT, format_money

# Kinds a reversal can undo. A ticket or receipt payout is final: the paper
# was taken in; a wrong one is an incident for the supervisor, not an undo.
REVERSIBLE_KINDS = [
    TransactionKind.CHIPS_BUY,
    TransactionKind.CHIPS_CASHOUT,
    TransactionKind.TOKENS_BUY,
    TransactionKind.TOKENS_CASHOUT,
    TransactionKind.SMARTCARD_PAYOUT,
    TransactionKind.SMARTCARD_LOAD,
    TransactionKind.TICKET_SALE,
]


def _require_supervisor(user: User) -> None:
    if not user.has_perm("staff.supervise_desk"):
        raise CashDeskError("forbidden", _("Only a shift supervisor approves this."))


def transfer_request(
    *, shift: Shift, user: User, direction: str, amount: Decimal, operation_key: str | None = None
) -> Transfer:
    """The cashier asks to drop cash to the vault or to be filled from it."""
    if direction not in Transfer.Direction.values:
        raise CashDeskError("invalid_direction", _("Choose a drop or a fill."))
    if amount <= 0 or amount != amount.quantize(CENT):
        raise CashDeskError("invalid_amount", _("Enter the amount in euros and cents, more than zero."))
    with transaction.atomic():
        shift, desk = lock_shift(shift=shift, user=user)
        if operation_key and (done := Transfer.objects.filter(operation_key=operation_key).first()) is not None:
            if done.requested_by_id != user.pk:
                raise CashDeskError("operation_key_used", _("This form was already used by someone else."))
            return done
        limit = desk.casino.max_transfer_amount
        if amount > limit:
            raise CashDeskError(
                "over_limit", _("A single transfer may be at most %(limit)s.") % {"limit": format_money(limit)}
            )
        return Transfer.objects.create(
            shift=shift,
            direction=direction,
            amount=amount,
            requested_by=user,
            requested_at=timezone.now(),
            operation_key=operation_key or None,
        )


def transfer_approve(*, transfer: Transfer, supervisor: User) -> CashTransaction:
    """Move the cash between the desk and the vault; neither may go below zero."""
    _require_supervisor(supervisor)
    with transaction.atomic():
        # The transfer's row alone, then the desk; the vault is locked after the desk by the posting.
        transfer = Transfer.objects.select_for_update().get(pk=transfer.pk)
        if transfer.transaction_id is not None:
            raise CashDeskError("already_approved", _("This transfer has already been approved."))
        if transfer.requested_by_id == supervisor.pk:
            raise CashDeskError("own_request", _("A transfer is approved by someone other than who asked for it."))
        desk_id = Shift.objects.values_list("desk_id", flat=True).get(pk=transfer.shift_id)
        desk = CashDesk.objects.select_for_update().get(pk=desk_id)
        # Read under the desk's lock: a close or handover that held it has committed by now.
        shift = Shift.objects.get(pk=transfer.shift_id)
        if shift.closed_at is not None:
            raise CashDeskError("shift_closed", _("The shift that asked for this transfer is closed."))
        vault = vault_of(desk.casino_id)
        sign = -1 if transfer.direction == Transfer.Direction.DROP else 1
        tx = post_transaction(
            shift=shift,
            desk=desk,
            kind=transfer.direction,
            amount=transfer.amount,
            lines=[cash(sign * transfer.amount)],
            user=transfer.requested_by,
            approved_by=supervisor,
            other_place=vault,
        )
        if Transfer.objects.filter(pk=transfer.pk, transaction__isnull=True).update(transaction=tx) != 1:
            raise CashDeskError("already_approved", _("This transfer has already been approved."))
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
    existing = ReversalRequest.objects.filter(original=original).first()
    if existing is not None and operation_key and existing.operation_key == operation_key:
        return existing  # the same form sent again
    try:
        with transaction.atomic():
            return ReversalRequest.objects.create(
                original=original,
                reason=reason[:255],
                requested_by=user,
                requested_at=timezone.now(),
                operation_key=operation_key or None,
            )
    except IntegrityError:
        # A concurrent submission of the same form, or another request for the same transaction, won.
        existing = ReversalRequest.objects.filter(original=original).first()
        if existing is not None and operation_key and existing.operation_key == operation_key:
            return existing
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
        desk = CashDesk.objects.select_for_update().get(pk=original.desk_id)
        if original.shift_id is None:
            raise CashDeskError("not_reversible", _("Only a desk's own transactions are reversed."))
        shift = Shift.objects.get(pk=original.shift_id)
        if shift.closed_at is not None:
            raise CashDeskError(
                "shift_closed", _("The transaction's shift is closed; reversals are made within the shift.")
            )
        legs: list[tuple[CashDesk | str, Line]] = [
            (
                desk if leg.desk_id == desk.pk else (leg.desk or leg.counterparty),
                Line(leg.item, leg.amount, leg.count).negated(),
            )
            for leg in Leg.objects.filter(transaction=original).select_related("desk")
        ]
        if ticket is not None:
            try:
                ticket_rules.ticket_void(ticket=ticket, user=supervisor, reason=f"sale reversed: {request.reason}")
            except TicketError:
                raise CashDeskError(
                    "invalid_state",
                    _("The sold ticket is %(state)s; it can no longer be taken back.")
                    % {"state": ticket.get_state_display()},
                ) from None
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
        if ReversalRequest.objects.filter(pk=request.pk, reversal__isnull=True).update(reversal=tx) != 1:
            raise CashDeskError("already_approved", _("This reversal has already been approved."))
    return tx

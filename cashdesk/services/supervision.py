"""What needs a shift supervisor: transfers with the vault and reversals of mistakes."""

from decimal import Decimal

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from cashdesk.errors import CashDeskError
from cashdesk.models import CashDesk, CashTransaction, ReversalRequest, Shift, TransactionKind, Transfer
from cashdesk.services.ledger import Line, cash, lock_shift, post_transaction, shift_balances
from tickets.models import Ticket, TicketEventKind, TicketState
from tickets.money import CENT
from tickets.services import record_ticket_event

# Kinds a reversal can undo. A ticket or receipt payout is final: the paper
# was taken in; a wrong one is an incident for the supervisor, not an undo.
REVERSIBLE_KINDS = [
    TransactionKind.CHIPS_BUY,
    TransactionKind.CHIPS_CASHOUT,
    TransactionKind.TOKENS_BUY,
    TransactionKind.TOKENS_CASHOUT,
    TransactionKind.SMARTCARD_PAYOUT,
    TransactionKind.TICKET_SALE,
]


def _require_supervisor(user: User) -> None:
    if not user.has_perm("cashdesk.supervise_desk"):
        raise CashDeskError("forbidden", _("Only a shift supervisor approves this."))


def transfer_request(*, shift: Shift, user: User, direction: str, amount: Decimal) -> Transfer:
    """The cashier asks to drop cash to the vault or to be filled from it."""
    if direction not in Transfer.Direction.values:
        raise CashDeskError("invalid_direction", _("Choose a drop or a fill."))
    if amount <= 0 or amount != amount.quantize(CENT):
        raise CashDeskError("invalid_amount", _("Enter the amount in euros and cents, more than zero."))
    with transaction.atomic():
        shift, _desk = lock_shift(shift=shift, user=user)
        return Transfer.objects.create(
            shift=shift, direction=direction, amount=amount, requested_by=user, requested_at=timezone.now()
        )


def transfer_approve(*, transfer: Transfer, supervisor: User) -> CashTransaction:
    _require_supervisor(supervisor)
    with transaction.atomic():
        transfer = Transfer.objects.select_for_update().select_related("shift").get(pk=transfer.pk)
        if transfer.transaction_id is not None:
            raise CashDeskError("already_approved", _("This transfer has already been approved."))
        if transfer.requested_by_id == supervisor.pk:
            raise CashDeskError("own_request", _("A transfer is approved by someone other than who asked for it."))
        desk = CashDesk.objects.select_for_update().select_related("casino").get(pk=transfer.shift.desk_id)
        shift = Shift.objects.get(pk=transfer.shift_id)
        if shift.closed_at is not None:
            raise CashDeskError("shift_closed", _("The shift that asked for this transfer is closed."))
        vault = CashDesk.objects.select_for_update().filter(casino=desk.casino, kind=CashDesk.Kind.VAULT).first()
        if vault is None:
            raise CashDeskError("no_vault", _("This casino has no vault set up."))
        sign = -1 if transfer.direction == Transfer.Direction.DROP else 1
        tx = post_transaction(
            shift=shift,
            desk=desk,
            kind=transfer.direction,
            amount=transfer.amount,
            lines=[cash(sign * transfer.amount)],
            user=transfer.requested_by,
            approved_by=supervisor,
            extra_lines=[(vault, cash(-sign * transfer.amount))],
        )
        Transfer.objects.filter(pk=transfer.pk).update(transaction=tx)
    return tx


def reversal_request(*, original: CashTransaction, user: User, reason: str) -> ReversalRequest:
    if original.kind not in REVERSIBLE_KINDS:
        raise CashDeskError("not_reversible", _("%(kind)s cannot be reversed.") % {"kind": original.get_kind_display()})
    if not reason.strip():
        raise CashDeskError("reason_required", _("Say what went wrong."))
    if ReversalRequest.objects.filter(original=original).exists():
        raise CashDeskError("already_requested", _("A reversal of this transaction was already asked for."))
    return ReversalRequest.objects.create(
        original=original, reason=reason[:255], requested_by=user, requested_at=timezone.now()
    )


def reversal_approve(*, request: ReversalRequest, supervisor: User) -> CashTransaction:
    """Write the reversing transaction: every movement of the original, negated, in the same shift."""
    _require_supervisor(supervisor)
    with transaction.atomic():
        request = ReversalRequest.objects.select_for_update().select_related("original").get(pk=request.pk)
        original = request.original
        if request.reversal_id is not None:
            raise CashDeskError("already_approved", _("This reversal has already been approved."))
        if supervisor.pk in (request.requested_by_id, original.created_by_id):
            raise CashDeskError("own_request", _("A reversal is approved by someone other than the cashier."))
        ticket = None
        if original.ticket_id is not None:
            ticket = Ticket.objects.select_for_update().get(pk=original.ticket_id)
        desk = CashDesk.objects.select_for_update().select_related("casino").get(pk=original.desk_id)
        if original.shift_id is None:
            raise CashDeskError("not_reversible", _("Only a desk's own transactions are reversed."))
        shift = Shift.objects.get(pk=original.shift_id)
        if shift.closed_at is not None:
            raise CashDeskError(
                "shift_closed", _("The transaction's shift is closed; reversals are made within the shift.")
            )
        lines = [Line(m.item, -m.amount, -m.count if m.count is not None else None) for m in original.movements.all()]
        balances = shift_balances(shift)
        for line in lines:
            if line.amount < 0 and balances[line.item] + line.amount < 0:
                raise CashDeskError(
                    "insufficient_stock", _("The desk no longer holds what the reversal must give back.")
                )
        if ticket is not None:
            if ticket.state != TicketState.ISSUED:
                raise CashDeskError(
                    "invalid_state",
                    _("The sold ticket is %(state)s; it can no longer be taken back.")
                    % {"state": ticket.get_state_display()},
                )
            now = timezone.now()
            ticket.state = TicketState.VOID
            ticket.voided_at = now
            ticket.save(update_fields=["state", "voided_at"])
            record_ticket_event(
                ticket,
                TicketEventKind.VOIDED,
                at=now,
                from_state=TicketState.ISSUED,
                user=supervisor,
                reason=f"sale reversed: {request.reason}",
            )
        tx = post_transaction(
            shift=shift,
            desk=desk,
            kind=TransactionKind.REVERSAL,
            amount=original.amount,
            lines=lines,
            user=request.requested_by,
            approved_by=supervisor,
            reverses=original,
            note=request.reason,
        )
        ReversalRequest.objects.filter(pk=request.pk).update(reversal=tx)
    return tx

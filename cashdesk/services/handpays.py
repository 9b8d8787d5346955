"""Handpays: machine receipts the machine asks for (machine contract v1.1).

requested (the machine, by the API) -> confirmed (a floor attendant at the
machine, who prints the receipt) -> paid (a cashier: machine_receipts.machine_receipt_pay),
or void (a supervisor, with a reason). Each step writes who and when on the
receipt's row in the step's own transaction; the row's check constraint
keeps the state and those fields consistent.
"""

import datetime as dt
from decimal import Decimal

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.db.models import Count, Sum
from django.utils import timezone
from django.utils.translation import gettext as _

from cashdesk.errors import CashDeskError
from cashdesk.models import HANDPAY_KINDS, MachineReceipt
from cashdesk.services.machine_receipts import create_with_new_number
from cashdesk.services.once import HANDPAY_CONFIRMATION
from casino_office.money import MILL
from machines.history import changed_sealed
from machines.models import Machine

# The amount column holds 10 digits before the point.
MAX_HANDPAY_AMOUNT = Decimal("9999999999.999")


def _pending() -> CashDeskError:
    return CashDeskError("handpay_pending", _("This machine already has a handpay waiting for an attendant."))


def handpay_request(*, machine: Machine, amount: Decimal, kind: str, request_id: str) -> MachineReceipt:
    """The machine locks up and asks for a handpay; no casino maximum applies (the rules set none for wins).

    The machine's row is locked first, so a machine's requests queue one
    behind the other; the partial unique index on its `requested` receipts
    refuses a second one whatever the path.
    """
    if amount <= 0 or amount != amount.quantize(MILL) or amount > MAX_HANDPAY_AMOUNT:
        raise CashDeskError("invalid_amount", "'amount' must be > 0, at most three decimals, below 10 000 000 000.")
    if kind not in HANDPAY_KINDS:
        raise CashDeskError("invalid_request", f"'kind' must be one of: {', '.join(HANDPAY_KINDS)}.")
    with transaction.atomic():
        Machine.objects.select_for_update().filter(pk=machine.pk).first()
        if MachineReceipt.objects.filter(machine=machine, state=MachineReceipt.State.REQUESTED).exists():
            raise _pending()
        try:
            return create_with_new_number(
                casino_id=machine.casino_id,
                machine=machine,
                amount=amount,
                source=MachineReceipt.Source.MACHINE,
                kind=kind,
                state=MachineReceipt.State.REQUESTED,
                request_id=request_id,
                created_by=None,
                created_at=timezone.now(),
            )
        except IntegrityError as error:
            name = getattr(getattr(error.__cause__, "diag", None), "constraint_name", None)
            if name == "machinereceipt_one_requested_per_machine":
                raise _pending() from None
            raise


def requested_handpays(casino_id: int) -> list[MachineReceipt]:
    """What the floor screen shows to confirm: the newest first."""
    return list(
        MachineReceipt.objects.filter(casino_id=casino_id, state=MachineReceipt.State.REQUESTED)
        .select_related("machine")
        .order_by("-created_at", "-pk")
    )


def open_handpays(casino_id: int) -> list[MachineReceipt]:
    """Handpays a supervisor may still void: requested or confirmed, the newest first."""
    return list(
        MachineReceipt.objects.filter(
            casino_id=casino_id,
            source=MachineReceipt.Source.MACHINE,
            state__in=[MachineReceipt.State.REQUESTED, MachineReceipt.State.CONFIRMED],
        )
        .select_related("machine", "confirmed_by")
        .order_by("-created_at", "-pk")
    )


def handpay_confirm(*, receipt_id: int, casino_id: int, user: User, operation_key: str) -> MachineReceipt:
    """A floor attendant has verified the win at the machine: the receipt may now be printed and paid.

    The same form sent twice (same one-time key) confirms once and answers the
    first result again.
    """
    if not user.has_perm("staff.record_receipt"):
        raise CashDeskError("forbidden", _("Only floor attendants confirm handpays."))
    with transaction.atomic():
        receipt = MachineReceipt.objects.select_for_update().filter(pk=receipt_id, casino_id=casino_id).first()
        if receipt is None or receipt.source != MachineReceipt.Source.MACHINE:
            raise CashDeskError("not_found", _("No such handpay in this casino."))
        if HANDPAY_CONFIRMATION.earlier(operation_key, user=user, pk=receipt.pk) is not None:
            return receipt
        if receipt.state != MachineReceipt.State.REQUESTED:
            raise CashDeskError(
                "not_requested",
                _("This handpay is no longer waiting for confirmation (it is %(state)s).")
                % {"state": receipt.get_state_display().lower()},
            )
        now = timezone.now()
        updated = MachineReceipt.objects.filter(pk=receipt.pk, state=MachineReceipt.State.REQUESTED).update(
            state=MachineReceipt.State.CONFIRMED, confirmed_by=user, confirmed_at=now, confirm_key=operation_key
        )
        if updated != 1:  # pragma: no cover - the row is locked above
            raise CashDeskError("not_requested", _("This handpay is no longer waiting for confirmation."))
        changed_sealed(MachineReceipt, receipt.pk)
        receipt.refresh_from_db()
        return receipt


def handpay_void(*, receipt_id: int, casino_id: int, user: User, reason: str) -> MachineReceipt:
    """A supervisor cancels an unpaid handpay, giving the reason; the machine then clears its lockup."""
    if not user.has_perm("staff.supervise_desk"):
        raise CashDeskError("forbidden", _("Only a supervisor voids a handpay."))
    reason = reason.strip()
    if not reason:
        raise CashDeskError("reason_required", _("Give the reason for voiding the handpay."))
    with transaction.atomic():
        receipt = MachineReceipt.objects.select_for_update().filter(pk=receipt_id, casino_id=casino_id).first()
        if receipt is None or receipt.source != MachineReceipt.Source.MACHINE:
            raise CashDeskError("not_found", _("No such handpay in this casino."))
        if receipt.state not in (MachineReceipt.State.REQUESTED, MachineReceipt.State.CONFIRMED):
            raise CashDeskError(
                "not_voidable",
                _("Only an unpaid handpay can be voided; this one is %(state)s.")
                % {"state": receipt.get_state_display().lower()},
            )
        MachineReceipt.objects.filter(pk=receipt.pk, state=receipt.state, paid_by__isnull=True).update(
            state=MachineReceipt.State.VOID, voided_by=user, voided_at=timezone.now(), void_reason=reason[:255]
        )
        changed_sealed(MachineReceipt, receipt.pk)
        receipt.refresh_from_db()
        return receipt


def handpays_at_machines(
    casino: object, machine_ids: list[int], begin: dt.datetime, finish: dt.datetime
) -> dict[int, tuple[int, Decimal]]:
    """The handpays each machine made in [begin, finish), for the meter reconciliation (tickets.reconciliation).

    A machine's handpay meters count a handpay when it is reset at the machine, which is when the attendant
    confirms it there: machine-started handpays confirmed in the window, paid or not, unless voided.
    """
    rows = (
        MachineReceipt.objects.filter(
            machine_id__in=machine_ids,
            source=MachineReceipt.Source.MACHINE,
            confirmed_at__gte=begin,
            confirmed_at__lt=finish,
        )
        .exclude(state=MachineReceipt.State.VOID)
        .values("machine_id")
        .annotate(n=Count("pk"), total=Sum("amount"))
    )
    return {row["machine_id"]: (row["n"], row["total"]) for row in rows}

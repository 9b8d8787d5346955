from decimal import Decimal

from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from cashdesk import forms, printing, selectors, services
from cashdesk.books import place_balances
from cashdesk.errors import CashDeskError
from cashdesk.handpay_forms import HandpayVoidForm
from cashdesk.items import ALL_ITEMS, Item
from cashdesk.models import CHECK_CODE_TRIES, CountRequest, HoldCase, ReversalRequest, Transfer
from cashdesk.reports import tray_count_exceptions
from cashdesk.services.handpays import handpay_void, open_handpays
from casino_office.money import format_money
from machines.models import Casino
from staff.access import StaffRequest, role_required, staff_casino
from tickets.desk import stuck_resolvable_from
from tickets.models import Ticket
from tickets.numbers import InvalidValidationNumber, parse_validation_number
from tickets.reconciliation import kiosk_dispensed_since_authorize
from tickets.selectors import offline_validation_by_machine, stuck_redemptions

SUPERVISOR = "staff.supervise_desk"
DECIDER = "staff.decide_hold"
# A manager decides the held tickets past their decision day (casino rules §1.7).
LATE_DECIDER = "staff.decide_late_hold"


@role_required(SUPERVISOR, DECIDER, LATE_DECIDER)
def supervisor_home(
    request: StaffRequest, failed_case: HoldCase | None = None, failed_decision: forms.DecideHoldForm | None = None
) -> HttpResponse:
    casino = staff_casino(request)
    is_supervisor = request.user.has_perm(SUPERVISOR)
    context = {
        "holds": selectors.pending_holds(casino),
        # Forms repeated on every row: no ids (they would repeat); each field is wrapped in its label.
        "decide_form": forms.DecideHoldForm(auto_id=False),
        # A refused decision: its row shows the form as it was sent, with why.
        "failed_case": failed_case,
        "failed_decision": failed_decision,
        "is_supervisor": is_supervisor,
    }
    if is_supervisor:
        context.update(
            transfers=selectors.transfers_to_approve(casino),
            reversals=selectors.reversals_to_approve(casino),
            stuck=stuck_redemptions(casino=casino),
            void_form=forms.VoidTicketForm(),
            reprint_form=forms.ReprintVoucherForm(prefix="reprint"),
            open_shifts=selectors.open_shifts(casino),
            handpays=open_handpays(casino.pk),
            handpay_void_form=HandpayVoidForm(auto_id=False),
            receipts_to_confirm=selectors.receipts_to_confirm(casino),
            # One form per row, each with its own one-time key.
            check_code_tries=CHECK_CODE_TRIES,
            locked_receipts=[
                (receipt, forms.OperationForm(auto_id=False)) for receipt in selectors.locked_receipts(casino)
            ],
            casino_receipt_limit=casino.receipt_confirmation_limit,
            offline_validation=offline_validation_by_machine(casino),
            counts=selectors.counts_to_approve(casino),
            vault_slips=selectors.slips_at_vault(casino),
            slip_voids=selectors.slip_voids_to_approve(casino),
            tray_differences=_tray_differences_today(casino),
            table_count_tolerance=casino.table_count_tolerance,
            count_decision_form=forms.CountDecisionForm(auto_id=False),
            casino_count_limit=casino.count_approval_limit,
        )
    return render(request, "cashdesk/supervisor.html", context)


def _tray_differences_today(casino: Casino) -> list[dict[str, object]]:
    """Today's table openings whose tray was off its last closing by more than the casino's tolerance."""
    today = casino.gaming_day(timezone.now())
    return tray_count_exceptions(casino, *casino.gaming_day_bounds(today, today))


def _done(request: StaffRequest, action: object, success: str) -> HttpResponse:
    try:
        action()  # type: ignore[operator]
    except CashDeskError as error:
        messages.error(request, error.message)
    else:
        messages.success(request, success)
    return redirect("supervisor")


@require_POST
@role_required(SUPERVISOR)
def approve_transfer(request: StaffRequest, pk: int) -> HttpResponse:
    transfer = get_object_or_404(Transfer, pk=pk, shift__desk__casino=staff_casino(request))
    return _done(
        request, lambda: services.transfer_approve(transfer=transfer, supervisor=request.user), _("Transfer approved.")
    )


@require_POST
@role_required(SUPERVISOR)
def approve_reversal(request: StaffRequest, pk: int) -> HttpResponse:
    reversal = get_object_or_404(ReversalRequest, pk=pk, original__casino=staff_casino(request))
    return _done(
        request, lambda: services.reversal_approve(request=reversal, supervisor=request.user), _("Reversal approved.")
    )


@require_POST
@role_required(SUPERVISOR)
def decide_count(request: StaffRequest, pk: int, approve: bool) -> HttpResponse:
    """Approve or reject a waiting count: a write-off above the limit, or a hand-over whose counts differ."""
    waiting = get_object_or_404(CountRequest, pk=pk, casino=staff_casino(request))
    form = forms.CountDecisionForm(request.POST)
    if not form.is_valid():
        messages.error(request, _("This form has expired; open it again from the menu."))
        return redirect("supervisor")
    key = form.cleaned_data["operation_key"]
    if approve:
        return _done(
            request,
            lambda: services.count_request_approve(
                request=waiting, supervisor=request.user, stands=form.cleaned_data["stands"], decision_key=key
            ),
            _("Count approved; its difference is posted."),
        )
    return _done(
        request,
        lambda: services.count_request_reject(request=waiting, supervisor=request.user, decision_key=key),
        _("Count rejected; nothing was posted. The place is counted again."),
    )


@require_POST
@role_required(DECIDER, LATE_DECIDER)
def decide_hold(request: StaffRequest, pk: int) -> HttpResponse:
    case = get_object_or_404(HoldCase.objects.select_related("casino"), pk=pk, casino=staff_casino(request))
    form = forms.DecideHoldForm(request.POST, auto_id=False)
    if not form.is_valid():
        messages.error(request, _("Choose pay or refuse."))
        return redirect("supervisor")
    pay = form.cleaned_data["decision"] == "pay"
    try:
        services.hold_decide(case=case, user=request.user, pay=pay, note=form.cleaned_data["note"])
    except CashDeskError as error:
        form.add_error(None, error.message)
        return supervisor_home(request, failed_case=case, failed_decision=form)
    messages.success(
        request,
        _("Decision recorded. A cashier can now pay the ticket.")
        if pay
        else _("Decision recorded. The ticket is void."),
    )
    return redirect("supervisor")


@role_required(SUPERVISOR)
def resolve_stuck(request: StaffRequest, pk: int) -> HttpResponse:
    """A stuck redemption resolved from the machine's meters; a kiosk's dispensed cash since the authorize shown."""
    ticket = get_object_or_404(Ticket.objects.select_related("holder_machine"), pk=pk, casino=staff_casino(request))
    form = forms.ResolveStuckForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            services.ticket_resolve_stuck(
                ticket=ticket,
                user=request.user,
                credits_taken=data["outcome"] == "taken",
                meter_reading=data["meter_reading"],
                reason=data["reason"],
            )
        except CashDeskError as error:
            form.add_error(None, error.message)
        else:
            messages.success(request, _("Stuck redemption resolved."))
            return redirect("supervisor")
    context = {
        "ticket": ticket,
        "form": form,
        "resolvable_from": stuck_resolvable_from(ticket),
        "dispensed": kiosk_dispensed_since_authorize(ticket),
    }
    return render(request, "cashdesk/resolve_stuck.html", context)


@require_POST
@role_required(SUPERVISOR)
def void_ticket(request: StaffRequest) -> HttpResponse:
    form = forms.VoidTicketForm(request.POST)
    if not form.is_valid():
        messages.error(request, _("Give the ticket number and the reason."))
        return redirect("supervisor")
    try:
        number = parse_validation_number(form.cleaned_data["number"])
    except InvalidValidationNumber:
        messages.error(request, _("This is not a valid ticket number."))
        return redirect("supervisor")
    ticket = Ticket.objects.filter(casino=staff_casino(request), validation_number=number).first()
    if ticket is None:
        messages.error(request, _("No such ticket in this casino."))
        return redirect("supervisor")
    return _done(
        request,
        lambda: services.ticket_void(ticket=ticket, user=request.user, reason=form.cleaned_data["reason"]),
        _("Ticket voided."),
    )


@require_POST
@role_required(SUPERVISOR)
def void_handpay(request: StaffRequest, pk: int) -> HttpResponse:
    form = HandpayVoidForm(request.POST)
    if not form.is_valid():
        messages.error(request, _("Give the reason for voiding the handpay."))
        return redirect("supervisor")
    return _done(
        request,
        lambda: handpay_void(
            receipt_id=pk, casino_id=staff_casino(request).pk, user=request.user, reason=form.cleaned_data["reason"]
        ),
        _("Handpay voided."),
    )


@require_POST
@role_required(SUPERVISOR)
def confirm_receipt(request: StaffRequest, pk: int) -> HttpResponse:
    return _done(
        request,
        lambda: services.machine_receipt_supervisor_confirm(
            receipt_id=pk, casino_id=staff_casino(request).pk, user=request.user
        ),
        _("Machine receipt confirmed; a cashier can now pay it."),
    )


@require_POST
@role_required(SUPERVISOR)
def unlock_receipt(request: StaffRequest, pk: int) -> HttpResponse:
    form = forms.OperationForm(request.POST)
    if not form.is_valid():
        messages.error(request, _("This form has expired; open it again from the menu."))
        return redirect("supervisor")
    return _done(
        request,
        lambda: services.machine_receipt_unlock(
            receipt_id=pk,
            casino_id=staff_casino(request).pk,
            user=request.user,
            operation_key=form.cleaned_data["operation_key"],
        ),
        _("Machine receipt unlocked; a cashier can pay it with its check code."),
    )


@require_POST
@role_required(SUPERVISOR)
def reprint_voucher(request: StaffRequest) -> HttpResponse:
    """A copy of a desk-sold voucher, for a supervisor who gives the reason; recorded in the ticket's history."""
    form = forms.ReprintVoucherForm(request.POST, prefix="reprint")
    if not form.is_valid():
        messages.error(request, _("Give the ticket number and the reason for the copy."))
        return redirect("supervisor")
    try:
        ticket = services.voucher_reprint(
            casino_id=staff_casino(request).pk,
            validation_number=form.cleaned_data["number"],
            user=request.user,
            reason=form.cleaned_data["reason"],
        )
    except CashDeskError as error:
        messages.error(request, error.message)
        return redirect("supervisor")
    response = HttpResponse(printing.voucher_pdf(ticket, copy=True), content_type="application/pdf")
    response["Content-Disposition"] = f'inline; filename="ticket-{ticket.sequence:06d}-copy.pdf"'
    return response


@role_required(SUPERVISOR)
def vault(request: StaffRequest) -> HttpResponse:
    """The vault's book balance, and the supervisor's count: the first brings its stock into the books."""
    casino = staff_casino(request)
    vault_desk = selectors.casino_vault(casino)
    if vault_desk is None:
        messages.error(request, _("This casino has no vault set up."))
        return redirect("supervisor")
    form = forms.KeyedCountForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            count = services.vault_count(
                vault=vault_desk,
                user=request.user,
                counted=form.counted(),
                operation_key=form.cleaned_data["operation_key"],
            )
        except CashDeskError as error:
            form.add_error(None, error.message)
        else:
            if isinstance(count, CountRequest):
                messages.warning(
                    request,
                    _(
                        "The count differs from the books by more than %(limit)s: it waits for a second supervisor's "
                        "approval, and the books keep their balance until then."
                    )
                    % {"limit": format_money(casino.count_approval_limit)},
                )
                return redirect("supervisor-vault")
            if vault_desk.counts.count() == 1:
                counted = sum((line.counted_amount for line in count.lines.all()), Decimal("0"))
                message = _("The vault's first count: %(amount)s entered the books.") % {
                    "amount": format_money(counted)
                }
            else:
                variance = sum((line.variance for line in count.lines.all()), Decimal("0"))
                message = _("Vault counted; difference from the books: %(variance)s.") % {
                    "variance": format_money(variance)
                }
            messages.success(request, message)
            return redirect("supervisor-vault")
    balances = place_balances(vault_desk)
    rows = [{"label": Item(item).label, "amount": balances[item]} for item in ALL_ITEMS]
    counts = vault_desk.counts.order_by("-counted_at").select_related("counted_by")[:10]
    return render(request, "cashdesk/vault.html", {"vault": vault_desk, "rows": rows, "form": form, "counts": counts})

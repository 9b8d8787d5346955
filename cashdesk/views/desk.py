"""The cashier's screen: works with a scanner and a keyboard alone."""

from decimal import Decimal
from typing import Any

from django.contrib import messages
from django.contrib.auth.models import User
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.formats import date_format
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from cashdesk import forms, selectors, services
from cashdesk.errors import CashDeskError
from cashdesk.items import ALL_ITEMS, DENOMINATIONS, Item
from cashdesk.models import CashTransaction, CountRequest, MachineReceipt, Shift, ShiftCount, TransactionKind
from cashdesk.views.common import (
    StaffRequest,
    not_admitted_flag,
    open_shift,
    role_required,
    staff_casino,
    visitors_offer,
)
from casino_office.errors import DomainError
from casino_office.money import cash_payout, format_money
from machines.models import Casino
from tickets.models import Ticket

CASHIER = "staff.operate_desk"


def _balances_context(shift: Shift, user: User) -> dict[str, Any]:
    """The side panel: the desk's running balances, or, with the casino's blind count, only whether its cash is
    over the limit (the cashier must drop), never a figure of what the desk should hold."""
    balances = services.shift_balances(shift)
    over_limit = balances[Item.CASH] > shift.desk.cash_limit
    if selectors.counts_blind(shift, user):
        return {"shift": shift, "blind_panel": True, "over_limit": over_limit}
    rows = []
    for item in ALL_ITEMS:
        pieces = int(balances[item] / DENOMINATIONS[item]) if item in DENOMINATIONS else None
        rows.append({"label": Item(item).label, "amount": balances[item], "pieces": pieces})
    return {
        "shift": shift,
        "balance_rows": rows,
        "over_limit": over_limit,
        "cash": balances[Item.CASH],
    }


def _shift_or_redirect(request: StaffRequest) -> Shift | None:
    shift = open_shift(request)
    if shift is None:
        messages.error(request, _("Open a shift first."))
    return shift


def _render(
    request: StaffRequest, template: str, shift: Shift | None, *, blind: bool = False, **context: Any
) -> HttpResponse:
    """A desk page with the shift's balances beside it; a blind count's page without them (the cashier counts
    what is there, not towards a figure shown)."""
    if shift is not None:
        context["identity_threshold"] = shift.desk.casino.identity_threshold
        visitors_offer(shift.desk.casino, *context.values())
        if blind:
            context.update(shift=shift, blind_count=True)
        else:
            context.update(_balances_context(shift, request.user))
    return render(request, template, context)


@role_required(CASHIER)
def desk_home(request: StaffRequest) -> HttpResponse:
    casino = staff_casino(request)
    shift = open_shift(request)
    if shift is None:
        form = forms.OpenShiftForm(request.POST or None, desks=selectors.free_desks(casino))
        if request.method == "POST" and form.is_valid():
            try:
                opened = services.shift_open(
                    desk=form.cleaned_data["desk"], cashier=request.user, counted=form.counted()
                )
                if opened.count_requests.filter(status=CountRequest.Status.WAITING).exists():
                    messages.warning(
                        request,
                        _(
                            "Your count differs from what the last count left by more than %(limit)s: a supervisor "
                            "approves it before the shift takes any transaction."
                        )
                        % {"limit": format_money(casino.count_approval_limit)},
                    )
                else:
                    messages.success(request, _("Shift opened."))
                return redirect("desk")
            except CashDeskError as error:
                form.add_error(None, error.message)
        handovers = selectors.handovers_to_count(casino, request.user)
        return render(request, "cashdesk/open_shift.html", {"form": form, "handovers": handovers})
    if shift.count_requests.filter(status__in=CountRequest.OPEN).exists():  # a hand-over or a count being decided
        messages.info(request, _("This shift's count waits for a decision; nothing more is done in it until then."))
    recent = selectors.recent_transactions(shift)
    slips = selectors.slips_at_cage(shift.desk)
    return _render(request, "cashdesk/desk.html", shift, number_form=forms.NumberForm(), recent=recent, slips=slips)


def _ticket_page(
    request: StaffRequest,
    shift: Shift,
    ticket: Ticket,
    refusal: str | None,
    pay_form: forms.PayTicketForm | None = None,
) -> HttpResponse:
    payout = cash_payout(ticket.amount)
    pay_form = pay_form or forms.PayTicketForm(initial={"number": ticket.validation_number})
    if payout > shift.desk.casino.identity_threshold or pay_form.identity_required:
        pay_form.require_identity()  # the person first, then Pay
    return _render(
        request,
        "cashdesk/ticket.html",
        shift,
        ticket=ticket,
        refusal=refusal,
        payout=payout,
        pay_form=pay_form,
        # Its own ids: the pay form beside it has a number and a key too.
        hold_form=forms.HoldForm(initial={"number": ticket.validation_number}, auto_id="id_hold_%s"),
    )


@role_required(CASHIER)
def ticket_lookup(request: StaffRequest) -> HttpResponse:
    """The scanned ticket. The number comes in the POST body: a number in a URL ends in access logs and
    browser histories, so a GET (an old bookmark, a typed ?number=) shows the desk and looks nothing up.
    The page answers the POST itself: a reload scans the ticket again; no URL leads to a ticket."""
    shift = _shift_or_redirect(request)
    if shift is None or request.method != "POST":
        return redirect("desk")
    number_form = forms.NumberForm(request.POST)
    if not number_form.is_valid():
        return redirect("desk")
    try:
        ticket, refusal = services.ticket_present(
            shift=shift, user=request.user, validation_number=number_form.cleaned_data["number"]
        )
    except CashDeskError as error:
        messages.error(request, error.message)
        return redirect("desk")
    return _ticket_page(request, shift, ticket, refusal[1] if refusal else None)


def _attempt(form: Any, action: Any) -> CashTransaction | None:
    """Validate, call one service; a refusal becomes a form error in plain words."""
    if not form.is_valid():
        return None
    try:
        return action(form)
    except DomainError as error:
        form.add_error(None, error.message)
        if error.code == "identity_required":
            form.require_identity()
    return None


def _run(request: StaffRequest, form: Any, action: Any, template: str, shift: Shift, **context: Any) -> HttpResponse:
    """Run a transaction form and show its receipt, or the form again with what went wrong."""
    tx = _attempt(form, action) if request.method == "POST" else None
    if tx is not None:
        not_admitted_flag(request, tx)
        return redirect("desk-transaction", pk=tx.pk)
    return _render(request, template, shift, form=form, **context)


@role_required(CASHIER)
def ticket_pay(request: StaffRequest) -> HttpResponse:
    shift = _shift_or_redirect(request)
    if shift is None or request.method != "POST":
        return redirect("desk")
    form = forms.PayTicketForm(request.POST)
    tx = _attempt(
        form,
        lambda f: services.ticket_payout(
            shift=shift,
            user=request.user,
            validation_number=f.cleaned_data["number"],
            identity=f.identity(),
            printed_amount=f.cleaned_data.get("printed_amount"),
            operation_key=f.cleaned_data["operation_key"],
        ),
    )
    if tx is not None:
        not_admitted_flag(request, tx)
        return redirect("desk-transaction", pk=tx.pk)
    # Back to the ticket, with what went wrong; the ticket is shown as it is now.
    # The number as the form cleaned it: the raw field may hold what no lookup can take (a NUL).
    number = form.cleaned_data.get("number", "")
    ticket = Ticket.objects.filter(casino=shift.desk.casino, validation_number=number).first() if number else None
    if ticket is None:
        messages.error(request, _("No such ticket in this casino."))
        return redirect("desk")
    return _ticket_page(request, shift, ticket, None, pay_form=form)


@role_required(CASHIER)
def ticket_hold(request: StaffRequest) -> HttpResponse:
    shift = _shift_or_redirect(request)
    if shift is None or request.method != "POST":
        return redirect("desk")
    form = forms.HoldForm(request.POST)
    if form.is_valid():
        try:
            case = services.ticket_hold(
                shift=shift,
                user=request.user,
                validation_number=form.cleaned_data["number"],
                reason=form.cleaned_data["reason"],
                note=form.cleaned_data["note"],
                operation_key=form.cleaned_data["operation_key"],
            )
        except CashDeskError as error:
            messages.error(request, error.message)
        else:
            messages.warning(
                request,
                _("Ticket put on hold: case %(case)s, decision due %(due)s.")
                % {"case": case.pk, "due": date_format(case.decision_due, "SHORT_DATE_FORMAT")},
            )
    return redirect("desk")


def _simple(template_title: Any, form_class: Any, call: Any, intro: Any = "") -> Any:
    @role_required(CASHIER)
    def view(request: StaffRequest) -> HttpResponse:
        shift = _shift_or_redirect(request)
        if shift is None:
            return redirect("desk")
        form = form_class(request.POST or None)
        return _run(
            request,
            form,
            lambda f: call(request, shift, f),
            "cashdesk/form.html",
            shift,
            title=template_title,
            intro=intro,
        )

    return view


sell = _simple(
    gettext_lazy("Sell a ticket"),
    forms.SellForm,
    lambda r, s, f: services.ticket_sell(
        shift=s,
        user=r.user,
        amount=f.cleaned_data["amount"],
        identity=f.identity(),
        operation_key=f.cleaned_data["operation_key"],
    ),
)


def _chips(request: StaffRequest, shift: Shift, form: forms.ChipsForm) -> CashTransaction:
    call = services.chips_buy if form.cleaned_data["direction"] == "buy" else services.chips_cashout
    return call(
        shift=shift,
        user=request.user,
        chips=form.chips(),
        identity=form.identity(),
        operation_key=form.cleaned_data["operation_key"],
    )


# Colour chips have no place at a cash desk (casino rules): the player goes back to the table that issued them.
chips = _simple(
    gettext_lazy("Value chips"),
    forms.ChipsForm,
    _chips,
    intro=gettext_lazy(
        "Value chips only. Colour chips are exchanged back only at the table where they were bought, never for "
        "cash: send the player back to that table."
    ),
)


def _tokens(request: StaffRequest, shift: Shift, form: forms.TokensForm) -> CashTransaction:
    call = services.tokens_buy if form.cleaned_data["direction"] == "buy" else services.tokens_cashout
    return call(
        shift=shift,
        user=request.user,
        count=form.cleaned_data["count"],
        identity=form.identity(),
        operation_key=form.cleaned_data["operation_key"],
    )


tokens = _simple(gettext_lazy("Slot tokens"), forms.TokensForm, _tokens)
smartcard = _simple(
    gettext_lazy("Smart card payout"),
    forms.SmartCardForm,
    lambda r, s, f: services.smartcard_payout(
        shift=s,
        user=r.user,
        card_number=f.cleaned_data["card_number"],
        credits=f.cleaned_data["credits"],
        card_counter=f.cleaned_data["card_counter"],
        identity=f.identity(),
        operation_key=f.cleaned_data["operation_key"],
    ),
)
smartcard_load = _simple(
    gettext_lazy("Cash onto a smart card"),
    forms.SmartCardLoadForm,
    lambda r, s, f: services.smartcard_load(
        shift=s,
        user=r.user,
        card_number=f.cleaned_data["card_number"],
        amount=f.cleaned_data["amount"],
        card_counter=f.cleaned_data["card_counter"],
        identity=f.identity(),
        operation_key=f.cleaned_data["operation_key"],
    ),
)
receipt_payout = _simple(
    gettext_lazy("Pay a machine receipt"),
    forms.ReceiptPayoutForm,
    lambda r, s, f: services.machine_receipt_pay(
        shift=s,
        user=r.user,
        number=f.cleaned_data["receipt_number"],
        check_code=f.cleaned_data["check_code"],
        identity=f.identity(),
        operation_key=f.cleaned_data["operation_key"],
    ),
)


@role_required(CASHIER)
def transfer(request: StaffRequest) -> HttpResponse:
    shift = _shift_or_redirect(request)
    if shift is None:
        return redirect("desk")
    form = forms.TransferForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            services.transfer_request(
                shift=shift,
                user=request.user,
                direction=form.cleaned_data["direction"],
                amount=form.cleaned_data["amount"],
                chips_and_tokens=form.chips_and_tokens(),
                operation_key=form.cleaned_data["operation_key"],
            )
        except CashDeskError as error:
            form.add_error(None, error.message)
        else:
            messages.info(request, _("Transfer requested; a supervisor approves it."))
            return redirect("desk")
    return _render(request, "cashdesk/form.html", shift, form=form, title=_("Vault transfer"))


@role_required(CASHIER)
def reversal(request: StaffRequest, pk: int) -> HttpResponse:
    shift = _shift_or_redirect(request)
    if shift is None:
        return redirect("desk")
    original = get_object_or_404(CashTransaction, pk=pk, shift=shift)
    form = forms.ReasonForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            services.reversal_request(
                original=original,
                user=request.user,
                reason=form.cleaned_data["reason"],
                operation_key=form.cleaned_data["operation_key"],
            )
        except CashDeskError as error:
            form.add_error(None, error.message)
        else:
            messages.info(request, _("Reversal requested; a supervisor other than you approves it."))
            return redirect("desk")
    described = f"{original.receipt_number} · {original.get_kind_display()} · {format_money(original.amount)}"
    title = _("Reverse %(transaction)s") % {"transaction": described}
    return _render(request, "cashdesk/form.html", shift, form=form, title=title)


def _count_view(request: StaffRequest, handover: bool) -> HttpResponse:
    shift = _shift_or_redirect(request)
    if shift is None:
        return redirect("desk")
    casino = staff_casino(request)
    if handover:
        cashiers = selectors.cashiers_to_hand_over_to(casino, request.user)
        form: forms.CountForm = forms.HandoverForm(request.POST or None, cashiers=cashiers)
    else:
        form = forms.CountForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            if handover:
                next_cashier = form.cleaned_data["next_cashier"]
                services.shift_handover(
                    shift=shift,
                    user=request.user,
                    counted=form.counted(),
                    next_cashier=next_cashier,
                    operation_key=form.cleaned_data["operation_key"],
                )
            else:
                count = services.shift_close(shift=shift, user=request.user, counted=form.counted())
        except CashDeskError as error:
            form.add_error(None, error.message)
        else:
            if handover:
                return _handed_over(request, shift, next_cashier)
            return _closed(request, shift, count, casino)
    # Blind: the expected balances appear only after the count, on the shift's summary.
    return _render(
        request,
        "cashdesk/form.html",
        shift,
        blind=True,
        form=form,
        title=_("Hand over the shift") if handover else _("Close the shift"),
        intro=_("Count what is in the desk. The expected figures and the variance are shown after the count."),
    )


def _handed_over(request: StaffRequest, shift: Shift, next_cashier: User) -> HttpResponse:
    """Back to the desk, saying the shift passes to the next cashier once they have counted too."""
    messages.info(
        request,
        _("Shift %(number)s is handed over to %(cashier)s once they have counted the desk too.")
        % {"number": shift.pk, "cashier": next_cashier.get_username()},
    )
    return redirect("desk")


def _closed(request: StaffRequest, shift: Shift, count: ShiftCount | CountRequest, casino: Casino) -> HttpResponse:
    """The shift's summary with what was counted, or back to the desk when a supervisor must approve the count."""
    if isinstance(count, CountRequest):
        messages.warning(
            request,
            _(
                "The count differs from the books by more than %(limit)s: a supervisor approves it before "
                "the shift closes. Nothing more is done in the shift until then."
            )
            % {"limit": format_money(casino.count_approval_limit)},
        )
        return redirect("desk")
    lines = list(count.lines.all())
    figures = {
        "number": shift.pk,
        "counted": format_money(sum((line.counted_amount for line in lines), Decimal(0))),
        "variance": format_money(sum((line.variance for line in lines), Decimal(0))),
    }
    message = _("Shift %(number)s closed: counted %(counted)s, variance %(variance)s.")
    messages.success(request, message % figures)
    return redirect("shift-summary", pk=shift.pk)


@role_required(CASHIER)
def take_over(request: StaffRequest, pk: int) -> HttpResponse:
    """The incoming cashier's own count of the desk handed over to them, blind like every shift count."""
    handover = get_object_or_404(
        CountRequest, pk=pk, casino=staff_casino(request), next_cashier=request.user, kind=ShiftCount.Kind.HANDOVER
    )
    form = forms.KeyedCountForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            handover = services.handover_take_over(
                request=handover,
                user=request.user,
                counted=form.counted(),
                operation_key=form.cleaned_data["operation_key"],
            )
        except CashDeskError as error:
            form.add_error(None, error.message)
        else:
            if handover.status == CountRequest.Status.DONE:
                messages.success(request, _("Your count agrees: the shift is yours."))
            elif handover.next_counted == handover.counted:
                messages.warning(
                    request,
                    _(
                        "Your count agrees with the outgoing cashier's, but it differs from the books by more than "
                        "the casino's limit: a supervisor approves the hand-over."
                    ),
                )
            else:
                messages.warning(
                    request, _("Your count differs from the outgoing cashier's: a supervisor decides the hand-over.")
                )
            return redirect("desk")
    return render(
        request,
        "cashdesk/form.html",
        {
            "form": form,
            "title": _("Take over %(desk)s from %(cashier)s")
            % {"desk": handover.desk.name, "cashier": handover.counted_by.get_username()},
            "intro": _("Count what is in the desk yourself; the outgoing cashier's figures are not shown."),
        },
    )


@role_required(CASHIER)
def close_shift(request: StaffRequest) -> HttpResponse:
    return _count_view(request, handover=False)


@role_required(CASHIER)
def handover(request: StaffRequest) -> HttpResponse:
    return _count_view(request, handover=True)


@role_required(CASHIER, "staff.supervise_desk", "staff.view_reports")
def shift_summary(request: StaffRequest, pk: int) -> HttpResponse:
    shift = get_object_or_404(Shift.objects.select_related("desk"), pk=pk, desk__casino=staff_casino(request))
    may_see_all = request.user.has_perm("staff.supervise_desk") or request.user.has_perm("staff.view_reports")
    if not may_see_all and shift.cashier_id != request.user.pk:
        return redirect("desk")
    counts = []
    for count in shift.counts.prefetch_related("lines").order_by("counted_at"):
        lines = list(count.lines.all())
        counts.append(
            {
                "count": count,
                "lines": lines,
                "expected": sum((line.expected_amount for line in lines), Decimal(0)),
                "counted": sum((line.counted_amount for line in lines), Decimal(0)),
                "variance": sum((line.variance for line in lines), Decimal(0)),
            }
        )
    context = {"summary_shift": shift, "counts": counts, "report_withheld": selectors.counts_blind(shift, request.user)}
    return render(request, "cashdesk/shift_summary.html", context)


@role_required(CASHIER, "staff.supervise_desk")
def transaction_detail(request: StaffRequest, pk: int) -> HttpResponse:
    tx = get_object_or_404(
        CashTransaction.objects.select_related("desk", "ticket", "shift", "created_by", "reverses"),
        pk=pk,
        casino=staff_casino(request),
    )
    if not request.user.has_perm("staff.supervise_desk") and tx.created_by_id != request.user.pk:
        return redirect("desk")
    shift = open_shift(request)
    # The receipt as printed (printing.receipt_pdf): the desk's side of each movement.
    movements = [
        {
            "label": Item(leg.item).label,
            "pieces": abs(leg.count) if leg.count is not None else None,
            "incoming": leg.amount > 0,
            "amount": abs(leg.amount),
        }
        for leg in tx.legs.filter(desk=tx.desk).order_by("pk")
    ]
    return _render(
        request,
        "cashdesk/transaction.html",
        shift,
        tx=tx,
        movements=movements,
        receipt_url=reverse("receipt-pdf", args=[tx.pk]),
        reversible=tx.kind in services.REVERSIBLE_KINDS,
        ticket_sale=tx.kind == TransactionKind.TICKET_SALE,
        total=Decimal(tx.amount),
        machine_receipt=MachineReceipt.objects.filter(paid_by=tx).select_related("machine").first(),
    )

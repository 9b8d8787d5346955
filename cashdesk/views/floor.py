from django.contrib import messages
from django.db.models import Q
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from cashdesk import forms, printing, selectors, services
from cashdesk.errors import CashDeskError
from cashdesk.handpay_forms import HandpayConfirmForm
from cashdesk.models import MachineReceipt
from cashdesk.services.handpays import handpay_confirm, requested_handpays
from machines.models import Machine
from staff.access import StaffRequest, role_required, staff_casino

FLOOR = "staff.record_receipt"


@role_required(FLOOR)
def machine_receipts(request: StaffRequest) -> HttpResponse:
    casino = staff_casino(request)
    form = forms.MachineReceiptForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        machine = Machine.objects.filter(casino=casino, asset_number=form.cleaned_data["asset_number"]).first()
        if machine is None:
            form.add_error("asset_number", _("No machine with this asset number in this casino."))
        else:
            try:
                receipt = services.machine_receipt_record(
                    machine=machine,
                    amount=form.cleaned_data["amount"],
                    reason=form.cleaned_data["reason"],
                    user=request.user,
                )
            except CashDeskError as error:
                form.add_error(None, error.message)
            else:
                messages.success(
                    request,
                    _("Receipt %(number)s (check code %(code)s) recorded; print it for the player.")
                    % {"number": receipt.number, "code": receipt.check_code},
                )
                return redirect("floor-receipts")
    context = {
        "form": form,
        "receipts": selectors.recent_machine_receipts(casino),
        # One form per row, each with its own one-time key.
        "handpays": [(handpay, HandpayConfirmForm(auto_id=False)) for handpay in requested_handpays(casino.pk)],
    }
    return render(request, "cashdesk/floor.html", context)


@require_POST
@role_required(FLOOR)
def handpay_confirm_view(request: StaffRequest, pk: int) -> HttpResponse:
    """Confirmed at the machine: the attendant's browser goes straight to the receipt to print."""
    form = HandpayConfirmForm(request.POST)
    if not form.is_valid():
        messages.error(request, _("This form has expired; open it again from the menu."))
        return redirect("floor-receipts")
    try:
        receipt = handpay_confirm(
            receipt_id=pk,
            casino_id=staff_casino(request).pk,
            user=request.user,
            operation_key=form.cleaned_data["operation_key"],
        )
    except CashDeskError as error:
        messages.error(request, error.message)
        return redirect("floor-receipts")
    messages.success(
        request,
        _("Handpay %(number)s confirmed; give the player the printed receipt.") % {"number": receipt.display_number},
    )
    return redirect("floor-receipt-pdf", pk=receipt.pk)


@role_required(FLOOR)
def receipt_pdf(request: StaffRequest, pk: int) -> HttpResponse:
    """A machine receipt for the attendant who wrote it or confirmed it at the machine."""
    user = request.user
    receipt = get_object_or_404(
        MachineReceipt.objects.filter(Q(created_by=user) | Q(confirmed_by=user)).exclude(
            state__in=[MachineReceipt.State.REQUESTED, MachineReceipt.State.VOID]
        ),
        pk=pk,
        casino=staff_casino(request),
    )
    response = HttpResponse(printing.machine_receipt_pdf(receipt), content_type="application/pdf")
    response["Content-Disposition"] = f'inline; filename="machine-receipt-{receipt.pk}.pdf"'
    return response

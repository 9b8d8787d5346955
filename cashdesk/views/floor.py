from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _

from cashdesk import forms, selectors, services
from cashdesk.errors import CashDeskError
from machines.models import Machine
from staff.access import StaffRequest, role_required, staff_casino


@role_required("staff.record_receipt")
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
    receipts = selectors.recent_machine_receipts(casino)
    return render(request, "cashdesk/floor.html", {"form": form, "receipts": receipts})

from django.http import HttpResponse
from django.shortcuts import get_object_or_404

from cashdesk import printing
from cashdesk.models import CashTransaction, MachineReceipt, Shift
from staff.access import StaffRequest, role_required, staff_casino
from tickets.models import Ticket


def _pdf(data: bytes, name: str) -> HttpResponse:
    response = HttpResponse(data, content_type="application/pdf")
    response["Content-Disposition"] = f'inline; filename="{name}.pdf"'
    # The transaction page shows the receipt in a frame, ready to print.
    response["X-Frame-Options"] = "SAMEORIGIN"
    return response


@role_required("staff.operate_desk", "staff.supervise_desk")
def receipt_pdf(request: StaffRequest, pk: int) -> HttpResponse:
    tx = get_object_or_404(CashTransaction, pk=pk, casino=staff_casino(request))
    return _pdf(printing.receipt_pdf(tx), f"receipt-{tx.receipt_number}")


@role_required("staff.operate_desk", "staff.supervise_desk")
def voucher_pdf(request: StaffRequest, pk: int) -> HttpResponse:
    ticket = get_object_or_404(Ticket, pk=pk, casino=staff_casino(request), issuing_desk__isnull=False)
    return _pdf(printing.voucher_pdf(ticket), f"ticket-{ticket.validation_number}")


@role_required("staff.operate_desk", "staff.supervise_desk", "staff.view_reports")
def shift_report_pdf(request: StaffRequest, pk: int) -> HttpResponse:
    shift = get_object_or_404(Shift, pk=pk, desk__casino=staff_casino(request))
    is_own = shift.cashier_id == request.user.pk
    if not (is_own or request.user.has_perm("staff.supervise_desk") or request.user.has_perm("staff.view_reports")):
        return HttpResponse(status=403)
    kind = "z" if shift.closed_at else "x"
    return _pdf(printing.shift_report_pdf(shift), f"{kind}-report-shift-{shift.pk}")


@role_required("staff.record_receipt", "staff.operate_desk")
def machine_receipt_pdf(request: StaffRequest, pk: int) -> HttpResponse:
    receipt = get_object_or_404(MachineReceipt, pk=pk, casino=staff_casino(request))
    return _pdf(printing.machine_receipt_pdf(receipt), f"machine-receipt-{receipt.number}")

from django.db.models import Q
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404
from django.utils import timezone
from django.utils.translation import gettext as _

from cashdesk import printing, selectors, services
from cashdesk.errors import CashDeskError
from cashdesk.models import CashTransaction, MachineReceipt, Shift, TableSlip
from machines.models import GamingTable, table_limit_on
from staff.access import StaffRequest, role_required, staff_casino


def _pdf(data: bytes, name: str) -> HttpResponse:
    response = HttpResponse(data, content_type="application/pdf")
    response["Content-Disposition"] = f'inline; filename="{name}.pdf"'
    # The transaction page shows the receipt in a frame, ready to print.
    response["X-Frame-Options"] = "SAMEORIGIN"
    return response


@role_required("staff.operate_desk", "staff.supervise_desk", "staff.view_reports")
def receipt_pdf(request: StaffRequest, pk: int) -> HttpResponse:
    """A receipt: to the cashier who made it, to supervisors and to managers; another cashier finds nothing."""
    receipts = CashTransaction.objects.filter(casino=staff_casino(request))
    user = request.user
    if not (user.has_perm("staff.supervise_desk") or user.has_perm("staff.view_reports")):
        receipts = receipts.filter(created_by=user)
    tx = get_object_or_404(receipts, pk=pk)
    return _pdf(printing.receipt_pdf(tx), f"receipt-{tx.pk}")


@role_required("staff.operate_desk")
def voucher_pdf(request: StaffRequest, pk: int) -> HttpResponse:
    """A desk-sold ticket's voucher: only to the cashier who sold it, while that shift is open and it is valid.

    Afterwards a shift supervisor reprints it as a copy, giving a reason (supervisor.reprint_voucher).
    """
    try:
        ticket = services.voucher_print(casino_id=staff_casino(request).pk, ticket_id=pk, user=request.user)
    except CashDeskError:
        raise Http404(_("No such ticket of yours to print.")) from None
    return _pdf(printing.voucher_pdf(ticket), f"ticket-{ticket.sequence:06d}")


@role_required("staff.operate_desk", "staff.supervise_desk", "staff.view_reports")
def shift_report_pdf(request: StaffRequest, pk: int) -> HttpResponse:
    shift = get_object_or_404(Shift, pk=pk, desk__casino=staff_casino(request))
    is_own = shift.cashier_id == request.user.pk
    if not (is_own or request.user.has_perm("staff.supervise_desk") or request.user.has_perm("staff.view_reports")):
        return HttpResponse(status=403)
    # The X report is a supervisor's mid-shift reading: with the blind count, the shift's own cashier sees
    # no expected balance until the closing count (then the Z report).
    if selectors.counts_blind(shift, request.user):
        return HttpResponse(status=403)
    kind = "z" if shift.closed_at else "x"
    return _pdf(printing.shift_report_pdf(shift), f"{kind}-report-shift-{shift.pk}")


@role_required("staff.record_receipt", "staff.operate_desk")
def machine_receipt_pdf(request: StaffRequest, pk: int) -> HttpResponse:
    """A machine receipt: to the floor attendant who recorded it and to the cashier who paid it."""
    user = request.user
    receipt = get_object_or_404(
        MachineReceipt.objects.filter(Q(created_by=user) | Q(paid_by__created_by=user)),
        pk=pk,
        casino=staff_casino(request),
    )
    return _pdf(printing.machine_receipt_pdf(receipt), f"machine-receipt-{receipt.pk}")


@role_required("staff.work_pit", "staff.view_reports")
def table_sign_pdf(request: StaffRequest, pk: int) -> HttpResponse:
    """A gaming table's sign (A5), with the limits in force this gaming day."""
    casino = staff_casino(request)
    table = get_object_or_404(GamingTable, pk=pk, casino=casino)
    limit = table_limit_on(table, casino.gaming_day(timezone.now()))
    return _pdf(printing.table_sign_pdf(table, limit), f"table-sign-{table.number}")


@role_required("staff.work_pit", "staff.operate_desk", "staff.supervise_desk")
def table_slip_pdf(request: StaffRequest, pk: int) -> HttpResponse:
    """A fill or credit slip (issue 24) on two parts: for the cage and for the table."""
    slip = get_object_or_404(
        TableSlip.objects.select_related("table__casino", "cage", "requested_by", "issued_by", "confirmed_by"),
        pk=pk,
        casino=staff_casino(request),
    )
    return _pdf(printing.table_slip_pdf(slip), f"slip-{slip.number_display}")

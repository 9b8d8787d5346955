"""Fill and credit slips (issue 24): asked for and confirmed at the table by the pit supervisor, issued at the cage
by the desk's cashier (or a shift supervisor at the vault), voided by two people, printed on two parts."""

from collections.abc import Callable

from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from cashdesk.errors import CashDeskError
from cashdesk.forms import SlipVoidForm
from cashdesk.models import TableSlip
from cashdesk.services import table_slips
from staff.access import StaffRequest, role_required, staff_casino

PIT, CASHIER, SUPERVISOR = "staff.work_pit", "staff.operate_desk", "staff.supervise_desk"


def _slip(request: StaffRequest, pk: int) -> TableSlip:
    return get_object_or_404(
        TableSlip.objects.select_related("table__casino", "cage", "requested_by", "issued_by", "confirmed_by"),
        pk=pk,
        casino=staff_casino(request),
    )


def _to_table(slip: TableSlip) -> HttpResponse:
    return redirect("pit-session", pk=slip.session_id)


def _to_cage(request: StaffRequest) -> HttpResponse:
    """The desk for its cashier, supervision (where the vault's slips wait) for a shift supervisor."""
    return redirect("desk" if request.user.has_perm(CASHIER) else "supervisor")


def _step(
    request: StaffRequest, pk: int, action: Callable[[TableSlip], TableSlip], done: str, back: HttpResponse | None
) -> HttpResponse:
    """Run one step on the slip; back to the page it was taken on (`back`, or the slip's table)."""
    slip = _slip(request, pk)
    try:
        slip = action(slip)
    except CashDeskError as error:
        messages.error(request, error.message)
    else:
        messages.success(request, done % {"number": slip.number_display})
    return back or _to_table(slip)


@require_POST
@role_required(CASHIER, SUPERVISOR)
def slip_issue(request: StaffRequest, pk: int) -> HttpResponse:
    return _step(
        request,
        pk,
        lambda slip: table_slips.slip_issue(slip=slip, user=request.user),
        _("Slip %(number)s is issued: print it, sign it and send it to the table with the chips."),
        _to_cage(request),
    )


@require_POST
@role_required(PIT)
def slip_confirm(request: StaffRequest, pk: int) -> HttpResponse:
    return _step(
        request,
        pk,
        lambda slip: table_slips.slip_confirm(slip=slip, user=request.user),
        _("Slip %(number)s is confirmed: the chips are in the books."),
        None,
    )


@require_POST
@role_required(PIT, CASHIER, SUPERVISOR)
def slip_void_ask(request: StaffRequest, pk: int) -> HttpResponse:
    form = SlipVoidForm(request.POST)
    back = None if request.user.has_perm(PIT) else _to_cage(request)
    if not form.is_valid():
        messages.error(request, _("Say why the slip is voided."))
        return back or _to_table(_slip(request, pk))
    return _step(
        request,
        pk,
        lambda slip: table_slips.slip_void_ask(slip=slip, user=request.user, reason=form.cleaned_data["reason"]),
        _("The void of slip %(number)s waits for a shift supervisor."),
        back,
    )


@require_POST
@role_required(SUPERVISOR)
def slip_void(request: StaffRequest, pk: int) -> HttpResponse:
    return _step(
        request,
        pk,
        lambda slip: table_slips.slip_void(slip=slip, user=request.user),
        _("Slip %(number)s is voided; it stays in the series."),
        redirect("supervisor"),
    )

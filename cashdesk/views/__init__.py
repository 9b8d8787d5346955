from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render


@login_required
def home(request: HttpRequest) -> HttpResponse:
    """Each role starts on its own page."""
    user = request.user
    for perm, target in (
        ("staff.operate_desk", "desk"),
        ("staff.view_dashboard", "dashboard"),
        ("compliance.manage_alerts", "compliance-register"),
        ("staff.approve_count", "count-room"),
        ("staff.view_reports", "reports"),
        ("staff.decide_hold", "supervisor"),
        ("staff.record_receipt", "floor-receipts"),
        ("staff.work_pit", "pit"),
        ("staff.count_boxes", "count-room"),
        ("staff.drop_boxes", "count-room"),
        ("staff.admit_visitors", "reception"),
    ):
        if user.has_perm(perm):
            return redirect(target)
    return render(request, "cashdesk/no_role.html", status=403)


def csrf_failure(request: HttpRequest, reason: str = "") -> HttpResponse:
    """A form refused by the CSRF check (an expired session, a page kept open overnight), in the staff's language."""
    return render(request, "403_csrf.html", status=403)

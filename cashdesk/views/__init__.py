from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render


@login_required
def home(request: HttpRequest) -> HttpResponse:
    """Each role starts on its own page."""
    user = request.user
    for perm, target in (
        ("cashdesk.operate_desk", "desk"),
        ("cashdesk.supervise_desk", "supervisor"),
        ("compliance.manage_alerts", "compliance-register"),
        ("cashdesk.view_reports", "reports"),
        ("cashdesk.decide_hold", "supervisor"),
        ("cashdesk.record_receipt", "floor-receipts"),
    ):
        if user.has_perm(perm):
            return redirect(target)
    return render(request, "cashdesk/no_role.html", status=403)

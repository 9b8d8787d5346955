from django.http import HttpRequest

from cashdesk.models import Shift
from staff.access import StaffRequest, role_required, staff_casino

__all__ = ["StaffRequest", "open_shift", "role_required", "staff_casino"]


def open_shift(request: HttpRequest) -> Shift | None:
    return (
        Shift.objects.select_related("desk", "desk__casino")
        .filter(cashier_id=request.user.pk or 0, closed_at__isnull=True)
        .first()
    )

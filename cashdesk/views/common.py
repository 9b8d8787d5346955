from typing import Any

from django.contrib import messages
from django.http import HttpRequest
from django.utils import timezone
from django.utils.translation import gettext as _

from cashdesk.forms import PersonFieldsForm
from cashdesk.models import CashTransaction, Shift
from compliance.services.entry import admitted_today, visitors_today
from machines.models import Casino
from staff.access import StaffRequest, role_required, staff_casino

__all__ = [
    "StaffRequest",
    "not_admitted_flag",
    "open_shift",
    "role_required",
    "staff_casino",
    "visitors_offer",
]


def open_shift(request: HttpRequest) -> Shift | None:
    return (
        Shift.objects.select_related("desk", "desk__casino")
        .filter(cashier_id=request.user.pk or 0, closed_at__isnull=True)
        .first()
    )


def visitors_offer(casino: Casino, *forms: Any) -> None:
    """Today's admitted visitors, to pick from, on each form of the page that names a person (issue 26)."""
    person_forms = [form for form in forms if isinstance(form, PersonFieldsForm) and form.wants_visitors()]
    if not person_forms:
        return
    now = timezone.now()
    visits = visitors_today(casino, now)
    for form in person_forms:
        form.offer_visitors(visits, zone=casino.zoneinfo, today=casino.gaming_day(now))


def not_admitted_flag(request: HttpRequest, transaction_: CashTransaction) -> None:
    """A person identified at the desk who did not come in through the door today is flagged to the cashier."""
    if transaction_.person is None or transaction_.visit_id is not None:
        return
    casino = transaction_.casino
    if not admitted_today(casino=casino, person=transaction_.person, at=transaction_.created_at):
        messages.warning(
            request,
            _("This person was not admitted at the door today: ask how they came in, and tell the shift supervisor."),
        )

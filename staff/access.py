"""Roles checked on the server and tenancy: every page and service sees only its staff member's casino."""

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.utils.translation import gettext as _

from machines.models import Casino
from staff.models import StaffAssignment


class StaffRequest(HttpRequest):
    """A request that passed role_required: its user is a logged-in member of staff."""

    user: User


def staff_casino(request: HttpRequest) -> Casino:
    assignment = StaffAssignment.objects.select_related("casino").filter(user_id=request.user.pk or 0).first()
    if assignment is None:
        raise PermissionDenied(_("You are not assigned to a casino."))
    return assignment.casino


def role_required(*perms: str) -> Callable[[Callable[..., HttpResponse]], Callable[..., HttpResponse]]:
    """Login, the permission (any of `perms`) and a casino assignment, checked on every request."""

    def decorator(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
        @login_required
        @wraps(view)
        def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
            if not any(request.user.has_perm(perm) for perm in perms):
                raise PermissionDenied(_("Your role does not allow this page."))
            staff_casino(request)
            return view(request, *args, **kwargs)

        return wrapped

    return decorator

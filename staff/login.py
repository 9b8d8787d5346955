"""Logging in: the client's address behind nginx, how failed logins are forgotten, the lockout page, and
who needs a second factor. django-axes counts the failures (settings: the "Login" section)."""

import ipaddress
from typing import Any

from axes.handlers.database import AxesDatabaseHandler
from axes.helpers import get_client_username, get_cool_off
from axes.models import AccessAttempt
from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser, User
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from staff.roles import SECOND_FACTOR_PERMISSIONS, SECOND_FACTOR_ROLES


def _address(text: str) -> str | None:
    try:
        return str(ipaddress.ip_address(text.strip()))
    except ValueError:
        return None


def client_address(request: HttpRequest) -> str:
    """The address the login came from (AXES_CLIENT_IP_CALLABLE).

    X-Forwarded-For is believed only from nginx (TRUSTED_PROXY_IPS, the addresses gunicorn's
    forwarded_allow_ips trusts); nginx appends the address it saw to the right of whatever the client
    sent, so the right-most entry that is not a proxy is the client. Anyone else's header is ignored.
    """
    remote = request.META.get("REMOTE_ADDR", "")
    if remote not in settings.TRUSTED_PROXY_IPS:
        return remote
    for entry in reversed(request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")):
        address = _address(entry)
        if address is None:
            return remote  # a header nginx did not write: trust nothing in it
        if address not in settings.TRUSTED_PROXY_IPS:
            return address
    return remote


# axes stores the username of a failed try in a varchar(255) (AccessAttempt.username).
USERNAME_STORED_LENGTH = 255


def client_username(request: HttpRequest, credentials: dict[str, Any] | None = None) -> str:
    """The username a login try counts against (AXES_USERNAME_CALLABLE): as typed, cut to what axes stores.

    A longer name was a 500 and went uncounted; cut, every name sharing the first 255 characters counts
    against one account, so varying the tail gains a guesser nothing.
    """
    field = str(getattr(settings, "AXES_USERNAME_FORM_FIELD", "username"))  # axes.conf sets it (the user model's)
    value = credentials.get(field) if credentials else request.POST.get(field)
    return str(value or "")[:USERNAME_STORED_LENGTH]


class StaffLoginHandler(AxesDatabaseHandler):
    """axes' database handler, except that a good login forgets only that account's failures.

    axes would also forget every failure from the same address (AXES_RESET_ON_SUCCESS with the address
    as a lockout parameter), so logging into one's own account would wipe the guesses at a colleague's
    made from that terminal and let them go on for ever.
    """

    def reset_user_attempts(self, request: HttpRequest, credentials: dict[str, Any] | None = None) -> int:
        username = get_client_username(request, credentials)
        if not username:
            return 0
        count, _ = AccessAttempt.objects.filter(username=username).delete()
        return count


def lockout_response(
    request: HttpRequest, original_response: HttpResponse | None = None, credentials: dict[str, Any] | None = None
) -> HttpResponse:
    """The page shown instead of the login form while an account or an address is locked (AXES_LOCKOUT_CALLABLE)."""
    cool_off = get_cool_off(request)
    minutes = int(cool_off.total_seconds() // 60) if cool_off else 0
    response = render(request, "staff/locked_out.html", {"minutes": minutes}, status=429)
    if cool_off:
        response["Retry-After"] = str(int(cool_off.total_seconds()))
    return response


def needs_second_factor(user: AbstractBaseUser | AnonymousUser) -> bool:
    """Supervisors, compliance officers, managers and Django staff (the admin) log in with a TOTP code too."""
    if not isinstance(user, User) or not user.is_authenticated:
        return False
    if user.is_staff or user.is_superuser:
        return True
    if user.groups.filter(name__in=SECOND_FACTOR_ROLES).exists():
        return True
    return any(user.has_perm(perm) for perm in SECOND_FACTOR_PERMISSIONS)

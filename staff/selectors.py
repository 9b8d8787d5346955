"""Reads for the staff pages: the login lockouts a supervisor may see and lift."""

import datetime as dt
from collections import defaultdict
from dataclasses import dataclass

from axes.models import AccessAttempt
from django.conf import settings
from django.contrib.auth.models import User
from django.utils import timezone

from machines.models import Casino
from staff.models import LockoutLift


@dataclass(frozen=True)
class Lockout:
    """A locked account (with the addresses its failures came from) or address (with the names tried there)."""

    kind: str  # LockoutLift.Kind
    value: str
    failures: int
    seen_with: list[str]
    last_failure: dt.datetime
    until: dt.datetime


def current_attempts() -> list[AccessAttempt]:
    """Failed logins still counted: axes forgets an attempt row once its last failure is older than the cool-off."""
    since = timezone.now() - settings.AXES_COOLOFF_TIME
    return list(AccessAttempt.objects.filter(attempt_time__gte=since))


def own_and_unknown(casino: Casino, usernames: set[str]) -> tuple[set[str], set[str]]:
    """Of `usernames`, those of `casino`'s staff, and those of nobody (guesses; "" for a login without a name).

    A supervisor of `casino` sees and lifts lockouts of these two only. Another casino's staff, and
    accounts of no casino (the admin's), are for their own supervisors or an administrator
    (`manage.py axes_reset_username`).
    """
    known = set(User.objects.filter(username__in=usernames).values_list("username", flat=True))
    own = set(User.objects.filter(username__in=usernames, assignment__casino=casino).values_list("username", flat=True))
    return own, usernames - known


def _lockouts(kind: str, groups: dict[str, list[AccessAttempt]]) -> list[Lockout]:
    found = []
    for value, attempts in groups.items():
        failures = sum(attempt.failures_since_start for attempt in attempts)
        if failures < settings.AXES_FAILURE_LIMIT:
            continue
        last = max(attempt.attempt_time for attempt in attempts)
        other = "ip_address" if kind == LockoutLift.Kind.ACCOUNT else "username"
        seen_with = sorted({str(getattr(attempt, other) or "") for attempt in attempts})
        found.append(Lockout(kind, value, failures, seen_with, last, last + settings.AXES_COOLOFF_TIME))
    return sorted(found, key=lambda lockout: lockout.last_failure, reverse=True)


def lockouts_for(casino: Casino) -> tuple[list[Lockout], list[Lockout]]:
    """The locked accounts of `casino`'s staff, and the locked addresses where its staff or unknown names failed."""
    attempts = current_attempts()
    own, unknown = own_and_unknown(casino, {attempt.username or "" for attempt in attempts})
    visible = own | unknown
    by_account: dict[str, list[AccessAttempt]] = defaultdict(list)
    by_address: dict[str, list[AccessAttempt]] = defaultdict(list)
    for attempt in attempts:
        if attempt.username in own:
            by_account[attempt.username].append(attempt)
        if attempt.ip_address:
            by_address[attempt.ip_address].append(attempt)
    addresses = {
        address: rows for address, rows in by_address.items() if any((row.username or "") in visible for row in rows)
    }
    return _lockouts(LockoutLift.Kind.ACCOUNT, by_account), _lockouts(LockoutLift.Kind.ADDRESS, addresses)


def recent_lifts(casino: Casino, limit: int = 20) -> list[LockoutLift]:
    return list(LockoutLift.objects.filter(casino=casino).select_related("lifted_by")[:limit])

"""The staff's configuration history (machines.history): accounts, roles, permissions, casinos, second factors."""

from typing import Any

from django.contrib.auth.models import Group, Permission
from django.db.models import QuerySet

from machines.history import ConfigSource
from machines.models import Casino
from staff.models import (
    SecondFactorDevice,
    SecondFactorEvent,
    StaffAccount,
    StaffAssignment,
    StaffAssignmentEvent,
    StaffPermissionLink,
    StaffRoleLink,
    UserEvent,
    UserPermissionEvent,
    UserRoleEvent,
)


def _casinos_of_users(user_field: str) -> Any:
    """A member of staff's changes go into their casino's chain; a Django administrator's into every casino's."""

    def casinos(copies: list[Any]) -> dict[int, list[int]]:
        users = {getattr(copy, user_field) for copy in copies}
        assigned = dict(StaffAssignment.objects.filter(user_id__in=users).values_list("user_id", "casino_id"))
        everywhere = list(Casino.objects.order_by("pk").values_list("pk", flat=True))
        return {
            copy.pk: [assigned[getattr(copy, user_field)]] if getattr(copy, user_field) in assigned else everywhere
            for copy in copies
        }

    return casinos


def _username(user_id: int) -> str:
    return StaffAccount.objects.filter(pk=user_id).values_list("username", flat=True).first() or f"#{user_id}"


def _users_of(casino: Casino) -> QuerySet[Any]:
    return StaffAssignment.objects.filter(casino=casino).values("user_id")


STAFF_SOURCES = (
    ConfigSource(
        UserEvent,
        _casinos_of_users("pgh_obj_id"),
        lambda casino: StaffAccount.objects.filter(pk__in=_users_of(casino)),
        lambda copy: copy.username,
    ),
    ConfigSource(
        UserRoleEvent,
        _casinos_of_users("user_id"),
        lambda casino: StaffRoleLink.objects.filter(user_id__in=_users_of(casino)),
        lambda copy: f"{_username(copy.user_id)}: {Group.objects.get(pk=copy.group_id).name}",
    ),
    ConfigSource(
        UserPermissionEvent,
        _casinos_of_users("user_id"),
        lambda casino: StaffPermissionLink.objects.filter(user_id__in=_users_of(casino)),
        lambda copy: f"{_username(copy.user_id)}: {Permission.objects.get(pk=copy.permission_id).codename}",
    ),
    ConfigSource(
        StaffAssignmentEvent,
        lambda copies: {copy.pk: [copy.casino_id] for copy in copies},
        lambda casino: StaffAssignment.objects.filter(casino=casino),
        lambda copy: f"{_username(copy.user_id)}: {Casino.objects.get(pk=copy.casino_id).code}",
    ),
    ConfigSource(
        SecondFactorEvent,
        _casinos_of_users("user_id"),
        lambda casino: SecondFactorDevice.objects.filter(user_id__in=_users_of(casino)),
        lambda copy: f"{_username(copy.user_id)}: {copy.name}",
    ),
)

"""The staff's configuration history (machines.history): accounts, roles, permissions, casinos, second factors."""

from typing import Any

from django.contrib.auth.models import Group, Permission
from django.db.models import Q, QuerySet

from machines.history import ConfigSource, every_casino
from machines.models import Casino
from staff.models import (
    RolePermissionEvent,
    RolePermissionLink,
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
        everywhere = every_casino()
        return {
            copy.pk: [assigned[getattr(copy, user_field)]] if getattr(copy, user_field) in assigned else everywhere
            for copy in copies
        }

    return casinos


def _name(model: Any, pk: int, field: str) -> str:
    """What a copy names, by its name; by its id when it is gone (a role deleted since)."""
    return str(model.objects.filter(pk=pk).values_list(field, flat=True).first() or f"#{pk}")


def _username(user_id: int) -> str:
    return _name(StaffAccount, user_id, "username")


def _first(casino: Casino) -> bool:
    return casino.pk == Casino.objects.order_by("pk").values_list("pk", flat=True).first()


def _users_of(casino: Casino) -> QuerySet[Any]:
    """The accounts a casino's check compares: its staff's, and the first casino's check those of no casino (a
    Django administrator's account, a superuser inserted by SQL)."""
    accounts = StaffAccount.objects.filter(assignment__casino=casino)
    if _first(casino):
        accounts = StaffAccount.objects.filter(Q(assignment__casino=casino) | Q(assignment__isnull=True))
    return accounts.values("pk")


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
        lambda copy: f"{_username(copy.user_id)}: {_name(Group, copy.group_id, 'name')}",
    ),
    ConfigSource(
        UserPermissionEvent,
        _casinos_of_users("user_id"),
        lambda casino: StaffPermissionLink.objects.filter(user_id__in=_users_of(casino)),
        lambda copy: f"{_username(copy.user_id)}: {_name(Permission, copy.permission_id, 'codename')}",
    ),
    ConfigSource(
        StaffAssignmentEvent,
        lambda copies: {copy.pk: [copy.casino_id] for copy in copies},
        lambda casino: StaffAssignment.objects.filter(casino=casino),
        lambda copy: f"{_username(copy.user_id)}: {_name(Casino, copy.casino_id, 'code')}",
    ),
    ConfigSource(
        SecondFactorEvent,
        _casinos_of_users("user_id"),
        lambda casino: SecondFactorDevice.objects.filter(user_id__in=_users_of(casino)),
        lambda copy: f"{_username(copy.user_id)}: {copy.name}",
    ),
    ConfigSource(
        RolePermissionEvent,
        lambda copies: dict.fromkeys((copy.pk for copy in copies), every_casino()),
        # The roles are every casino's: the first casino's check compares them.
        lambda casino: RolePermissionLink.objects.all() if _first(casino) else RolePermissionLink.objects.none(),
        lambda copy: f"{_name(Group, copy.group_id, 'name')}: {_name(Permission, copy.permission_id, 'codename')}",
    ),
)

"""The staff roles, as Django groups with permissions (checked on the server by every view and service)."""

from typing import Any

from django.contrib.auth.models import Group, Permission

ROLES: dict[str, list[str]] = {
    "cashier": ["cashdesk.operate_desk"],
    "floor_attendant": ["cashdesk.record_receipt"],
    "shift_supervisor": ["cashdesk.supervise_desk", "cashdesk.decide_hold", "cashdesk.view_reports"],
    "compliance_officer": ["cashdesk.decide_hold"],
    "manager": ["cashdesk.view_reports"],
}


def ensure_roles(**kwargs: Any) -> None:
    """Create the role groups and give them exactly their permissions (idempotent; runs after migrate)."""
    for role, perms in ROLES.items():
        group, _ = Group.objects.get_or_create(name=role)
        wanted = []
        for perm in perms:
            app_label, codename = perm.split(".")
            wanted.append(Permission.objects.get(content_type__app_label=app_label, codename=codename))
        group.permissions.set(wanted)

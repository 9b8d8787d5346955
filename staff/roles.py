"""The staff roles, as Django groups with permissions (checked on the server by every view and service)."""

from typing import Any

from django.apps import apps
from django.contrib.auth.management import create_permissions
from django.contrib.auth.models import Group, Permission

ROLES: dict[str, list[str]] = {
    "cashier": ["staff.operate_desk"],
    "floor_attendant": ["staff.record_receipt", "staff.drop_boxes"],
    # The drop team's second person (issue 25): walks the drop run with the floor attendant.
    "security_officer": ["staff.drop_boxes", "staff.witness_drop"],
    # The count team (issue 25): counters count each box blind to each other; the count supervisor approves the
    # count into the vault and may count, but never approves a count of a box they counted.
    "counter": ["staff.count_boxes"],
    "count_supervisor": ["staff.count_boxes", "staff.approve_count"],
    # Works one casino's tables from the pit's touch terminal: names the croupiers, counts trays with them, asks
    # for fills and credits and records buy-ins (issue 24). A shift supervisor may act as one.
    "pit_supervisor": ["staff.work_pit"],
    # Identifies and admits every visitor at one casino's entrance (issue 26): sees the decision, the name and the
    # age, nothing of the register or the person's transactions.
    "receptionist": ["staff.admit_visitors"],
    "shift_supervisor": [
        "staff.work_pit",
        "staff.supervise_desk",
        "staff.decide_hold",
        "staff.view_reports",
        "staff.view_dashboard",
        # Issue 26: admits a visitor at the door while the self-exclusion list is out of date, with the reason.
        "staff.override_entry",
    ],
    "compliance_officer": [
        "staff.decide_hold",
        "compliance.view_registerentry",
        "compliance.view_personal_data",
        "compliance.manage_alerts",
        "compliance.import_self_exclusion",
        "staff.view_change_log",
    ],
    # Managers see the register's totals and who (initials and surname), never personal codes or document
    # numbers: the person page and every export of personal data are the compliance officer's alone.
    "manager": [
        # Casino rules §1.7: a held ticket past its 14-day decision day is decided by a manager, with the reason.
        "staff.decide_late_hold",
        "staff.view_reports",
        "staff.view_dashboard",
        "staff.view_change_log",
        "compliance.view_registerentry",
        # Issue 24: each table's limits are set by the general director's order, recorded by a manager.
        "staff.record_table_limits",
        # Issue 25: the gaming day's statement is closed, and a closed day adjusted with the reason, by a manager.
        "staff.close_gaming_day",
        # Issue 26: bars a person from the casino, and lifts a bar, with the reason.
        "staff.bar_persons",
    ],
}

# Roles that approve money or read personal data log in with a second factor (TOTP) as well as the
# password; cashiers and floor attendants work on terminals of the closed floor network and use the
# password only. Django staff accounts (the admin) need the second factor too (staff.login).
SECOND_FACTOR_ROLES = frozenset({"shift_supervisor", "compliance_officer", "manager", "count_supervisor"})
# What those roles may do that a cashier may not: whoever holds any of it, by a role or given directly on the
# user's own page, needs the second factor too.
SECOND_FACTOR_PERMISSIONS = frozenset(perm for role in SECOND_FACTOR_ROLES for perm in ROLES[role]) - frozenset(
    perm for role in ROLES.keys() - SECOND_FACTOR_ROLES for perm in ROLES[role]
)


def ensure_roles(**kwargs: Any) -> None:
    """Create the role groups and give them exactly their permissions (idempotent; runs after migrate)."""
    # Other apps' post_migrate may not have created their permissions yet.
    for app_config in apps.get_app_configs():
        create_permissions(app_config, verbosity=0)
    for role, perms in ROLES.items():
        group, _ = Group.objects.get_or_create(name=role)
        wanted = []
        for perm in perms:
            app_label, codename = perm.split(".")
            wanted.append(Permission.objects.get(content_type__app_label=app_label, codename=codename))
        group.permissions.set(wanted)

"""The configuration's history: every change of a setting, a machine, a place or a member of staff is recorded by
a trigger, sealed into the casino's chain with who, when, before and after, and checked against the rows."""

import json
from decimal import Decimal

import pytest
from django.contrib.auth.models import Group, User
from django.db import connection, transaction
from django.test import RequestFactory
from django_otp.plugins.otp_totp.models import TOTPDevice

from machines.chains import books_verify
from machines.history import acting_as, config_seal
from machines.models import ConfigChange, Machine
from machines.services import machine_key_rotate
from staff.changes import field_changes
from staff.middleware import ConfigActorMiddleware
from staff.models import StaffAssignment
from staff.services import second_factor_reset
from tests.machines.test_chains import tamper

pytestmark = pytest.mark.django_db


def findings(casino) -> list[str]:
    return [str(finding) for finding in books_verify(casino)]


def changes_of(casino, object_type: str) -> list[ConfigChange]:
    return list(ConfigChange.objects.filter(casino=casino, object_type=object_type).order_by("chain_sequence"))


def test_a_setting_changed_in_the_application_is_recorded_with_who_before_and_after(casino):
    boss = User.objects.create_user("boss")
    casino.refresh_from_db()
    with transaction.atomic(), acting_as(boss.pk, "web POST /admin/machines/casino/1/change/"):
        casino.identity_threshold = Decimal("900.00")
        casino.save()
    last = changes_of(casino, "machines.casino")[-1]
    assert (last.action, last.changed_by) == ("update", boss)
    assert last.changed_via == "web POST /admin/machines/casino/1/change/"
    assert json.loads(last.before)["identity_threshold"] == "1000.00"
    assert json.loads(last.after)["identity_threshold"] == "900.00"
    assert findings(casino) == []


def test_the_machines_own_stamps_and_counters_are_not_configuration(casino, machine):
    config_seal()  # what the migration's roles left for the anchoring
    before = ConfigChange.objects.count()
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM machines_machineevent")
        copies = cursor.fetchone()[0]
    Machine.objects.filter(pk=machine.pk).update(last_seen_at="2026-12-05T10:00:00Z", last_ticket_sequence=41)
    config_seal()
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM machines_machineevent")
        assert cursor.fetchone()[0] == copies
    assert ConfigChange.objects.count() == before
    assert findings(casino) == []


def test_a_machine_key_rotation_is_recorded_and_the_key_hash_never_shown(casino, machine):
    with acting_as(None, "command machine_key"):
        machine_key_rotate(machine=machine)
    last = changes_of(casino, "machines.machine")[-1]
    assert (last.action, last.changed_via) == ("update", "command machine_key")
    assert json.loads(last.before)["api_key_hash"] != json.loads(last.after)["api_key_hash"]
    shown = {change.field: (change.before, change.after) for change in field_changes(last)}
    assert shown == {"api_key_hash": ("•••", "•••"), "api_key_rotated_at": shown["api_key_rotated_at"]}


def test_roles_casinos_and_second_factor_resets_are_recorded_in_the_staff_members_casino(casino, other_casino):
    user = User.objects.create_user("rasa")
    StaffAssignment.objects.create(user=user, casino=casino)
    user.groups.add(Group.objects.get(name="shift_supervisor"))
    TOTPDevice.objects.create(user=user, name="authenticator app", confirmed=True)
    second_factor_reset(user=user)
    roles = changes_of(casino, "auth.user_groups")
    assert [change.object_repr for change in roles] == ["rasa: shift_supervisor"]
    devices = changes_of(casino, "otp_totp.totpdevice")
    assert [change.action for change in devices] == ["insert", "delete"]
    assert changes_of(other_casino, "auth.user_groups") == []
    assert findings(casino) == []


@pytest.mark.django_db(transaction=True)
def test_a_setting_changed_by_sql_with_the_triggers_on_is_recorded_as_the_databases(casino):
    with connection.cursor() as cursor:  # committed at once: a statement sent from psql
        cursor.execute("UPDATE machines_casino SET max_ticket_amount = 5000 WHERE id = %s", [casino.pk])
    assert findings(casino) == []  # the trigger's copy is the row's last recorded state until it is sealed
    with transaction.atomic(), acting_as(None, "command anchor_books"):
        config_seal()  # the anchoring job's transaction, not the one that made the change
    last = changes_of(casino, "machines.casino")[-1]
    assert json.loads(last.after)["max_ticket_amount"] == "5000.00"
    assert (last.changed_by, last.changed_via) == (None, "database")
    assert findings(casino) == []


def test_a_setting_edited_in_sql_with_the_triggers_off_is_named(casino):
    tamper("UPDATE machines_casino SET identity_threshold = 7000 WHERE id = %s", [casino.pk])
    assert findings(casino) == [
        f"{casino.code}: config machines.casino {casino.pk}: the row is not as its history last recorded it "
        "(changed with the triggers off)"
    ]


def test_a_role_given_in_sql_with_the_triggers_off_is_named(casino):
    user = User.objects.create_user("ona")
    StaffAssignment.objects.create(user=user, casino=casino)
    group = Group.objects.get(name="manager")
    tamper("INSERT INTO auth_user_groups (user_id, group_id) VALUES (%s, %s)", [user.pk, group.pk])
    assert any("config auth.user_groups" in finding for finding in findings(casino))


def test_a_recorded_change_rewritten_or_deleted_is_named(casino):
    casino.refresh_from_db()
    casino.blind_count = not casino.blind_count
    casino.save()
    last = changes_of(casino, "machines.casino")[-1]
    tamper("UPDATE machines_configchange SET changed_by_id = NULL, changed_via = 'database' WHERE id = %s", [last.pk])
    assert any("config" in finding and "MAC" in finding for finding in findings(casino)), findings(casino)
    tamper("DELETE FROM machines_configchange WHERE id = %s", [last.pk])
    assert any("config" in finding for finding in findings(casino))


def test_the_middleware_names_the_logged_in_user_and_the_page(casino):
    boss = User.objects.create_user("boss")

    def view(request):
        casino.refresh_from_db()
        casino.ticket_validity_days += 1
        casino.save()
        return None

    request = RequestFactory().post("/admin/machines/casino/1/change/")
    request.user = boss
    ConfigActorMiddleware(view)(request)
    last = changes_of(casino, "machines.casino")[-1]
    assert (last.changed_by, last.changed_via) == (boss, "web POST /admin/machines/casino/1/change/")


def test_a_role_taken_away_in_sql_with_the_triggers_off_is_named(casino):
    user = User.objects.create_user("jonas")
    StaffAssignment.objects.create(user=user, casino=casino)
    user.groups.add(Group.objects.get(name="cashier"))
    tamper("DELETE FROM auth_user_groups WHERE user_id = %s", [user.pk])
    assert any("config auth.user_groups" in finding and "it is gone" in finding for finding in findings(casino))


def test_a_superuser_inserted_in_sql_with_the_triggers_off_is_named(casino):
    tamper(
        "INSERT INTO auth_user (password, is_superuser, username, first_name, last_name, email, is_staff, is_active, "
        "date_joined) VALUES ('x', true, 'intruder', '', '', '', true, true, now())"
    )
    intruder = User.objects.get(username="intruder")
    assert (
        f"{casino.code}: config auth.user {intruder.pk}: the row is not as its history last recorded it "
        "(changed with the triggers off)" in findings(casino)
    )


def test_a_permission_given_to_a_role_in_sql_is_named(casino):
    from django.contrib.auth.models import Permission

    cashier = Group.objects.get(name="cashier")
    permission = Permission.objects.get(codename="view_personal_data")
    tamper("INSERT INTO auth_group_permissions (group_id, permission_id) VALUES (%s, %s)", [cashier.pk, permission.pk])
    assert any("config auth.group_permissions" in finding for finding in findings(casino))


def test_a_copy_that_cannot_be_placed_does_not_stop_the_anchors(casino, tmp_path, monkeypatch):
    from machines import anchors, history

    def broken(*args, **kwargs):
        raise KeyError("a copy whose parent is gone")

    monkeypatch.setattr(history, "config_seal", broken)
    monkeypatch.setattr(anchors, "config_seal", broken)
    written, refused = anchors.books_anchor_all(directory=tmp_path)
    assert len(written) == 1
    assert refused == ["history copies not sealed: KeyError"]


def test_an_entrance_added_and_renamed_in_the_admin_is_recorded_and_one_renamed_in_sql_is_named(casino, admin_client):
    """The door's entrances (issue 26) are configuration: the admin adds and renames them, each change recorded."""
    from compliance.models import Entrance

    added = admin_client.post(
        "/admin/compliance/entrance/add/", {"casino": casino.pk, "code": "SIDE", "name": "Šoninis įėjimas"}
    )
    assert added.status_code == 302, added.content.decode()[:500]
    entrance = Entrance.objects.get(casino=casino, code="SIDE")
    admin_client.post(
        f"/admin/compliance/entrance/{entrance.pk}/change/",
        {"casino": casino.pk, "code": "SIDE", "name": "Šoninis įėjimas (kiemas)"},
    )
    recorded = changes_of(casino, "compliance.entrance")
    assert [change.action for change in recorded] == ["insert", "update"]
    assert json.loads(recorded[-1].after)["name"] == "Šoninis įėjimas (kiemas)"
    assert recorded[-1].changed_via.startswith("web POST /admin/compliance/entrance/")
    assert findings(casino) == []

    tamper("UPDATE compliance_entrance SET name = 'Galinis' WHERE id = %s", [entrance.pk])
    assert findings(casino) == [
        f"{casino.code}: config compliance.entrance {entrance.pk}: the row is not as its history last recorded it "
        "(changed with the triggers off)"
    ]

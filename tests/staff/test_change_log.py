"""The change log: managers and compliance officers see who changed the configuration, filter it, download it."""

import csv
import io
from decimal import Decimal

import pytest
from django.test import Client

from machines.history import acting_as
from staff.models import StaffAssignment
from tests.factories import MachineFactory, make_user

pytestmark = pytest.mark.django_db


def client_for(user, casino) -> Client:
    StaffAssignment.objects.get_or_create(user=user, casino=casino)
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def changed(casino):
    """The threshold raised by a manager, a machine added by a command."""
    boss = make_user("vadovas", "manager")
    StaffAssignment.objects.create(user=boss, casino=casino)
    casino.refresh_from_db()
    with acting_as(boss.pk, "web POST /admin/machines/casino/1/change/"):
        casino.identity_threshold = Decimal("1500.00")
        casino.save()
    with acting_as(None, "command seed"):
        MachineFactory(casino=casino, asset_number="7777")
    return boss


def test_a_manager_sees_the_change_with_before_and_after(changed, casino):
    page = client_for(changed, casino).get("/changes/")
    assert page.status_code == 200
    html = page.content.decode()
    assert "Identity threshold" in html
    assert "1000.00" in html
    assert "1500.00" in html
    assert "vadovas" in html
    assert "7777" in html


@pytest.mark.parametrize(("role", "status"), [("compliance_officer", 200), ("cashier", 403), ("shift_supervisor", 403)])
def test_only_managers_and_compliance_officers_see_it(changed, casino, role, status):
    assert client_for(make_user(f"u-{role}", role), casino).get("/changes/").status_code == status


def test_filtered_by_object_and_person(changed, casino):
    client = client_for(changed, casino)
    by_type = client.get("/changes/", {"object_type": "machines.machine"}).content.decode()
    assert "7777" in by_type
    assert "Identity threshold" not in by_type
    by_person = client.get("/changes/", {"person": "vadovas"}).content.decode()
    assert "Identity threshold" in by_person
    assert "7777" not in by_person
    by_name = client.get("/changes/", {"object": "7777"}).content.decode()
    assert "7777" in by_name
    assert "Identity threshold" not in by_name


def test_the_csv_has_a_line_per_field_changed(changed, casino):
    response = client_for(changed, casino).get("/changes/", {"person": "vadovas", "format": "csv"})
    assert response["Content-Type"].startswith("text/csv")
    rows = list(csv.reader(io.StringIO(response.content.decode())))
    assert rows[0][:3] == ["changed_at", "changed_by", "changed_via"]
    assert [(row[1], row[6], row[7], row[8], row[9]) for row in rows[1:]] == [
        ("vadovas", "update", "identity_threshold", "1000.00", "1500.00")
    ]


def test_another_casinos_changes_are_not_shown(changed, casino, other_casino):
    with acting_as(None, "command seed"):
        MachineFactory(casino=other_casino, asset_number="8888")
    assert "8888" not in client_for(changed, casino).get("/changes/").content.decode()


def test_a_period_that_ends_before_it_starts_is_a_form_error(changed, casino):
    page = client_for(changed, casino).get("/changes/", {"start": "2026-12-05", "end": "2026-12-01"})
    assert page.status_code == 400
    assert "The period ends before it starts." in page.content.decode()


def test_a_value_that_reads_as_a_formula_is_quoted_in_the_csv(changed, casino):
    with acting_as(changed.pk, "web POST /admin/machines/machine/"):
        MachineFactory(casino=casino, asset_number="9090", area='=HYPERLINK("http://x")')
    response = client_for(changed, casino).get("/changes/", {"object": "9090", "format": "csv"})
    rows = list(csv.reader(io.StringIO(response.content.decode())))
    (area,) = [row for row in rows[1:] if row[7] == "area"]
    assert area[9] == '\'=HYPERLINK("http://x")'

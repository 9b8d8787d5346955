"""A machine read by its key is kept in the web process's memory (issue 27: one statement less per request), and
whatever changes in the database since takes effect on the next request all the same: no answer leaves, and
nothing commits, unless the machine's row and its casino's still are what the process kept."""

import datetime as dt
from decimal import Decimal

import pytest
import time_machine
from django.conf import settings
from django.utils import timezone

from machines.models import Casino, Machine
from machines.services import machine_key_rotate
from tickets.api import auth
from tickets.models import Ticket

pytestmark = pytest.mark.django_db


def _kept(api) -> None:
    """The machine served twice, so that its process keeps it (the first request marks it seen, which forgets it)."""
    assert api.issue().status_code == 201
    assert api.issue().status_code == 201
    assert auth._kept, "the machine is kept"


_ANSWERED = {"request_id": "answered-before", "amount": "2.00"}
# Every way a POST can be answered: each must meet the proof before its answer leaves.
_PATHS = {
    "a cashout (the stored answer's insert)": lambda api: api.issue(),
    "a replay of an answered request": lambda api: api.post("tickets/issue", _ANSWERED),
    "a body refused in the transaction": lambda api: api.post("tickets/issue", {"request_id": "x", "amount": "-1"}),
    "no JSON object, before the transaction": lambda api: api.post("tickets/issue", ["not", "an", "object"]),
    "a number in no spelling, outside the transaction": lambda api: api.authorize("12345"),
    "a guessed number (remembered)": lambda api: api.authorize("000000000000000000"),
    "a wrong check digit (answered, not remembered)": lambda api: api.authorize("004218779312345674"),
    "a body too big (not an API exception)": lambda api: api.post(
        "tickets/issue", {"request_id": "big", "pad": "x" * (settings.DATA_UPLOAD_MAX_MEMORY_SIZE + 1)}
    ),
}


@pytest.mark.parametrize("path", list(_PATHS))
def test_a_key_rotated_after_the_machine_was_kept_is_refused_on_every_path(
    path, api, machine, table_counts, monkeypatch
):
    _kept(api)
    assert api.post("tickets/issue", _ANSWERED).status_code == 201
    machine_key_rotate(machine=machine)
    before = table_counts()
    refreshed = []
    refresh = auth.KeptMachine.refresh
    monkeypatch.setattr(auth.KeptMachine, "refresh", lambda kept, m: (refreshed.append(m.pk), refresh(kept, m)))

    response = _PATHS[path](api)

    assert (response.status_code, response.json()["code"]) == (401, "unauthenticated")
    assert refreshed == [machine.pk], "served from memory, and refused by the proof"
    assert table_counts() == before


@pytest.mark.parametrize("method", ["options", "get", "put"])
def test_other_methods_than_post_read_the_machine_fresh(method, api, machine):
    _kept(api)
    machine_key_rotate(machine=machine)
    response = getattr(api.client, method)("/api/v1/tickets/issue")
    assert response.status_code == 401


def test_a_rotated_key_is_not_stamped_as_seen(api, machine):
    _kept(api)
    machine_key_rotate(machine=machine)
    seen = Machine.objects.get(pk=machine.pk).last_seen_at
    with time_machine.travel(timezone.now() + dt.timedelta(minutes=2)):  # the kept machine's stamp is due
        assert api.issue().status_code == 401
    assert Machine.objects.get(pk=machine.pk).last_seen_at == seen


def test_a_machine_moved_to_another_casino_after_it_was_kept_issues_there(api, machine, other_casino):
    _kept(api)
    Machine.objects.filter(pk=machine.pk).update(casino=other_casino)
    issued = api.issue()
    assert issued.status_code == 201
    assert Ticket.objects.get(validation_number=issued.json()["validation_number"]).casino == other_casino


@pytest.mark.parametrize("disabled", [{"status": Machine.Status.OUT_OF_SERVICE}, {"ticket_enrolled": False}])
def test_a_machine_disabled_after_it_was_kept_is_refused_and_enabled_again_is_served(
    disabled, api, machine, table_counts
):
    _kept(api)
    Machine.objects.filter(pk=machine.pk).update(**disabled)
    before = table_counts()
    refused = api.issue()
    assert (refused.status_code, refused.json()["code"]) == (403, "machine_disabled")
    assert table_counts() == before

    refused_again = api.issue()  # now kept as disabled
    assert refused_again.status_code == 403
    Machine.objects.filter(pk=machine.pk).update(status=Machine.Status.ACTIVE, ticket_enrolled=True)
    assert api.issue().status_code == 201  # memory said disabled; the database has the last word


def test_a_casino_rule_changed_after_the_machine_was_kept_applies_to_the_next_request(api, casino, table_counts):
    _kept(api)
    Casino.objects.filter(pk=casino.pk).update(max_ticket_amount=Decimal("10.00"))
    before = table_counts()
    over = api.issue("12.50")  # within the maximum the process kept, over the one now in force
    assert (over.status_code, over.json()["code"]) == (422, "over_limit")
    assert table_counts() == before

    Casino.objects.filter(pk=casino.pk).update(ticket_validity_days=3)
    issued = api.issue("5.00")
    assert issued.status_code == 201
    ticket = Ticket.objects.get(validation_number=issued.json()["validation_number"])
    local = ticket.issued_at.astimezone(casino.zoneinfo).date()
    assert ticket.expires_at.astimezone(casino.zoneinfo).date() == local + dt.timedelta(days=3)


def test_a_block_of_guesses_set_by_another_process_refuses_the_next_numbered_request(api, machine):
    number = api.issued_ticket()
    assert auth._kept
    # Another web process counted the machine's last guess and blocked it: this process's memory has no block.
    Machine.objects.filter(pk=machine.pk).update(lookups_blocked_until=timezone.now() + dt.timedelta(seconds=60))
    blocked = api.authorize(number)
    assert (blocked.status_code, blocked.json()["code"]) == (429, "rate_limited")
    assert Ticket.objects.get(validation_number=number).state == "issued"


def test_a_machine_is_read_on_every_request_when_none_may_be_kept(api, settings):
    settings.MACHINE_KEPT_SECONDS = 0
    assert api.issue().status_code == 201
    assert api.issue().status_code == 201
    assert not auth._kept

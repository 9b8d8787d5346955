"""A machine read by its key is kept in the web process's memory (issue 27: one statement less per request), and
whatever changes in the database since takes effect on the next request all the same: no answer leaves, and
nothing commits, unless the machine's row and its casino's still are what the process kept."""

import datetime as dt
from decimal import Decimal

import pytest
from django.utils import timezone

from machines.models import Casino, Machine
from machines.services import machine_key_rotate
from tickets.api import auth
from tickets.models import LookupFailure, Ticket

pytestmark = pytest.mark.django_db


def _kept(api) -> None:
    """The machine served twice, so that its process keeps it (the first request marks it seen, which forgets it)."""
    assert api.issue().status_code == 201
    assert api.issue().status_code == 201
    assert auth._kept, "the machine is kept"


def test_a_key_rotated_after_the_machine_was_kept_is_refused_on_every_path(api, machine, table_counts):
    _kept(api)
    replayed = {"request_id": "answered-before", "amount": "2.00"}
    assert api.post("tickets/issue", replayed).status_code == 201
    machine_key_rotate(machine=machine)
    before = table_counts()

    calls = {
        "a cashout": lambda: api.issue(),
        "a replay of an answered request": lambda: api.post("tickets/issue", replayed),
        "a body refused": lambda: api.post("tickets/issue", {"request_id": "x", "amount": "-1"}),
        "no JSON object": lambda: api.post("tickets/issue", ["not", "an", "object"]),
        "a number in no spelling": lambda: api.authorize("12345"),
        "a guessed number": lambda: api.authorize("000000000000000000"),
    }
    for name, call in calls.items():
        response = call()
        assert (response.status_code, response.json()["code"]) == (401, "unauthenticated"), name
    assert table_counts() == before
    assert LookupFailure.objects.count() == 0


def test_a_machine_disabled_after_it_was_kept_is_refused_and_enabled_again_is_served(api, machine, table_counts):
    _kept(api)
    Machine.objects.filter(pk=machine.pk).update(status=Machine.Status.OUT_OF_SERVICE)
    before = table_counts()
    refused = api.issue()
    assert (refused.status_code, refused.json()["code"]) == (403, "machine_disabled")
    assert table_counts() == before

    refused_again = api.issue()  # now kept as disabled
    assert refused_again.status_code == 403
    Machine.objects.filter(pk=machine.pk).update(status=Machine.Status.ACTIVE)
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

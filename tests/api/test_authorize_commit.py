import datetime as dt

import pytest
import time_machine
from django.utils import timezone

from tickets.models import Ticket, TicketEvent, TicketState


def _snapshot(number):
    return Ticket.objects.filter(validation_number=number).values().get()


def test_authorize_holds_the_ticket_for_the_machine(api, make_api):
    number = api.issued_ticket("123.45")
    player_machine = make_api(asset_number="2002")

    response = player_machine.authorize(number)

    assert response.status_code == 200
    body = response.json()
    assert body["validation_number"] == number
    assert body["state"] == "redeem_pending"
    assert body["amount"] == "123.45"
    assert body["ticket_type"] == "cashable"
    ticket = Ticket.objects.get(validation_number=number)
    assert ticket.holder_machine == player_machine.machine
    hold = dt.datetime.fromisoformat(body["hold_expires_at"])
    assert hold == ticket.hold_expires_at.replace(microsecond=0)
    assert ticket.hold_expires_at - ticket.authorized_at == dt.timedelta(seconds=15)


def test_hold_time_is_a_casino_setting(api, casino):
    casino.redemption_hold_seconds = 40
    casino.save()
    number = api.issued_ticket()
    api.authorize(number)
    ticket = Ticket.objects.get(validation_number=number)
    assert ticket.hold_expires_at - ticket.authorized_at == dt.timedelta(seconds=40)


def test_commit_accepted_redeems(api, make_api):
    number = api.issued_ticket()
    player_machine = make_api(asset_number="2002")
    player_machine.authorize(number)

    response = player_machine.commit(number)

    assert response.status_code == 200
    assert response.json() == {"validation_number": number, "state": "redeemed"}
    ticket = Ticket.objects.get(validation_number=number)
    assert ticket.redeemed_by_machine == player_machine.machine
    assert ticket.redeemed_at is not None
    assert ticket.holder_machine is None
    kinds = list(ticket.events.values_list("kind", flat=True))
    assert kinds == ["issued", "printed", "authorized", "redeemed"]


def test_commit_rejected_gives_the_ticket_back(api):
    number = api.issued_ticket()
    api.authorize(number)

    response = api.commit(number, result="rejected", reason="bill_validator_jam")

    assert response.json() == {"validation_number": number, "state": "issued"}
    ticket = Ticket.objects.get(validation_number=number)
    assert ticket.holder_machine is None
    assert ticket.events.get(kind="redeem_rejected").reason == "bill_validator_jam"
    assert api.authorize(number).status_code == 200


def test_late_commit_from_the_holder_is_honoured(api):
    number = api.issued_ticket()
    api.authorize(number)
    with time_machine.travel(timezone.now() + dt.timedelta(minutes=10)):
        response = api.commit(number)
    assert response.json()["state"] == "redeemed"
    assert Ticket.objects.get(validation_number=number).events.get(kind="redeemed").details == {"late": True}


def test_hold_is_never_released_by_time(api, make_api):
    number = api.issued_ticket()
    api.authorize(number)
    other = make_api(asset_number="2002")
    with time_machine.travel(timezone.now() + dt.timedelta(hours=5)):
        response = other.authorize(number)
    assert response.json()["code"] == "pending_elsewhere"


def test_commit_by_another_machine_is_pending_elsewhere(api, make_api):
    number = api.issued_ticket()
    api.authorize(number)
    other = make_api(asset_number="2002")
    before = _snapshot(number)

    response = other.commit(number)

    assert response.status_code == 409
    assert response.json()["code"] == "pending_elsewhere"
    assert _snapshot(number) == before


def test_holder_asking_again_keeps_the_hold(api):
    number = api.issued_ticket()
    first = api.authorize(number).json()
    again = api.authorize(number)
    assert again.status_code == 200
    assert again.json()["state"] == "redeem_pending"
    assert again.json()["hold_expires_at"] >= first["hold_expires_at"]
    assert api.commit(number).json()["state"] == "redeemed"


def test_commit_without_authorize_is_invalid_state(api):
    number = api.issued_ticket()
    response = api.commit(number)
    assert response.status_code == 409
    assert response.json()["code"] == "invalid_state"
    assert Ticket.objects.get(validation_number=number).state == "issued"


def test_commit_after_redemption_is_already_redeemed(api):
    number = api.issued_ticket()
    api.authorize(number)
    api.commit(number)
    response = api.commit(number)
    assert response.json()["code"] == "already_redeemed"


def _make_state(api, make_api, state):
    """A ticket of this casino in the given state, reached through the API."""
    if state == "not_printed":
        return api.issue().json()["validation_number"]
    number = api.issued_ticket()
    if state == "redeemed":
        api.authorize(number)
        api.commit(number)
    elif state == "pending_elsewhere":
        make_api(asset_number="3003").authorize(number)
    elif state == "void":
        fresh = api.issue().json()["validation_number"]
        api.printed(fresh, result="failed", reason="paper_jam")
        return fresh
    elif state == "on_hold":
        Ticket.objects.filter(validation_number=number).update(state=TicketState.ON_HOLD)
    elif state == "expired":
        from tickets.services import tickets_expire_due

        tickets_expire_due(now=timezone.now() + dt.timedelta(days=400))
    return number


@pytest.mark.parametrize("state", ["redeemed", "pending_elsewhere", "expired", "void", "not_printed", "on_hold"])
def test_authorize_refusals_leave_the_ticket_unchanged_and_are_recorded(api, make_api, state):
    number = _make_state(api, make_api, state)
    before = _snapshot(number)
    refusals_before = TicketEvent.objects.filter(kind="refused").count()

    response = api.authorize(number)

    assert response.status_code == 409
    assert response.json()["code"] == ("already_redeemed" if state == "redeemed" else state)
    assert _snapshot(number) == before
    refusal = TicketEvent.objects.filter(kind="refused").order_by("-id").first()
    assert TicketEvent.objects.filter(kind="refused").count() == refusals_before + 1
    assert refusal.ticket.validation_number == number
    assert refusal.machine == api.machine
    assert refusal.reason == response.json()["code"]


def test_ticket_of_another_casino_reads_as_not_found(api, other_casino, make_api):
    foreign = make_api(casino=other_casino, asset_number="1001")
    number = foreign.issued_ticket()

    response = api.authorize(number)

    assert response.status_code == 404
    assert response.json()["code"] == "not_found"
    assert Ticket.objects.get(validation_number=number).state == "issued"
    assert api.get(f"tickets/{number}").status_code == 404


def test_expired_is_refused_at_the_boundary_before_the_job_runs(api):
    number = api.issued_ticket()
    expires_at = Ticket.objects.get(validation_number=number).expires_at

    with time_machine.travel(expires_at, tick=False):
        at_expiry = api.authorize(number)
        assert at_expiry.status_code == 200
        api.commit(number, result="rejected")
    with time_machine.travel(expires_at + dt.timedelta(microseconds=1), tick=False):
        after = api.authorize(number)

    assert after.status_code == 409
    assert after.json()["code"] == "expired"
    assert Ticket.objects.get(validation_number=number).state == "issued"


def test_get_returns_the_public_fields(api):
    number = api.issued_ticket("20.00")
    response = api.get(f"tickets/{number}")
    assert response.status_code == 200
    assert set(response.json()) == {"validation_number", "state", "amount", "ticket_type", "issued_at", "expires_at"}
    assert response.json()["state"] == "issued"
    assert response.json()["amount"] == "20.00"


def test_get_of_unknown_number_is_not_found(api):
    response = api.get("tickets/000000000000000000")
    assert response.status_code == 404
    assert response.json()["code"] == "not_found"


@pytest.mark.parametrize("action", ["authorize", "commit", "printed", "get"])
def test_wrong_check_digit_is_invalid_number(api, action):
    number = api.issued_ticket()
    wrong = number[:-1] + str((int(number[-1]) + 1) % 10)
    response = api.get(f"tickets/{wrong}") if action == "get" else getattr(api, action)(wrong)
    assert response.status_code == 422
    assert response.json()["code"] == "invalid_number"

import datetime as dt

import time_machine
from django.utils import timezone

from tickets.models import LookupFailure


def _guess(api, i):
    # A valid check digit but no such ticket: a guess.
    from stdnum import damm

    body = f"{i:017d}"
    return api.authorize(body + damm.calc_check_digit(body))


def test_unknown_and_malformed_numbers_count_towards_the_limit(api):
    start = timezone.now()
    with time_machine.travel(start, tick=False):
        for i in range(10):
            assert _guess(api, i).status_code == 404
        for _ in range(5):
            assert api.authorize("12345").status_code == 404  # no spelling of the contract
            assert api.authorize("004218779312345674").status_code == 422  # a wrong check digit

        blocked = _guess(api, 99)

    assert blocked.status_code == 429
    assert blocked.json()["code"] == "rate_limited"
    assert blocked["Retry-After"] == "60"
    assert LookupFailure.objects.filter(machine=api.machine).count() == 20


def test_the_limit_applies_to_every_numbered_endpoint_but_not_to_cashout(api):
    number = api.issued_ticket()
    for i in range(20):
        _guess(api, i)
    assert api.get(f"tickets/{number}").status_code == 429
    assert api.authorize(number).status_code == 429
    assert api.commit(number).status_code == 429
    assert api.printed(number).status_code == 429
    assert api.issue().status_code == 201


def test_a_blocked_machine_may_try_again_after_the_window(api):
    start = timezone.now()
    with time_machine.travel(start, tick=False):
        for i in range(20):
            _guess(api, i)
    with time_machine.travel(start + dt.timedelta(seconds=30), tick=False):
        blocked = _guess(api, 50)
        assert blocked.status_code == 429
        assert blocked["Retry-After"] == "30"
    with time_machine.travel(start + dt.timedelta(seconds=61), tick=False):
        assert _guess(api, 51).status_code == 404


def test_limit_is_per_machine(api, make_api):
    for i in range(20):
        _guess(api, i)
    assert _guess(make_api(asset_number="2002"), 1).status_code == 404


def test_limit_and_window_are_casino_settings(api, casino):
    casino.lookup_failure_limit = 3
    casino.lookup_failure_window_seconds = 10
    casino.save()
    for i in range(3):
        assert _guess(api, i).status_code == 404
    assert _guess(api, 3).status_code == 429


def test_blocked_requests_are_not_remembered_for_replay(api):
    number = api.issued_ticket()
    for i in range(20):
        _guess(api, i)
    body = {"request_id": "late-1"}
    assert api.post(f"tickets/{number}/authorize", body).status_code == 429
    with time_machine.travel(timezone.now() + dt.timedelta(seconds=61)):
        assert api.post(f"tickets/{number}/authorize", body).status_code == 200


def test_successful_lookups_do_not_count(api):
    number = api.issued_ticket()
    for _ in range(30):
        assert api.get(f"tickets/{number}").status_code == 200
    assert LookupFailure.objects.count() == 0


def test_the_success_path_reads_no_failure_counter(api, make_api):
    """Issue 15: the limit is kept on the machine's row, read by the authentication anyway."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    number = api.issued_ticket()
    player = make_api(asset_number="2002")
    with CaptureQueriesContext(connection) as queries:
        assert player.authorize(number).status_code == 200
        assert player.commit(number).status_code == 200
    # A statement psycopg runs prepared is captured without its text (None): the chain head's advance, once the
    # connection has run it often enough (every journal's appends share it).
    assert not [q["sql"] for q in queries.captured_queries if "tickets_lookupfailure" in (q["sql"] or "")]


def test_a_blocked_machine_is_refused_even_a_good_number_until_the_window_frees(api, make_api):
    number = api.issued_ticket()
    player = make_api(asset_number="2002")
    start = timezone.now()
    with time_machine.travel(start, tick=False):
        for i in range(20):
            _guess(player, i)
        refused = player.authorize(number)
    assert refused.status_code == 429
    assert refused.headers["Retry-After"] == "60"
    with time_machine.travel(start + dt.timedelta(seconds=59), tick=False):
        assert player.authorize(number).status_code == 429
    with time_machine.travel(start + dt.timedelta(seconds=61), tick=False):
        assert player.authorize(number).status_code == 200

"""The machine API's hot path costs a fixed number of statements (issue 15): how the POSTs are served must not
add a lookup or a round trip. Each statement counts, a savepoint's too: each is a round trip."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.conftest import MachineClient

# As in production: each request its own transaction, not a savepoint inside the test's.
pytestmark = pytest.mark.django_db(transaction=True)

# The transaction's two ends, the operation's own statements and the stored answer's insert. The event's chain
# head (issue 23) costs no statement of its own: it is locked and read with the ticket (or with the new ticket's
# insert) and moved on in the event's statement. Nor does the key's lookup once the process has read the machine
# (issue 27): the machine kept in memory is proved current in the stored answer's insert.
CASHOUT_AND_TICKET_IN = {"issue": 8, "printed": 5, "authorize": 5, "commit": 5}


def _statements(call) -> tuple[int, list[str]]:
    with CaptureQueriesContext(connection) as queries:
        response = call()
    return response.status_code, [query["sql"] for query in queries.captured_queries]


def test_a_cashout_and_a_ticket_in_cost_their_fixed_statements(api: MachineClient):
    api.issued_ticket()  # the machine's last_seen_at is fresh: not written again on the requests counted
    issued = {}

    def issue():
        response = api.issue("12.50")
        issued["number"] = response.json()["validation_number"]
        return response

    counted = {"issue": _statements(issue)}
    number = issued["number"]
    counted["printed"] = _statements(lambda: api.printed(number))
    counted["authorize"] = _statements(lambda: api.authorize(number))
    counted["commit"] = _statements(lambda: api.commit(number))

    assert {name: status for name, (status, _) in counted.items()} == {
        "issue": 201,
        "printed": 200,
        "authorize": 200,
        "commit": 200,
    }
    assert {name: len(sql) for name, (_, sql) in counted.items()} == CASHOUT_AND_TICKET_IN, counted


def test_a_replay_costs_one_rolled_back_attempt_and_the_stored_answer(api: MachineClient):
    api.issued_ticket()
    body = {"request_id": "replayed", "amount": "3.00"}
    assert api.post("tickets/issue", body).status_code == 201
    status, replay = _statements(lambda: api.post("tickets/issue", body))
    assert status == 201
    # The attempt's statements up to its answer's insert, which fails; then the machine, read from memory, proved
    # current (a replay to a revoked key is refused) and the stored answer's read.
    assert len(replay) == CASHOUT_AND_TICKET_IN["issue"] + 2, replay

"""What a proxy or a log reads is what the server acts on (issue 21, "the schema list").

`{"amount":"1.00","amount":"2.00"}` issued a 2.00 ticket: whatever reads the first value (a proxy, a log, an
audit tool) saw another request than the one served. A key twice in one object is refused `400
malformed_json`; the detail of a malformed body is a fixed sentence, never the parser's text; a request_id or
reason with a control character (C0, DEL or C1) is refused the same way on every endpoint.
"""

from typing import Any

import pytest
from django.test import Client
from django.utils import timezone

from tests.factories import key_for
from tickets.models import ReservedNumber

MALFORMED = "The body is not valid JSON."
REPEATED = "The body is not valid JSON: an object names the same key twice."


@pytest.fixture
def raw(machine: Any) -> Client:
    return Client(HTTP_AUTHORIZATION=f"Bearer {key_for(machine)}", raise_request_exception=False)


@pytest.mark.parametrize(
    "body",
    [
        '{"request_id": "dup-1", "amount": "1.00", "amount": "2.00"}',
        '{"request_id": "dup-1", "request_id": "dup-2", "amount": "1.00"}',
        '{"request_id": "dup-1", "amount": "1.00", "x": {"a": 1, "a": 1}}',
        '{"request_id": "dup-1", "amount": "1.00", "x": [{"a": 1}, {"b": 2, "b": 2}]}',
        '{"request_id": "dup-1", "amount": "1.00", "\\u0061mount": "2.00"}',  # the same key, escaped
    ],
)
def test_a_key_twice_in_one_object_is_malformed_json(raw, table_counts, body):
    before = table_counts()

    response = raw.post("/api/v1/tickets/issue", body, content_type="application/json")

    assert response.status_code == 400, response.content
    assert response.json() == {"code": "malformed_json", "detail": REPEATED}
    assert table_counts() == before


def test_a_key_twice_in_the_meters_is_malformed_json(raw, table_counts):
    body = (
        '{"request_id": "m-1", "read_at": "2026-12-02T18:00:00+02:00", "meters": {"ticket_out_count": 1, '
        '"ticket_out_count": 2, "ticket_out_amount": "1.00", "ticket_in_count": 0, "ticket_in_amount": "0"}}'
    )
    response = raw.post("/api/v1/meters", body, content_type="application/json")
    assert response.json() == {"code": "malformed_json", "detail": REPEATED}


def test_the_same_name_in_two_objects_is_no_repetition(raw):
    body = '{"request_id": "ok-1", "amount": "1.00", "x": [{"a": 1}, {"a": 2}]}'
    assert raw.post("/api/v1/tickets/issue", body, content_type="application/json").status_code == 201


@pytest.mark.parametrize(
    "body",
    [
        "not json",
        "{",
        '{"request_id": "r", "amount": NaN}',
        '{"request_id": "r", "amount": Infinity}',
        '{"request_id": "r", "amount": "1.00"',
        '{"request_id": "r", "amount": "1.00"} trailing',
        b"\xff\xfe{}",
        b'{"request_id": "\xc3"}',
    ],
)
def test_a_malformed_body_is_told_in_a_fixed_sentence_without_the_parsers_text(raw, body):
    response = raw.post("/api/v1/tickets/issue", body, content_type="application/json")

    assert response.status_code == 400
    assert response.json() == {"code": "malformed_json", "detail": MALFORMED}


CONTROLS = ["\x00", "\n", "\r", "\t", "\x1b", "\x7f", "\x85", "\x9b"]


def _valid_request(api: Any, endpoint: str) -> tuple[str, dict[str, Any]]:
    """A request the endpoint serves, but for its request_id."""
    if endpoint in ("authorize", "printed"):
        number = api.issue().json()["validation_number"]
        if endpoint == "authorize":
            assert api.printed(number).status_code == 200
        return f"tickets/{number}/{endpoint}", {"result": "printed"} if endpoint == "printed" else {}
    if endpoint == "tickets/offline":
        number = api.post("validation-pool", {"request_id": api.next_id(), "count": 1}).json()["validation_numbers"][0]
        moment = timezone.now().isoformat()
        return endpoint, {"validation_number": number, "amount": "2.00", "printed_at": moment, "sequence": 9}
    meters = {"ticket_out_count": 0, "ticket_out_amount": "0", "ticket_in_count": 0, "ticket_in_amount": "0"}
    return endpoint, {
        "tickets/issue": {"amount": "1.00"},
        "validation-pool": {"count": 1},
        "meters": {"read_at": timezone.now().isoformat(), "meters": meters},
        "handpays": {"amount": "1.00", "kind": "jackpot"},
    }[endpoint]


@pytest.mark.parametrize("control", CONTROLS)
@pytest.mark.parametrize(
    "endpoint", ["tickets/issue", "validation-pool", "tickets/offline", "meters", "handpays", "authorize", "printed"]
)
def test_a_control_character_in_a_request_id_is_invalid_request_everywhere(api, table_counts, endpoint, control):
    path, body = _valid_request(api, endpoint)
    before = table_counts()

    response = api.post(path, {"request_id": f"id{control}1", **body})

    assert (response.status_code, response.json()["code"]) == (422, "invalid_request"), response.content
    assert table_counts() == before
    assert api.post(path, {"request_id": "id 1", **body}).status_code in (200, 201)


@pytest.mark.parametrize("control", CONTROLS)
@pytest.mark.parametrize(("action", "result"), [("printed", "failed"), ("commit", "rejected")])
def test_a_control_character_in_a_reason_is_invalid_request(api, table_counts, action, result, control):
    number = api.issued_ticket() if action == "commit" else api.issue().json()["validation_number"]
    if action == "commit":
        assert api.authorize(number).status_code == 200
    before = table_counts()

    response = api.post(
        f"tickets/{number}/{action}", {"request_id": api.next_id(), "result": result, "reason": f"paper{control}out"}
    )

    assert (response.status_code, response.json()["code"]) == (422, "invalid_request"), response.content
    assert table_counts() == before


def test_printable_text_beyond_ascii_is_a_request_id_and_a_reason(api):
    number = api.issue().json()["validation_number"]
    body = {"request_id": "spausdinta-ąčę-€", "result": "failed", "reason": "popierius baigėsi, žr. žurnalą"}
    assert api.post(f"tickets/{number}/printed", body).json()["state"] == "void"


def test_commit_still_answers_invalid_state_and_already_redeemed(api, make_api):
    player = make_api(asset_number="2002")
    number = api.issued_ticket()

    not_held = player.commit(number)
    assert (not_held.status_code, not_held.json()["code"]) == (409, "invalid_state")
    assert player.authorize(number).status_code == 200
    assert player.commit(number).status_code == 200
    again = player.commit(number)
    assert (again.status_code, again.json()["code"]) == (409, "already_redeemed")


def test_an_unreported_reservation_is_not_touched_by_a_malformed_report(api, raw):
    number = api.post("validation-pool", {"request_id": "p-1", "count": 1}).json()["validation_numbers"][0]
    body = (
        f'{{"request_id": "o-1", "validation_number": "{number}", "amount": "25.00", "amount": "2.00", '
        '"printed_at": "2026-12-02T18:04:11+02:00", "sequence": 1}'
    )
    assert raw.post("/api/v1/tickets/offline", body, content_type="application/json").status_code == 400
    assert ReservedNumber.objects.get(validation_number=number).ticket is None

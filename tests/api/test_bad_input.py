"""Malformed input of every kind: always a 4xx with a JSON code, never a 5xx, nothing written."""

import json

import pytest
from django.test import Client

from tests.factories import key_for

AMOUNTS = [
    12.5,
    12,
    "-1.00",
    "0",
    "0.00",
    "0.000",
    "1.0001",
    "1e3",
    "1E3",
    "NaN",
    "Infinity",
    "inf",
    " 1.00",
    "1.00 ",
    "1,00",
    "",
    "1.",
    ".5",
    "+1.00",
    "01.00",
    "\uff11.00",  # a full-width digit one
    "1_000",
    "0x10",
    None,
    True,
    [],
    {},
    "1.00\n",
]


@pytest.mark.parametrize("amount", AMOUNTS, ids=repr)
def test_malformed_amount_is_invalid_amount(api, table_counts, amount):
    before = table_counts()
    response = api.post("tickets/issue", {"request_id": "r-1", "amount": amount})
    assert response.status_code == 422
    assert response.json()["code"] == "invalid_amount"
    assert table_counts() == before


def test_missing_amount_is_invalid_amount(api):
    response = api.post("tickets/issue", {"request_id": "r-1"})
    assert response.json()["code"] == "invalid_amount"


REQUEST_IDS = [None, "", "x" * 65, 17, ["a"], {"a": 1}, "bad\x00id", "tab\tid", True]


@pytest.mark.parametrize("request_id", REQUEST_IDS, ids=repr)
def test_malformed_request_id_is_invalid_request(api, table_counts, request_id):
    before = table_counts()
    body = {"amount": "1.00"} if request_id is None else {"request_id": request_id, "amount": "1.00"}
    response = api.post("tickets/issue", body)
    assert response.status_code == 422
    assert response.json()["code"] == "invalid_request"
    assert table_counts() == before


def test_request_id_of_64_characters_is_accepted(api):
    assert api.post("tickets/issue", {"request_id": "é" * 64, "amount": "1.00"}).status_code == 201


NUMBERS = [
    "12345",
    "0042187793123456749",
    "00421877931234567x",
    "abcdefghijklmnopqr",
    "00_4218_7793_1234_5674",
    "%00",
    "%20",
    "0042187793123456.4",
    "-" * 18,
    "9" * 200,
    "%C3%A9" * 18,
]


@pytest.mark.parametrize("number", NUMBERS)
def test_malformed_number_is_not_found(api, table_counts, number):
    """No spelling of the contract (issue 21): no ticket has it, so it is not found, without a lookup."""
    before = table_counts()
    for response in (api.authorize(number), api.get(f"tickets/{number}")):
        assert response.status_code == 404
        assert response.json()["code"] == "not_found"
    after = table_counts()
    # Only the two guesses are counted for the rate limit (a NUL is refused before any view); nothing else is written.
    guesses = 0 if number == "%00" else 2
    assert after == {**before, "lookup_failures": before["lookup_failures"] + guesses}


RAW_BODIES = [
    ("not json", "application/json", 400, "malformed_json"),
    ("{", "application/json", 400, "malformed_json"),
    ('{"request_id": "r", "amount": "1.00"}', "text/plain", 415, "unsupported_media_type"),
    ('{"request_id": "r", "amount": "1.00"}', "application/x-www-form-urlencoded", 415, "unsupported_media_type"),
    ("[]", "application/json", 422, "invalid_request"),
    ('"text"', "application/json", 422, "invalid_request"),
    ("null", "application/json", 422, "invalid_request"),
    ("42", "application/json", 422, "invalid_request"),
    ("", "application/json", 422, "invalid_request"),
    ('{"request_id": "r", "amount": NaN}', "application/json", 400, "malformed_json"),
    ('{"request_id": "r", "amount": "1.00"', "application/json", 400, "malformed_json"),
    (b"\xff\xfe{}", "application/json", 400, "malformed_json"),
]


@pytest.mark.parametrize(("raw", "content_type", "status", "code"), RAW_BODIES)
def test_malformed_body(machine, table_counts, raw, content_type, status, code):
    client = Client(HTTP_AUTHORIZATION=f"Bearer {key_for(machine)}")
    before = table_counts()
    response = client.post("/api/v1/tickets/issue", raw, content_type=content_type)
    assert response.status_code == status
    assert response.json()["code"] == code
    assert table_counts() == before


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("printed", {"request_id": "r", "result": "done"}),
        ("printed", {"request_id": "r"}),
        ("printed", {"request_id": "r", "result": "failed", "reason": 5}),
        ("printed", {"request_id": "r", "result": "failed", "reason": "x" * 256}),
        ("printed", {"request_id": "r", "result": "failed", "reason": "nul\x00"}),
        ("commit", {"request_id": "r", "result": "yes"}),
        ("commit", {"request_id": "r", "result": None}),
        ("commit", {"request_id": "r", "result": "rejected", "reason": ["x"]}),
        ("authorize", {"request_id": 5}),
    ],
)
def test_malformed_fields_are_invalid_request(api, table_counts, path, body):
    number = api.issued_ticket()
    before = table_counts()
    response = api.post(f"tickets/{number}/{path}", body)
    assert response.status_code == 422
    assert response.json()["code"] == "invalid_request"
    assert table_counts() == before


@pytest.mark.parametrize(
    ("method", "path", "status", "code"),
    [
        ("get", "tickets/issue", 405, "method_not_allowed"),
        ("put", "tickets/issue", 405, "method_not_allowed"),
        ("delete", "tickets/000000000000000000", 405, "method_not_allowed"),
        ("get", "tickets/000000000000000000/authorize", 405, "method_not_allowed"),
        ("get", "no/such/endpoint", 404, "not_found"),
        ("post", "tickets/issue/", 404, "not_found"),
    ],
)
def test_wrong_method_or_path_is_json(api, method, path, status, code):
    response = getattr(api.client, method)(f"/api/v1/{path}")
    assert response.status_code == status
    assert response["Content-Type"] == "application/json"
    assert response.json()["code"] == code


def test_unknown_fields_are_ignored(api):
    response = api.post("tickets/issue", {"request_id": "r", "amount": "1.00", "vendor_extension": {"x": 1}})
    assert response.status_code == 201


def test_accept_header_other_than_json_is_not_acceptable(api):
    response = api.client.get("/api/v1/tickets/000000000000000000", HTTP_ACCEPT="text/html")
    assert response.status_code == 406
    assert json.loads(response.content)["code"] == "not_acceptable"

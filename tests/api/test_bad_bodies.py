"""Bodies and paths no machine should send: always a 4xx JSON error of the contract, never a 5xx or an HTML page."""

from typing import Any

import pytest
from django.conf import settings
from django.test import Client

from tests.factories import key_for


@pytest.fixture
def raw(machine: Any) -> Client:
    """A machine as it really is: no CSRF token, and a server error is the 500 response it gets."""
    return Client(
        HTTP_AUTHORIZATION=f"Bearer {key_for(machine)}", enforce_csrf_checks=True, raise_request_exception=False
    )


def _json_error(response: Any, status: int, code: str) -> None:
    assert response.status_code == status, response.content[:300]
    assert response["Content-Type"].startswith("application/json"), response.content[:300]
    body = response.json()
    assert body["code"] == code
    assert isinstance(body["detail"], str)
    assert body["detail"]


@pytest.mark.parametrize("size", [settings.DATA_UPLOAD_MAX_MEMORY_SIZE + 1, 30 * 1024 * 1024])
def test_an_oversized_body_is_413_json_and_writes_nothing(raw, table_counts, size):
    before = table_counts()
    padding = "x" * (size - 40)
    body = '{"request_id": "big-1", "amount": "1.00", "pad": "' + padding + '"}'
    response = raw.post("/api/v1/tickets/issue", body, content_type="application/json")
    _json_error(response, 413, "payload_too_large")
    assert table_counts() == before


def test_a_body_just_under_the_limit_is_still_read(raw):
    body = '{"request_id": "big-2", "amount": "1.00", "pad": "'
    body += "x" * (settings.DATA_UPLOAD_MAX_MEMORY_SIZE - len(body) - 2) + '"}'
    assert len(body) == settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    assert raw.post("/api/v1/tickets/issue", body, content_type="application/json").status_code == 201


@pytest.mark.parametrize("depth", [3000, 100_000])
@pytest.mark.parametrize(("opener", "closer"), [("[", "]"), ('{"a":', "}")])
def test_deeply_nested_json_is_a_400_malformed_json(raw, table_counts, depth, opener, closer):
    before = table_counts()
    body = '{"request_id": "deep-1", "amount": "1.00", "x": ' + opener * depth + "1" + closer * depth + "}"
    response = raw.post("/api/v1/tickets/issue", body, content_type="application/json")
    _json_error(response, 400, "malformed_json")
    assert table_counts() == before


def test_nesting_the_contract_never_needs_is_refused_before_it_reaches_a_service(raw, table_counts):
    # Deep enough to be parsed by Python's json, and far deeper than any request of the contract.
    before = table_counts()
    body = '{"request_id": "deep-2", "amount": "1.00", "x": ' + "[" * 500 + "]" * 500 + "}"
    response = raw.post("/api/v1/tickets/issue", body, content_type="application/json")
    _json_error(response, 400, "malformed_json")
    assert table_counts() == before


@pytest.mark.parametrize(
    "path",
    ["/api/v1/nope", "/api/v1/tickets/issue/extra/more", "/api/v2/tickets/issue", "/api/v1", "/api", "/api/"],
)
@pytest.mark.parametrize("method", ["post", "put", "patch", "delete", "get"])
@pytest.mark.parametrize("debug", [False, True])
def test_an_unknown_api_path_is_404_json_whatever_the_method(raw, settings, path, method, debug):
    settings.DEBUG = debug  # the demo runs with DEBUG on: no redirect to a slash, no technical 404 page
    response = getattr(raw, method)(path, {"request_id": "x"}, content_type="application/json")
    _json_error(response, 404, "not_found")


def test_an_unknown_api_path_is_404_json_without_a_key(db):
    response = Client(enforce_csrf_checks=True, raise_request_exception=False).post(
        "/api/v1/nope", "{}", content_type="application/json"
    )
    _json_error(response, 404, "not_found")


def test_the_staff_ui_still_refuses_a_post_without_its_csrf_token(db):
    client = Client(enforce_csrf_checks=True, raise_request_exception=False)
    response = client.post("/accounts/login/", {"username": "a", "password": "b"})
    assert response.status_code == 403
    assert not response["Content-Type"].startswith("application/json")


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("tickets/issue", '{"request_id": "\\ud800", "amount": "1.00"}'),
        ("tickets/issue", '{"request_id": "s-1\\udfff", "amount": "1.00"}'),
    ],
)
def test_a_lone_surrogate_in_a_text_field_is_refused_like_any_bad_text(raw, table_counts, path, body):
    before = table_counts()
    response = raw.post(f"/api/v1/{path}", body, content_type="application/json")
    assert 400 <= response.status_code < 500, response.content[:300]
    assert response["Content-Type"].startswith("application/json")
    assert table_counts() == before


def test_a_lone_surrogate_in_a_print_failure_reason_is_refused(raw, api, table_counts):
    number = api.issue("5.00").json()["validation_number"]
    before = table_counts()
    body = '{"request_id": "p-1", "result": "failed", "reason": "jam\\udfff"}'
    response = raw.post(f"/api/v1/tickets/{number}/printed", body, content_type="application/json")
    assert 400 <= response.status_code < 500, response.content[:300]
    assert table_counts() == before

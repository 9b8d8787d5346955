import re

import yaml
from django.test import Client

CONTRACT = {
    "/api/v1/tickets/issue": {"post"},
    "/api/v1/tickets/{validation_number}/printed": {"post"},
    "/api/v1/tickets/{validation_number}/authorize": {"post"},
    "/api/v1/tickets/{validation_number}/commit": {"post"},
    "/api/v1/tickets/{validation_number}": {"get"},
    "/api/v1/validation-pool": {"post"},
    "/api/v1/tickets/offline": {"post"},
    "/api/v1/meters": {"post"},
    "/api/v1/handpays": {"post"},
    "/api/v1/handpays/{receipt_number}": {"get"},
}


def test_schema_is_openapi_3_and_covers_the_contract(db):
    response = Client().get("/api/v1/schema/")
    assert response.status_code == 200
    schema = yaml.safe_load(response.content)
    assert schema["openapi"].startswith("3.")
    paths = {path: set(ops) - {"parameters"} for path, ops in schema["paths"].items()}
    assert paths == CONTRACT
    assert schema["components"]["securitySchemes"]["machineKey"] == {
        "type": "http",
        "scheme": "bearer",
        "description": "The machine's API key.",
    }
    for path, operations in CONTRACT.items():
        for method in operations:
            assert schema["paths"][path][method]["security"] == [{"machineKey": []}], (path, method)
    issue = schema["paths"]["/api/v1/tickets/issue"]["post"]
    assert set(issue["responses"]) >= {"201", "401", "403", "422"}
    authorize = schema["paths"]["/api/v1/tickets/{validation_number}/authorize"]["post"]
    assert set(authorize["responses"]) >= {"200", "401", "403", "404", "409", "422", "429"}


def test_schema_as_json(db):
    response = Client().get("/api/v1/schema/?format=json")
    assert response.status_code == 200
    assert response.json()["info"]["version"] == "1.1.0"


def test_browsable_docs_are_served_without_any_cdn(db):
    response = Client().get("/api/v1/docs/")
    assert response.status_code == 200
    html = response.content.decode()
    assert "swagger-ui" in html
    assert "cdn.jsdelivr.net" not in html
    assert "unpkg.com" not in html


def test_the_schema_carries_the_kiosk_fields(db):
    """Contract v1.1 "Kiosks": authorize's 200 may add payout; commit may carry dispensed; 409 names the refusals."""
    schema = Client().get("/api/v1/schema/?format=json").json()
    components = schema["components"]["schemas"]
    authorize = schema["paths"]["/api/v1/tickets/{validation_number}/authorize"]["post"]
    answer = authorize["responses"]["200"]["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[-1]
    assert "payout" in components[answer]["properties"]
    assert "payout" not in components[answer].get("required", [])
    commit = schema["paths"]["/api/v1/tickets/{validation_number}/commit"]["post"]
    body = commit["requestBody"]["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[-1]
    assert "dispensed" in components[body]["properties"]
    assert "dispensed" not in components[body].get("required", [])
    codes = set(re.findall(r"\w+", authorize["responses"]["409"]["description"]))
    assert {"kiosk_empty", "not_cashable", "over_kiosk_limit", "already_redeemed"} <= codes


# Issue 21, "Trust holes" 4: the served schema says exactly what the server does, so that a vendor's client (or a
# fuzzer) built from it neither sends what the server refuses nor misses an answer the server gives.


def _schema():
    return Client().get("/api/v1/schema/?format=json").json()


def _resolve(schema, node):
    while "$ref" in node or len(node.get("allOf", [])) == 1:
        node = node["allOf"][0] if "allOf" in node else node
        if "$ref" in node:
            node = schema["components"]["schemas"][node["$ref"].rsplit("/", 1)[-1]]
    return node


def _body_schema(schema, path, method="post"):
    operation = schema["paths"][path][method]
    return _resolve(schema, operation["requestBody"]["content"]["application/json"]["schema"])


def _property(schema, path, name):
    return _resolve(schema, _body_schema(schema, path)["properties"][name])


def _matches(pattern, value):
    return re.search(pattern, value) is not None  # JSON Schema's pattern is a search, anchored by ^ and $


def _operations(schema):
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            if method != "parameters":
                yield path, method, operation


def test_the_schema_refuses_an_amount_of_zero(db):
    """The server refuses "0" and "0.00" (contract "Money and numbers"); the schema allowed them."""
    from casino_office.money import InvalidAmount, parse_amount

    schema = _schema()
    samples = ["0", "0.0", "0.00", "0.000", "0.001", "0.01", "0.1", "0.010", "12.50", "1.001", "100", "007", "1.0001"]
    samples += ["-1", "1e3", " 1", "1,50", "", "999999999.999", "1000000000", "9999999999.999", "10000000000"]
    # A ticket's amount column holds 9 digits before the point, a handpay's 10.
    bounds = {"/api/v1/tickets/issue": 10**9, "/api/v1/tickets/offline": 10**9, "/api/v1/handpays": 10**10}
    for path, bound in bounds.items():
        pattern = _property(schema, path, "amount")["pattern"]
        for sample in samples:
            try:
                accepted = parse_amount(sample) < bound
            except InvalidAmount:
                accepted = False
            assert _matches(pattern, sample) == accepted, (path, sample)


def test_the_schema_bounds_a_handpay_below_ten_thousand_million(db):
    """A handpay's amount is below 10 000 000 000 (the column); the contract said no maximum applies."""
    pattern = _property(_schema(), "/api/v1/handpays", "amount")["pattern"]
    assert _matches(pattern, "9999999999.999")
    assert not _matches(pattern, "10000000000")
    assert not _matches(pattern, "10000000000.00")


VALID_NUMBERS = ["689213765906139863", "68-9213-7659-0613-9863", "68 9213 7659 0613 9863"]
# apifix: anything but the bare 18 digits or the printed grouping (dashes, or single spaces) is 404 not_found.
INVALID_NUMBERS = [
    "6",
    "68921376590613986",
    "6892137659061398630",
    "68-9213 7659-0613-9863",
    "6892-1376-5906-1398-63",
    "68--9213-7659-0613-9863",
    "68  9213 7659 0613 9863",
    " 689213765906139863",
    "689213765906139863 ",
    "68-9213-7659-0613-986a",
    "1-2-3-4-5-6-7-8-9-0-1-2-3-4-5-6-7-8",
    "0" * 40,
]


def test_the_schema_takes_a_validation_number_only_as_the_server_reads_it(db):
    schema = _schema()
    numbered = [(path, method, op) for path, method, op in _operations(schema) if "{validation_number}" in path]
    assert len(numbered) == 4
    for path, _, operation in numbered:
        (parameter,) = [p for p in operation["parameters"] if p["name"] == "validation_number"]
        pattern = parameter["schema"]["pattern"]
        for number in VALID_NUMBERS:
            assert _matches(pattern, number), (path, number)
        for number in INVALID_NUMBERS:
            assert not _matches(pattern, number), (path, number)
    offline = _property(schema, "/api/v1/tickets/offline", "validation_number")["pattern"]
    assert all(_matches(offline, number) for number in VALID_NUMBERS)
    assert not any(_matches(offline, number) for number in INVALID_NUMBERS)


def test_the_schema_refuses_control_characters_in_texts(db):
    """request_id and reason: the server refuses a NUL or control character (422 invalid_request)."""
    from tickets.api.fields import TEXT

    schema = _schema()
    texts = []
    for path, method, _ in _operations(schema):
        if method != "post":
            continue
        body = _body_schema(schema, path)
        texts += [(path, name) for name in ("request_id", "reason") if name in body["properties"]]
        assert "request_id" in body["required"], path
    assert len([name for _, name in texts if name == "reason"]) == 2
    assert len([name for _, name in texts if name == "request_id"]) == 8
    for path, name in texts:
        field = _property(schema, path, name)
        for sample in ["cashout-1", "paper out", "Ąžuolas-ū", "a\x00b", "a\nb", "\t", "x\x1f", "\x7f", "é\x1b"]:
            assert _matches(field["pattern"], sample) == bool(TEXT.fullmatch(sample)), (path, name, sample)
        assert field["maxLength"] == (64 if name == "request_id" else 255)


def test_the_meters_object_is_closed_and_its_counts_bounded(db):
    schema = _schema()
    meters = _property(schema, "/api/v1/meters", "meters")
    assert meters["additionalProperties"] is False
    for name in ("ticket_out_count", "ticket_in_count", "handpay_count", "games_played"):
        assert meters["properties"][name]["minimum"] == 0
        assert meters["properties"][name]["maximum"] == 2**63 - 1


def test_counts_and_sequences_fit_the_server(db):
    schema = _schema()
    count = _property(schema, "/api/v1/validation-pool", "count")
    assert (count["minimum"], count["maximum"]) == (1, 2**31 - 1)
    sequence = _property(schema, "/api/v1/tickets/offline", "sequence")
    assert (sequence["minimum"], sequence["maximum"]) == (0, 2**31 - 1)


def test_moments_are_written_as_the_server_reads_them(db):
    """read_at and printed_at: an offset is required, fractions at most microseconds, nothing before 2000."""
    schema = _schema()
    for path, name in (("/api/v1/meters", "read_at"), ("/api/v1/tickets/offline", "printed_at")):
        field = _property(schema, path, name)
        assert field["format"] == "date-time"
        for moment in ["2026-12-02T18:04:11+02:00", "2000-01-01T00:00:00Z", "2026-12-02T18:04:11.123456Z"]:
            assert _matches(field["pattern"], moment), (name, moment)
        for moment in ["1999-12-31T23:59:59Z", "0001-01-01T00:00:00Z", "2026-12-02T18:04:11", "2026-12-02"]:
            assert not _matches(field["pattern"], moment), (name, moment)
        assert not _matches(field["pattern"], "2026-12-02T18:04:11.1234567Z")
        assert _matches(field["pattern"], "2026-12-02T18:04:11-15:59")
        assert not _matches(field["pattern"], "2026-12-02T18:04:11-16:00")
        assert not _matches(field["pattern"], "2026-12-02T18:04:11+19:34")


def test_a_moment_with_an_offset_postgresql_cannot_keep_is_refused_not_a_500(api):
    body = {
        "request_id": "meters-offset",
        "read_at": "2026-01-02T10:00:00-19:34",
        "meters": {"ticket_out_count": 0, "ticket_out_amount": "0", "ticket_in_count": 0, "ticket_in_amount": "0"},
    }
    client = Client(HTTP_AUTHORIZATION=api.client.defaults["HTTP_AUTHORIZATION"], raise_request_exception=False)
    response = client.post("/api/v1/meters", body, content_type="application/json")
    assert response.status_code == 422


def test_answers_are_closed_objects(db):
    """The server answers exactly the documented fields: a client may rely on nothing more."""
    schema = _schema()
    for path, method, operation in _operations(schema):
        for status, response in operation["responses"].items():
            body = _resolve(schema, response["content"]["application/json"]["schema"])
            assert body["additionalProperties"] is False, (path, method, status)
            assert set(body["required"]) <= set(body["properties"])


# Every code each operation answers, by status (views, services, idempotency, the parser, the middleware).
_ANY = {401: {"unauthenticated"}, 403: {"machine_disabled"}, 406: {"not_acceptable"}, 503: {"unavailable"}}
_POST = {
    **_ANY,
    400: {"malformed_json"},
    413: {"payload_too_large"},
    415: {"unsupported_media_type"},
    409: {"request_id_reused"},
    422: {"invalid_request"},
}
_NUMBERED = {**_POST, 404: {"not_found"}, 422: {"invalid_request", "invalid_number"}, 429: {"rate_limited"}}
_TICKET_REFUSALS = {"already_redeemed", "expired", "void", "not_printed", "on_hold"}
_KIOSK_REFUSALS = {"not_cashable", "over_kiosk_limit", "kiosk_empty"}
EXPECTED_CODES = {
    "ticket_issue": {
        **_POST,
        422: {"invalid_request", "invalid_amount", "over_limit", "amount_not_in_credits"},
    },
    "ticket_printed": {**_NUMBERED, 409: {"request_id_reused", "invalid_state"}},
    "ticket_authorize": {
        **_NUMBERED,
        409: {"request_id_reused", "pending_elsewhere", "not_reported"} | _TICKET_REFUSALS | _KIOSK_REFUSALS,
    },
    "ticket_commit": {
        **_NUMBERED,
        409: {"request_id_reused", "pending_elsewhere", "invalid_state"} | _TICKET_REFUSALS | _KIOSK_REFUSALS,
        422: {"invalid_request", "invalid_number", "invalid_amount"},
    },
    "ticket_get": {**_ANY, 404: {"not_found"}, 422: {"invalid_number"}, 429: {"rate_limited"}},
    "validation_pool": _POST,
    "ticket_offline": {
        **_POST,
        409: {"request_id_reused", "not_in_pool", "already_reported"},
        422: {"invalid_request", "invalid_amount", "over_limit", "invalid_number", "amount_not_in_credits"},
    },
    "meters_report": {**_POST, 422: {"invalid_request", "invalid_amount"}},
    "handpay_request": {
        **_POST,
        409: {"request_id_reused", "handpay_pending"},
        422: {"invalid_request", "invalid_amount"},
    },
    "handpay_get": {**_ANY, 404: {"not_found"}},
}


def test_every_status_and_code_of_every_operation_is_in_the_schema(db):
    schema = _schema()
    found = {}
    for _, _, operation in _operations(schema):
        codes = {}
        for status, response in operation["responses"].items():
            if status.startswith("2"):
                continue
            body = _resolve(schema, response["content"]["application/json"]["schema"])
            assert body["required"] == ["code", "detail"]
            codes[int(status)] = set(body["properties"]["code"]["enum"])
            for code in codes[int(status)]:
                assert f"`{code}`" in response["description"], (operation["operationId"], status, code)
        found[operation["operationId"]] = codes
    assert found == EXPECTED_CODES


def test_a_refusal_on_the_wire_is_one_the_schema_names(api, make_api):
    """Commit answers 409 invalid_state and already_redeemed, which the schema did not name."""
    schema = _schema()
    commit = schema["paths"]["/api/v1/tickets/{validation_number}/commit"]["post"]["responses"]["409"]
    allowed = set(_resolve(schema, commit["content"]["application/json"]["schema"])["properties"]["code"]["enum"])
    number = api.issued_ticket()
    not_held = api.commit(number)
    assert (not_held.status_code, not_held.json()["code"]) == (409, "invalid_state")
    other = make_api(asset_number="2002")
    other.authorize(number)
    assert other.commit(number).status_code == 200
    again = other.commit(number)
    assert (again.status_code, again.json()["code"]) == (409, "already_redeemed")
    assert {"invalid_state", "already_redeemed"} <= allowed


def test_a_rate_limited_answer_declares_retry_after(db):
    schema = _schema()
    for _, _, operation in _operations(schema):
        if "429" in operation["responses"]:
            header = operation["responses"]["429"]["headers"]["Retry-After"]
            assert header["required"] is True
            assert header["schema"] == {"type": "integer", "minimum": 1}


def test_the_schema_is_version_1_1(db):
    info = _schema()["info"]
    assert info["version"] == "1.1.0"
    assert "v1.1" in info["description"]


def _links(schema, operation_id, status):
    (operation,) = [op for _, _, op in _operations(schema) if op["operationId"] == operation_id]
    return {name: link for name, link in operation["responses"][status].get("links", {}).items()}


def test_links_follow_a_tickets_life_and_a_handpays(db):
    """issue -> printed -> authorize -> commit (and GET on the way), validation pool -> offline, handpay -> GET."""
    schema = _schema()
    number = {"validation_number": "$response.body#/validation_number"}

    def targets(operation_id, status):
        return {link["operationId"]: link.get("parameters") for link in _links(schema, operation_id, status).values()}

    assert targets("ticket_issue", "201") == {"ticket_printed": number, "ticket_get": number}
    assert targets("ticket_printed", "200") == {"ticket_authorize": number, "ticket_get": number}
    assert targets("ticket_authorize", "200") == {"ticket_commit": number, "ticket_get": number}
    assert targets("ticket_commit", "200") == {"ticket_authorize": number, "ticket_get": number}
    assert targets("ticket_offline", "201") == {"ticket_authorize": number, "ticket_get": number}
    (to_offline,) = _links(schema, "validation_pool", "200").values()
    assert to_offline["operationId"] == "ticket_offline"
    assert to_offline["requestBody"] == {"validation_number": "$response.body#/validation_numbers/0"}
    assert targets("handpay_request", "201") == {"handpay_get": {"receipt_number": "$response.body#/receipt_number"}}
    operation_ids = {op["operationId"] for _, _, op in _operations(schema)}
    for _, _, operation in _operations(schema):
        for response in operation["responses"].values():
            for link in response.get("links", {}).values():
                assert link["operationId"] in operation_ids

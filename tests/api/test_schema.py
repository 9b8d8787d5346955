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
    issue = schema["paths"]["/api/v1/tickets/issue"]["post"]
    assert set(issue["responses"]) >= {"201", "401", "403", "422"}
    authorize = schema["paths"]["/api/v1/tickets/{validation_number}/authorize"]["post"]
    assert set(authorize["responses"]) >= {"200", "401", "403", "404", "409", "422", "429"}


def test_schema_as_json(db):
    response = Client().get("/api/v1/schema/?format=json")
    assert response.status_code == 200
    assert response.json()["info"]["version"] == "1.0.0"


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

"""schemathesis against the served OpenAPI schema: no 5xx, every response as documented."""

import os

import pytest
import schemathesis
from django.core import signals
from django.db import close_old_connections
from hypothesis import HealthCheck, settings

from casino_office.wsgi import application
from tests.factories import MachineFactory, key_for

schema = schemathesis.openapi.from_wsgi("/api/v1/schema/?format=json", application)

# 10 operations x 250: 2 500 generated requests per run of the suite (about 75 s on two cores);
# FUZZ_EXAMPLES=2000 for a deeper run on demand.
EXAMPLES_PER_OPERATION = int(os.environ.get("FUZZ_EXAMPLES", "250"))


@pytest.fixture
def machine_key(db, casino):
    # Requests go straight to the WSGI app; like Django's test client, keep the
    # test's database connection (and its transaction) open across them.
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    try:
        yield key_for(MachineFactory(casino=casino, asset_number="FUZZ1"))
    finally:
        signals.request_started.connect(close_old_connections)
        signals.request_finished.connect(close_old_connections)


@schema.parametrize()
@settings(max_examples=EXAMPLES_PER_OPERATION, deadline=None, suppress_health_check=list(HealthCheck))
def test_every_operation_answers_as_documented(case, machine_key):
    # Schema-valid is not contract-valid here: a number with a wrong Damm digit
    # is a documented 422, which positive_data_acceptance would call a rejection.
    case.call_and_validate(
        headers={"Authorization": f"Bearer {machine_key}"},
        excluded_checks=[schemathesis.checks.positive_data_acceptance],
    )

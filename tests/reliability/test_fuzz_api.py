"""schemathesis against the served OpenAPI schema, every check on (`--checks all`): positive and negative data,
then the stateful phase following the schema's links (issue -> printed -> authorize -> commit, validation pool ->
offline ticket, handpay -> its state).

No 5xx, every answer as documented (status, code, headers, body), schema-valid data accepted, schema-invalid data
refused. What no schema can state is kept by the fuzzer itself on each generated case: a validation number in one
of the schema's forms gets its right Damm check digit (a wrong one is the documented 422 invalid_number), a moment
in the schema's form is moved onto the host's clock (more than 5 minutes ahead is a documented 422), and a valid
request_id is made unique (one met before is the documented 409 request_id_reused). The fuzz casino's ticket maximum
is raised to what a ticket's amount holds and its machine counts credits of 0.001 EUR, so every amount the schema
allows is one the server accepts. Fixed seeds and bounded examples: deterministic.

The run uses a slot machine's key. A kiosk's own rules (whole cents, cashable only, `dispensed` equal to the payout)
depend on the machine's kind, which one schema shared by both kinds cannot state; tests/api covers them.
"""

import datetime as dt
import itertools
import os
import re
from decimal import Decimal
from typing import Any

import pytest
import schemathesis
from django.core import signals
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from django.utils import timezone
from hypothesis import HealthCheck, settings
from hypothesis import seed as hypothesis_seed
from schemathesis.config import SchemathesisConfig
from stdnum import damm

from tests.factories import MachineFactory, key_for
from tickets.api.moments import EARLIEST
from tickets.api.serializers import MOMENT_PATTERN, PRESENTED_NUMBER_PATTERN, TEXT_PATTERN

# Fuzzing: thousands of generated requests, a long run.
pytestmark = pytest.mark.slow

SEED = 20261204
# 10 operations x 60 in the positive and negative fuzzing phases (plus the examples and coverage phases) and
# STATEFUL_RUNS scenarios of at most STATEFUL_STEPS calls: about two minutes on two cores.
# FUZZ_EXAMPLES=1000 for a deeper run on demand.
EXAMPLES_PER_OPERATION = int(os.environ.get("FUZZ_EXAMPLES", "60"))
STATEFUL_RUNS = int(os.environ.get("FUZZ_STATEFUL_RUNS", "40"))
STATEFUL_STEPS = 8

FUZZ_KEY = "key-TOR-FUZZ1"  # the key MachineFactory gives machine FUZZ1 of the casino fixture (tests.factories.key_for)
config = SchemathesisConfig.from_dict(
    {
        "seed": SEED,
        "generation": {"mode": "all", "max-examples": EXAMPLES_PER_OPERATION, "deterministic": True},
        "phases": {
            "examples": {"enabled": True},
            "coverage": {"enabled": True},
            "fuzzing": {"enabled": True},
            "stateful": {"enabled": True},
        },
        "checks": {"enabled": True},
        "auth": {"openapi": {"machineKey": {"bearer": FUZZ_KEY}}},
    }
)
# Django's WSGI application, not casino_office.wsgi's module: that one freezes the process's objects out of the
# garbage collector's sight, which is for a web worker, not for the test run.
application = get_wsgi_application()
schema = schemathesis.openapi.from_wsgi("/api/v1/schema/?format=json", application, config=config)

_NUMBER = re.compile(PRESENTED_NUMBER_PATTERN)
_MOMENT = re.compile(MOMENT_PATTERN)


def _with_check_digit(number: str) -> str:
    digits = re.sub(r"[^0-9]", "", number)
    return number[:-1] + damm.calc_check_digit(digits[:-1])


def _on_the_clock(moment: str) -> str:
    parsed = dt.datetime.fromisoformat(moment.replace("Z", "+00:00"))
    if EARLIEST <= parsed <= timezone.now():
        return moment
    return "2024" + moment[4:]  # a leap year: every date of the generated moment exists in it


def _schema_unstated_rules(value: Any) -> Any:
    """The check digit and the clock: a value in the schema's form made one the server takes."""
    if isinstance(value, dict):
        return {name: _schema_unstated_rules(item) for name, item in value.items()}
    if isinstance(value, str) and _NUMBER.search(value):
        return _with_check_digit(value)
    if isinstance(value, str) and _MOMENT.search(value):
        try:
            return _on_the_clock(value)
        except ValueError:  # not a date (13th month): refused as the schema's date-time format says
            return value
    return value


_TEXT = re.compile(TEXT_PATTERN)
_REQUEST_IDS = itertools.count(1)


def _fresh_request_id(value: Any) -> Any:
    """A valid request_id made unique, so that a generated id met before (an empty-ish "0") reaches the operation
    rather than the documented 409 request_id_reused; replays are proved in tests/api/test_idempotency.py."""
    if isinstance(value, str) and 1 <= len(value) <= 64 and _TEXT.search(value):
        return f"{value[:52]}~{next(_REQUEST_IDS)}"
    return value


@schema.hook("map_case")
def _keep_what_no_schema_states(context: Any, case: Any) -> Any:
    if case.path_parameters:
        case.path_parameters = _schema_unstated_rules(case.path_parameters)
    if isinstance(case.body, dict):
        case.body = _schema_unstated_rules(case.body)
        if "request_id" in case.body:
            case.body["request_id"] = _fresh_request_id(case.body["request_id"])
    return case


@pytest.fixture
def machine_key(db, casino):
    # Requests go straight to the WSGI app; like Django's test client, keep the
    # test's database connection (and its transaction) open across them.
    casino.max_ticket_amount = Decimal("999999999.99")
    casino.lookup_failure_limit = 32767  # the fuzzer guesses numbers by the thousand; 429 is tested in tests/api
    casino.save()
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    try:
        machine = MachineFactory(casino=casino, asset_number="FUZZ1", credit_value=Decimal("0.001"))
        assert key_for(machine) == FUZZ_KEY
        yield FUZZ_KEY
    finally:
        signals.request_started.connect(close_old_connections)
        signals.request_finished.connect(close_old_connections)


@schema.parametrize()
@hypothesis_seed(SEED)
@settings(max_examples=EXAMPLES_PER_OPERATION, deadline=None, suppress_health_check=list(HealthCheck))
def test_every_operation_answers_as_documented(case, machine_key):
    case.call_and_validate()


def test_the_links_walk_a_tickets_life_as_documented(machine_key):
    schema.as_state_machine().run(
        settings=settings(
            max_examples=STATEFUL_RUNS,
            stateful_step_count=STATEFUL_STEPS,
            deadline=None,
            derandomize=True,
            suppress_health_check=list(HealthCheck),
        )
    )

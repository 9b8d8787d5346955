# The two commands a new user needs: `make run` and `make test`.
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PY := $(BIN)/python
HOST ?= 127.0.0.1
PORT ?= 8000
# Tests run on PostgreSQL (race tests need real row locks).
TEST_DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/casino_office
TEST_ENV := SECRET_KEY=test-only-secret-key-not-for-production DATABASE_URL=$(TEST_DATABASE_URL) \
	PII_ENCRYPTION_KEYS=dGVzdC1vbmx5LXBpaS1rZXktMzItYnl0ZXMtbG9uZyE= PII_INDEX_KEY=test-only-blind-index-key \
	REGISTER_CHAIN_KEYS=test-only-register-chain-key-not-for-production
DEMO_ENV := CASINO_DEMO=1 DEBUG=1

.PHONY: install run simulate migrate demo worker lint typecheck test test-fast pytest suite check-deploy services system-packages clean

$(VENV)/.installed: requirements.txt requirements-dev.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check -r requirements-dev.txt
	touch $@

install: $(VENV)/.installed

migrate: install
	$(DEMO_ENV) $(PY) manage.py migrate --noinput

demo: migrate
	$(DEMO_ENV) $(PY) manage.py seed_demo

# Web UI + API on http://$(HOST):$(PORT)/ and a Celery worker with beat, on
# SQLite and a filesystem broker under var/ (no services needed). Ctrl-C stops all.
run: demo
	@set -m; \
	$(DEMO_ENV) $(BIN)/celery -A casino_office worker --beat --pool=solo --loglevel=INFO & worker=$$!; \
	trap 'kill $$worker 2>/dev/null; wait $$worker 2>/dev/null' EXIT INT TERM; \
	$(DEMO_ENV) $(PY) manage.py runserver $(HOST):$(PORT)

# A living floor for the demo: with `make run` going, in another terminal. Simulated machines cash out, play
# one another's tickets, send meters, go offline, ask for handpays; the run ends with their reconciliation.
SIMULATE_ARGS ?= --machines 6 --minutes 240 --pace 0.5
simulate: install
	$(DEMO_ENV) $(PY) manage.py simulate_floor --url http://$(HOST):$(PORT) $(SIMULATE_ARGS)

# lint-imports: the import contracts of pyproject.toml ([tool.importlinter]), the apps' layers among them.
lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports

typecheck: install
	$(TEST_ENV) $(BIN)/mypy .

pytest: install
	$(TEST_ENV) $(BIN)/pytest $(PYTEST_ARGS)

# The inner loop: every test not marked slow, spread over the machine's cores (pytest-xdist; each worker gets its
# own database, test_<name>_gw0, _gw1..., made afresh; kept databases would make the tests that walk ids from 1
# slower at every run). No lint, no types, no slow tests: `make test` is what CI runs.
test-fast: install
	$(TEST_ENV) $(BIN)/pytest -n auto -m "not slow" $(PYTEST_ARGS)

# Every test, as CI runs them: spread over the cores (each xdist worker on a database of its own; an idle worker
# takes tests queued for the other, so one long migration test at the end does not leave a core waiting), then the
# tests marked `alone` one at a time: they start servers, browsers, workers or clusters of their own
# (tests/conftest.py).
suite: install
	$(TEST_ENV) $(BIN)/pytest -n auto --dist worksteal -m "not alone" --durations=15 $(PYTEST_ARGS)
	$(TEST_ENV) $(BIN)/pytest -m alone --durations=25 $(PYTEST_ARGS)

# The whole suite: lint, types, and every test on PostgreSQL. The Debian packages the tests need beyond
# Python (Chromium, gettext, nginx, openssl) are checked first and installed if missing, in one line.
test: system-packages lint typecheck suite

system-packages:
	@bash scripts/system-packages

check-deploy: install
	SECRET_KEY=$$($(PY) -c 'import secrets; print(secrets.token_urlsafe(50))') \
	DATABASE_URL=$(TEST_DATABASE_URL) CELERY_BROKER_URL=redis://127.0.0.1:6379/0 \
	PII_ENCRYPTION_KEYS=$$($(PY) -c 'from cryptography.fernet import Fernet; print(Fernet.generate_key().decode())') \
	PII_INDEX_KEY=$$($(PY) -c 'import secrets; print(secrets.token_urlsafe(32))') \
	REGISTER_CHAIN_KEYS=$$($(PY) -c 'import secrets; print(secrets.token_urlsafe(32))') \
	ALLOWED_HOSTS=casino.example.com $(PY) manage.py check --deploy --fail-level WARNING

# Start PostgreSQL and Redis on this machine if they are down (CI uses this).
services:
	bash scripts/services-up

clean:
	rm -rf $(VENV) var .pytest_cache .mypy_cache .ruff_cache

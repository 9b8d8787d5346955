"""The WSGI application a web worker loads (casino_office/wsgi.py)."""

import subprocess
import sys

import pytest

from tests.reliability.processes import ROOT, service_env

pytestmark = pytest.mark.slow


def test_a_worker_loads_the_urlconf_and_its_views_as_it_starts_not_in_its_first_request():
    """gunicorn loads the application before the worker accepts a connection: the URLconf and every view are
    imported then (about half a second), so a worker started under load (a deploy, a recycling after
    max_requests) does not hold its first request while it imports them."""
    probe = (
        "import sys; import casino_office.wsgi; "
        "print(all(name in sys.modules for name in ('casino_office.urls', 'tickets.api.views', 'cashdesk.views.desk')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, env=service_env(), capture_output=True, text=True, check=True
    )
    assert out.stdout.strip().splitlines()[-1] == "True"


def test_a_worker_hides_what_it_loaded_from_the_garbage_collector():
    """A full collection over everything Django and the office loaded (about 150 000 objects) stalled a worker for
    70-120 ms on the benchmark machine; frozen as the worker starts, those objects are never scanned again."""
    probe = (
        "import gc; import casino_office.wsgi; frozen = gc.get_freeze_count(); "
        "gc.collect(); print(frozen, len(gc.get_objects()))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, env=service_env(), capture_output=True, text=True, check=True
    )
    frozen, still_scanned = map(int, out.stdout.strip().splitlines()[-1].split())
    assert frozen > 100_000
    assert still_scanned < frozen / 10

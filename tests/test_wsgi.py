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

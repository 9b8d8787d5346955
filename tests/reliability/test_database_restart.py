"""PostgreSQL restarted under load: 503s while it is down, recovery by itself, nothing lost, nothing doubled."""

import json
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

import psycopg
import pytest

from tests.reliability.processes import (
    ROOT,
    free_port,
    gunicorn,
    migrate_throwaway,
    service_env,
    throwaway_postgres,
)

REQUESTS = 150
KEY = "restart-test-machine-key"
SETUP = f"""
from machines.keys import hash_key
from machines.models import Casino, Machine
casino = Casino.objects.create(name="Restart", code="RST", address="x", licence_number="x")
Machine.objects.create(casino=casino, asset_number="1", ticket_enrolled=True, api_key_hash=hash_key("{KEY}"))
"""


def _post(port: int, body: dict[str, str]) -> tuple[int, dict[str, str]]:
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/api/v1/tickets/issue",
        data=json.dumps(body).encode(),
        headers={"Authorization": f"Bearer {KEY}", "Content-Type": "application/json"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:  # noqa: S310 - http on loopback
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"{}")
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return 0, {}


@pytest.mark.slow
def test_api_survives_a_database_restart(tmp_path):
    with throwaway_postgres() as cluster:
        env = service_env(DATABASE_URL=cluster.url, ALLOWED_HOSTS="127.0.0.1", CELERY_BROKER_URL="memory://")
        migrate_throwaway(cluster, tmp_path, env)
        subprocess.run([sys.executable, "manage.py", "shell", "-c", SETUP], cwd=ROOT, env=env, check=True, timeout=180)
        port = free_port()
        acknowledged: dict[str, str] = {}
        unavailable: list[dict[str, str]] = []
        restarted: list[float] = []
        recovered: list[float] = []

        def restart() -> None:
            cluster.start()
            restarted.append(time.monotonic())

        with gunicorn(env, port):
            for i in range(REQUESTS):
                request_id = f"cashout-{i}"
                if i == REQUESTS // 3:
                    cluster.stop()
                    threading.Timer(3.0, restart).start()
                deadline = time.monotonic() + 60
                while time.monotonic() < deadline:
                    status, body = _post(port, {"request_id": request_id, "amount": "10.00"})
                    if status == 201:
                        acknowledged[request_id] = body["validation_number"]
                        if restarted and not recovered:
                            recovered.append(time.monotonic())
                        break
                    assert status == 503, (status, body)
                    unavailable.append(body)
                    time.sleep(0.2)
            # The same request_ids again: the first answers come back, nothing new is written.
            for request_id, number in list(acknowledged.items())[:20]:
                status, body = _post(port, {"request_id": request_id, "amount": "10.00"})
                assert (status, body["validation_number"]) == (201, number)

        assert unavailable, "the outage was not observed"
        assert all(body == {"code": "unavailable", "detail": body["detail"]} for body in unavailable)
        assert recovered, "never recovered"
        assert recovered[0] - restarted[0] < 10  # by itself, within seconds of the database's return
        assert len(acknowledged) == REQUESTS
        with psycopg.connect(cluster.url.replace("postgres://", "postgresql://")) as db:
            numbers = [row[0] for row in db.execute("SELECT validation_number FROM tickets_ticket")]
            requests = db.execute("SELECT count(*) FROM tickets_machinerequest").fetchone()[0]
        assert sorted(numbers) == sorted(acknowledged.values())  # every acknowledged ticket, no duplicate
        assert requests == REQUESTS

"""The demo's broker (kombu's filesystem transport) keeps every file under var/: nothing in the folder it runs from."""

import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_a_worker_on_the_filesystem_broker_writes_only_under_var(tmp_path):
    cwd = tmp_path / "where-it-was-started"
    cwd.mkdir()
    var = tmp_path / "var"
    env = {
        **os.environ,
        "CASINO_DEMO": "1",
        "CELERY_BROKER_URL": "filesystem://",
        "CASINO_VAR_DIR": str(var),
        "PYTHONPATH": str(ROOT),
    }
    worker = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "casino_office", "worker", "--pool=solo", "--without-heartbeat"],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        assert worker.stdout is not None
        for line in worker.stdout:  # the worker says "ready" once it has set up its queues and remote control
            if "ready" in line or time.monotonic() > deadline:
                break
        assert (var / "celery-broker" / "control").is_dir()
    finally:
        worker.terminate()
        worker.wait(timeout=30)
    assert list(cwd.iterdir()) == []

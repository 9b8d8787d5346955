"""Shared by the benchmarks: a dedicated PostgreSQL database, Django set up against it, result tables."""

import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"
ADMIN_URL = os.environ.get("BENCH_ADMIN_URL", "postgresql://postgres@127.0.0.1:5432/postgres")
DB_NAME = os.environ.get("BENCH_DB", "casino_bench")
DATABASE_URL = f"postgres://postgres@127.0.0.1:5432/{DB_NAME}"

BENCH_ENV = {
    "DATABASE_URL": DATABASE_URL,
    "SECRET_KEY": "bench-only-secret-key-not-for-production-123456",
    "PII_ENCRYPTION_KEYS": "YmVuY2gtb25seS1waWkta2V5LTMyLWJ5dGVzLWxvbmc=",
    "PII_INDEX_KEY": "bench-only-index-key",
    "REGISTER_CHAIN_KEYS": "bench-only-register-chain-key-not-for-production",
    "DEBUG": "0",
    "SECURE_SSL_REDIRECT": "0",
    "STATIC_MANIFEST": "0",
    "ALLOWED_HOSTS": "127.0.0.1,localhost",
    "CELERY_BROKER_URL": "memory://",
    "LOG_LEVEL": "WARNING",
}


def fresh_database() -> None:
    import psycopg

    with psycopg.connect(ADMIN_URL, autocommit=True) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {DB_NAME} WITH (FORCE)")
        admin.execute(f"CREATE DATABASE {DB_NAME}")
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput", "-v0"],
        cwd=ROOT,
        env={**os.environ, **BENCH_ENV},
        check=True,
    )


def setup_django() -> None:
    os.environ.update(BENCH_ENV)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "casino_office.settings")
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()


def machine_info() -> dict[str, Any]:
    return {
        "date": time.strftime("%Y-%m-%d"),
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "machine": platform.machine(),
    }


def write_result(name: str, result: dict[str, Any]) -> Path:
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{name}.json"
    path.write_text(json.dumps({"machine": machine_info(), **result}, indent=2, default=str))
    return path


def print_table(headers: list[str], rows: list[list[Any]]) -> None:
    widths = [max(len(str(h)), *(len(str(r[i])) for r in rows)) for i, h in enumerate(headers)]
    print("  ".join(str(h).ljust(w) for h, w in zip(headers, widths, strict=True)))
    for row in rows:
        print("  ".join(str(v).ljust(w) for v, w in zip(row, widths, strict=True)))

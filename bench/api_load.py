"""Machine API under load: N simulated machines run issue → printed → authorize → commit against
gunicorn + PostgreSQL (DEBUG off), beside a bare DRF floor endpoint and pgbench -N on the same database.

    .venv/bin/python bench/api_load.py [--machines 64] [--seconds 30]
"""

import argparse
import asyncio
import os
import re
import socket
import subprocess
import sys
import time
from collections import defaultdict
from typing import Any

import aiohttp

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from bench.common import BENCH_ENV, DB_NAME, ROOT, fresh_database, print_table, setup_django, write_result

WARMUP = 3.0


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def prepare(machines: int) -> list[str]:
    fresh_database()
    setup_django()
    from django.db import connection

    from machines.keys import hash_key
    from machines.models import Casino, Machine

    casino = Casino.objects.create(name="Bench Casino", code="BEN", address="Bench", licence_number="B-1")
    keys = [f"bench-machine-key-{i:04d}" for i in range(machines)]
    Machine.objects.bulk_create(
        Machine(casino=casino, asset_number=str(1000 + i), ticket_enrolled=True, api_key_hash=hash_key(key))
        for i, key in enumerate(keys)
    )
    with connection.cursor() as cursor:
        cursor.execute("CREATE TABLE bench_floor (id bigserial PRIMARY KEY, note text, created_at timestamptz)")
    connection.close()
    return keys


def start_gunicorn(port: int, workers: int) -> subprocess.Popen[bytes]:
    env = {**os.environ, **BENCH_ENV, "BENCH_FLOOR_ENDPOINT": "1", "DATABASE_CONN_MAX_AGE": "600"}
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gunicorn",
            "casino_office.wsgi:application",
            "-b",
            f"127.0.0.1:{port}",
            "-w",
            str(workers),
            "--log-level",
            "warning",
        ],
        cwd=ROOT,
        env=env,
    )
    for _ in range(100):
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.3):
                return server
        except OSError:
            time.sleep(0.2)
    raise RuntimeError("gunicorn did not start")


async def machine_loop(
    session: aiohttp.ClientSession, base: str, key: str, stop: float, samples: dict[str, list[float]], errors: list[str]
) -> None:
    headers = {"Authorization": f"Bearer {key}"}
    n = 0
    started = time.monotonic()

    async def call(name: str, path: str, body: dict[str, str], expect: int) -> dict[str, Any]:
        t0 = time.perf_counter()
        async with session.post(base + path, json=body, headers=headers) as response:
            data = await response.json()
            elapsed = time.perf_counter() - t0
            if response.status != expect:
                errors.append(f"{name} {response.status} {data}")
            elif time.monotonic() - started > WARMUP:
                samples[name].append(elapsed)
            return data

    while time.monotonic() < stop:
        n += 1
        rid = f"{key[-4:]}-{n}"
        issued = await call("issue", "/api/v1/tickets/issue", {"request_id": f"i{rid}", "amount": "12.34"}, 201)
        number = issued["validation_number"]
        await call("printed", f"/api/v1/tickets/{number}/printed", {"request_id": f"p{rid}", "result": "printed"}, 200)
        await call("authorize", f"/api/v1/tickets/{number}/authorize", {"request_id": f"a{rid}"}, 200)
        await call("commit", f"/api/v1/tickets/{number}/commit", {"request_id": f"c{rid}", "result": "accepted"}, 200)


async def floor_loop(session: aiohttp.ClientSession, base: str, stop: float, samples: list[float]) -> None:
    started = time.monotonic()
    while time.monotonic() < stop:
        t0 = time.perf_counter()
        async with session.post(base + "/bench/floor", json={}) as response:
            await response.read()
        if time.monotonic() - started > WARMUP:
            samples.append(time.perf_counter() - t0)


async def run(base: str, keys: list[str], seconds: float) -> dict[str, Any]:
    connector = aiohttp.TCPConnector(limit=len(keys) * 2)
    async with aiohttp.ClientSession(connector=connector) as session:
        samples: dict[str, list[float]] = defaultdict(list)
        errors: list[str] = []
        stop = time.monotonic() + seconds
        await asyncio.gather(*(machine_loop(session, base, key, stop, samples, errors) for key in keys))
        floor: list[float] = []
        stop = time.monotonic() + seconds
        await asyncio.gather(*(floor_loop(session, base, stop, floor) for _ in keys))
    return {"samples": samples, "floor": floor, "errors": errors}


def pgbench(seconds: int) -> float:
    subprocess.run(
        ["pgbench", "-i", "-s", "10", "-q", "-h", "127.0.0.1", "-U", "postgres", DB_NAME],
        check=True,
        capture_output=True,
    )
    out = subprocess.run(
        ["pgbench", "-N", "-c", "16", "-j", "2", "-T", str(seconds), "-h", "127.0.0.1", "-U", "postgres", DB_NAME],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    match = re.search(r"tps = ([0-9.]+)", out)
    return float(match.group(1)) if match else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--machines", type=int, default=64)
    parser.add_argument("--seconds", type=float, default=30)
    parser.add_argument("--workers", type=int, default=2 * (os.cpu_count() or 1) + 1)
    args = parser.parse_args()
    keys = prepare(args.machines)
    port = 18000 + os.getpid() % 1000
    server = start_gunicorn(port, args.workers)
    try:
        result = asyncio.run(run(f"http://127.0.0.1:{port}", keys, args.seconds))
    finally:
        server.terminate()
        server.wait(timeout=30)
    measured = args.seconds - WARMUP
    floor_rps = len(result["floor"]) / measured
    rows = []
    endpoints: dict[str, Any] = {}
    for name in ("issue", "printed", "authorize", "commit"):
        values = result["samples"][name]
        rps = len(values) / measured
        p99 = percentile(values, 0.99) * 1000
        endpoints[name] = {
            "requests_per_s": round(rps, 1),
            "p50_ms": round(percentile(values, 0.50) * 1000, 1),
            "p95_ms": round(percentile(values, 0.95) * 1000, 1),
            "p99_ms": round(p99, 1),
            "ratio_to_floor": round(rps / floor_rps, 2) if floor_rps else None,
        }
        rows.append([name, *endpoints[name].values()])
    total_rps = sum(e["requests_per_s"] for e in endpoints.values())
    floor = {
        "requests_per_s": round(floor_rps, 1),
        "p50_ms": round(percentile(result["floor"], 0.5) * 1000, 1),
        "p95_ms": round(percentile(result["floor"], 0.95) * 1000, 1),
        "p99_ms": round(percentile(result["floor"], 0.99) * 1000, 1),
    }
    rows.append(["floor (bare DRF insert)", *floor.values(), 1.0])
    tps = pgbench(int(min(args.seconds, 20)))
    print(
        f"{args.machines} machines, {args.workers} gunicorn workers, {measured:.0f} s measured, errors: {len(result['errors'])}"
    )
    print_table(["endpoint", "req/s", "p50 ms", "p95 ms", "p99 ms", "ratio to floor"], rows)
    print(
        f"all API requests: {total_rps:.1f} req/s = {total_rps / floor_rps:.2f} of the floor's {floor_rps:.0f} req/s; "
        f"pgbench -N (16 clients): {tps:.0f} tps"
    )
    path = write_result(
        "api_load",
        {
            "machines": args.machines,
            "workers": args.workers,
            "seconds_measured": measured,
            "endpoints": endpoints,
            "api_total_requests_per_s": round(total_rps, 1),
            "floor": floor,
            "pgbench_tps": round(tps, 1),
            "errors": result["errors"][:20],
        },
    )
    print(f"written: {path}")


if __name__ == "__main__":
    main()

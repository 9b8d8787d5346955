"""Machine API under load: N simulated machines run issue → printed → authorize → commit against gunicorn +
PostgreSQL (DEBUG off), beside a bare DRF floor endpoint, from the same load client in the same run.

    .venv/bin/python bench/api_load.py [--machines 64] [--workers 2] [--threads 1] [--seconds 30]
                                       [--rate 330 [--arrivals even|poisson] [--paced-only]] [--skip-pgbench]

Phases, one after another on the same server and the same aiohttp client:
  1. the life cycle, closed loop: each machine sends its next request as soon as its last one is answered;
  2. the floor, closed loop, with as many clients (one UPDATE by primary key and one INSERT in one transaction,
     a JSON body parsed and answered: casino_office/bench_floor.py);
  3. with --rate R: the life cycle paced (open loop): R requests per second offered across all machines, each
     machine sending on its own schedule (R / machines per second); a request's latency runs from the moment it
     was due, so a machine still waiting on its last answer shows the wait (queueing) in its next request;
  4. with --rate R: the floor, paced the same way.
--paced-only skips 1 and 2. Then `pgbench -N` on the same database (--skip-pgbench leaves it out).

Before the first phase the machines run 8 s of life cycles, closed loop and unmeasured (`warm_up`: gunicorn's
workers booted and warm). Each phase measures after a warm-up of 3 s: answers per second, latency percentiles per endpoint and for all
four together, errors (an unexpected status, no answer within 10 s: a machine gives up then, or a broken
connection) and the server's CPU from /proc (gunicorn's workers and the bench database's PostgreSQL backends)
per completed life cycle, or per floor request.
"""

import argparse
import asyncio
import json
import os
import random
import re
import statistics
import subprocess
import sys
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

import aiohttp

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from bench.common import (
    BENCH_ENV,
    DB_NAME,
    ROOT,
    CpuMeter,
    fresh_database,
    print_table,
    reference_loop_ms,
    setup_django,
    wait_for_port,
    write_result,
)

WARMUP = 3.0
# Before anything is measured, the machines run their life cycles for this long, closed loop and unmeasured:
# gunicorn opens its port before its workers have booted, and a paced load sent at once queued behind their boot
# (latencies up to a second, drained only after 6 to 12 s at 330 requests/s): a cold start, not the API's speed.
SERVER_WARMUP = 8.0
TIMEOUT = 10.0  # a machine gives up on an answer after 10 s
ENDPOINTS = ("issue", "printed", "authorize", "commit")
P99_TARGET_MS = 50.0
RATIO_TARGET = 0.5


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
        cursor.execute(
            "CREATE TABLE bench_floor_slot (id integer PRIMARY KEY, amount numeric(14, 2) NOT NULL DEFAULT 0, "
            "updated_at timestamptz)"
        )
        cursor.execute("INSERT INTO bench_floor_slot (id) SELECT generate_series(1, %s)", [machines])
        cursor.execute(
            "CREATE TABLE bench_floor (id bigserial PRIMARY KEY, slot_id integer NOT NULL REFERENCES bench_floor_slot, "
            "request_id text NOT NULL, amount numeric(12, 2) NOT NULL, created_at timestamptz NOT NULL)"
        )
    connection.close()
    return keys


def start_gunicorn(
    port: int, workers: int, threads: int = 1, extra_env: dict[str, str] | None = None
) -> subprocess.Popen[bytes]:
    """gunicorn as deployed (deploy/gunicorn.conf.py: sync workers, recycled after GUNICORN_MAX_REQUESTS), without
    an access log; `threads` above 1 makes gthread workers of that many threads."""
    env = {
        **os.environ,
        **BENCH_ENV,
        "BENCH_FLOOR_ENDPOINT": "1",
        "DATABASE_CONN_MAX_AGE": "600",
        "GUNICORN_BIND": f"127.0.0.1:{port}",
        "GUNICORN_WORKERS": str(workers),
        "GUNICORN_ACCESS_LOG": "",
        "GUNICORN_LOG_LEVEL": "warning",
        **(extra_env or {}),
    }
    config = ["-c", "deploy/gunicorn.conf.py", *(["--threads", str(threads)] if threads > 1 else [])]
    server = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", *config, "casino_office.wsgi:application"], cwd=ROOT, env=env
    )
    wait_for_port(port, "gunicorn")
    return server


class Pacer:
    """When a client sends its next request: at once (closed loop), or on its own schedule (paced)."""

    def __init__(
        self, start: float, stop: float, interval: float | None, offset: float, rng: random.Random | None
    ) -> None:
        self.stop = stop
        self.interval = interval
        self.rng = rng  # exponential gaps (Poisson arrivals) when set, even gaps when None
        self.next_at = start + offset
        self.unsent = 0  # due before the end of the phase but not sent by then (the client was still waiting)
        self.lag = 0.0  # how far behind its schedule the client was at the end

    def _gap(self) -> float:
        assert self.interval is not None
        return self.rng.expovariate(1 / self.interval) if self.rng else self.interval

    async def next(self) -> float | None:
        """The moment the next request is due (None: the phase is over); waits until then."""
        now = time.monotonic()
        if self.interval is None:
            return now if now < self.stop else None
        due = self.next_at
        if due >= self.stop:
            return None
        if now >= self.stop:
            self.lag = now - due
            self.unsent = int((self.stop - due) / self.interval) + 1
            return None
        self.next_at += self._gap()
        if due > now:
            await asyncio.sleep(due - now)
        return due


@dataclass
class Recorder:
    """Answers completed in the window, latencies of the requests sent in it, every error of the phase."""

    window_start: float
    window_end: float
    latencies: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    answered: Counter[str] = field(default_factory=Counter)
    errors: Counter[tuple[str, str]] = field(default_factory=Counter)
    cycles: int = 0

    def ok(self, name: str, due: float, sent: float, done: float) -> None:
        # Throughput: the answers that arrive in the window. Latency: the requests sent in it, answered before or
        # after its end, measured from when they were due: a client far behind its schedule still counts its
        # lateness (requests due in the window but never sent by its end are counted apart); a request sent in
        # the warm-up is left out, however late its answer.
        if self.window_start <= done < self.window_end:
            self.answered[name] += 1
        if self.window_start <= sent < self.window_end:
            self.latencies[name].append(done - due)

    def error(self, name: str, reason: str) -> None:
        self.errors[(name, reason)] += 1

    def cycle_done(self, done: float) -> None:
        if self.window_start <= done < self.window_end:
            self.cycles += 1


async def call(
    session: aiohttp.ClientSession,
    rec: Recorder,
    name: str,
    url: str,
    body: dict[str, Any],
    headers: dict[str, str] | None,
    expect: int,
    due: float,
) -> dict[str, Any] | None:
    """POST and check the answer; None (and an error counted) unless it has the expected status and is JSON."""
    sent = time.monotonic()
    try:
        async with session.post(url, json=body, headers=headers) as response:
            raw = await response.read()
            status = response.status
    except TimeoutError:
        rec.error(name, f"no answer in {TIMEOUT:g} s")
        return None
    except aiohttp.ClientError as exc:
        rec.error(name, type(exc).__name__)
        return None
    done = time.monotonic()
    try:
        data = json.loads(raw)
    except ValueError:
        rec.error(name, f"HTTP {status}, not JSON")
        return None
    if status != expect:
        # The error's code only: bodies may carry a validation number.
        code = data.get("code", "?") if isinstance(data, dict) else "?"
        rec.error(name, f"HTTP {status} {code}")
        return None
    rec.ok(name, due, sent, done)
    return data if isinstance(data, dict) else {}


def machine_request(tag: str, key: str, n: int) -> str:
    """What a machine's n-th life cycle of a phase puts after the step's letter in its request ids."""
    return f"{tag}{key[-4:]}-{n}"


async def machine_loop(
    session: aiohttp.ClientSession, base: str, key: str, tag: str, pacer: Pacer, rec: Recorder
) -> None:
    headers = {"Authorization": f"Bearer {key}"}
    n = 0
    while True:
        n += 1
        rid = machine_request(tag, key, n)
        due = await pacer.next()
        if due is None:
            return
        issued = await call(
            session,
            rec,
            "issue",
            base + "/api/v1/tickets/issue",
            {"request_id": f"i{rid}", "amount": "12.34"},
            headers,
            201,
            due,
        )
        if issued is None or "validation_number" not in issued:
            continue
        ticket = f"{base}/api/v1/tickets/{issued['validation_number']}"
        steps = (
            ("printed", "/printed", {"request_id": f"p{rid}", "result": "printed"}),
            ("authorize", "/authorize", {"request_id": f"a{rid}"}),
            ("commit", "/commit", {"request_id": f"c{rid}", "result": "accepted"}),
        )
        for name, path, body in steps:
            due = await pacer.next()
            if due is None:
                return
            if await call(session, rec, name, ticket + path, body, headers, 200, due) is None:
                break
        else:
            rec.cycle_done(time.monotonic())


async def floor_loop(
    session: aiohttp.ClientSession, base: str, slot: int, tag: str, pacer: Pacer, rec: Recorder
) -> None:
    n = 0
    while True:
        due = await pacer.next()
        if due is None:
            return
        n += 1
        body = {"request_id": f"{tag}{slot}-{n}", "amount": "12.34", "slot": slot}
        if await call(session, rec, "floor", base + "/api/bench/floor", body, None, 201, due) is not None:
            rec.cycle_done(time.monotonic())


@dataclass
class Phase:
    name: str
    kind: str  # "cycle" or "floor"
    rate: float | None
    seconds: float
    rec: Recorder
    cpu: dict[str, Any]
    unsent: int
    lag: float


async def cpu_window(meter: CpuMeter, stop: float) -> dict[str, Any]:
    """The server's CPU from the end of the warm-up to `stop` (time.monotonic())."""
    await asyncio.sleep(WARMUP)
    await asyncio.to_thread(meter.start)
    await asyncio.sleep(max(0.0, stop - time.monotonic()))
    return await asyncio.to_thread(meter.stop)


async def run_phase(
    session: aiohttp.ClientSession,
    base: str,
    keys: list[str],
    kind: str,
    tag: str,
    seconds: float,
    rate: float | None,
    arrivals: str,
    meter: CpuMeter,
) -> Phase:
    start = time.monotonic()
    stop = start + seconds
    rec = Recorder(start + WARMUP, stop)
    interval = len(keys) / rate if rate else None
    seed = random.Random(1)
    pacers = []
    for i in range(len(keys)):
        rng = random.Random(seed.random()) if arrivals == "poisson" else None
        offset = 0.0
        if interval is not None:
            offset = rng.expovariate(1 / interval) if rng else interval * i / len(keys)
        pacers.append(Pacer(start, stop, interval, offset, rng))

    cpu_task = asyncio.create_task(cpu_window(meter, stop))
    if kind == "cycle":
        loops = [machine_loop(session, base, key, tag, pacer, rec) for key, pacer in zip(keys, pacers, strict=True)]
    else:
        loops = [floor_loop(session, base, i + 1, tag, pacer, rec) for i, pacer in enumerate(pacers)]
    await asyncio.gather(*loops)
    cpu = await cpu_task
    name = ("life cycle" if kind == "cycle" else "floor") + (f", paced at {rate:g} req/s" if rate else ", closed loop")
    return Phase(
        name=name,
        kind=kind,
        rate=rate,
        seconds=stop - rec.window_start,
        rec=rec,
        cpu=cpu,
        unsent=sum(p.unsent for p in pacers),
        lag=max((p.lag for p in pacers), default=0.0),
    )


async def warm_up(session: aiohttp.ClientSession, base: str, keys: list[str], seconds: float = SERVER_WARMUP) -> None:
    """The machines' life cycles, closed loop, for `seconds`, measured by nobody: every worker booted and warm."""
    start = time.monotonic()
    rec = Recorder(start, start)
    await asyncio.gather(
        *(machine_loop(session, base, key, "w-", Pacer(start, start + seconds, None, 0.0, None), rec) for key in keys)
    )


def phase_plan(args: argparse.Namespace) -> list[tuple[str, str, float | None]]:
    """The phases to run, in order: (kind, the tag that starts its request ids, rate or None for a closed loop).

    Each phase's tag is its own, so its request ids are too: a round's requests are new requests, not the last
    round's again (which the contract answers as replays, from the stored answer, after running and rolling back).
    """
    plan: list[tuple[str, str, float | None]] = []
    if not args.paced_only:
        plan += [("cycle", "c", None), ("floor", "c", None)] * args.rounds
    if args.rate:
        plan += [("cycle", "r", args.rate), ("floor", "r", args.rate)]
    return [(kind, f"{tag}{number}-", rate) for number, (kind, tag, rate) in enumerate(plan, 1)]


async def run(base: str, keys: list[str], args: argparse.Namespace, meter: CpuMeter) -> list[Phase]:
    connector = aiohttp.TCPConnector(limit=len(keys) * 2)
    timeout = aiohttp.ClientTimeout(total=TIMEOUT)
    phases = []
    async with aiohttp.ClientSession(connector=connector, timeout=timeout) as session:
        await warm_up(session, base, keys)
        for kind, tag, rate in phase_plan(args):
            phase = await run_phase(session, base, keys, kind, tag, args.seconds, rate, args.arrivals, meter)
            phases.append(phase)
            print(f"  done: {phase.name}", flush=True)
    return phases


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


def ms(seconds: float) -> float:
    return round(seconds * 1000, 1)


def latency_row(values: list[float]) -> dict[str, float]:
    return {
        "p50_ms": ms(percentile(values, 0.50)),
        "p95_ms": ms(percentile(values, 0.95)),
        "p99_ms": ms(percentile(values, 0.99)),
        "max_ms": ms(max(values)) if values else float("nan"),
    }


def machine_share(cpu: dict[str, Any]) -> dict[str, float]:
    """Of the machine's CPU capacity in the window (all cores): busy, ours (server + client), everything else."""
    total = cpu["machine_total_ms"] or float("nan")
    ours = sum(cpu["ms"].get(kind, 0.0) for kind in ("gunicorn", "postgres", "client"))
    return {
        "busy_pct": round(100 * cpu["machine_busy_ms"] / total, 1),
        "bench_pct": round(100 * ours / total, 1),
        "others_pct": round(100 * (cpu["machine_busy_ms"] - ours) / total, 1),
    }


def summarise(phase: Phase) -> dict[str, Any]:
    rec = phase.rec
    names = ENDPOINTS if phase.kind == "cycle" else ("floor",)
    endpoints: dict[str, Any] = {}
    for name in names:
        endpoints[name] = {
            "answers_per_s": round(rec.answered[name] / phase.seconds, 1),
            **latency_row(rec.latencies[name]),
            "errors": sum(n for (where, _), n in rec.errors.items() if where == name),
        }
    pooled = [v for name in names for v in rec.latencies[name]]
    total = sum(rec.answered[name] for name in names) / phase.seconds
    cpu_ms = phase.cpu["ms"]
    server_ms = cpu_ms.get("gunicorn", 0.0) + cpu_ms.get("postgres", 0.0)
    # CPU per life cycle: per four answered requests, not per commit answered. The machines move through
    # their life cycles in step (64 commits come in a wave), so counting whole cycles in a window of a few
    # waves would be off by up to a wave; the answers themselves arrive evenly.
    per = sum(rec.answered[name] for name in names) / len(names) or float("nan")
    return {
        "phase": phase.name,
        "offered_per_s": phase.rate,
        "seconds_measured": round(phase.seconds, 1),
        "endpoints": endpoints,
        "all": {"answers_per_s": round(total, 1), **latency_row(pooled), "errors": sum(rec.errors.values())},
        "completed": rec.cycles,
        "completed_per_s": round(rec.cycles / phase.seconds, 1),
        "errors": {f"{where}: {reason}": n for (where, reason), n in sorted(rec.errors.items())},
        "cpu_ms_per_completed": {  # per life cycle (four answered requests) or floor request
            "gunicorn": round(cpu_ms.get("gunicorn", 0.0) / per, 3),
            "postgres": round(cpu_ms.get("postgres", 0.0) / per, 3),
            "server": round(server_ms / per, 3),
            "client": round(cpu_ms.get("client", 0.0) / per, 3),
            "postgres_other": round(cpu_ms.get("postgres other", 0.0) / per, 3),
        },
        "cpu_ms_total": {kind: round(value, 1) for kind, value in cpu_ms.items()},
        "machine_cpu": machine_share(phase.cpu),
        "cpu_processes": phase.cpu["processes"],
        "cpu_unreadable": phase.cpu["unreadable"],
        "unsent_at_end": phase.unsent,
        "max_lag_at_end_s": round(phase.lag, 2),
    }


def print_phase(summary: dict[str, Any], machines: int) -> None:
    cycle = "issue" in summary["endpoints"]
    print()
    print(f"## {summary['phase']}: {machines} clients, {summary['seconds_measured']:g} s measured")
    rows = [[name, *row.values()] for name, row in summary["endpoints"].items()]
    if cycle:
        rows.append(["all four", *summary["all"].values()])
    print_table(["endpoint", "answers/s", "p50 ms", "p95 ms", "p99 ms", "max ms", "errors"], rows)
    if summary["offered_per_s"]:
        print(
            f"offered {summary['offered_per_s']:g} req/s, answered {summary['all']['answers_per_s']:g} req/s "
            "(latency from the moment each request was due)"
        )
        if summary["unsent_at_end"]:
            print(
                f"behind schedule at the end: {summary['unsent_at_end']} requests due but not sent, "
                f"the furthest {summary['max_lag_at_end_s']:g} s late"
            )
    for reason, n in summary["errors"].items():
        print(f"error: {reason} × {n}")
    cpu = summary["cpu_ms_per_completed"]
    what = "life cycle" if cycle else "floor request"
    print(
        f"{'life cycles' if cycle else 'floor requests'} completed: {summary['completed']} "
        f"({summary['completed_per_s']:g}/s); server CPU per {what}"
        + (" (four answered requests)" if cycle else "")
        + f": gunicorn {cpu['gunicorn']:.2f} ms + "
        f"PostgreSQL {cpu['postgres']:.2f} ms = {cpu['server']:.2f} ms "
        f"(load client {cpu['client']:.2f} ms; other PostgreSQL processes on the database {cpu['postgres_other']:.2f} ms)"
    )
    share = summary["machine_cpu"]
    print(
        f"the machine's cores: {share['busy_pct']:g} % busy, this bench (server and client) {share['bench_pct']:g} %, "
        f"everything else {share['others_pct']:g} %"
    )
    procs = summary["cpu_processes"]
    print(
        f"processes read: {procs.get('gunicorn', 0)} gunicorn workers, {procs.get('postgres', 0)} PostgreSQL backends"
        + (f"; NOT readable from /proc: {summary['cpu_unreadable']}" if summary["cpu_unreadable"] else "")
    )


def compare(cycle: dict[str, Any], floor: dict[str, Any], label: str, *, throughput: bool) -> dict[str, Any]:
    """The life cycle beside the floor: throughput (closed loop only: paced, both answer what is offered) and CPU."""
    api_rps = cycle["all"]["answers_per_s"]
    floor_rps = floor["all"]["answers_per_s"]
    ratio = api_rps / floor_rps if floor_rps else float("nan")
    cycle_cpu = cycle["cpu_ms_per_completed"]["server"]
    floor_cpu = floor["cpu_ms_per_completed"]["server"] or float("nan")
    text = f"{label}: "
    if throughput:
        text += (
            f"the life cycle's requests {api_rps:g}/s = {ratio:.2f} of the floor's {floor_rps:g}/s "
            f"(target ≥ {RATIO_TARGET}: {'met' if ratio >= RATIO_TARGET else 'missed'}); "
        )
    text += (
        f"server CPU per life cycle {cycle_cpu:.2f} ms = {cycle_cpu / 4:.2f} ms per request, "
        f"{cycle_cpu / 4 / floor_cpu:.2f}× the floor's {floor_cpu:.2f} ms per request"
    )
    print(text)
    return {
        "ratio_to_floor": round(ratio, 3) if throughput else None,
        "cpu_per_request_ms": round(cycle_cpu / 4, 3),
        "floor_cpu_per_request_ms": floor_cpu,
        "cpu_ratio": round(cycle_cpu / 4 / floor_cpu, 2),
    }


def rounds(closed: list[dict[str, Any]]) -> dict[str, Any]:
    """Each round's life cycle beside the floor measured just after it, and the medians of their ratios."""
    pairs = list(zip(closed[::2], closed[1::2], strict=True))
    rows, results = [], []
    for i, (cycle, floor) in enumerate(pairs, 1):
        result = compare(cycle, floor, f"round {i}", throughput=True)
        results.append(result)
        answered = cycle["all"]
        rows.append(
            [i, answered["answers_per_s"], answered["p99_ms"], answered["errors"], floor["all"]["answers_per_s"]]
        )
        rows[-1] += [
            result[k] for k in ("ratio_to_floor", "cpu_per_request_ms", "floor_cpu_per_request_ms", "cpu_ratio")
        ]
    print()
    headers = ["round", "life cycle req/s", "p99 ms", "errors", "floor req/s", "ratio", "CPU ms/req", "floor's", "×"]
    print_table(headers, rows)
    median = {
        "ratio_to_floor": statistics.median(r["ratio_to_floor"] for r in results),
        "cpu_ratio": statistics.median(r["cpu_ratio"] for r in results),
        "cpu_per_request_ms": statistics.median(r["cpu_per_request_ms"] for r in results),
    }
    print(
        f"medians of {len(results)} rounds: ratio {median['ratio_to_floor']:.2f} of the floor "
        f"(target ≥ {RATIO_TARGET}: {'met' if median['ratio_to_floor'] >= RATIO_TARGET else 'missed'}; "
        f"best round {max(r['ratio_to_floor'] for r in results):.2f}), server CPU per request "
        f"{median['cpu_per_request_ms']:.2f} ms = {median['cpu_ratio']:.2f}× the floor's"
    )
    return {"rounds": results, "median": median}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--machines", type=int, default=64, help="simulated machines (and floor clients)")
    parser.add_argument("--seconds", type=float, default=30, help="length of each phase, warm-up included")
    parser.add_argument("--workers", type=int, default=2, help="gunicorn workers")
    parser.add_argument(
        "--threads", type=int, default=1, help="threads per worker (gthread) instead of sync workers; 1: sync"
    )
    parser.add_argument("--rate", type=float, help="also run paced phases: requests offered per second, all clients")
    parser.add_argument(
        "--arrivals", choices=("even", "poisson"), default="even", help="paced schedule: even gaps or Poisson"
    )
    parser.add_argument("--paced-only", action="store_true", help="with --rate: skip the closed-loop phases")
    parser.add_argument("--skip-pgbench", action="store_true")
    parser.add_argument(
        "--rounds",
        type=int,
        default=1,
        help="closed loop: the life cycle and the floor alternate this many times (--seconds each); each round's "
        "ratios and their medians (the machine's speed drifts less between two neighbouring phases)",
    )
    args = parser.parse_args()
    if args.paced_only and not args.rate:
        parser.error("--paced-only needs --rate")
    if args.seconds <= WARMUP:
        parser.error(f"--seconds must be longer than the {WARMUP:g} s warm-up")
    load_before = tuple(round(x, 2) for x in os.getloadavg())
    reference_before = reference_loop_ms()
    keys = prepare(args.machines)
    port = 18000 + os.getpid() % 1000
    server = start_gunicorn(port, args.workers, args.threads)
    shape = f" x {args.threads} threads" if args.threads > 1 else " (sync)"
    meter = CpuMeter(server.pid)
    try:
        print(
            f"gunicorn {server.pid} on port {port}, {args.workers} workers{shape}; load average {load_before}",
            flush=True,
        )
        phases = asyncio.run(run(f"http://127.0.0.1:{port}", keys, args, meter))
    finally:
        meter.close()
        server.terminate()
        server.wait(timeout=30)
    load_after = tuple(round(x, 2) for x in os.getloadavg())
    reference_after = reference_loop_ms()
    summaries = [summarise(phase) for phase in phases]
    closed = [s for s in summaries if s["offered_per_s"] is None]
    for summary in summaries if args.rounds == 1 else [s for s in summaries if s not in closed]:
        print_phase(summary, args.machines)
    print()
    comparisons: dict[str, Any] = {}
    by_name = {s["phase"]: s for s in summaries}
    if len(closed) == 2:
        comparisons["closed_loop"] = compare(closed[0], closed[1], "closed loop", throughput=True)
    elif closed:
        comparisons["rounds"] = rounds(closed)
    if args.rate:
        paced = by_name[f"life cycle, paced at {args.rate:g} req/s"]
        paced_floor = by_name[f"floor, paced at {args.rate:g} req/s"]
        comparisons["paced"] = compare(paced, paced_floor, f"paced at {args.rate:g}", throughput=False)
        p99, errors = paced["all"]["p99_ms"], paced["all"]["errors"]
        met = p99 <= P99_TARGET_MS and errors == 0 and not paced["unsent_at_end"]
        print(
            f"paced at {args.rate:g} req/s: p99 {p99:g} ms, {errors} errors "
            f"(target p99 ≤ {P99_TARGET_MS:g} ms with no errors: {'met' if met else 'missed'})"
        )
    tps = None
    if not args.skip_pgbench:
        tps = pgbench(int(min(args.seconds, 20)))
        print(f"pgbench -N (16 clients), same database: {tps:.0f} tps")
    print(f"load average before {load_before}, after {load_after}")
    print(
        f"reference loop (the machine's speed for Python, lower is faster): {reference_before:.0f} ms before, "
        f"{reference_after:.0f} ms after"
    )
    path = write_result(
        "api_load" + (f"_rate{args.rate:g}" if args.rate else ""),
        {
            "machines": args.machines,
            "workers": args.workers,
            "threads": args.threads,
            "seconds_per_phase": args.seconds,
            "warmup_s": WARMUP,
            "server_warmup_s": SERVER_WARMUP,
            "rate": args.rate,
            "arrivals": args.arrivals,
            "phases": summaries,
            "comparisons": comparisons,
            "pgbench_tps": round(tps, 1) if tps is not None else None,
            "load_average": {"before": load_before, "after": load_after},
            "reference_loop_ms": {"before": round(reference_before), "after": round(reference_after)},
        },
    )
    print(f"written: {path}")


if __name__ == "__main__":
    main()

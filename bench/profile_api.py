"""Where a machine API request's time goes: statements, round trips and a CPU profile per endpoint, in-process.

    .venv/bin/python bench/profile_api.py [--cycles 200] [--top 25] [--sort cumulative]

Creates the bench database (as api_load.py does), one casino and one machine, and drives life cycles
(issue → printed → authorize → commit) through Django's test Client: the whole middleware stack, DEBUG off,
the connection kept between requests and health-checked once per request, as under gunicorn with
DATABASE_CONN_MAX_AGE (the test Client turns Django's own per-request check off; this script turns it back on).
For each endpoint it reports:
  - SQL statements per request, as Django runs them (connection.execute_wrapper, as CaptureQueriesContext sees
    them), and one request's statements;
  - round trips to PostgreSQL per request, from libpq's protocol trace (each ReadyForQuery ends one): the
    statements plus BEGIN, COMMIT, savepoints and the health check's SELECT 1, which Django does not show;
  - wall and CPU ms per request without instrumentation, and the wall ms spent inside cursor.execute;
  - a cProfile of --cycles requests: the top entries by --sort (cumulative by default) and by own time, and
    the own time summed by package (the ORM's compiler, DRF, psycopg, the project's apps...).
Profiles are written to bench/results/profile_<endpoint>.prof (snakeviz, pstats) beside profile_api.json.
"""

import argparse
import cProfile
import io
import json
import os
import pstats
import re
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import IO, Any

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from bench.common import RESULTS, ROOT, fresh_database, print_table, reference_loop_ms, setup_django, write_result

ENDPOINTS = ("issue", "printed", "authorize", "commit")
WARMUP_CYCLES = 20
COUNT_CYCLES = 30


class Machine:
    """One simulated machine: the test Client with its key, and the life cycle's four requests."""

    def __init__(self, key: str) -> None:
        from django.test import Client

        self.client = Client(HTTP_HOST="127.0.0.1", HTTP_AUTHORIZATION=f"Bearer {key}")
        self.n = 0

    def post(self, path: str, body: dict[str, str], expect: int) -> dict[str, Any]:
        response = self.client.post(path, data=json.dumps(body), content_type="application/json")
        if response.status_code != expect:
            raise RuntimeError(f"{path.rsplit('/', 1)[-1]}: HTTP {response.status_code} {response.content[:200]!r}")
        data: dict[str, Any] = response.json()
        return data

    def cycle(self, around: Callable[[str], Any]) -> None:
        """One life cycle; each request runs inside the context manager around(endpoint)."""
        self.n += 1
        rid = f"{self.n}"
        with around("issue"):
            issued = self.post("/api/v1/tickets/issue", {"request_id": f"i{rid}", "amount": "12.34"}, 201)
        ticket = f"/api/v1/tickets/{issued['validation_number']}"
        with around("printed"):
            self.post(f"{ticket}/printed", {"request_id": f"p{rid}", "result": "printed"}, 200)
        with around("authorize"):
            self.post(f"{ticket}/authorize", {"request_id": f"a{rid}"}, 200)
        with around("commit"):
            self.post(f"{ticket}/commit", {"request_id": f"c{rid}", "result": "accepted"}, 200)


@contextmanager
def nothing(_: str) -> Iterator[None]:
    yield


def prepare() -> str:
    os.environ["DATABASE_CONN_MAX_AGE"] = "600"  # as api_load.py runs gunicorn
    fresh_database()
    setup_django()
    from django.core.signals import request_finished, request_started
    from django.db import connections

    from machines.keys import hash_key
    from machines.models import Casino, Machine

    def check_connections(**_: object) -> None:
        # What django.db.close_old_connections does around every request under gunicorn.
        for conn in connections.all(initialized_only=True):
            conn.close_if_unusable_or_obsolete()

    request_started.connect(check_connections, weak=False)
    request_finished.connect(check_connections, weak=False)
    casino = Casino.objects.create(name="Bench Casino", code="BEN", address="Bench", licence_number="B-1")
    key = "bench-profile-machine-key-0001"
    Machine.objects.create(casino=casino, asset_number="1000", ticket_enrolled=True, api_key_hash=hash_key(key))
    return key


class Tracer:
    """libpq's protocol trace of Django's connection, read back per request."""

    def __init__(self, file: IO[str]) -> None:
        self.file = file

    @contextmanager
    def __call__(self) -> Iterator[list[str]]:
        from django.db import connection
        from psycopg import pq

        connection.ensure_connection()
        pgconn = connection.connection.pgconn
        self.file.seek(0, os.SEEK_END)
        start = self.file.tell()
        pgconn.trace(self.file.fileno())
        pgconn.set_trace_flags(pq.Trace.SUPPRESS_TIMESTAMPS | pq.Trace.REGRESS_MODE)
        lines: list[str] = []
        try:
            yield lines
        finally:
            pgconn.untrace()  # flushes libpq's stream
            self.file.seek(start)
            lines.extend(self.file.read().splitlines())


def count_pass(machine: Machine, cycles: int) -> dict[str, Any]:
    """Statements (Django's), round trips (the wire's) and time inside cursor.execute, per request."""

    with tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace") as trace_file:
        return _count_pass(machine, cycles, Tracer(trace_file))


def _count_pass(machine: Machine, cycles: int, tracer: Tracer) -> dict[str, Any]:
    from django.db import connection

    statements: dict[str, list[int]] = {name: [] for name in ENDPOINTS}
    trips: dict[str, list[int]] = {name: [] for name in ENDPOINTS}
    db_ms: dict[str, list[float]] = {name: [] for name in ENDPOINTS}
    sample: dict[str, list[str]] = {}
    sample_wire: dict[str, list[str]] = {}

    @contextmanager
    def around(name: str) -> Iterator[None]:
        seen: list[str] = []
        spent = [0.0]

        def wrapper(execute: Callable[..., Any], sql: str, params: Any, many: bool, context: Any) -> Any:
            seen.append(sql)
            t0 = time.perf_counter()
            try:
                return execute(sql, params, many, context)
            finally:
                spent[0] += time.perf_counter() - t0

        with tracer() as lines, connection.execute_wrapper(wrapper):
            yield
        statements[name].append(len(seen))
        db_ms[name].append(spent[0] * 1000)
        trips[name].append(sum(1 for line in lines if line.startswith("B\t") and "\tReadyForQuery" in line))
        sample[name] = seen
        sample_wire[name] = [
            re.sub(r'^F\t\d+\tQuery\t "(.*)"$', r"\1", line)
            for line in lines
            if line.startswith("F\t") and ("\tQuery\t" in line or "\tParse\t" in line)
        ]

    for _ in range(cycles):
        machine.cycle(around)
    return {
        name: {
            "statements": _spread(statements[name]),
            "round_trips": _spread(trips[name]),
            "ms_in_cursor_execute": round(sum(db_ms[name]) / len(db_ms[name]), 2),
            "one_request_statements": sample[name],
            "one_request_wire": sample_wire[name],
        }
        for name in ENDPOINTS
    }


def _spread(values: list[int]) -> str:
    low, high = min(values), max(values)
    return str(low) if low == high else f"{low}-{high} (mean {sum(values) / len(values):.1f})"


def time_pass(machine: Machine, cycles: int) -> dict[str, dict[str, float]]:
    """Wall and CPU (this process: Django, the test Client, psycopg) ms per request, no instrumentation."""
    wall: defaultdict[str, float] = defaultdict(float)
    cpu: defaultdict[str, float] = defaultdict(float)

    @contextmanager
    def around(name: str) -> Iterator[None]:
        w0, c0 = time.perf_counter(), time.process_time()
        yield
        wall[name] += time.perf_counter() - w0
        cpu[name] += time.process_time() - c0

    for _ in range(cycles):
        machine.cycle(around)
    return {
        name: {"wall_ms": round(wall[name] * 1000 / cycles, 2), "cpu_ms": round(cpu[name] * 1000 / cycles, 2)}
        for name in ENDPOINTS
    }


def profile_pass(machine: Machine, cycles: int) -> dict[str, cProfile.Profile]:
    profiles = {name: cProfile.Profile() for name in ENDPOINTS}

    @contextmanager
    def around(name: str) -> Iterator[None]:
        profiles[name].enable()
        try:
            yield
        finally:
            profiles[name].disable()

    for _ in range(cycles):
        machine.cycle(around)
    return profiles


_SITE = re.compile(r".*/site-packages/")


def package_of(filename: str, function: str) -> str:
    """A profile entry's package: django's ORM and backends apart, the project's apps by name, C calls by owner."""
    if filename == "~":
        if "psycopg" in function:
            return "psycopg (C: the wire and waiting for PostgreSQL)"
        if "select" in function or "poll" in function or "recv" in function or "send" in function:
            return "sockets (C)"
        return "other C built-ins"
    if "/site-packages/" in filename:
        dirs = _SITE.sub("", filename).split("/")[:-1]
        if not dirs:
            return "other site-packages"
        if dirs[0] == "psycopg":
            return "psycopg (with the wait for PostgreSQL's answers)"
        if dirs[0] == "django":
            depth = 4 if dirs[1:3] == ["db", "models"] else 3 if dirs[1:2] in (["db"], ["core"], ["contrib"]) else 2
            return "/".join(dirs[:depth])
        return dirs[0]
    root = str(ROOT) + "/"
    if filename.startswith(root):
        return "project: " + filename[len(root) :].split("/")[0]
    if "/lib/python3" in filename:
        return "python stdlib"
    return filename


def by_package(stats: pstats.Stats) -> list[tuple[str, float]]:
    own: defaultdict[str, float] = defaultdict(float)
    raw: dict[tuple[str, int, str], tuple[int, int, float, float, Any]] = stats.stats  # type: ignore[attr-defined]
    for (filename, _, function), (_, _, tottime, _, _) in raw.items():
        own[package_of(filename, function)] += tottime
    return sorted(own.items(), key=lambda item: -item[1])


def report_profile(name: str, profile: cProfile.Profile, cycles: int, top: int, sort: str) -> dict[str, Any]:
    RESULTS.mkdir(parents=True, exist_ok=True)
    profile.dump_stats(RESULTS / f"profile_{name}.prof")
    packages = by_package(pstats.Stats(profile))  # before strip_dirs, which drops the paths
    total = sum(own for _, own in packages)
    out = io.StringIO()
    # The project's own functions first (where in our code the time is spent, below the middleware chain),
    # then everything by --sort, then by own time.
    out.write("The project's functions:\n")
    project = re.escape(str(ROOT)) + r"/(?!\.venv/|bench/)"
    pstats.Stats(profile, stream=out).sort_stats(sort).print_stats(project, 20)
    out.write("Everything:\n")
    stats = pstats.Stats(profile, stream=out)
    stats.strip_dirs().sort_stats(sort).print_stats(top)
    stats.sort_stats("tottime").print_stats(15)
    rows = [(package, round(own * 1000 / cycles, 3), round(100 * own / total, 1)) for package, own in packages]
    return {"text": out.getvalue(), "packages": rows, "profiled_ms_per_request": round(total * 1000 / cycles, 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cycles", type=int, default=200, help="life cycles timed and profiled")
    parser.add_argument("--top", type=int, default=25, help="entries of each profile to print")
    parser.add_argument("--sort", default="cumulative", help="pstats sort key for the first listing")
    args = parser.parse_args()
    reference = reference_loop_ms()
    load = tuple(round(x, 2) for x in os.getloadavg())
    machine = Machine(prepare())
    for _ in range(WARMUP_CYCLES):
        machine.cycle(nothing)
    counts = count_pass(machine, COUNT_CYCLES)
    timings = time_pass(machine, args.cycles)
    profiles = profile_pass(machine, args.cycles)
    reports = {name: report_profile(name, profiles[name], args.cycles, args.top, args.sort) for name in ENDPOINTS}

    for name in ENDPOINTS:
        print(f"\n## {name}: the statements of one request, as Django runs them")
        for sql in counts[name]["one_request_statements"]:
            print("  " + (sql if len(sql) <= 160 else sql[:157] + "..."))
        print(f"## {name}: what went over the wire (simple queries and parsed statements)")
        for sql in counts[name]["one_request_wire"]:
            print("  " + (sql if len(sql) <= 160 else sql[:157] + "..."))
    for name in ENDPOINTS:
        report = reports[name]
        print(f"\n## {name}: cProfile of {args.cycles} requests ({report['profiled_ms_per_request']} ms each profiled)")
        print(report["text"])
        print(f"## {name}: own time by package, ms per request (profiled)")
        print_table(["package", "ms", "%"], [list(row) for row in report["packages"][:14]])

    print(f"\n## per request ({COUNT_CYCLES} life cycles counted, {args.cycles} timed; in-process, test Client)")
    rows = []
    for name in ENDPOINTS:
        c, t = counts[name], timings[name]
        rows.append([name, c["statements"], c["round_trips"], t["wall_ms"], t["cpu_ms"], c["ms_in_cursor_execute"]])
    print_table(["endpoint", "statements", "round trips", "wall ms", "CPU ms", "ms in cursor.execute"], rows)
    print(f"load average {load}; reference loop (the machine's speed for Python, lower is faster) {reference:.0f} ms")
    path = write_result(
        "profile_api",
        {
            "load_average": load,
            "reference_loop_ms": round(reference),
            "cycles": args.cycles,
            "counted_cycles": COUNT_CYCLES,
            "endpoints": {
                name: {
                    **{k: v for k, v in counts[name].items()},
                    **timings[name],
                    "profiled_ms_per_request": reports[name]["profiled_ms_per_request"],
                    "own_time_by_package": reports[name]["packages"],
                }
                for name in ENDPOINTS
            },
        },
    )
    print(f"written: {path} and {RESULTS}/profile_<endpoint>.prof")


if __name__ == "__main__":
    main()

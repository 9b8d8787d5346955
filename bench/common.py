"""Shared by the benchmarks: a dedicated PostgreSQL database, Django set up against it, result tables."""

import json
import os
import platform
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"
# The PostgreSQL server: this machine's (5432), or one of a benchmark's own (bench/peak_hour.py --own-cluster).
PG_PORT = int(os.environ.get("BENCH_PG_PORT", "5432"))
ADMIN_URL = os.environ.get("BENCH_ADMIN_URL", f"postgresql://postgres@127.0.0.1:{PG_PORT}/postgres")
DB_NAME = os.environ.get("BENCH_DB", "casino_bench")
DATABASE_URL = f"postgres://postgres@127.0.0.1:{PG_PORT}/{DB_NAME}"

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


# --- CPU time of the server's processes, from /proc (the bench runs on the same machine as PostgreSQL) ---

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def proc_cpu_ms(pid: int) -> float | None:
    """user + system CPU of a process (all its threads), in ms; None when /proc/<pid> is gone or unreadable."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            text = stat.read()
    except OSError:
        return None
    # The command name (field 2) is in parentheses and may hold spaces: count fields after its closing one.
    fields = text[text.rindex(")") + 2 :].split()
    utime, stime = int(fields[11]), int(fields[12])
    return (utime + stime) * 1000 / CLOCK_TICKS


def child_pids(parent: int) -> list[int]:
    """The processes whose parent is `parent` (gunicorn's workers under its master)."""
    try:
        with open(f"/proc/{parent}/task/{parent}/children", encoding="ascii") as children:
            return [int(pid) for pid in children.read().split()]
    except OSError:
        pass
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii") as stat:
                text = stat.read()
        except OSError:
            continue
        if int(text[text.rindex(")") + 2 :].split()[1]) == parent:
            found.append(int(entry))
    return found


def machine_cpu_ms() -> tuple[float, float]:
    """The whole machine's CPU since boot, summed over its cores, in ms: (busy, busy + idle)."""
    with open("/proc/stat", encoding="ascii") as stat:
        fields = [int(value) for value in stat.readline().split()[1:9]]
    user, nice, system, idle, iowait, irq, softirq, steal = fields
    busy = user + nice + system + irq + softirq + steal
    return busy * 1000 / CLOCK_TICKS, (busy + idle + iowait) * 1000 / CLOCK_TICKS


class CpuMeter:
    """CPU (user + system, ms) spent by gunicorn's workers and the bench database's PostgreSQL backends in a window.

    start() reads every process; a thread reads them again every `poll` seconds, so a worker or a backend that
    exits during the window still counts up to its last reading and one that appears counts from zero (its
    start-up included); stop() reads them a last time. Backends are pg_stat_activity's pids for the bench
    database (asked from the admin database, so the meter's own backend is not among them); autovacuum workers
    on it are reported apart. This process (the load client) is measured too, for reference, and so is the
    whole machine (/proc/stat), to show how much of it other work took during the window.
    """

    def __init__(self, gunicorn_master: int | list[int], poll: float = 1.0, nginx: int | None = None) -> None:
        import psycopg

        self.masters = gunicorn_master if isinstance(gunicorn_master, list) else [gunicorn_master]
        self.nginx = nginx  # nginx's master, when it is in front: its workers are measured too
        self.poll = poll
        self.admin = psycopg.connect(ADMIN_URL, autocommit=True)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.first: dict[int, tuple[str, float]] = {}
        self.last: dict[int, tuple[str, float]] = {}
        self.unreadable: dict[int, str] = {}
        self.machine_start = (0.0, 0.0)

    def close(self) -> None:
        self.admin.close()

    def processes(self) -> dict[int, str]:
        kinds = {pid: "gunicorn" for master in self.masters for pid in child_pids(master)}
        if self.nginx is not None:
            kinds |= {pid: "nginx" for pid in child_pids(self.nginx)}
        rows = self.admin.execute(
            "SELECT pid, backend_type FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()",
            [DB_NAME],
        ).fetchall()
        for pid, backend_type in rows:
            kinds[pid] = "postgres" if backend_type == "client backend" else "postgres other"
        kinds[os.getpid()] = "client"
        return kinds

    def _read(self, initial: bool) -> None:
        kinds = self.processes()
        with self._lock:
            for pid, kind in kinds.items():
                ms = proc_cpu_ms(pid)
                if ms is None:
                    # Gone between the two reads is normal; present but unreadable, or never there (PostgreSQL
                    # on another machine or in another pid namespace), is reported.
                    if os.path.exists(f"/proc/{pid}") or pid not in self.last:
                        self.unreadable[pid] = kind
                    continue
                if initial:
                    self.first[pid] = (kind, ms)
                elif pid not in self.first:
                    self.first[pid] = (kind, 0.0)
                self.last[pid] = (kind, ms)

    def _loop(self) -> None:
        while not self._stop.wait(self.poll):
            self._read(initial=False)

    def start(self) -> None:
        self.first, self.last, self.unreadable = {}, {}, {}
        self._stop.clear()
        self._read(initial=True)
        self.machine_start = machine_cpu_ms()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def stop(self) -> dict[str, Any]:
        """Per kind: CPU ms in the window, and how many processes were read; plus the pids /proc would not give."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        self._read(initial=False)
        busy, total = machine_cpu_ms()
        ms: dict[str, float] = {}
        count: dict[str, int] = {}
        for pid, (kind, last) in self.last.items():
            ms[kind] = ms.get(kind, 0.0) + last - self.first[pid][1]
            count[kind] = count.get(kind, 0) + 1
        unreadable = {pid: kind for pid, kind in self.unreadable.items() if pid not in self.last}
        return {
            "ms": ms,
            "processes": count,
            "unreadable": unreadable,
            "machine_busy_ms": busy - self.machine_start[0],
            "machine_total_ms": total - self.machine_start[1],
        }


def reference_loop_ms() -> float:
    """CPU ms of a fixed piece of pure Python (dicts, strings, calls; the median of 3): how fast this machine runs
    Python just now.

    It shows cores that run slower (clock, steal) between runs; it fits in the caches, so it does not show the
    cache contention that other work on a shared machine causes (a request's CPU time can double while this
    stays put): compare CPU per request to the floor's measured in the same run for that.
    """

    def step(i: int, seen: dict[str, int]) -> int:
        key = f"k{i % 500}"
        seen[key] = seen.get(key, 0) + i
        return len(key)

    runs = []
    for _ in range(3):
        start = time.process_time()
        seen: dict[str, int] = {}
        total = 0
        for i in range(200_000):
            total += step(i, seen)
        runs.append((time.process_time() - start) * 1000)
    return sorted(runs)[1]


def wait_for_port(port: int, what: str, poll: float = 0.2) -> None:
    """Until something accepts connections on 127.0.0.1:port (about 100 tries); RuntimeError naming `what` after."""
    import socket

    for _ in range(100):
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.3):
                return
        except OSError:
            time.sleep(poll)
    raise RuntimeError(f"{what} did not start")

"""One harness for every race test: a barrier, one connection per thread, and proof that the losers waited.

`race(calls, gate=...)` first takes the contested row's lock on a connection
of its own, starts every call in its own thread (each with its own database
connection), and waits until PostgreSQL shows every one of them blocked on a
lock. Only then does it release the gate. So every contender provably reached
the contested lock while another transaction held it: the one that gets the
lock first wins and the others wait on the winner's lock, which is the
situation a race test must prove safe. Nothing sleeps to make this likely:
the harness polls pg_stat_activity until it is so, and fails if it never is.
"""

import threading
import time
from collections.abc import Callable
from typing import Any

import psycopg
from django.db import connection

WAIT_LIMIT_SECONDS = 30


def _dsn() -> str:
    params = connection.get_connection_params()
    params.pop("cursor_factory", None)
    params.pop("context", None)
    params.pop("prepare_threshold", None)
    return psycopg.conninfo.make_conninfo(**{k: v for k, v in params.items() if isinstance(v, str | int)})


def _backend_pids_waiting_on_locks(gate: psycopg.Connection, pids: set[int]) -> set[int]:
    rows = gate.execute(
        "SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND pid = ANY(%s)", [list(pids)]
    ).fetchall()
    return {row[0] for row in rows}


def _waiting(watcher: psycopg.Connection, pid: int | None) -> bool:
    if pid is None:
        return False
    return bool(_backend_pids_waiting_on_locks(watcher, {pid}))


def race(
    calls: list[Callable[[], Any]],
    *,
    gate: tuple[str, list[Any]] | None = None,
    ordered: bool = False,
    while_waiting: Callable[[psycopg.Connection], None] | None = None,
) -> list[Any]:
    """Run `calls` at once, one thread and connection each; returns each call's result or exception.

    gate: (sql, params) of a `SELECT ... FOR UPDATE` that locks the contested
    row. With a gate, the harness proves every call waited on that lock.
    ordered (with a gate): each call starts only once the ones before it wait,
    so they get the lock in the given order and the outcome is the one the
    caller chose (a state machine's replayed step needs the same outcome).
    while_waiting (with a gate): called with a connection of its own (autocommit) while every call waits on
    the gate, before it opens: to prove what a waiting call does not hold.
    """
    assert gate is not None or not ordered, "an ordered race needs a gate"
    barrier = threading.Barrier(1 if ordered else len(calls) + 1)
    results: list[Any] = [None] * len(calls)
    pids: list[int | None] = [None] * len(calls)

    def worker(i: int) -> None:
        try:
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_backend_pid()")
                pids[i] = cursor.fetchone()[0]
            barrier.wait()
            results[i] = calls[i]()
        except Exception as error:  # the result of a call that raised is its exception
            results[i] = error
        finally:
            connection.close()

    holder = psycopg.connect(_dsn(), autocommit=False) if gate else None
    watcher = psycopg.connect(_dsn(), autocommit=True) if gate else None
    try:
        if holder is not None and gate is not None:
            locked = holder.execute(gate[0], gate[1]).fetchall()
            assert locked, "the gate's query locked no row"
        threads = [threading.Thread(target=worker, args=(i,), daemon=True) for i in range(len(calls))]
        deadline = time.monotonic() + WAIT_LIMIT_SECONDS
        for i, thread in enumerate(threads):
            thread.start()
            if ordered and watcher is not None:
                while not _waiting(watcher, pids[i]):
                    assert thread.is_alive(), f"call {i} finished without waiting on the gate: {results[i]}"
                    assert time.monotonic() < deadline, f"call {i} never waited on a lock"
        if not ordered:
            barrier.wait(timeout=WAIT_LIMIT_SECONDS)
        if holder is not None and watcher is not None:
            contenders = {pid for pid in pids if pid is not None}
            while _backend_pids_waiting_on_locks(watcher, contenders) != contenders:
                finished = [i for i, t in enumerate(threads) if not t.is_alive()]
                assert not finished, f"calls {finished} finished without waiting on the gate: {results}"
                assert time.monotonic() < deadline, "the contenders never all waited on the gate's lock"
            if while_waiting is not None:
                while_waiting(watcher)
            holder.commit()
        for thread in threads:
            thread.join(timeout=WAIT_LIMIT_SECONDS)
        alive = [i for i, t in enumerate(threads) if t.is_alive()]
        assert not alive, f"calls {alive} are still running (deadlock?)"
    finally:
        if holder is not None:
            holder.close()
        if watcher is not None:
            watcher.close()
    return results

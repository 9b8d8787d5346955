"""Helpers that start real processes for the fault tests: a Celery worker, gunicorn, a throwaway PostgreSQL."""

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import IO

ROOT = Path(__file__).resolve().parents[2]


ADMIN_URL = "postgres://postgres@127.0.0.1:5432/postgres"  # the local server's superuser, for scratch databases


def run(
    command: list[str], env: dict[str, str] | None = None, check: bool = True, timeout: float = 600
) -> subprocess.CompletedProcess[str]:
    """Run a command from the checkout; with `check`, fail the test with its output's tail. A command still running
    after `timeout` seconds fails the test (subprocess.TimeoutExpired) instead of hanging the suite."""
    result = subprocess.run(
        command, cwd=ROOT, env=env or dict(os.environ), capture_output=True, text=True, check=False, timeout=timeout
    )
    if check:
        assert result.returncode == 0, (command, result.stdout[-2000:], result.stderr[-2000:])
    return result


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for_port(port: int, seconds: float = 30) -> None:
    """Until something accepts connections on 127.0.0.1:port; an AssertionError after `seconds`."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.2)
    raise AssertionError(f"nothing listens on port {port} after {seconds} s")


def service_env(**overrides: str) -> dict[str, str]:
    env = {**os.environ, "DEBUG": "0", "SECURE_SSL_REDIRECT": "0", "STATIC_MANIFEST": "0"}
    env.update(overrides)
    return env


def current_database_url() -> str:
    """The URL of the test database pytest-django created, for processes the test starts."""
    from django.db import connection

    db = connection.settings_dict
    return f"postgres://{db['USER']}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


def start_worker(env: dict[str, str], queue: str, output: Path | None = None) -> subprocess.Popen[str]:
    """A Celery worker on `queue`; its output is piped, or written to the file `output`."""
    sink = output.open("w") if output else None
    try:
        return _worker_process(env, queue, sink)
    finally:
        if sink:
            sink.close()  # the worker has its own copy


def _worker_process(env: dict[str, str], queue: str, sink: IO[str] | None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "casino_office",
            "worker",
            "--pool=solo",
            "-Q",
            queue,
            "--loglevel=INFO",
        ],
        cwd=ROOT,
        env=env,
        stdout=sink or subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def _as_postgres(*args: str, cwd: str | None = None) -> None:
    command = list(args)
    if os.geteuid() == 0:  # initdb and postgres refuse to run as root
        command = ["runuser", "-u", "postgres", "--", *command]
    subprocess.run(command, check=True, cwd=cwd, capture_output=True, timeout=120)


class ThrowawayPostgres:
    """A PostgreSQL cluster of its own in a temporary folder, on its own port; nothing else is disturbed."""

    def __init__(self, durable: bool = False) -> None:
        self.durable = durable  # fsync on, as deployed (the benchmarks); off for the tests
        self.folder = tempfile.mkdtemp(prefix="casino-pg-")
        self.data = os.path.join(self.folder, "data")
        self.port = free_port()
        if os.geteuid() == 0:
            shutil.chown(self.folder, "postgres", "postgres")
        _as_postgres(shutil.which("initdb") or "initdb", "-D", self.data, "-A", "trust", "-U", "postgres", "--no-sync")
        self.start()
        _as_postgres(
            shutil.which("createdb") or "createdb", "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", "casino"
        )

    @property
    def url(self) -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/casino"

    def _ctl(self, *args: str) -> None:
        _as_postgres(
            shutil.which("pg_ctl") or "pg_ctl",
            "-D",
            self.data,
            "-l",
            os.path.join(self.folder, "log"),
            "-o",
            f"-p {self.port} -k {self.folder}" + ("" if self.durable else " -c fsync=off"),
            *args,
        )

    def start(self) -> None:
        self._ctl("start", "-w")

    def stop(self) -> None:
        self._ctl("stop", "-m", "fast", "-w")

    def destroy(self) -> None:
        with suppress(subprocess.CalledProcessError):
            self.stop()
        shutil.rmtree(self.folder, ignore_errors=True)


class StandbyPostgres(ThrowawayPostgres):
    """A streaming replica of `primary`, made as the guide says: `pg_basebackup -R` (it writes the standby's
    settings), then started on its own port. It serves reads only and replays the primary's WAL as it comes."""

    def __init__(self, primary: ThrowawayPostgres) -> None:
        self.durable = primary.durable
        self.folder = tempfile.mkdtemp(prefix="casino-pg-standby-")
        self.data = os.path.join(self.folder, "data")
        self.port = free_port()
        if os.geteuid() == 0:
            shutil.chown(self.folder, "postgres", "postgres")
        _as_postgres(
            shutil.which("pg_basebackup") or "pg_basebackup",
            "-h", "127.0.0.1", "-p", str(primary.port), "-U", "postgres",
            "-D", self.data, "-R", "-X", "stream", "-c", "fast", "--no-sync",
        )  # fmt: skip
        self.start()


@contextmanager
def throwaway_postgres() -> Iterator[ThrowawayPostgres]:
    cluster = ThrowawayPostgres()
    try:
        yield cluster
    finally:
        cluster.destroy()


@contextmanager
def gunicorn(
    env: dict[str, str], port: int, workers: int = 2, output: Path | None = None
) -> Iterator[subprocess.Popen[str]]:
    """gunicorn with deploy/gunicorn.conf.py; its output (error log, Django's log) piped or written to `output`."""
    sink = output.open("w") if output else None
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gunicorn",
            "-c",
            "deploy/gunicorn.conf.py",
            "casino_office.wsgi:application",
        ],
        cwd=ROOT,
        env={
            **env,
            "GUNICORN_BIND": f"127.0.0.1:{port}",
            "GUNICORN_WORKERS": str(workers),
            "GUNICORN_GRACEFUL_TIMEOUT": "5",
            "GUNICORN_ACCESS_LOG": "",
            **{k: v for k, v in env.items() if k.startswith("GUNICORN_")},
        },
        stdout=sink or subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    if sink:
        sink.close()  # gunicorn has its own copy
    try:
        wait_for_port(port)
        yield server
    finally:
        server.terminate()
        try:
            server.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            server.kill()


# --- A migrated database, from a template made once per set of migrations ----------------------------------------

TEMPLATE_PREFIX = "casino_template_"
_TEMPLATE_LOCK = 770_0101  # advisory lock: one process makes a template at a time


def _migrations_digest(env: dict[str, str]) -> str:
    """What a freshly migrated database depends on: every migration, the roles made after `migrate`, Django's
    version and the keys (a data migration may write with them)."""
    import hashlib

    import django

    digest = hashlib.sha256(django.get_version().encode())
    for path in sorted([*ROOT.glob("*/migrations/*.py"), ROOT / "staff" / "roles.py"]):
        digest.update(str(path.relative_to(ROOT)).encode())
        digest.update(path.read_bytes())
    for name in ("SECRET_KEY", "PII_ENCRYPTION_KEYS", "PII_INDEX_KEY", "REGISTER_CHAIN_KEYS"):
        digest.update(env.get(name, "").encode())
    return digest.hexdigest()[:16]


def migrate_fresh(env: dict[str, str]) -> None:
    """`manage.py migrate` on the fresh database `env` names, as a copy of a template migrated once for these
    migrations (about a minute each time saved): PostgreSQL's `CREATE DATABASE ... TEMPLATE` on this machine's
    server, a file copy for SQLite. Another server is migrated as it is."""
    url = env["DATABASE_URL"]
    digest = _migrations_digest(env)
    if url.startswith("sqlite:///"):
        _sqlite_from_template(env, Path(url.removeprefix("sqlite:///")), digest)
    elif url.startswith("postgres://postgres@127.0.0.1:5432/"):
        _postgres_from_template(env, url.rsplit("/", 1)[1], f"{TEMPLATE_PREFIX}{digest}")
    else:
        run([sys.executable, "manage.py", "migrate", "--noinput", "-v0"], env=env)


def migrate_throwaway(cluster: "ThrowawayPostgres", folder: Path, env: dict[str, str]) -> None:
    """A throwaway cluster's database migrated as `migrate_fresh` would (with `env`'s keys): a copy of the suite's
    migrated template on the local server, dumped and restored there (about a minute of migrating saved)."""
    import uuid

    name = f"casino_throwaway_{uuid.uuid4().hex[:10]}"
    local = f"postgres://postgres@127.0.0.1:5432/{name}"
    run(["createdb", "-h", "127.0.0.1", "-U", "postgres", name])
    try:
        migrate_fresh({**env, "DATABASE_URL": local})
        run(["pg_dump", "-Fc", "-f", str(folder / "migrated.dump"), local])
    finally:
        run(["dropdb", "-h", "127.0.0.1", "-U", "postgres", "--force", "--if-exists", name])
    run(["pg_restore", "-d", cluster.url, str(folder / "migrated.dump")])


def _postgres_from_template(env: dict[str, str], name: str, template: str) -> None:
    import psycopg

    with psycopg.connect(ADMIN_URL, autocommit=True) as admin:
        admin.execute("SELECT pg_advisory_lock(%s)", [_TEMPLATE_LOCK])
        try:
            made = admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", [template]).fetchone()
            if made is None:
                run([sys.executable, "manage.py", "migrate", "--noinput", "-v0"], env=env)
                stale = admin.execute(
                    "SELECT datname FROM pg_database WHERE datname LIKE %s", [f"{TEMPLATE_PREFIX}%"]
                ).fetchall()
                for (old,) in stale:
                    admin.execute(f'DROP DATABASE IF EXISTS "{old}" WITH (FORCE)')
                admin.execute(f'CREATE DATABASE "{template}" TEMPLATE "{name}"')
                return
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            admin.execute(f'CREATE DATABASE "{name}" TEMPLATE "{template}"')
        finally:
            admin.execute("SELECT pg_advisory_unlock(%s)", [_TEMPLATE_LOCK])


def _sqlite_from_template(env: dict[str, str], path: Path, digest: str) -> None:
    import fcntl

    template = Path(tempfile.gettempdir()) / f"{TEMPLATE_PREFIX}{digest}.sqlite3"
    with open(f"{template}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not template.exists():
            scratch = template.with_suffix(".making")
            scratch.unlink(missing_ok=True)
            run(
                [sys.executable, "manage.py", "migrate", "--noinput", "-v0"],
                env={**env, "DATABASE_URL": f"sqlite:///{scratch}"},
            )
            scratch.rename(template)
        path.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(template, path)

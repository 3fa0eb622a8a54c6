"""A real PostgreSQL server for radian's tests, from the machine's own binaries (the way
stalwart's tests start theirs: radian shares no code with stalwart, its tests neither).

`start_postgres()` runs `initdb` into a fresh temporary folder, starts the server with
`pg_ctl` on 127.0.0.1 at a free port (and a unix socket in the same folder), trust
authentication, and creates one database. `create_database` makes more, `drop_database`
drops one (closing what is still connected to it) and `drop_databases` every one it made.
`stop()` stops it (`pg_ctl stop -m immediate`) and removes the folder. initdb refuses to
run as root, so as root every server command runs as the `postgres` system user
(`runuser -u postgres --`), and the folder is given to it.

The binaries are looked for in `$RADIAN_PG_BIN` (when set, only there), else in
`pg_config --bindir`, then beside an `initdb` on PATH, then in
`/usr/lib/postgresql/<version>/bin` (newest first) and `/usr/local/pgsql/bin`.
`PostgresUnavailable` says why none could be started.

A test server is not durable (fsync off) because nothing of it outlives the run; the
benchmark asks for `durable=True`, the server's own defaults, so a commit is fsync'd.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import re
import shutil
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

SERVER_USER = "postgres"
START_TIMEOUT_SECS = 30
NOT_DURABLE = ("fsync=off", "synchronous_commit=off", "full_page_writes=off")


class PostgresUnavailable(RuntimeError):
    """No PostgreSQL server can be started here; the message says why."""


@dataclass
class PostgresServer:
    """A running server in its own temporary folder; `stop()` ends it and removes the folder."""

    bin_dir: Path
    root: Path
    port: int
    run_as: str | None
    database: str
    started_in_secs: float = 0.0
    made: list[str] = field(default_factory=list)  # the databases made and not yet dropped
    _stopped: bool = field(default=False, repr=False)

    @property
    def data_dir(self) -> Path:
        return self.root / "data"

    @property
    def socket_dir(self) -> Path:
        return self.root / "sockets"

    def url(self, database: str | None = None) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database or self.database}"

    def create_database(self, name: str) -> str:
        """A new empty database on this server; returns its URL."""
        _check_name(name)
        import psycopg  # the postgres extra: without it, start_postgres says so

        with psycopg.connect(self.url("postgres"), autocommit=True) as admin:
            admin.execute(f'CREATE DATABASE "{name}"')
        self.made.append(name)
        return self.url(name)

    def drop_database(self, name: str) -> None:
        """Drop a database, closing every connection still open to it (one a test left
        open, a server process it left running): nothing of it outlives its use."""
        _check_name(name)
        import psycopg  # the postgres extra: without it, start_postgres says so

        with psycopg.connect(self.url("postgres"), autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        if name in self.made:
            self.made.remove(name)

    def drop_databases(self) -> None:
        """Drop every database `create_database` made that is still there."""
        for name in list(self.made):
            self.drop_database(name)

    def stop(self) -> None:
        """Stop the server and remove its folder; safe to call twice.

        An immediate stop: the folder goes next, so nothing needs to reach its files, and
        a fast stop's shutdown checkpoint over every database a suite made could outlast
        the test timeout on a loaded machine."""
        if self._stopped:
            return
        self._stopped = True
        try:
            if (self.data_dir / "postmaster.pid").exists():  # else it never started
                _run(self, "pg_ctl", "-D", str(self.data_dir), "-m", "immediate", "-w", "stop")
        finally:
            shutil.rmtree(self.root, ignore_errors=True)

    def restart(self) -> None:
        """Stop the server (`-m fast`: every connection open to it is broken, what was
        committed is kept though this test server does not fsync) and start it again on the
        same port."""
        _run(self, "pg_ctl", "-D", str(self.data_dir), "-m", "fast", "-w", "stop")
        _start(self, durable=False, port=self.port)

    def __enter__(self) -> PostgresServer:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


def _check_name(name: str) -> None:
    if not re.fullmatch(r"[a-z_][a-z0-9_]{0,62}", name):
        raise ValueError(f"database name {name!r}: lower-case letters, digits and _ only")


def find_bin_dir() -> Path | None:
    """The folder holding initdb, pg_ctl and postgres, or None."""
    candidates: list[Path] = []
    chosen = os.environ.get("RADIAN_PG_BIN")
    if chosen:  # a folder named on purpose is the only one tried
        return _holds_server(Path(chosen))
    pg_config = shutil.which("pg_config")
    if pg_config:
        found = subprocess.run([pg_config, "--bindir"], capture_output=True, text=True)
        if found.returncode == 0 and found.stdout.strip():
            candidates.append(Path(found.stdout.strip()))
    initdb = shutil.which("initdb")
    if initdb:
        candidates.append(Path(initdb).resolve().parent)
    versions = Path("/usr/lib/postgresql").glob("*/bin")
    candidates.extend(sorted(versions, key=_version_of, reverse=True))
    candidates.append(Path("/usr/local/pgsql/bin"))
    return next((folder for folder in candidates if _holds_server(folder)), None)


def _holds_server(folder: Path) -> Path | None:
    programs = ("initdb", "pg_ctl", "postgres")
    return folder if all((folder / name).is_file() for name in programs) else None


def start_postgres(*, durable: bool = False, database: str = "radian_test") -> PostgresServer:
    """Start a fresh server with one empty database; raise PostgresUnavailable if none can."""
    began = time.monotonic()
    try:
        import psycopg  # noqa: F401
    except ImportError as error:
        raise PostgresUnavailable(f"psycopg is not installed (radian[postgres]): {error}") from None
    bin_dir = find_bin_dir()
    if bin_dir is None:
        raise PostgresUnavailable(
            "no PostgreSQL binaries (initdb, pg_ctl, postgres) found: install postgresql "
            "or set RADIAN_PG_BIN to their folder"
        )
    run_as = _server_user()
    root = Path(tempfile.mkdtemp(prefix="radian-pg-"))
    server = PostgresServer(bin_dir=bin_dir, root=root, port=0, run_as=run_as, database=database)
    try:
        server.socket_dir.mkdir()
        if run_as is not None:
            account = pwd.getpwnam(run_as)
            for path in (root, server.socket_dir):
                os.chown(path, account.pw_uid, account.pw_gid)
        _run(server, "initdb", "-D", str(server.data_dir), "-U", "postgres", "-A", "trust",
             "-E", "UTF8", "--locale=C", "--no-sync")  # fmt: skip
        _start(server, durable)
        server.create_database(database)
    except BaseException:
        with contextlib.suppress(PostgresUnavailable):  # the first failure is the one to tell
            server.stop()
        raise
    server.started_in_secs = time.monotonic() - began
    return server


def _start(server: PostgresServer, durable: bool, port: int | None = None) -> None:
    settings = ["listen_addresses=127.0.0.1", "max_connections=200"]
    if not durable:
        settings.extend(NOT_DURABLE)
    last_error: PostgresUnavailable | None = None
    for _ in range(3):  # a free port can be taken by someone else before the server binds it
        server.port = port or _free_port()
        options = f"-p {server.port} -k {server.socket_dir} " + " ".join(
            f"-c {setting}" for setting in settings
        )
        try:
            _run(server, "pg_ctl", "-D", str(server.data_dir), "-l", str(server.root / "log"),
                 "-w", "-t", str(START_TIMEOUT_SECS), "-o", options, "start")  # fmt: skip
            return
        except PostgresUnavailable as error:
            last_error = error
    assert last_error is not None
    raise last_error


def _run(server: PostgresServer, program: str, *args: str) -> None:
    command = [str(server.bin_dir / program), *args]
    if server.run_as is not None:
        command = [_runuser() or "runuser", "-u", server.run_as, "--", *command]
    try:
        done = subprocess.run(
            command, cwd=server.root, capture_output=True, text=True, timeout=60, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise PostgresUnavailable(f"{program} could not run: {error}") from error
    if done.returncode != 0:
        log = server.root / "log"
        tail = log.read_text(errors="replace")[-2000:] if log.is_file() else ""
        raise PostgresUnavailable(
            f"{program} {args[-1]} failed ({done.returncode}): "
            f"{(done.stderr or done.stdout).strip()[-2000:]}{chr(10) + tail if tail else ''}"
        )


def _server_user() -> str | None:
    """None when we may run the server ourselves; the user to run it as when we are root."""
    if os.geteuid() != 0:
        return None
    try:
        pwd.getpwnam(SERVER_USER)
    except KeyError as error:
        raise PostgresUnavailable(
            f"running as root, and there is no {SERVER_USER!r} user to run initdb as"
        ) from error
    if _runuser() is None:
        raise PostgresUnavailable("running as root, and runuser is not installed")
    return SERVER_USER


def _runuser() -> str | None:
    # root's PATH usually has sbin, but a CI environment's may not
    found = shutil.which("runuser")
    candidates = [found] if found else []
    candidates += ["/usr/sbin/runuser", "/sbin/runuser"]
    return next((path for path in candidates if os.access(path, os.X_OK)), None)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _version_of(bin_dir: Path) -> tuple[int, ...]:
    digits = re.findall(r"\d+", bin_dir.parent.name)
    return tuple(int(d) for d in digits)

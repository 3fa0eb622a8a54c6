"""pytest fixtures for a real PostgreSQL server, and the record backends to run against.

conftest.py imports these names, so every test module can ask for them:

- `pg_server` (session): one server for the whole run, stopped at the end even when the
  run fails; every database the suite made and left is dropped first. When none can be
  started, tests that need it are skipped and the reason is printed at the end of the run;
  with `CI` set they fail instead, since CI must run them.
- `pg_url`: a fresh, empty database on that server for one test, dropped when the test ends
  (connections it left open are closed), so a suite's databases never pile up.
- `BACKENDS`: the params of a fixture run once per record backend ("sqlite",
  "postgres"); the postgres case carries the `postgres` marker.
- `skipped_because`: why PostgreSQL tests were skipped, printed at the end of the run (under
  pytest-xdist each worker starts a server of its own, and conftest.py hands the controller,
  which prints the summary, what the workers found).
"""

from __future__ import annotations

import atexit
import itertools
import os
from collections.abc import Iterator

import pytest
from pgserver import PostgresServer, PostgresUnavailable, start_postgres

__all__ = ["BACKENDS", "pg_server", "pg_url", "pytest_terminal_summary", "skipped_because"]

BACKENDS = ("sqlite", pytest.param("postgres", marks=pytest.mark.postgres))

skipped_because: list[str] = []
_database_numbers = itertools.count(1)


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PostgresServer]:
    try:
        server = start_postgres()
    except PostgresUnavailable as why:
        reason = f"PostgreSQL could not be started: {why}"
        if os.environ.get("CI"):
            pytest.fail(f"{reason} (CI is set, so PostgreSQL tests never skip)", pytrace=False)
        skipped_because.append(reason)
        pytest.skip(reason)
    atexit.register(server.stop)  # also stopped if the run is cut short before teardown
    try:
        yield server
        server.drop_databases()  # after the suite: whatever a test made and left
    finally:
        server.stop()


@pytest.fixture
def pg_url(pg_server: PostgresServer) -> Iterator[str]:
    name = f"t{os.getpid()}_{next(_database_numbers)}"
    url = pg_server.create_database(name)
    yield url
    pg_server.drop_database(name)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    for reason in skipped_because:
        terminalreporter.write_line(f"PostgreSQL tests skipped. {reason}", yellow=True)

"""pytest fixtures for a real PostgreSQL server (tests/postgres_server.py), as stalwart's have.

- `pg_server` (session): one server for the run, stopped at the end even when the run
  fails. When none can be started, the tests that need it are skipped and the reason is
  printed at the end of the run; with `CI` set they fail instead, since CI must run them.
- `pg_url`: a fresh, empty database on that server for one test, dropped when it ends.
- `STORES`: the params of a fixture run once per arc store ("files", "postgres"); the
  postgres case carries the `postgres` marker.
"""

from __future__ import annotations

import atexit
import itertools
import os
from collections.abc import Iterator

import pytest
from postgres_server import PostgresServer, PostgresUnavailable, start_postgres

__all__ = ["STORES", "pg_server", "pg_url", "pytest_terminal_summary"]

STORES = ("files", pytest.param("postgres", marks=pytest.mark.postgres))

_skipped_because: list[str] = []
_database_numbers = itertools.count(1)


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PostgresServer]:
    try:
        server = start_postgres()
    except PostgresUnavailable as why:
        reason = f"PostgreSQL could not be started: {why}"
        if os.environ.get("CI"):
            pytest.fail(f"{reason} (CI is set, so PostgreSQL tests never skip)", pytrace=False)
        _skipped_because.append(reason)
        pytest.skip(reason)
    atexit.register(server.stop)  # also stopped if the run is cut short before teardown
    try:
        yield server
        server.drop_databases()
    finally:
        server.stop()


@pytest.fixture
def pg_url(pg_server: PostgresServer) -> Iterator[str]:
    name = f"arc{os.getpid()}_{next(_database_numbers)}"
    url = pg_server.create_database(name)
    yield url
    pg_server.drop_database(name)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    for reason in _skipped_because:
        terminalreporter.write_line(f"PostgreSQL tests skipped. {reason}", yellow=True)

"""Shared fixtures: a record store, a fake clock, and small agents built in tmp_path."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from pg_fixtures import BACKENDS, pg_server, pg_url, pytest_terminal_summary  # noqa: F401

from stalwart.clock import FakeClock
from stalwart.record import Store, open_store


@pytest.fixture(params=BACKENDS)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    """A fresh, empty record, once per backend (SQLite, PostgreSQL: see pg_fixtures.py)."""
    if request.param == "postgres":
        opened = open_store(request.getfixturevalue("pg_url"))
    else:
        opened = open_store(str(tmp_path / "record.sqlite"))
    yield opened
    opened.close()


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()

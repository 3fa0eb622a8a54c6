"""Shared fixtures: a record store, a fake clock, and small agents built in tmp_path."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from stalwart.clock import FakeClock
from stalwart.record.sqlite import SQLiteStore


@pytest.fixture(params=["sqlite"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[SQLiteStore]:
    """A fresh, empty record. Other backends join by adding params here."""
    opened = SQLiteStore(tmp_path / "record.sqlite")
    yield opened
    opened.close()


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()

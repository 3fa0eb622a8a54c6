"""The operator's log lives in the record's own database, on either backend."""

from __future__ import annotations

from pathlib import Path

import pytest
from pg_fixtures import BACKENDS

from stalwart.record import open_operator_log
from stalwart.record.operator_log import Action


@pytest.fixture(params=BACKENDS)
def location(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "postgres":
        return str(request.getfixturevalue("pg_url"))
    return str(tmp_path / "record.sqlite")


def test_actions_are_kept_beside_the_sessions_and_read_newest_first(location: str) -> None:
    times = iter([1_800_000_000.5, 1_800_000_060.25])
    first = open_operator_log(location, now=lambda: next(times))
    first.add("sign in", None, "ok", "signed in")
    first.add("undo", "s1", "lease_lost", "another worker holds it")
    first.close()

    again = open_operator_log(location, now=lambda: 0.0)  # another process, later
    try:
        assert again.entries() == [
            Action(1_800_000_060.25, "undo", "s1", "lease_lost", "another worker holds it"),
            Action(1_800_000_000.5, "sign in", None, "ok", "signed in"),
        ]
        assert [a.action for a in again.entries(limit=1)] == ["undo"]
        again.add("list sessions", None, "ok")
        assert again.entries(limit=1) == [Action(0.0, "list sessions", None, "ok", "")]
    finally:
        again.close()

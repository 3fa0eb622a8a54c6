"""An idle loop does no work for claims when no slot is free (issue 33)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from arc_helpers import make_plan
from conftest import write_config

from radian.arc.clock import FakeClock
from radian.arc.config import load_config
from radian.arc.due import DueIndex
from radian.arc.loop import Loop

pytestmark = pytest.mark.unit


def test_a_pass_with_every_slot_busy_looks_for_no_claimable_task(
    git_repo: Path, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_config(git_repo, ["true"], limits={"parallel": 1})
    store = make_plan(git_repo, clock, ["a", "b", "c"])
    loop = Loop(store, load_config(git_repo), clock, echo=lambda line: None)
    loop.index.rebuild()
    asked: list[int] = []
    original = DueIndex.claimable

    def counted(index: DueIndex) -> list[str]:
        asked.append(1)
        return original(index)

    monkeypatch.setattr(DueIndex, "claimable", counted)
    busy: Any = {object(): SimpleNamespace(task="elsewhere", attempt_id="001")}
    loop._running = busy  # noqa: SLF001 - the one slot taken by a running attempt
    loop._pass()  # noqa: SLF001
    assert asked == []
    loop._running = {}  # noqa: SLF001 - a slot frees: the pass looks again
    monkeypatch.setattr(Loop, "_launch", lambda self, *claimed: None)
    loop._pass()  # noqa: SLF001
    assert asked == [1]
    loop._pool.shutdown()  # noqa: SLF001

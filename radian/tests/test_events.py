"""Typed results and events (issue 14: "Typed results, not printed lines"): the commands
return typed results, the loop reports typed events; the printed lines are their texts."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from arc_helpers import make_plan
from conftest import write_config

from radian.arc import commands
from radian.arc.clock import FakeClock
from radian.arc.config import load_config
from radian.arc.events import Event
from radian.arc.loop import Loop
from radian.arc.results import PlanLoaded, TaskAdded, TaskCancelled
from radian.arc.store import ArcStore

pytestmark = pytest.mark.integration

Worker = Callable[..., list[str]]


def test_a_runs_events_say_what_happened_to_which_task(
    git_repo: Path, clock: FakeClock, scripted_worker: Worker
) -> None:
    write_config(git_repo, scripted_worker({"default": {"outcome": "failed", "cost": 0.1}}))
    make_plan(git_repo, clock, ["t"])
    seen: list[Event] = []
    printed: list[str] = []
    loop = Loop(ArcStore(git_repo), load_config(git_repo), clock, echo=printed.append,
                on_event=seen.append)  # fmt: skip

    report = loop.run(once=True)

    assert [(e.kind, e.task, e.state, e.attempt_id) for e in report.events] == [
        ("claimed", "t", "doing.working", "001"),
        ("retry", "t", "todo.retry_wait", "001"),
    ]
    assert seen == report.events
    assert (
        printed
        == report.lines
        == [
            "t todo.ready -> doing.working (attempt 001)",
            "t failed (model) -> retry at 2026-11-30T07:00:10Z",
        ]
    )
    assert report.events[1].document() == {
        "event": "retry", "task": "t", "state": "todo.retry_wait", "attempt_id": "001",
        "plan": None, "text": "t failed (model) -> retry at 2026-11-30T07:00:10Z",
    }  # fmt: skip


def test_the_commands_return_typed_results(tmp_path: Path, clock: FakeClock) -> None:
    store = ArcStore(tmp_path)
    commands.add_plan(store, "p")
    added = commands.add_task(store, clock, "p", "t", "Do t.\n")
    assert added == TaskAdded("t", "p", "todo.ready")
    assert added.lines() == ["t added to plan p: todo.ready"]
    assert added.document() == {"kind": "task_added", "task": "t", "plan": "p",
                                "state": "todo.ready"}  # fmt: skip
    plan_file = tmp_path / "q.toml"
    plan_file.write_text('[plan]\nname = "q"\n\n[[task]]\nname = "u"\nbrief = "x"\n')
    assert commands.load_plan_file(store, clock, plan_file) == PlanLoaded("q", 1)
    cancelled = commands.cancel(store, clock, "u")
    assert cancelled == TaskCancelled("u", "todo.ready", "failed.cancelled")
    assert cancelled.lines() == ["u cancelled -> failed.cancelled (was todo.ready)"]

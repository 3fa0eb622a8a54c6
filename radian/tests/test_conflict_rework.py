"""Conflicts with the target branch: the mid-merge rework, merge-main off, and the limit."""

from __future__ import annotations

import json
from typing import Any

import pytest
from gate_fixtures.arc_world import (
    add_plan,
    brief,
    run_arc,
    task,
    worker_args,
    worker_log,
    write_arc_config,
)
from gate_fixtures.world import GitWorld

from radian.arc import show
from radian.arc.clock import FakeClock
from radian.arc.config import load_config
from radian.arc.store import ArcStore

pytestmark = pytest.mark.integration


def ops(tag: str) -> str:
    """calc/ops.py with a tag on add's line: two different tags conflict."""
    return f"def add(a, b):\n    return a + b  # {tag}\n\n\ndef is_positive(x):\n    return x > 0\n"


def clashing_step(world: GitWorld) -> dict[str, Any]:
    """The task writes its tag on add's line, then a colleague pushes another tag on main."""
    return {
        "files": {"src/calc/ops.py": ops("task {attempt}")},
        "main_push": {
            "clone": str(world.other),
            "files": {"src/calc/ops.py": ops("main {attempt}")},
        },
    }


def test_a_conflict_gets_a_rework_and_the_next_attempt_starts_mid_merge(
    world: GitWorld, clock: FakeClock
) -> None:
    resolved = {"files": {"src/calc/ops.py": ops("both sides")}}
    scenario = {"clash": {"001": clashing_step(world), "default": resolved}}
    write_arc_config(world, worker_args(world, scenario))
    add_plan(world, clock, ["clash"])

    lines = run_arc(world, clock)

    assert "clash conflict with main -> todo.ready (Rework 1, starts mid-merge)" in lines
    assert worker_log(world) == ["clash 001 mid_merge=False", "clash 002 mid_merge=True"]
    done = task(world, "clash")
    assert str(done.state) == "done.integrated"
    assert done.rework_count == 1 and done.retry_count == 0
    assert done.conflict_rework_run == 0  # the attempt after it did not end in a conflict
    assert done.auto_rework_used == 0  # a conflict rework is not a review rework
    verdicts = ArcStore(world.repo).task_dir("clash") / "verdicts"
    conflict = next(p for p in sorted(verdicts.glob("*.json")) if "conflict" in p.read_text())
    main_sha = json.loads(conflict.read_text())["main_sha"]
    text = brief(world, "clash")
    assert "## Rework 1 (conflict with main)\n" in text
    assert f"does not merge with main at {main_sha[:8]}" in text
    assert "The commands stage" in text and "- src/calc/ops.py" in text
    assert "This attempt starts mid-merge" in text
    assert "keeping both sides' intent, commit the merge, rebuild, run the tests" in text
    assert "change nothing else" in text
    assert "# both sides" in world.read_main("src/calc/ops.py")


def test_a_conflict_found_by_integration_names_the_integration_stage(
    world: GitWorld, clock: FakeClock
) -> None:
    scenario = {"clash": {"001": clashing_step(world),
                          "default": {"files": {"src/calc/ops.py": ops("merged")}}}}  # fmt: skip
    write_arc_config(world, worker_args(world, scenario), stages=())
    add_plan(world, clock, ["clash"])

    run_arc(world, clock)

    assert "The integration stage" in brief(world, "clash")
    assert str(task(world, "clash").state) == "done.integrated"


def test_without_merge_main_a_conflict_waits_for_the_lead(
    world: GitWorld, clock: FakeClock
) -> None:
    write_arc_config(world, worker_args(world, {"clash": {"default": clashing_step(world)}}))
    add_plan(world, clock, ["clash"], merge_main=False)

    lines = run_arc(world, clock)

    line = "clash conflict with main -> review.rework_pending: merge-main is off"
    assert line in lines
    waiting = task(world, "clash")
    assert str(waiting.state) == "review.rework_pending" and waiting.rework_reason == line
    assert "## Rework" not in brief(world, "clash")


@pytest.mark.parametrize("limit", [0, 1, None])
def test_the_conflict_limit_bounds_the_reworks_in_a_row(
    world: GitWorld, clock: FakeClock, limit: int | None
) -> None:
    write_arc_config(world, worker_args(world, {"clash": {"default": clashing_step(world)}}),
                     limits={} if limit is None else {"max_conflict_rework": limit})  # fmt: skip
    add_plan(world, clock, ["clash"])
    written = 3 if limit is None else limit  # the default is 3

    lines = run_arc(world, clock)

    text = brief(world, "clash")
    assert text.count("(conflict with main)") == written
    reason = f"max_conflict_rework {written} conflict rework(s) in a row written, none more"
    line = f"clash conflict with main -> review.rework_pending: {reason}"
    assert lines.count(line) == 1
    waiting = task(world, "clash")
    assert str(waiting.state) == "review.rework_pending"
    assert waiting.rework_reason == line
    shown = show.task_text(show.task_document(ArcStore(world.repo), load_config(world.repo),
                                              waiting))  # fmt: skip
    assert f"  rework_reason: {line}" in shown
    assert waiting.attempts == [f"{n:03d}" for n in range(1, written + 2)]
    assert waiting.conflict_rework_run == written and waiting.retry_count == 0
    # Never paused the plan nor exhausted the task.
    assert ArcStore(world.repo).load_plan("p").auto == "on"


def test_a_conflict_rework_keeps_retry_count_so_failures_use_up_max_attempts(
    world: GitWorld, clock: FakeClock
) -> None:
    failing = {"files": {"notes.txt": "{attempt}"}, "outcome": "failed"}
    scenario = {"clash": {"001": clashing_step(world), "002": failing,
                          "003": clashing_step(world), "default": failing}}  # fmt: skip
    write_arc_config(world, worker_args(world, scenario), limits={"max_attempts": 1})
    add_plan(world, clock, ["clash"])

    lines = run_arc(world, clock)

    assert lines.count("clash conflict with main -> todo.ready (Rework 1, starts mid-merge)") == 1
    assert "clash conflict with main -> todo.ready (Rework 2, starts mid-merge)" in lines
    gone = task(world, "clash")
    assert str(gone.state) == "failed.exhausted"
    assert gone.attempts == ["001", "002", "003", "004"] and gone.retry_count == 1
    # A failed worker attempt does not end in a conflict: the run started again each time.
    assert gone.conflict_rework_run == 0


def test_a_failed_attempt_between_conflicts_starts_the_run_again(
    world: GitWorld, clock: FakeClock
) -> None:
    failing = {"files": {"notes.txt": "{attempt}"}, "outcome": "failed"}
    scenario = {"clash": {"002": failing, "default": clashing_step(world)}}
    write_arc_config(world, worker_args(world, scenario), limits={"max_conflict_rework": 1})
    add_plan(world, clock, ["clash"])

    lines = run_arc(world, clock)

    # Rework 1 after 001; 002 failed (a retry, the run back to 0); so 003's conflict gets
    # Rework 2; 004's conflict is the second in a row: the limit of 1 holds it.
    assert [line for line in lines if "conflict with main" in line] == [
        "clash conflict with main -> todo.ready (Rework 1, starts mid-merge)",
        "clash conflict with main -> todo.ready (Rework 2, starts mid-merge)",
        "clash conflict with main -> review.rework_pending: "
        "max_conflict_rework 1 conflict rework(s) in a row written, none more",
    ]


def test_an_attempt_that_does_not_end_in_a_conflict_starts_the_run_again(
    world: GitWorld, clock: FakeClock
) -> None:
    todo = {"files": {"src/calc/ops.py": ops("merged") + "# TODO tidy\n"}}
    scenario = {"clash": {"001": clashing_step(world), "002": todo,
                          "003": clashing_step(world),
                          "default": {"files": {"src/calc/ops.py": ops("final")}}}}  # fmt: skip
    write_arc_config(world, worker_args(world, scenario), review_mode="todo",
                     limits={"max_conflict_rework": 1})  # fmt: skip
    add_plan(world, clock, ["clash"], auto_rework=1)

    lines = run_arc(world, clock)

    assert [line for line in lines if "todo.ready (Rework" in line] == [
        "clash conflict with main -> todo.ready (Rework 1, starts mid-merge)",
        "clash review findings -> todo.ready (Rework 2)",
        "clash conflict with main -> todo.ready (Rework 3, starts mid-merge)",
    ]
    assert str(task(world, "clash").state) == "done.integrated"

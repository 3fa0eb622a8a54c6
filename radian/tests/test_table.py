"""Every row of the chapter's table, each from a real worker subprocess in one shared run.

One loop pass runs a task per row at once (parallel: one per task); each test then reads its task.
"""

from __future__ import annotations

import fcntl
import json
import os
from pathlib import Path
from typing import Any

import pytest
from arc_helpers import make_plan, run_once
from conftest import make_git_repo, worker_exec_args, write_config

from radian.arc import git as arc_git
from radian.arc.clock import FakeClock
from radian.arc.store import ArcStore

pytestmark = pytest.mark.integration

SCENARIO: dict[str, dict[str, Any]] = {
    "pushed": {"001": {"do": "result", "commit": True, "cost": 0.25}},
    "pushed-claude": {"001": {"do": "result", "commit": True, "format": "claude", "cost": 0.5}},
    "unpushed": {"001": {"do": "result", "commit": True, "push": False}},
    "poisoned": {"001": {"outcome": "poisoned"}},
    "refused": {"001": {"outcome": "refused"}},
    "failed": {"001": {"outcome": "failed"}},
    "failed-claude": {"001": {"outcome": "failed", "format": "claude"}},
    "incomplete": {"001": {"outcome": "incomplete", "format": "claude"}},
    "budget-exceeded": {"001": {"outcome": "budget_exceeded"}},
    "cancelled-inside": {"001": {"outcome": "cancelled"}},
    "crash": {"001": {"do": "crash"}},
    "unknown": {"001": {"outcome": "exploded"}},
    "lock-held": {"001": {"outcome": "completed", "commit": True}},
    "stall": {"001": {"do": "silent"}},
    "stubborn": {"001": {"do": "stubborn"}},
    "wall-time": {"001": {"do": "chatter"}},
}


@pytest.fixture(scope="module")
def table_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str], str]:
    root = tmp_path_factory.mktemp("table")
    repo = make_git_repo(root)
    scenario = root / "scenario.json"
    scenario.write_text(json.dumps(SCENARIO))
    write_config(
        repo,
        worker_exec_args(scenario),
        limits={"parallel": len(SCENARIO)},
        # Sixteen workers start at once on a small machine: a delivering worker must commit
        # and push well within wall_time_secs, and every worker print within stall_secs.
        worker={"stall_secs": 1.5, "wall_time_secs": 4.0, "term_grace_secs": 0.3},
    )
    clock = FakeClock()
    make_plan(repo, clock, list(SCENARIO))
    brief_before = ArcStore(repo).read_brief("unpushed")
    lock_path = arc_git.worktree_lock_path(repo, "lock-held")
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    descriptor = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
    fcntl.flock(descriptor, fcntl.LOCK_EX)
    try:
        lines = run_once(repo, clock)
    finally:
        os.close(descriptor)
    return repo, lines, brief_before


def state_of(repo: Path, name: str) -> dict[str, Any]:
    store = ArcStore(repo)
    record = store.read_attempt_result(name, "001")
    assert record is not None
    return {"task": store.load_task(name), "attempt": record.document()}


def test_completed_and_pushed_goes_to_review_verifying_with_the_shas(table_run: Any) -> None:
    repo, lines, _ = table_run
    for name in ("pushed", "pushed-claude"):
        found = state_of(repo, name)
        task, attempt = found["task"], found["attempt"]
        assert task.state == "review.verifying"
        assert task.base_sha and task.head_sha and task.base_sha != task.head_sha
        remote_head = arc_git.remote_branch_sha(repo, "origin", f"arc/{name}")
        assert task.head_sha == remote_head
        assert attempt["class"] is None
        assert attempt["outcome"] == "completed"
        assert f"{name} completed -> review.verifying (head {task.head_sha[:12]})" in lines
    assert state_of(repo, "pushed-claude")["attempt"]["result_format"] == "claude"


def test_completed_without_delivery_waits_for_rework_with_no_brief(table_run: Any) -> None:
    repo, lines, brief_before = table_run
    found = state_of(repo, "unpushed")
    assert found["task"].state == "review.rework_pending"
    assert found["task"].rework_reason == "not_pushed"
    assert found["attempt"]["reason"] == "not_pushed"
    assert found["attempt"]["class"] == "verification"
    assert ArcStore(repo).read_brief("unpushed") == brief_before
    assert "unpushed delivery check failed -> review.rework_pending: not_pushed" in lines


def test_poisoned_is_irrecoverable(table_run: Any) -> None:
    repo, lines, _ = table_run
    found = state_of(repo, "poisoned")
    assert found["task"].state == "failed.irrecoverable"
    assert found["attempt"]["class"] == "model"
    assert found["attempt"]["outcome"] == "poisoned"


@pytest.mark.parametrize(
    ("name", "outcome", "failure_class"),
    [
        ("refused", "refused", "model"),
        ("failed", "failed", "model"),
        ("failed-claude", "failed", "model"),
        ("incomplete", "incomplete", "model"),
        ("budget-exceeded", "budget_exceeded", "model"),
        ("cancelled-inside", "cancelled", "model"),
        ("crash", None, "infrastructure"),
        ("unknown", "exploded", "infrastructure"),
        ("lock-held", None, "infrastructure"),
        ("stall", None, "stall"),
        ("stubborn", None, "stall"),
        ("wall-time", None, "wall_time"),
    ],
)
def test_retry_rows(table_run: Any, name: str, outcome: str | None, failure_class: str) -> None:
    repo, lines, _ = table_run
    found = state_of(repo, name)
    task, attempt = found["task"], found["attempt"]
    assert task.state == "todo.retry_wait"
    assert task.retry_count == 1
    assert task.retry_at == "2026-11-30T07:00:10Z"
    assert attempt["class"] == failure_class
    assert attempt["outcome"] == outcome
    assert attempt["model_wait"] is False
    assert f"{name} failed ({failure_class}) -> retry at 2026-11-30T07:00:10Z" in lines


def test_lock_held_is_the_wrapper_exit_4_row(table_run: Any) -> None:
    repo, _, _ = table_run
    attempt = state_of(repo, "lock-held")["attempt"]
    assert attempt["wrapper_class"] == "lock_held"
    assert attempt["row"] == "a wrapper exit 4 (the worktree lock is held)"

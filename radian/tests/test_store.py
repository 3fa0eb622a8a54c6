"""The store: atomic files, and locks that make two processes' writes both count."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from arc_helpers import make_plan

from radian.arc.atomic import read_json, write_json_atomic
from radian.arc.clock import FakeClock
from radian.arc.errors import NotFoundError
from radian.arc.store import ArcStore

pytestmark = pytest.mark.integration

INCREMENT = """
import sys
from radian.arc.store import ArcStore
store = ArcStore(sys.argv[1])
for _ in range(int(sys.argv[2])):
    with store.task_lock("t"):
        task = store.load_task("t")
        task.rework_count += 1
        store.save_task(task)
"""


def test_atomic_write_replaces_whole_and_leaves_no_temporary(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "file.json"
    write_json_atomic(path, {"a": 1})
    write_json_atomic(path, {"a": 2, "b": [1, 2]})
    assert read_json(path) == {"a": 2, "b": [1, 2]}
    assert [p.name for p in path.parent.iterdir()] == ["file.json"]


def test_two_processes_writing_under_the_lock_lose_nothing(
    git_repo: Path, clock: FakeClock
) -> None:
    make_plan(git_repo, clock, ["t"], confirm=False)
    writers = [
        subprocess.Popen([sys.executable, "-c", INCREMENT, str(git_repo), "40"]) for _ in range(2)
    ]
    try:
        codes = [writer.wait(timeout=60) for writer in writers]
    finally:
        for writer in writers:
            writer.kill()
            writer.wait()
    assert codes == [0, 0]
    assert ArcStore(git_repo).load_task("t").rework_count == 80
    json.loads(ArcStore(git_repo).task_path("t").read_text())


def test_layout_and_missing_records(git_repo: Path, clock: FakeClock) -> None:
    store = make_plan(git_repo, clock, ["t"], confirm=False)
    arc_dir = git_repo / ".radian" / "arc"
    assert store.plan_path("p") == arc_dir / "plans" / "p.json"
    assert store.task_path("t") == arc_dir / "runs" / "t" / "task.json"
    assert store.brief_path("t").is_file()
    assert store.attempt_result_path("t", "001") == (
        arc_dir / "runs" / "t" / "attempts" / "001" / "attempt_result.json"
    )
    assert store.task_names() == ["t"]
    with pytest.raises(NotFoundError, match="no task named 'x'"):
        store.load_task("x")
    with pytest.raises(NotFoundError, match="no plan named 'x'"):
        store.load_plan("x")
    fields = set(read_json(store.task_path("t")))
    assert fields >= {
        "name", "plan", "state", "retry_count", "retry_at", "model_wait_streak", "cost_usd",
        "total_cost_usd", "max_attempts", "max_cost_usd", "fix_level", "rework_reason",
        "rework_count", "auto_rework_used", "conflict_rework_run", "auto_reverify_count",
        "base_sha", "head_sha", "branch", "session_id", "last_attempt_id", "merge_pending",
        "attempts", "created_at", "updated_at",
    }  # fmt: skip

"""The files arc writes carry a format version; a file of an older build still loads, one
of a newer build is refused, not misread."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from arc_helpers import make_plan

from radian.arc.attempt_result import AttemptResult
from radian.arc.clock import FakeClock
from radian.arc.errors import DamagedFile
from radian.arc.records import FORMAT_VERSION
from radian.arc.store import ArcStore

pytestmark = pytest.mark.unit

# task.json as the build before format versions wrote it.
OLD_TASK = {
    "name": "t", "plan": "p", "state": "todo.retry_wait", "retry_count": 1,
    "retry_at": "2026-11-30T07:00:10Z", "model_wait_streak": 0, "cost_usd": 0.1,
    "total_cost_usd": 0.1, "max_attempts": None, "max_cost_usd": None, "fix_level": None,
    "rework_reason": None, "rework_count": 0, "auto_rework_used": 0, "conflict_rework_run": 0,
    "auto_reverify_count": 0, "base_sha": None, "head_sha": None, "branch": "arc/t",
    "session_id": "s", "session_cost_usd": 0.1, "last_attempt_id": "001",
    "merge_pending": False, "attempts": ["001"], "created_at": "2026-11-30T07:00:00Z",
    "updated_at": "2026-11-30T07:00:00Z",
}  # fmt: skip


def test_files_are_written_with_the_format_version(tmp_path: Path, clock: FakeClock) -> None:
    store = make_plan(tmp_path, clock, ["t"], confirm=False)
    assert json.loads(store.task_path("t").read_text())["format_version"] == FORMAT_VERSION
    assert json.loads(store.plan_path("p").read_text())["format_version"] == FORMAT_VERSION
    store.write_attempt_result("t", "001", AttemptResult(task="t", attempt_id="001", row="x"))
    written = json.loads(store.attempt_result_path("t", "001").read_text())
    assert written["format_version"] == FORMAT_VERSION and written["class"] is None


def test_an_older_builds_task_loads_and_is_upgraded_when_saved(
    tmp_path: Path, clock: FakeClock
) -> None:
    store = make_plan(tmp_path, clock, ["t"], confirm=False)
    store.task_path("t").write_text(json.dumps(OLD_TASK))
    task = store.load_task("t")
    assert (task.format_version, task.retry_count, task.state) == (0, 1, "todo.retry_wait")
    store.save_task(task)
    assert ArcStore(tmp_path).load_task("t").format_version == FORMAT_VERSION


def test_a_newer_builds_file_is_refused(tmp_path: Path, clock: FakeClock) -> None:
    store = make_plan(tmp_path, clock, ["t"], confirm=False)
    store.task_path("t").write_text(json.dumps({**OLD_TASK, "format_version": 99}))
    with pytest.raises(DamagedFile, match=r"written by a newer radian \(format 99"):
        store.load_task("t")


def test_an_attempt_result_that_is_no_record_is_not_written(tmp_path: Path) -> None:
    store = ArcStore(tmp_path)
    with pytest.raises(ValueError, match="cost_usd"):
        store.write_attempt_result("t", "001", AttemptResult(task="t", attempt_id="001",
                                                             cost_usd=float("nan")))  # fmt: skip
    assert not store.attempt_result_path("t", "001").exists()

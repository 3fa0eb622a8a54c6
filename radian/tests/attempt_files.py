"""attempt_result.json for the chapter's rows, written with a fixed clock (no git, no worker).

`write_results(repo)` ends one attempt per row of radian.arc.classify's table from the
worker's own `AttemptEnd` (the reverify row by `claim_reverify`), then the paths the table
does not cover alone (a remote outage, a refused cost, an orphan's end, a resumed session,
an end after a cancel, a passing and a failing gate), and names each file it left.

Run as a script, it writes those files to the folder given (`expected_files` below), so the
bytes a build writes can be compared with what the build before it wrote:
    PYTHONPATH=<clone>/radian/src python radian/tests/attempt_files.py <folder>
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from arc_helpers import make_plan

from radian.arc import commands
from radian.arc.atomic import write_json_atomic
from radian.arc.clock import FakeClock
from radian.arc.config import ArcConfig
from radian.arc.gate.apply import apply_gate
from radian.arc.gate.findings import Finding
from radian.arc.gate.pipeline import GateRun
from radian.arc.gate.reverify import claim_reverify
from radian.arc.gate.verdict import Verdict, next_seq, write_verdict
from radian.arc.records import transition
from radian.arc.settle import outcome_from_end, settle, terminated_outcome
from radian.arc.states import State
from radian.arc.store import ArcStore
from radian.arc.worker.attempt import AttemptEnd
from radian.arc.worker.delivery import Delivery
from radian.arc.worker.formats.base import CostScope, CostSeen, ModelError, WorkerResult

BASE, HEAD = "b" * 40, "h" * 40


def result(outcome: str, cost: float | None = 0.25, **fields: object) -> WorkerResult:
    made = {"outcome": outcome, "session_id": "sess-1", "session_cost_usd": cost,
            "model_error": None, "format": "radian", "raw": {}, **fields}  # fmt: skip
    return WorkerResult(**made)  # type: ignore[arg-type]


def end(found: WorkerResult | None, **fields: object) -> AttemptEnd:
    made = {"result": found, "wrapper_class": None, "exit_code": 0, "delivery": None,
            "worker_started": True, "session_id": "sess-1", "started_at": "2026-11-30T06:58:00Z",
            "ended_at": "2026-11-30T06:59:59Z", "log_path": Path("worker.log"),
            **fields}  # fmt: skip
    return AttemptEnd(**made)  # type: ignore[arg-type]


UNAVAILABLE = ModelError("unavailable", 30.0, "overloaded")
# One end per row of the table (reverify has no worker: claim_reverify below).
ENDS: dict[str, AttemptEnd] = {
    "completed_pushed": end(result("completed"), delivery=Delivery(True, None, BASE, HEAD)),
    "completed_undelivered": end(
        result("completed"), delivery=Delivery(False, "branch_not_pushed", BASE, HEAD)
    ),
    "poisoned": end(result("poisoned", model_error=ModelError("authentication", None, "bad key"))),
    "refused": end(result("refused", fresh_session_next=True), fresh_session_next=True),
    "failed": end(result("failed", model_error=UNAVAILABLE)),
    "incomplete": end(result("incomplete", 1.5, cost_scope=CostScope.PROCESS)),
    "budget_exceeded": end(result("budget_exceeded", None)),
    "cancelled": end(result("cancelled")),
    "terminated": end(
        None, exit_code=1, failure_reason="the worker exited 1: boom", cost_seen=CostSeen(0.125)
    ),  # fmt: skip
    "unknown_outcome": end(result("exploded")),
    "lock_held": end(
        None,
        wrapper_class="lock_held",
        exit_code=4,
        worker_started=False,
        session_id=None,
        failure_reason="the worktree lock is held",
    ),  # fmt: skip
    "stall": end(None, wrapper_class="stall", exit_code=-15),
    "wall_time": end(None, wrapper_class="wall_time", exit_code=-15),
    "cancel": end(None, wrapper_class="cancelled", exit_code=-15),
    "interrupted": end(
        None, wrapper_class="interrupted", exit_code=-2, cost_seen=CostSeen(0.5, CostScope.PROCESS)
    ),  # fmt: skip
}
# Paths the rows alone do not take.
MORE_ENDS: dict[str, AttemptEnd] = {
    "remote_outage": end(result("failed"), remote_error="fatal: could not read from remote"),
    "cost_refused": end(
        result("failed", None, cost_problem="the worker reported cost nan, which is no amount")
    ),
    "model_error_no_kind": end(result("failed", model_error=ModelError(None, None, "said so"))),
}


# attempt_result.json as the first build that kept the outcome wrote it (51e482c): no format
# version, no cost_unknown or cost_scope, exit_code before started_at, and an outcome_record
# without the fields added since (cost_scope, fresh_session_next, cost_problem, remote_error).
EARLIER_OUTCOME = {
    "row": "completed_pushed", "outcome": "completed", "model_wait": False,
    "model_error": None, "reason": None, "session_id": "sess-0", "session_cost_usd": 0.5,
    "worker_started": True, "resumed": False, "base_sha": BASE, "head_sha": HEAD,
    "exit_code": 0, "wrapper_class": None, "result_format": "radian",
    "started_at": "2026-11-30T06:00:00Z", "ended_at": "2026-11-30T06:10:00Z",
}  # fmt: skip
EARLIER_FILE = {
    "task": "earlier_build", "attempt_id": "001", "outcome": "completed", "class": None,
    "row": "completed and pushed", "model_wait": False, "model_error": None, "reason": None,
    "cost_usd": 0.5, "session_cost_usd": 0.5, "session_id": "sess-0", "base_sha": BASE,
    "head_sha": HEAD, "exit_code": 0, "wrapper_class": None, "result_format": "radian",
    "started_at": "2026-11-30T06:00:00Z", "ended_at": "2026-11-30T06:10:00Z",
    "next_state": "review.verifying", "retry_at": None, "retry_count": 0,
    "outcome_record": EARLIER_OUTCOME,
}  # fmt: skip


def _working(store: ArcStore, clock: FakeClock, name: str, attempt_id: str = "001") -> None:
    with store.task_lock(name):
        task = store.load_task(name)
        transition(task, State.WORKING, clock, last_attempt_id=attempt_id,
                   attempts=[*task.attempts, attempt_id])  # fmt: skip
        store.save_task(task)


def _settle_end(store: ArcStore, config: ArcConfig, clock: FakeClock, name: str,
                found: AttemptEnd, resume: str | None = None) -> None:  # fmt: skip
    with store.task_lock(name):
        task = store.load_task(name)
        attempt_id = task.last_attempt_id or "001"
        settle(store, config, task, attempt_id, outcome_from_end(found, resume), clock)


def _gate(store: ArcStore, config: ArcConfig, clock: FakeClock, name: str, passed: bool) -> None:
    task = store.load_task(name)
    attempt_id = task.last_attempt_id or "001"
    fields: dict[str, Any] = {"integrated_sha": "i" * 40, "base_sha": BASE}
    if not passed:
        fields = {"failing_findings": [Finding(level="major", title="x")], "fix_level": "major",
                  "review_cost_micros": 250_000, "review_sessions": [250_000]}  # fmt: skip
    verdict = Verdict(
        task=name, attempt_id=attempt_id, stage="integration" if passed else "review",
        passed=passed, reason=None if passed else "review_findings", head_sha=HEAD,
        started_at="2026-11-30T07:00:00Z", ended_at="2026-11-30T07:00:00Z",
        seq=next_seq(store.task_dir(name)), **fields,
    )  # fmt: skip
    write_verdict(store.task_dir(name), verdict)
    apply_gate(store, config, GateRun(name, attempt_id, (verdict,), False), clock)


def write_results(repo: Path) -> dict[str, Path]:
    """Every case's attempt_result.json, by case name."""
    clock = FakeClock()
    config = ArcConfig()
    cases = [*ENDS, *MORE_ENDS, "reverify", "orphan", "resumed", "after_cancel", "gate_passed",
             "earlier_build"]  # fmt: skip
    store = make_plan(repo, clock, cases, confirm=False)
    paths: dict[str, Path] = {}
    for name, found in {**ENDS, **MORE_ENDS}.items():
        _working(store, clock, name)
        _settle_end(store, config, clock, name, found)
        clock.advance(1)
    # reverify: no worker; the task's head is verified again, then its review fails.
    with store.task_lock("reverify"):
        task = store.load_task("reverify")
        task.base_sha, task.head_sha = BASE, HEAD
        claim_reverify(store, task, clock, "radian arc reverify")
    _gate(store, config, clock, "reverify", passed=False)
    # an orphan's end: no Result, no live worker
    _working(store, clock, "orphan")
    with store.task_lock("orphan"):
        task = store.load_task("orphan")
        ended = terminated_outcome("2026-11-30T06:50:00Z", "2026-11-30T07:00:30Z")
        settle(store, config, task, "001", ended, clock)
    # a second attempt resumed in the first one's session
    _working(store, clock, "resumed")
    _settle_end(store, config, clock, "resumed", ENDS["failed"])
    clock.advance(60)
    _working(store, clock, "resumed", "002")
    _settle_end(store, config, clock, "resumed", end(result("failed", 0.75)), resume="sess-1")
    paths["resumed_002"] = store.attempt_result_path("resumed", "002")
    # cancelled while the worker ran, which then ended by itself
    _working(store, clock, "after_cancel")
    commands.cancel(store, clock, "after_cancel")
    paths["cancel_record"] = Path(shutil.copy(
        store.attempt_result_path("after_cancel", "001"), repo / "cancel_record.json"))  # fmt: skip
    clock.advance(2)
    _settle_end(store, config, clock, "after_cancel", ENDS["failed"])
    # a gate that integrates
    _working(store, clock, "gate_passed")
    _settle_end(store, config, clock, "gate_passed", ENDS["completed_pushed"])
    clock.advance(5)
    _gate(store, config, clock, "gate_passed", passed=True)
    # an attempt an earlier build ended and this one gates: its file gets the gate's summary
    _working(store, clock, "earlier_build")
    with store.task_lock("earlier_build"):
        task = store.load_task("earlier_build")
        write_json_atomic(store.attempt_result_path("earlier_build", "001"), EARLIER_FILE)
        transition(task, State.VERIFYING, clock, base_sha=BASE, head_sha=HEAD)
        store.save_task(task)
    _gate(store, config, clock, "earlier_build", passed=True)
    for name in cases:
        paths.setdefault(name, store.attempt_result_path(name, "001"))
    paths["reverify"] = store.attempt_result_path("reverify", "001")
    return paths


def expected_files(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as repo:
        for name, path in write_results(Path(repo)).items():
            shutil.copy(path, folder / f"{name}.json")


if __name__ == "__main__":
    expected_files(Path(sys.argv[1]))

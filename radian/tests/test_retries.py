"""Retries, their limit, the lead's rework, model waits, sessions and cost, with real workers.

Time is a FakeClock: `run` without --once sleeps through it to each retry_at at once.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from arc_helpers import attempt_result, make_plan, run_once, task
from conftest import write_config

from radian.arc import commands
from radian.arc.clock import FakeClock
from radian.arc.config import load_config
from radian.arc.loop import Loop
from radian.arc.states import State
from radian.arc.store import ArcStore

pytestmark = pytest.mark.integration

Worker = Callable[..., list[str]]


def run_all(repo: Path, clock: FakeClock) -> list[str]:
    loop = Loop(ArcStore(repo), load_config(repo), clock, echo=lambda line: None)
    return loop.run(once=False).lines


def test_retries_back_off_and_exhaust_at_max_attempts(
    git_repo: Path, clock: FakeClock, scripted_worker: Worker
) -> None:
    write_config(
        git_repo, scripted_worker({"default": {"do": "crash"}}), limits={"max_attempts": 2}
    )
    make_plan(git_repo, clock, ["t"])
    lines = run_all(git_repo, clock)
    crashed = "(infrastructure): the worker exited 1 without a Result"
    assert lines == [
        "t todo.ready -> doing.working (attempt 001)",
        "t failed (infrastructure) -> retry at 2026-11-30T07:00:10Z",
        f"t attempt 001 {crashed}",
        "t todo.retry_wait -> todo.ready",
        "t todo.ready -> doing.working (attempt 002)",
        "t failed (infrastructure) -> retry at 2026-11-30T07:00:30Z",
        f"t attempt 002 {crashed}",
        "t todo.retry_wait -> todo.ready",
        "t todo.ready -> doing.working (attempt 003)",
        "t failed (infrastructure) -> failed.exhausted (retry_count 2 of max_attempts 2)",
        f"t attempt 003 {crashed}",
    ]
    assert clock.slept == [10.0, 20.0]
    final = task(git_repo, "t")
    assert final.state == "failed.exhausted"
    assert final.retry_count == 2
    assert final.attempts == ["001", "002", "003"]


def test_the_tasks_max_attempts_overrides_and_zero_means_no_retry(
    git_repo: Path, clock: FakeClock, scripted_worker: Worker
) -> None:
    write_config(git_repo, scripted_worker({"default": {"outcome": "failed"}}))
    make_plan(git_repo, clock, {"t": {"max_attempts": 0}})
    run_once(git_repo, clock)
    assert task(git_repo, "t").state == "failed.exhausted"
    assert task(git_repo, "t").retry_count == 0


def test_a_retry_wait_becomes_ready_only_when_retry_at_has_passed(
    git_repo: Path, clock: FakeClock, scripted_worker: Worker
) -> None:
    write_config(git_repo, scripted_worker({"default": {"do": "crash"}}))
    make_plan(git_repo, clock, ["t"])
    run_once(git_repo, clock)
    clock.advance(9)
    assert run_once(git_repo, clock) == []
    assert task(git_repo, "t").state == "todo.retry_wait"
    clock.advance(1)
    lines = run_once(git_repo, clock)
    assert lines[:2] == [
        "t todo.retry_wait -> todo.ready",
        "t todo.ready -> doing.working (attempt 002)",
    ]


def test_the_leads_rework_resets_the_count_and_appends_to_the_brief(
    git_repo: Path, clock: FakeClock, scripted_worker: Worker, tmp_path: Path
) -> None:
    write_config(
        git_repo, scripted_worker({"default": {"do": "crash"}}), limits={"max_attempts": 1}
    )
    store = make_plan(git_repo, clock, ["t"])
    run_all(git_repo, clock)
    assert task(git_repo, "t").state == "failed.exhausted"
    assert task(git_repo, "t").retry_count == 1
    commands.rework(store, clock, "t", "Use the other approach.")
    reworked = task(git_repo, "t")
    assert reworked.state == "todo.ready"
    assert (reworked.retry_count, reworked.conflict_rework_run, reworked.rework_count) == (0, 0, 1)
    assert store.read_brief("t").endswith("## Rework 1\n\nUse the other approach.\n")
    commands.rework(store, clock, "t", "And again.")
    assert "## Rework 2\n\nAnd again.\n" in store.read_brief("t")
    lines = run_all(git_repo, clock)
    assert lines[-2:] == [
        "t failed (infrastructure) -> failed.exhausted (retry_count 1 of max_attempts 1)",
        "t attempt 004 (infrastructure): the worker exited 1 without a Result",
    ]
    assert task(git_repo, "t").attempts == ["001", "002", "003", "004"]
    brief_seen = (store.attempt_dir("t", "004") / "brief.md").read_text()
    assert "## Rework 2" in brief_seen


def unavailable(retry_after: float | None = None, kind: str = "unavailable") -> dict[str, Any]:
    error: dict[str, Any] = {"kind": kind, "message": "overloaded"}
    if retry_after is not None:
        error["retry_after_secs"] = retry_after
    return {"outcome": "failed", "model_error": error}


def test_model_waits_follow_their_own_schedule_and_never_exhaust(
    git_repo: Path, clock: FakeClock, scripted_worker: Worker
) -> None:
    scenario = {
        "001": unavailable(),  # 5 min
        "002": unavailable(retry_after=900),  # step 10 min; 15 min is longer: 15 min
        "003": unavailable(retry_after=60, kind="usage_limit"),  # step 20 min, 1 min shorter
        "004": {"outcome": "failed"},  # ends the run of waits: an ordinary retry
        "005": unavailable(retry_after=7200),  # a first wait again, capped at 60 min
        "default": {"do": "result", "commit": True},
    }
    write_config(git_repo, scripted_worker(scenario), limits={"max_attempts": 1})
    make_plan(git_repo, clock, ["t"])
    lines = run_all(git_repo, clock)
    waits = [line for line in lines if "->" in line and "doing.working" not in line]
    assert waits == [
        "t worker model unavailable -> retry at 2026-11-30T07:05:00Z",
        "t todo.retry_wait -> todo.ready",
        "t worker model unavailable -> retry at 2026-11-30T07:20:00Z",
        "t todo.retry_wait -> todo.ready",
        "t worker model unavailable -> retry at 2026-11-30T07:40:00Z",
        "t todo.retry_wait -> todo.ready",
        "t failed (model) -> retry at 2026-11-30T07:40:10Z",
        "t todo.retry_wait -> todo.ready",
        "t worker model unavailable -> retry at 2026-11-30T08:40:10Z",
        "t todo.retry_wait -> todo.ready",
        waits[-1],
    ]
    assert waits[-1].startswith("t completed -> review.verifying")
    assert clock.slept == [300.0, 900.0, 1200.0, 10.0, 3600.0]
    final = task(git_repo, "t")
    assert final.state == "review.verifying"
    assert final.retry_count == 1  # only the ordinary retry counted
    assert final.model_wait_streak == 0
    first = attempt_result(git_repo, "t", "001")
    assert first["model_wait"] is True
    assert first["class"] == "model"
    assert first["model_error"] == {"kind": "unavailable", "retry_after_secs": None,
                                    "message": "overloaded"}  # fmt: skip
    assert attempt_result(git_repo, "t", "004")["model_wait"] is False


def test_other_model_error_kinds_keep_the_ordinary_rules(
    git_repo: Path, clock: FakeClock, scripted_worker: Worker
) -> None:
    scenario = {"default": unavailable(kind="context_overflow")}
    write_config(git_repo, scripted_worker(scenario), limits={"max_attempts": 0})
    make_plan(git_repo, clock, ["t"])
    lines = run_once(git_repo, clock)
    assert lines[-1] == "t failed (model) -> failed.exhausted (retry_count 0 of max_attempts 0)"
    record = attempt_result(git_repo, "t", "001")
    assert record["model_wait"] is False
    assert record["model_error"]["kind"] == "context_overflow"


def test_resumed_sessions_cost_the_growth_of_the_session_total(
    git_repo: Path, clock: FakeClock, scripted_worker: Worker
) -> None:
    scenario = {
        "001": {"outcome": "failed", "cost": 0.30},
        "002": {"outcome": "failed", "cost": 0.50},
        "003": {"outcome": "failed", "cost": 0.10},  # lower: the counter was reset
        "004": {"do": "result", "commit": True, "cost": 0.25, "format": "claude"},
    }
    write_config(git_repo, scripted_worker(scenario), limits={"max_attempts": 5})
    make_plan(git_repo, clock, ["t"])
    run_all(git_repo, clock)
    costs = [attempt_result(git_repo, "t", a)["cost_usd"] for a in ("001", "002", "003", "004")]
    assert costs == [0.30, 0.20, 0.10, 0.15]
    totals = [attempt_result(git_repo, "t", a)["session_cost_usd"] for a in ("001", "004")]
    assert totals == [0.30, 0.25]
    sessions = {attempt_result(git_repo, "t", a)["session_id"] for a in ("001", "002", "004")}
    assert sessions == {"sess-001"}  # every attempt resumed the first one's session
    final = task(git_repo, "t")
    assert round(final.cost_usd, 6) == 0.75
    assert round(final.total_cost_usd, 6) == 0.75


def test_fresh_sessions_cost_their_whole_total(
    git_repo: Path, clock: FakeClock, scripted_worker: Worker
) -> None:
    scenario = {
        "001": {"outcome": "failed", "cost": 0.30},
        "002": {"outcome": "failed", "cost": 0.50},
    }
    write_config(git_repo, scripted_worker(scenario), worker={"session": "fresh"},
                 limits={"max_attempts": 1})  # fmt: skip
    make_plan(git_repo, clock, ["t"])
    run_all(git_repo, clock)
    first, second = (attempt_result(git_repo, "t", a) for a in ("001", "002"))
    assert (first["session_id"], second["session_id"]) == ("sess-001", "sess-002")
    assert (first["cost_usd"], second["cost_usd"]) == (0.30, 0.50)
    assert round(task(git_repo, "t").cost_usd, 6) == 0.80


def test_an_attempt_that_never_started_its_worker_leaves_no_session(
    git_repo: Path, clock: FakeClock, scripted_worker: Worker
) -> None:
    # The first attempt fails before the worker starts (the worktree's branch name is taken
    # by a file where git wants a folder), so the second must create the session.
    write_config(git_repo, scripted_worker({"default": {"outcome": "failed", "cost": 0.1}}))
    make_plan(git_repo, clock, ["t"])
    blocker = git_repo / ".radian" / "arc" / "worktrees" / "t"
    blocker.parent.mkdir(parents=True, exist_ok=True)
    blocker.write_text("not a worktree")
    blocker.chmod(0o444)
    (git_repo / ".radian" / "arc" / "worktrees").chmod(0o555)
    try:
        run_once(git_repo, clock)
    finally:
        (git_repo / ".radian" / "arc" / "worktrees").chmod(0o755)
        blocker.chmod(0o644)
        blocker.unlink()
    first = task(git_repo, "t")
    assert attempt_result(git_repo, "t", "001")["class"] == "infrastructure"
    assert first.session_id is None
    clock.advance(10)
    run_once(git_repo, clock)
    assert attempt_result(git_repo, "t", "002")["session_id"] == "sess-002"
    assert task(git_repo, "t").session_id == "sess-002"


def test_start_claims_a_waiting_task_before_its_time(
    git_repo: Path, clock: FakeClock, scripted_worker: Worker
) -> None:
    scenario = {"001": {"do": "crash"}, "002": {"do": "result", "commit": True}}
    write_config(git_repo, scripted_worker(scenario))
    store = make_plan(git_repo, clock, ["t"])
    run_once(git_repo, clock)
    assert task(git_repo, "t").state == "todo.retry_wait"
    loop = Loop(store, load_config(git_repo), clock, echo=lambda line: None)
    lines = loop.start("t").lines
    assert lines[0] == "t todo.retry_wait -> doing.working (attempt 002)"
    assert task(git_repo, "t").state == "review.verifying"


def test_claude_code_results_wait_on_the_model_too(
    git_repo: Path, clock: FakeClock, scripted_worker: Worker
) -> None:
    # 07:00 an overloaded API (529): the first wait, 5 minutes. 07:05 a usage limit that
    # resets at 07:50: longer than the second step (10 minutes), so 45 minutes.
    reset = int(datetime(2026, 11, 30, 7, 50, tzinfo=UTC).timestamp())
    scenario = {
        "001": {"outcome": "failed", "format": "claude", "api_error_status": 529,
                "text": "API Error: 529 Overloaded"},
        "002": {"outcome": "failed", "format": "claude",
                "text": f"Claude AI usage limit reached|{reset}"},
        "default": {"do": "result", "commit": True, "format": "claude"},
    }  # fmt: skip
    write_config(git_repo, scripted_worker(scenario), limits={"max_attempts": 0})
    make_plan(git_repo, clock, ["t"])
    lines = run_all(git_repo, clock)
    assert [line for line in lines if "model unavailable" in line] == [
        "t worker model unavailable -> retry at 2026-11-30T07:05:00Z",
        "t worker model unavailable -> retry at 2026-11-30T07:50:00Z",
    ]
    first, second = (attempt_result(git_repo, "t", a) for a in ("001", "002"))
    assert (first["model_error"]["kind"], second["model_error"]["kind"]) == (
        "unavailable",
        "usage_limit",
    )
    assert second["model_error"]["retry_after_secs"] == 2700
    assert first["model_wait"] is second["model_wait"] is True
    assert first["result_format"] == "claude"
    # max_attempts 0 and no retry used: waits never exhaust the task.
    final = task(git_repo, "t")
    assert (str(final.state), final.retry_count) == ("review.verifying", 0)


def test_once_claims_no_more_than_parallel(
    git_repo: Path, clock: FakeClock, scripted_worker: Worker
) -> None:
    write_config(git_repo, scripted_worker({"default": {"outcome": "failed"}}),
                 limits={"parallel": 2})  # fmt: skip
    make_plan(git_repo, clock, ["a", "b", "c"])
    lines = run_once(git_repo, clock)
    claims = [line for line in lines if "-> doing.working" in line]
    assert claims == [
        "a todo.ready -> doing.working (attempt 001)",
        "b todo.ready -> doing.working (attempt 001)",
    ]
    assert str(task(git_repo, "c").state) == "todo.ready"
    assert run_once(git_repo, clock)[0] == "c todo.ready -> doing.working (attempt 001)"


def test_start_moves_a_due_retry_to_ready_before_it_claims(
    git_repo: Path, clock: FakeClock, scripted_worker: Worker
) -> None:
    write_config(git_repo, scripted_worker({"001": {"do": "crash"}, "default": {}}))
    store = make_plan(git_repo, clock, ["t"])
    run_once(git_repo, clock)
    clock.advance(10)
    loop = Loop(store, load_config(git_repo), clock, echo=lambda line: None)
    assert loop.start("t").lines[:2] == [
        "t todo.retry_wait -> todo.ready",
        "t todo.ready -> doing.working (attempt 002)",
    ]


def test_an_attempt_that_reports_no_cost_keeps_the_sessions_last_total(
    git_repo: Path, clock: FakeClock, scripted_worker: Worker
) -> None:
    # 002 resumes sess-001 and crashes without a Result: it reports no total. 003 resumes
    # the same session and reports $0.50: it cost $0.20 since 001's $0.30, not $0.50.
    scenario = {
        "001": {"outcome": "failed", "cost": 0.30},
        "002": {"do": "crash"},
        "003": {"outcome": "failed", "cost": 0.50},
    }
    write_config(git_repo, scripted_worker(scenario), limits={"max_attempts": 2})
    make_plan(git_repo, clock, ["t"])
    run_all(git_repo, clock)
    costs = [attempt_result(git_repo, "t", a)["cost_usd"] for a in ("001", "002", "003")]
    assert costs == [0.30, 0.0, pytest.approx(0.20)]
    assert attempt_result(git_repo, "t", "002")["session_id"] == "sess-001"
    assert round(task(git_repo, "t").total_cost_usd, 6) == 0.5


def test_start_moves_no_other_task(
    git_repo: Path, clock: FakeClock, scripted_worker: Worker
) -> None:
    # Both crash (an infrastructure retry, due in 10 s); at 07:00:10 both are due. Starting t
    # moves t alone: u waits for the loop, as before (issue 31: start moved every due retry).
    write_config(git_repo, scripted_worker({"001": {"do": "crash"}, "default": {}}))
    store = make_plan(git_repo, clock, ["t", "u"])
    run_once(git_repo, clock)
    clock.advance(10)
    loop = Loop(store, load_config(git_repo), clock, echo=lambda line: None)
    lines = loop.start("t").lines
    assert lines[:2] == [
        "t todo.retry_wait -> todo.ready",
        "t todo.ready -> doing.working (attempt 002)",
    ]
    assert not [line for line in lines if line.startswith("u ")]
    assert task(git_repo, "u").state == State.RETRY_WAIT

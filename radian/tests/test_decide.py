"""decide, the chapter's table and its retry rules without a store: every row of the table
moves a doing.working task where the chapter says, and the rules under a retry (the limit,
the budget, a model wait, a remote outage) are decided from the task and the end alone."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import pytest

from radian.arc.attempt_result import AttemptOutcome, ModelErrorRecord
from radian.arc.budget import WITHIN, BudgetVerdict
from radian.arc.classify import ROWS, TABLE, Next, Row
from radian.arc.decide import Decision, decide
from radian.arc.records import Task
from radian.arc.settle import terminated_outcome
from radian.arc.states import State, is_allowed

pytestmark = pytest.mark.unit

NOW = datetime(2026, 11, 30, 7, 0, 0, tzinfo=UTC)
# The row's next state when the task is within its count and its budgets.
NEXT_STATE = {
    Next.VERIFY: State.VERIFYING,
    Next.VERIFY_AT_ONCE: State.VERIFYING,
    Next.REWORK_PENDING: State.REWORK_PENDING,
    Next.IRRECOVERABLE: State.IRRECOVERABLE,
    Next.CANCELLED: State.CANCELLED,
    Next.RETRY: State.RETRY_WAIT,
    Next.READY_AGAIN: State.READY,
}


def working(**fields: object) -> Task:
    return Task.model_validate({
        "name": "t", "plan": "p", "branch": "arc/t", "state": State.WORKING,
        "last_attempt_id": "002", "attempts": ["001", "002"],
        "created_at": "2026-11-30T06:00:00Z", "updated_at": "2026-11-30T06:00:00Z", **fields,
    })  # fmt: skip


def ended(**fields: object) -> AttemptOutcome:
    base = terminated_outcome("2026-11-30T06:59:00Z", "2026-11-30T07:00:00Z", "gone")
    return replace(base, **{"reason": None, **fields})  # type: ignore[arg-type]


class Budget:
    """A budget check that counts how often it is asked."""

    def __init__(self, verdict: BudgetVerdict = WITHIN) -> None:
        self.verdict = verdict
        self.asked = 0

    def __call__(self) -> BudgetVerdict:
        self.asked += 1
        return self.verdict


def decided(row: str, task: Task | None = None, budget: Budget | None = None,
            max_attempts: int = 3, **end: object) -> Decision:  # fmt: skip
    return decide(task or working(), ROWS[row], ended(row=row, **end), attempt_id="002",
                  max_attempts=max_attempts, now=NOW, budget=budget or Budget())  # fmt: skip


@pytest.mark.parametrize("row", TABLE, ids=[row.key for row in TABLE])
def test_each_row_of_the_table_moves_the_task_where_the_chapter_says(row: Row) -> None:
    decision = decided(row.key, head_sha="abc", base_sha="def")
    assert decision.state is NEXT_STATE[row.next_step]
    assert is_allowed(State.WORKING, decision.state)
    assert decision.budget is None


def test_a_retry_within_its_count_waits_its_backoff_and_uses_one() -> None:
    decision = decided("failed", working(retry_count=1, model_wait_streak=2), outcome="failed")
    assert decision.state is State.RETRY_WAIT
    assert decision.kind == "retry"
    # the second retry: 20 s after the end
    assert decision.fields["retry_at"] == "2026-11-30T07:00:20Z"
    assert decision.fields["retry_count"] == 2
    assert decision.fields["model_wait_streak"] == 0  # an ordinary failure ends the waits
    assert decision.fields["conflict_rework_run"] == 0
    assert decision.text == "t failed (model) -> retry at 2026-11-30T07:00:20Z"


def test_a_retry_at_the_limit_is_exhausted_and_the_budget_is_not_asked() -> None:
    budget = Budget(BudgetVerdict(True, "task", 5.0, 1.0))
    decision = decided("stall", working(retry_count=3), budget, max_attempts=3)
    assert decision.state is State.EXHAUSTED
    assert decision.text == (
        "t failed (stall) -> failed.exhausted (retry_count 3 of max_attempts 3)"
    )
    assert budget.asked == 0


def test_a_retry_with_a_budget_used_up_pauses_the_task() -> None:
    verdict = BudgetVerdict(True, "plan", 2.5, 2.0)
    budget = Budget(verdict)
    decision = decided("incomplete", budget=budget)
    assert (decision.state, decision.kind, decision.budget) == (
        State.PAUSED_BUDGET, "paused_budget", verdict,
    )  # fmt: skip
    assert "retry_at" not in decision.fields  # the pause clears it itself
    assert budget.asked == 1


def test_a_model_wait_uses_no_retry_and_waits_on_the_model() -> None:
    budget = Budget()
    error = ModelErrorRecord(kind="unavailable", retry_after_secs=None, message="busy")
    task = working(retry_count=2, model_wait_streak=1)
    decision = decided("failed", task, budget, max_attempts=2, model_wait=True,
                       model_error=error)  # fmt: skip
    # the second wait in a row: 10 minutes; the count at its limit does not exhaust it
    assert decision.state is State.RETRY_WAIT
    assert decision.text == "t worker model unavailable -> retry at 2026-11-30T07:10:00Z"
    assert decision.fields["model_wait_streak"] == 2
    assert "retry_count" not in decision.fields
    assert budget.asked == 0


def test_a_remote_outage_waits_with_no_retry_used() -> None:
    decision = decided("terminated", working(remote_wait_streak=1), remote_error="no route")
    assert decision.state is State.RETRY_WAIT
    assert decision.kind == "remote_wait"
    assert decision.fields["remote_wait_streak"] == 2
    assert decision.fields["retry_at"] == "2026-11-30T07:00:20Z"
    assert "retry_count" not in decision.fields
    assert decision.warn


def test_any_other_end_ends_the_run_of_remote_waits() -> None:
    decision = decided("completed_pushed", working(remote_wait_streak=3), head_sha="abc")
    assert decision.fields["remote_wait_streak"] == 0
    assert "conflict_rework_run" not in decision.fields  # a gate's conflicts go on counting


def test_an_infrastructure_retry_says_its_reason_on_a_line_of_its_own() -> None:
    decision = decided("lock_held", reason="the worktree lock is held")
    assert decision.detail == "t attempt 002 (infrastructure): the worktree lock is held"
    assert decided("failed", reason="anything").detail is None


def test_an_interrupted_attempt_is_ready_again_or_paused_by_its_cost() -> None:
    task = working(retry_count=2, model_wait_streak=1, conflict_rework_run=1)
    ready = decided("interrupted", task)
    assert (ready.state, dict(ready.fields)) == (State.READY, {"retry_at": None})
    verdict = BudgetVerdict(True, "task", 1.5, 1.0)
    paused = decided("interrupted", task, Budget(verdict))
    assert (paused.state, paused.budget, dict(paused.fields)) == (
        State.PAUSED_BUDGET, verdict, {},
    )  # fmt: skip


def test_a_poisoned_end_by_a_refused_credential_says_so() -> None:
    error = ModelErrorRecord(kind="authentication", retry_after_secs=None, message="bad key")
    decision = decided("poisoned", model_error=error)
    assert decision.state is State.IRRECOVERABLE
    assert "bad key" in decision.text
    assert decision.text != decided("poisoned").text

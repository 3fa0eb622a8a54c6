"""Applying a finished gate's verdicts to its task: integrated, a rework, or the lead's turn.

Under the task's lock, in this order: the attempt's review cost is added to cost_usd and
total_cost_usd; the attempt result records the gate; then the next state is decided:

- the gate's fetch or its integration's push could not reach the remote: the task stays
  review.verifying, its gate runs again at retry_at (no verdict applied, no retry used);
- the gate passed (integration pushed): done.integrated;
- a failed gate whose review ran, with a budget used up (by the review's cost or the
  worker's): todo.paused_budget, and no automatic rework;
- conflict, merge-main on, fewer than max_conflict_rework conflict reworks in a row:
  "## Rework <n> (conflict with main)", merge_pending, todo.ready, retry_count kept;
- a failing review (review_findings, or an earlier build's review_blocking) with
  auto_rework left: "## Rework <n>" listing the failing findings, retry_count 0, todo.ready;
- anything else: review.rework_pending with the reason for the lead.

An attempt that does not end in a conflict sets the conflict run back to 0.
"""

from __future__ import annotations

from dataclasses import replace

from radian.arc.attempt_result import AttemptResult, GateSummary
from radian.arc.budget import add_cost, check_after_cost, pause_for_budget
from radian.arc.classify import ROWS
from radian.arc.clock import Clock, format_utc, format_utc_ceil
from radian.arc.config import ArcConfig
from radian.arc.events import Event, EventKind
from radian.arc.gate import texts
from radian.arc.gate.pipeline import GateRun
from radian.arc.gate.rework import write_conflict_rework, write_review_rework
from radian.arc.gate.verdict import (
    CONFLICT,
    REVIEW_FAILING_REASONS,
    Verdict,
    attempt_verdicts,
    verdict_file_name,
)
from radian.arc.logs import logger
from radian.arc.records import Plan, Task, transition
from radian.arc.schedule import due_at, retry_backoff_secs
from radian.arc.states import State
from radian.arc.store_protocol import Store

log = logger(__name__)

MICROS_PER_USD = 1_000_000


def apply_gate(store: Store, config: ArcConfig, run: GateRun, clock: Clock) -> list[Event]:
    """Apply `run` to its task; what happened, one event per printed line. A task that moved
    on meanwhile (cancelled, or a newer attempt) keeps its state: the verdicts stay on file,
    nothing else changes."""
    with store.task_lock(run.task):
        task = store.load_task(run.task)
        # Every review session of the attempt, also one of a gate run stopped by Ctrl-C.
        verdicts = attempt_verdicts(store.task_dir(task.name), run.attempt_id)
        review_micros = sum(verdict.review_cost_micros for verdict in verdicts)
        if task.state is not State.VERIFYING or task.last_attempt_id != run.attempt_id:
            # Cancelled meanwhile: what the reviews cost still counts; nothing else changes.
            if review_micros and task.last_attempt_id == run.attempt_id:
                add_cost(store, task, review_micros / MICROS_PER_USD)
                _record_gate(store, task, run, review_micros, clock)
                store.save_task(task)
            return []
        if run.remote_error is not None:
            waited = _wait_for_remote(store, task, run.remote_error, clock)
            return [replace(waited, attempt_id=run.attempt_id)]
        # The gate reached a verdict: a run of remote waits is over.
        task.remote_wait_streak, task.retry_at = 0, None
        plan = store.load_plan(task.plan)
        if review_micros:
            add_cost(store, task, review_micros / MICROS_PER_USD)
        failure = run.failure
        if failure is None or failure.reason != CONFLICT:
            task.conflict_rework_run = 0
        review_ran = any(verdict.stage == "review" for verdict in verdicts)
        events = _decide(store, config, plan, task, run, failure, review_ran, clock)
        _record_gate(store, task, run, review_micros, clock)
        store.save_task(task)
    return [replace(event, attempt_id=run.attempt_id) if event.task == task.name else event
            for event in events]  # fmt: skip


def _moved(kind: EventKind, task: Task, text: str) -> Event:
    """An event about `task`, in the state it has just moved to."""
    return Event(kind, text, task.name, str(task.state))


def _wait_for_remote(store: Store, task: Task, error: str, clock: Clock) -> Event:
    """The gate could not reach the remote (a fetch, or the integration's push): the task
    stays review.verifying and its gate runs again at retry_at (10 s, doubled up to 5
    minutes), like the delivery check's wait. No verdict is applied, no retry used; what its
    reviews cost is added when the gate ends (every verdict of the attempt counts then)."""
    task.remote_wait_streak += 1
    when = format_utc_ceil(due_at(clock.now(), retry_backoff_secs(task.remote_wait_streak)))
    task.retry_at = when
    task.updated_at = format_utc(clock.now())
    store.save_task(task)
    log.warning("%s gate: remote unreachable, gate again at %s (%s)", task.name, when, error)
    return _moved("gate_remote_wait", task, texts.gate_remote_unreachable(task.name, when))


def _decide(
    store: Store,
    config: ArcConfig,
    plan: Plan,
    task: Task,
    run: GateRun,
    failure: Verdict | None,
    review_ran: bool,
    clock: Clock,
) -> list[Event]:
    name = task.name
    if failure is None:
        integration = run.verdicts[-1]
        transition(task, State.INTEGRATED, clock, rework_reason=None, merge_pending=False)
        text = texts.gate_integrated(name, integration.integrated_sha, config.target_branch)
        return [_moved("integrated", task, text)]
    # A conflict never pauses the plan, at whichever stage it was found (the chapter's "A
    # conflict with the target branch"), so it is answered before any budget is looked at.
    if failure.reason == CONFLICT:
        return _conflict(store, config, plan, task, failure, clock)
    # Both budgets are checked whenever a review verdict is applied, even one that cost
    # nothing: the worker's own cost may have used the budget up when it completed.
    if review_ran:
        budget = check_after_cost(store, task, plan, config)
        if budget.used_up:
            line = texts.review_budget_paused(
                name, str(budget.scope), budget.spent, float(budget.limit or 0)
            )
            reason = rework_reason_for(failure)
            plan_events = pause_for_budget(store, task, budget, clock, rework_reason=reason)
            return [_moved("review_paused_budget", task, line), *plan_events]
    if failure.reason in REVIEW_FAILING_REASONS and task.auto_rework_used < plan.auto_rework:
        number = write_review_rework(
            store, task, failure.fix_level or "major", failure.failing_findings
        )
        # A reverify does not count toward auto_rework, and neither does its failing gate.
        counted = 0 if _is_reverify(store, task.name, run.attempt_id) else 1
        transition(
            task,
            State.READY,
            clock,
            retry_count=0,
            auto_rework_used=task.auto_rework_used + counted,
            rework_reason=None,
            merge_pending=False,
            retry_at=None,
        )
        return [_moved("review_rework", task, texts.review_rework_written(name, number))]
    reason = rework_reason_for(failure)
    transition(task, State.REWORK_PENDING, clock, rework_reason=reason)
    text = texts.stage_failed(name, failure.stage, str(failure.reason), failure.detail)
    return [_moved("stage_failed", task, text)]


def _conflict(
    store: Store, config: ArcConfig, plan: Plan, task: Task, failure: Verdict, clock: Clock
) -> list[Event]:
    limit = config.limits.max_conflict_rework
    if not plan.merge_main:
        why = texts.conflict_merge_main_off()
    elif task.conflict_rework_run >= limit:
        why = texts.conflict_limit_reason(limit)
    else:
        number = write_conflict_rework(
            store, task, failure.main_sha or "", failure.stage, failure.conflicted_paths
        )
        transition(
            task,
            State.READY,
            clock,
            conflict_rework_run=task.conflict_rework_run + 1,
            merge_pending=True,
            rework_reason=None,
            retry_at=None,
        )
        return [_moved("conflict_rework", task, texts.conflict_rework_written(task.name, number))]
    line = texts.conflict_pending(task.name, why)
    transition(task, State.REWORK_PENDING, clock, rework_reason=line)
    return [_moved("conflict_pending", task, line)]


def _is_reverify(store: Store, task: str, attempt_id: str) -> bool:
    record = store.read_attempt_result(task, attempt_id)
    return record is not None and record.failure_class == ROWS["reverify"].failure_class


def rework_reason_for(failure: Verdict) -> str:
    """The rework_reason a failed stage leaves for the lead (show prints it)."""
    return f"{failure.stage} failed ({failure.reason}): {failure.detail or failure.reason}"


def _record_gate(store: Store, task: Task, run: GateRun, review_micros: int, clock: Clock) -> None:
    """The gate's summary joins the attempt's result: what it cost, where it sent the task."""
    record = store.read_attempt_result(task.name, run.attempt_id) or AttemptResult(
        task=task.name, attempt_id=run.attempt_id
    )
    gate = GateSummary(
        passed=run.passed,
        stages=tuple(verdict.stage for verdict in run.verdicts),
        reason=run.failure.reason if run.failure else None,
        verdicts=tuple(verdict_file_name(verdict) for verdict in run.verdicts),
        review_cost_micros=review_micros,
        applied_at=format_utc(clock.now()),
        next_state=str(task.state),
    )
    gated = record.model_copy(update={"gate": gate, "review_cost_micros": review_micros})
    store.write_attempt_result(task.name, run.attempt_id, gated)

"""Applying one attempt's end to its task: the table's row, the retry rules, model waits, cost.

The outcome is first turned into an `AttemptOutcome` (from a worker's AttemptEnd; recovery
reads it back from the attempt result a killed `run` wrote but did not apply, where it is
nested: radian.arc.attempt_result), then `settle` counts its cost,
asks radian.arc.decide for the task's move (the chapter's table and retry rules, decided
without reading or writing files), applies it, writes attempt_result.json and saves the
task, in that order, under the task's lock.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from radian.arc import texts
from radian.arc.attempt_result import AttemptOutcome, ModelErrorRecord, ended_result
from radian.arc.budget import add_cost, attempt_cost, check_after_cost, pause_for_budget
from radian.arc.classify import ROWS, classify
from radian.arc.clock import Clock
from radian.arc.config import ArcConfig
from radian.arc.decide import INFRASTRUCTURE, Decision, decide
from radian.arc.events import Event, EventKind
from radian.arc.logs import logger
from radian.arc.records import Task, transition
from radian.arc.states import State
from radian.arc.store_protocol import Store

if TYPE_CHECKING:  # the attempt module is loaded when an attempt runs, not by every command
    from radian.arc.worker.attempt import AttemptEnd

log = logger(__name__)


def outcome_from_end(end: AttemptEnd, resume_session_id: str | None) -> AttemptOutcome:
    """From the worker's end. Without a Result, what the worker reported spending so far (a
    progress line) is its cost, in that report's scope."""
    found = classify(end)
    result = end.result
    seen = end.cost_seen if result is None else None
    model_error = None
    if result is not None and result.model_error is not None:
        error = result.model_error
        model_error = ModelErrorRecord(
            kind=error.kind, retry_after_secs=error.retry_after_secs, message=error.message
        )
    delivery = end.delivery
    reason = found.reason
    if found.row.failure_class == INFRASTRUCTURE:
        # Why, for run and show: a remote's own words, the worker's end, an unknown outcome.
        reason = end.remote_error or end.failure_reason
        if found.row.key == "unknown_outcome":
            reason = texts.unknown_outcome_reason(str(found.outcome))
    return AttemptOutcome(
        row=found.row.key,
        outcome=found.outcome,
        model_wait=found.model_wait,
        model_error=model_error,
        reason=reason,
        session_id=end.session_id,
        session_cost_usd=(
            result.session_cost_usd
            if result is not None
            else (seen.cost_usd if seen is not None else None)
        ),
        worker_started=bool(end.worker_started),
        resumed=resume_session_id is not None and end.session_id == resume_session_id,
        base_sha=delivery.base_sha if delivery is not None else None,
        head_sha=delivery.head_sha if delivery is not None else None,
        exit_code=end.exit_code,
        wrapper_class=end.wrapper_class,
        result_format=result.format if result is not None else None,
        started_at=end.started_at,
        ended_at=end.ended_at,
        cost_scope=str(
            result.cost_scope
            if result is not None
            else (seen.cost_scope if seen is not None else "session_total")
        ),
        fresh_session_next=end.fresh_session_next,
        cost_problem=result.cost_problem if result is not None else None,
        remote_error=end.remote_error,
    )


def terminated_outcome(
    started_at: str | None, ended_at: str, reason: str | None = None
) -> AttemptOutcome:
    """An attempt that left no Result and has no live worker any more."""
    return AttemptOutcome(
        row="terminated",
        outcome=None,
        model_wait=False,
        model_error=None,
        reason=reason or texts.gone_reason(),
        session_id=None,
        session_cost_usd=None,
        worker_started=False,
        resumed=False,
        base_sha=None,
        head_sha=None,
        exit_code=None,
        wrapper_class=None,
        result_format=None,
        started_at=started_at,
        ended_at=ended_at,
    )


def settle(
    store: Store,
    config: ArcConfig,
    task: Task,
    attempt_id: str,
    outcome: AttemptOutcome,
    clock: Clock,
) -> list[Event]:
    """Apply `outcome` to `task` (loaded under its lock), write the attempt result, save.

    Returns what happened, one event per printed line.
    """
    # A shared store: refused (LeaseLost) before anything is counted or written when another
    # host has taken the attempt over.
    store.check_lease(task.name, attempt_id)
    row = ROWS[outcome.row]
    previous = task.session_cost_usd if outcome.resumed else None
    cost = attempt_cost(
        outcome.session_cost_usd,
        resumed=outcome.resumed,
        previous_session_cost_usd=previous,
        per_process=outcome.cost_scope == "process",
    )
    add_cost(store, task, cost)
    if outcome.fresh_session_next:
        task.session_id = None
        task.session_cost_usd = None
    elif outcome.worker_started and outcome.session_id:
        # An attempt that reported no total (a crash) leaves its session's last known total
        # as the base of the next resumed attempt's cost; a new session starts its own. What
        # one process spent (the ACP client's prompt-turn fee) is no base for anything.
        if outcome.cost_scope == "process":
            task.session_cost_usd = None
        elif outcome.session_id != task.session_id or outcome.session_cost_usd is not None:
            task.session_cost_usd = outcome.session_cost_usd
        task.session_id = outcome.session_id
    record = ended_result(task.name, attempt_id, outcome, row, cost)
    if task.state is not State.WORKING or task.last_attempt_id != attempt_id:
        # Cancelled (or otherwise moved on) while the worker ran: keep what the attempt
        # cost and the session it ran in, and the record the cancel wrote.
        earlier = store.read_attempt_result(task.name, attempt_id)
        kept = earlier.given("failure_class", "row", "next_state") if earlier else {}
        if not outcome.model_wait and task.last_attempt_id == attempt_id:
            # An attempt that did not end in a model wait ends the run of waits, cancelled
            # or not ("A worker wait on an unavailable model").
            task.model_wait_streak = 0
        store.write_attempt_result(task.name, attempt_id, record.model_copy(update=kept))
        store.save_task(task)
        text = texts.ended_after_cancel(task.name, attempt_id)
        return [Event("ended_after_cancel", text, task.name, str(task.state), attempt_id)]

    limit = task.max_attempts if task.max_attempts is not None else config.limits.max_attempts
    decision = decide(
        task,
        row,
        outcome,
        attempt_id=attempt_id,
        max_attempts=limit,
        now=clock.now(),
        budget=lambda: check_after_cost(store, task, store.load_plan(task.plan), config),
    )
    events = apply_decision(store, task, decision, clock)
    moved = {"next_state": str(task.state), "retry_at": task.retry_at,
             "retry_count": task.retry_count, "outcome_record": outcome}  # fmt: skip
    store.write_attempt_result(task.name, attempt_id, record.model_copy(update=moved))
    store.save_task(task)
    return [replace(event, attempt_id=attempt_id) if event.task == task.name else event
            for event in events]  # fmt: skip


def _moved(kind: EventKind, task: Task, text: str) -> Event:
    """An event about `task`, in the state it has just moved to."""
    return Event(kind, text, task.name, str(task.state))


def apply_decision(store: Store, task: Task, decision: Decision, clock: Clock) -> list[Event]:
    """Move `task` as `decision` says (the caller holds its lock and saves it); the events,
    the plan's among them when a plan budget was used up (its auto turned off)."""
    if decision.note is not None:
        (log.warning if decision.warn else log.info)("%s", decision.note)
    if decision.budget is not None:
        plan_events = pause_for_budget(store, task, decision.budget, clock, **decision.fields)
        events = [_moved(decision.kind, task, decision.text), *plan_events]
    else:
        transition(task, decision.state, clock, **decision.fields)
        events = [_moved(decision.kind, task, decision.text)]
    if decision.detail is not None:
        # A line of detail, no move of its own (state None: no hook takes it for one).
        events.append(Event("infrastructure_reason", decision.detail, task.name))
    return events

"""Applying one attempt's end to its task: the table's row, the retry rules, model waits, cost.

The outcome is first turned into an `AttemptOutcome` (from a worker's AttemptEnd, or from an
attempt_result.json a killed `run` wrote but did not apply), then `settle` decides the next
state, writes attempt_result.json and saves the task, in that order, under the task's lock.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Any

from radian.arc import texts
from radian.arc.budget import add_cost, attempt_cost, check_after_cost, pause_for_budget
from radian.arc.classify import ROWS, Next, classify
from radian.arc.clock import Clock, format_utc_ceil
from radian.arc.config import ArcConfig
from radian.arc.events import Event, EventKind
from radian.arc.logs import logger
from radian.arc.records import Task, attempt_result, transition
from radian.arc.schedule import due_at, model_wait_secs, retry_backoff_secs
from radian.arc.states import State
from radian.arc.store_protocol import Store

log = logger(__name__)

INFRASTRUCTURE = "infrastructure"  # the class whose reason run and show print


@dataclass(frozen=True)
class AttemptOutcome:
    """What arc keeps of one attempt's end: everything `settle` needs, and nothing else."""

    row: str  # a key of classify.ROWS
    outcome: str | None
    model_wait: bool
    model_error: dict[str, Any] | None
    reason: str | None
    session_id: str | None
    session_cost_usd: float | None
    worker_started: bool
    resumed: bool  # the attempt ran in the session it was asked to resume
    base_sha: str | None
    head_sha: str | None
    exit_code: int | None
    wrapper_class: str | None
    result_format: str | None
    started_at: str | None
    ended_at: str | None
    # How the Result's cost counts (formats.CostScope): a session total is differenced on a
    # resumed attempt, a per-process figure taken as it stands.
    cost_scope: str = "session_total"
    fresh_session_next: bool = False  # the session refused or was lost: do not resume it
    # Why the worker's reported cost was refused (NaN, infinite, negative): the attempt's
    # cost is unknown. Absent from records written by earlier builds.
    cost_problem: str | None = None
    # The remote could not be reached: an infrastructure wait (no retry used).
    remote_error: str | None = None


def outcome_from_end(end: Any, resume_session_id: str | None) -> AttemptOutcome:
    """From a radian.arc.worker.AttemptEnd. Without a Result, what the worker reported
    spending so far (a progress line) is its cost, in that report's scope."""
    found = classify(end)
    result = end.result
    seen = getattr(end, "cost_seen", None) if result is None else None
    model_error = None
    if result is not None and result.model_error is not None:
        error = result.model_error
        model_error = {
            "kind": error.kind,
            "retry_after_secs": error.retry_after_secs,
            "message": error.message,
        }
    delivery = end.delivery
    reason = found.reason
    if found.row.failure_class == INFRASTRUCTURE:
        # Why, for run and show: a remote's own words, the worker's end, an unknown outcome.
        reason = getattr(end, "remote_error", None) or getattr(end, "failure_reason", None)
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
        fresh_session_next=bool(getattr(end, "fresh_session_next", False)),
        cost_problem=result.cost_problem if result is not None else None,
        remote_error=getattr(end, "remote_error", None),
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


def outcome_from_record(record: dict[str, Any]) -> AttemptOutcome:
    """From an attempt_result.json written before its task was saved."""
    return AttemptOutcome(**record["outcome_record"])


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
    record = attempt_result(
        task.name,
        attempt_id,
        outcome=outcome.outcome,
        failure_class=row.failure_class,
        row=row.result,
        model_wait=outcome.model_wait,
        model_error=outcome.model_error,
        reason=outcome.reason,
        cost_usd=None if outcome.cost_problem else cost,
        cost_unknown=outcome.cost_problem,
        session_cost_usd=outcome.session_cost_usd,
        cost_scope=outcome.cost_scope,
        session_id=outcome.session_id,
        base_sha=outcome.base_sha,
        head_sha=outcome.head_sha,
        exit_code=outcome.exit_code,
        wrapper_class=outcome.wrapper_class,
        result_format=outcome.result_format,
        started_at=outcome.started_at,
        ended_at=outcome.ended_at,
    )

    if task.state is not State.WORKING or task.last_attempt_id != attempt_id:
        # Cancelled (or otherwise moved on) while the worker ran: keep what the attempt
        # cost and the session it ran in, and the record the cancel wrote.
        earlier = store.read_attempt_result(task.name, attempt_id) or {}
        kept = {key: earlier[key] for key in ("class", "row", "next_state") if key in earlier}
        if not outcome.model_wait and task.last_attempt_id == attempt_id:
            # An attempt that did not end in a model wait ends the run of waits, cancelled
            # or not ("A worker wait on an unavailable model").
            task.model_wait_streak = 0
        store.write_attempt_result(task.name, attempt_id, record | kept)
        store.save_task(task)
        text = texts.ended_after_cancel(task.name, attempt_id)
        return [Event("ended_after_cancel", text, task.name, str(task.state), attempt_id)]

    if row.next_step is Next.READY_AGAIN:
        # Interrupted by arc: no attempt of the task's line of work ended, so no run (of model
        # waits, remote waits, conflict reworks) ends or grows, and no retry is used.
        events = _interrupted(store, config, task, clock)
    else:
        task.model_wait_streak = task.model_wait_streak + 1 if outcome.model_wait else 0
        if row.next_step not in (Next.VERIFY, Next.VERIFY_AT_ONCE):
            # GATE: only a gate ends in a conflict; any other end starts the conflict run again.
            task.conflict_rework_run = 0
        events = _decide(store, config, task, row.next_step, row.failure_class or "", outcome,
                         clock)  # fmt: skip
        if row.failure_class == INFRASTRUCTURE and outcome.reason and not outcome.model_wait:
            # The reason under the class: the rejected push, the held lock, the credential.
            # A line of detail, no move of its own (state None: no hook takes it for one).
            text = texts.infrastructure_reason(task.name, attempt_id, outcome.reason)
            events.append(Event("infrastructure_reason", text, task.name))
    record["next_state"] = str(task.state)
    record["retry_at"] = task.retry_at
    record["retry_count"] = task.retry_count
    record["outcome_record"] = asdict(outcome)
    store.write_attempt_result(task.name, attempt_id, record)
    store.save_task(task)
    return [replace(event, attempt_id=attempt_id) if event.task == task.name else event
            for event in events]  # fmt: skip


def _moved(kind: EventKind, task: Task, text: str) -> Event:
    """An event about `task`, in the state it has just moved to."""
    return Event(kind, text, task.name, str(task.state))


def _interrupted(store: Store, config: ArcConfig, task: Task, clock: Clock) -> list[Event]:
    """Our row: arc stopped the attempt itself. The task is claimable again at once, its
    retry_count as it was; what the worker spent so far is counted (settle added it), so a
    budget it used up pauses the task as a retry would."""
    verdict = check_after_cost(store, task, store.load_plan(task.plan), config)
    if verdict.used_up:
        text = texts.interrupted_paused_budget(task.name, str(verdict.scope), verdict.spent,
                                               float(verdict.limit or 0))  # fmt: skip
        plan_events = pause_for_budget(store, task, verdict, clock)
        return [_moved("attempt_interrupted", task, text), *plan_events]
    transition(task, State.READY, clock, retry_at=None)
    log.info("%s interrupted: todo.ready, retry_count %d kept", task.name, task.retry_count)
    return [_moved("attempt_interrupted", task, texts.interrupted_ready(task.name))]


def _decide(
    store: Store,
    config: ArcConfig,
    task: Task,
    next_step: Next,
    failure_class: str,
    outcome: AttemptOutcome,
    clock: Clock,
) -> list[Event]:
    name = task.name
    if outcome.remote_error is not None and next_step in (Next.RETRY, Next.REWORK_PENDING):
        # A remote outage is no failure of the task: wait with backoff, use no retry.
        task.remote_wait_streak += 1
        wait = retry_backoff_secs(task.remote_wait_streak)
        when = format_utc_ceil(due_at(clock.now(), wait))
        transition(task, State.RETRY_WAIT, clock, retry_at=when)
        log.warning(
            "%s remote unreachable: waiting until %s (%s)", name, when, outcome.remote_error
        )
        return [_moved("remote_wait", task, texts.remote_unreachable(name, when))]
    task.remote_wait_streak = 0
    if next_step in (Next.VERIFY, Next.VERIFY_AT_ONCE):
        transition(
            task,
            State.VERIFYING,
            clock,
            base_sha=outcome.base_sha,
            head_sha=outcome.head_sha,
            merge_pending=False,
            rework_reason=None,
            retry_at=None,
        )
        return [_moved("delivered", task, texts.delivered(name, outcome.head_sha))]
    if next_step is Next.REWORK_PENDING:
        reason = outcome.reason or "delivery check failed"
        transition(task, State.REWORK_PENDING, clock, rework_reason=reason, retry_at=None)
        return [_moved("delivery_failed", task, texts.delivery_failed(name, reason))]
    if next_step is Next.IRRECOVERABLE:
        transition(task, State.IRRECOVERABLE, clock, retry_at=None)
        error = outcome.model_error or {}
        if error.get("kind") == "authentication":
            text = texts.poisoned_authentication(name, str(error.get("message") or "-"))
            return [_moved("poisoned", task, text)]
        return [_moved("poisoned", task, texts.poisoned(name))]
    if next_step is Next.CANCELLED:
        transition(task, State.CANCELLED, clock, retry_at=None)
        return [_moved("cancelled", task, texts.cancelled(name, str(State.WORKING)))]

    now = clock.now()
    if outcome.model_wait:
        retry_after = (outcome.model_error or {}).get("retry_after_secs")
        wait = model_wait_secs(task.model_wait_streak, retry_after)
        when = format_utc_ceil(due_at(now, wait))
        transition(task, State.RETRY_WAIT, clock, retry_at=when)
        log.info(
            "%s model wait %d in a row: %.0f s, until %s", name, task.model_wait_streak, wait, when
        )
        return [_moved("model_wait", task, texts.model_unavailable(name, when))]

    limit = task.max_attempts if task.max_attempts is not None else config.limits.max_attempts
    if task.retry_count >= limit:
        transition(task, State.EXHAUSTED, clock, retry_at=None)
        log.warning("%s exhausted: retry_count %d of %d", name, task.retry_count, limit)
        text = texts.exhausted(name, failure_class, task.retry_count, limit)
        return [_moved("exhausted", task, text)]
    plan = store.load_plan(task.plan)
    verdict = check_after_cost(store, task, plan, config)
    if verdict.used_up:
        text = texts.paused_budget(name, failure_class, str(verdict.scope), verdict.spent,
                                   float(verdict.limit or 0))  # fmt: skip
        plan_events = pause_for_budget(store, task, verdict, clock)
        return [_moved("paused_budget", task, text), *plan_events]
    retry_count = task.retry_count + 1
    when = format_utc_ceil(due_at(now, retry_backoff_secs(retry_count)))
    transition(task, State.RETRY_WAIT, clock, retry_at=when, retry_count=retry_count)
    log.info("%s retry %d (%s) at %s", name, retry_count, failure_class, when)
    return [_moved("retry", task, texts.retry_at(name, failure_class, when))]

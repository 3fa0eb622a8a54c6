"""What one attempt's end does to its task: the chapter's table (radian.arc.classify) and its
retry rules, decided without reading or writing anything.

`decide` takes the task as it is, the table's row of the end, what the end carried and the
moment, and gives a `Decision`: the state the task moves to, what else is set on it, and the
line `run` prints. Only a budget needs a look at the records (a plan's running total): the
caller passes how to read it, `budget`, asked only when the rules reach that question (a
retry within its count, or an interrupted attempt). radian.arc.settle applies the decision.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, Protocol

from radian.arc import texts
from radian.arc.attempt_result import ModelErrorRecord
from radian.arc.budget import BudgetVerdict
from radian.arc.classify import Next, Row
from radian.arc.clock import format_utc_ceil
from radian.arc.events import EventKind
from radian.arc.records import Task
from radian.arc.schedule import due_at, model_wait_secs, retry_backoff_secs
from radian.arc.states import State

INFRASTRUCTURE = "infrastructure"  # the class whose reason run and show print


class Ending(Protocol):
    """What `decide` reads of an attempt's end (radian.arc.attempt_result.AttemptOutcome)."""

    @property
    def model_wait(self) -> bool: ...
    @property
    def model_error(self) -> ModelErrorRecord | None: ...
    @property
    def remote_error(self) -> str | None: ...
    @property
    def reason(self) -> str | None: ...
    @property
    def base_sha(self) -> str | None: ...
    @property
    def head_sha(self) -> str | None: ...


@dataclass(frozen=True)
class Case:
    """One end to decide: what `decide` was given, with the counters every move sets."""

    task: Task
    row: Row
    end: Ending
    counters: Mapping[str, Any]  # model_wait_streak, conflict_rework_run, remote_wait_streak
    max_attempts: int
    now: datetime
    budget: Callable[[], BudgetVerdict]


@dataclass(frozen=True)
class Decision:
    state: State  # the state the task moves to
    kind: EventKind  # the printed line's kind
    text: str  # the line `run` prints, exactly
    # Set on the task with the move (radian.arc.records.transition): retry_at, the counters...
    fields: Mapping[str, Any] = field(default_factory=dict)
    # todo.paused_budget: the budget that was used up (a plan's also turns the plan's auto off).
    budget: BudgetVerdict | None = None
    # A line of detail after the move, with no move of its own: an infrastructure reason.
    detail: str | None = None
    note: str | None = None  # logged (a warning when `warn`), not printed
    warn: bool = False


def decide(
    task: Task,
    row: Row,
    end: Ending,
    *,
    attempt_id: str,
    max_attempts: int,
    now: datetime,
    budget: Callable[[], BudgetVerdict],
) -> Decision:
    """The move of `task` (doing.working, this attempt's) for an end on `row`.

    `max_attempts`: the task's own, else [limits]'s. `budget()`: is a budget used up now
    that the task carries this attempt's cost (radian.arc.budget.check_after_cost)."""
    if row.next_step is Next.READY_AGAIN:
        # Interrupted by arc: no attempt of the task's line of work ended, so no run (of model
        # waits, remote waits, conflict reworks) ends or grows, and no retry is used.
        return _interrupted(task, budget())
    counters: dict[str, Any] = {
        "model_wait_streak": task.model_wait_streak + 1 if end.model_wait else 0
    }
    if row.next_step not in (Next.VERIFY, Next.VERIFY_AT_ONCE):
        # GATE: only a gate ends in a conflict; any other end starts the conflict run again.
        counters["conflict_rework_run"] = 0
    found = _decided(Case(task, row, end, counters, max_attempts, now, budget))
    if row.failure_class == INFRASTRUCTURE and end.reason and not end.model_wait:
        # The reason under the class: the rejected push, the held lock, the credential.
        detail = texts.infrastructure_reason(task.name, attempt_id, end.reason)
        return Decision(found.state, found.kind, found.text, found.fields, found.budget,
                        detail, found.note, found.warn)  # fmt: skip
    return found


def _interrupted(task: Task, verdict: BudgetVerdict) -> Decision:
    """Our row: the task is claimable again at once, its retry_count as it was; what the
    worker spent so far is counted, so a budget it used up pauses the task as a retry would."""
    name = task.name
    if verdict.used_up:
        text = texts.interrupted_paused_budget(name, str(verdict.scope), verdict.spent,
                                               float(verdict.limit or 0))  # fmt: skip
        return Decision(State.PAUSED_BUDGET, "attempt_interrupted", text, budget=verdict)
    note = f"{name} interrupted: todo.ready, retry_count {task.retry_count} kept"
    return Decision(State.READY, "attempt_interrupted", texts.interrupted_ready(name),
                    {"retry_at": None}, note=note)  # fmt: skip


def _decided(case: Case) -> Decision:
    task, end, counters, now = case.task, case.end, case.counters, case.now
    name, step = task.name, case.row.next_step
    if end.remote_error is not None and step in (Next.RETRY, Next.REWORK_PENDING):
        # A remote outage is no failure of the task: wait with backoff, use no retry.
        streak = task.remote_wait_streak + 1
        when = format_utc_ceil(due_at(now, retry_backoff_secs(streak)))
        note = f"{name} remote unreachable: waiting until {when} ({end.remote_error})"
        return Decision(State.RETRY_WAIT, "remote_wait", texts.remote_unreachable(name, when),
                        {**counters, "remote_wait_streak": streak, "retry_at": when},
                        note=note, warn=True)  # fmt: skip
    counters = {**counters, "remote_wait_streak": 0}
    if step in (Next.VERIFY, Next.VERIFY_AT_ONCE):
        fields = {**counters, "base_sha": end.base_sha, "head_sha": end.head_sha,
                  "merge_pending": False, "rework_reason": None, "retry_at": None}  # fmt: skip
        return Decision(State.VERIFYING, "delivered", texts.delivered(name, end.head_sha), fields)
    if step is Next.REWORK_PENDING:
        reason = end.reason or "delivery check failed"
        return Decision(State.REWORK_PENDING, "delivery_failed",
                        texts.delivery_failed(name, reason),
                        {**counters, "rework_reason": reason, "retry_at": None})  # fmt: skip
    ended = {**counters, "retry_at": None}
    if step is Next.IRRECOVERABLE:
        error = end.model_error
        if error is not None and error.kind == "authentication":
            text = texts.poisoned_authentication(name, str(error.message or "-"))
        else:
            text = texts.poisoned(name)
        return Decision(State.IRRECOVERABLE, "poisoned", text, ended)
    if step is Next.CANCELLED:
        text = texts.cancelled(name, str(State.WORKING))
        return Decision(State.CANCELLED, "cancelled", text, ended)
    return _retry(replace(case, counters=counters))


def _retry(case: Case) -> Decision:
    """A retry: a model wait, failed.exhausted, todo.paused_budget or todo.retry_wait."""
    task, end, counters, max_attempts = case.task, case.end, case.counters, case.max_attempts
    name, failure_class = task.name, case.row.failure_class or ""
    if end.model_wait:
        streak = counters["model_wait_streak"]
        retry_after = end.model_error.retry_after_secs if end.model_error else None
        wait = model_wait_secs(streak, retry_after)
        when = format_utc_ceil(due_at(case.now, wait))
        note = f"{name} model wait {streak} in a row: {wait:.0f} s, until {when}"
        return Decision(State.RETRY_WAIT, "model_wait", texts.model_unavailable(name, when),
                        {**counters, "retry_at": when}, note=note)  # fmt: skip
    if task.retry_count >= max_attempts:
        text = texts.exhausted(name, failure_class, task.retry_count, max_attempts)
        note = f"{name} exhausted: retry_count {task.retry_count} of {max_attempts}"
        return Decision(State.EXHAUSTED, "exhausted", text, {**counters, "retry_at": None},
                        note=note, warn=True)  # fmt: skip
    verdict = case.budget()
    if verdict.used_up:
        text = texts.paused_budget(name, failure_class, str(verdict.scope), verdict.spent,
                                   float(verdict.limit or 0))  # fmt: skip
        return Decision(State.PAUSED_BUDGET, "paused_budget", text, counters, budget=verdict)
    retry_count = task.retry_count + 1
    when = format_utc_ceil(due_at(case.now, retry_backoff_secs(retry_count)))
    note = f"{name} retry {retry_count} ({failure_class}) at {when}"
    return Decision(State.RETRY_WAIT, "retry", texts.retry_at(name, failure_class, when),
                    {**counters, "retry_at": when, "retry_count": retry_count},
                    note=note)  # fmt: skip

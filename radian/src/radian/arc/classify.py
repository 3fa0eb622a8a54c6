"""The chapter's table: one attempt's result maps to one class and one next state.

Read `TABLE` beside "Failures, retries and the budget": one row per line of the chapter, in
the same order, then the rows that are ours (`Row.ours`: not in the chapter, documented in
radian/README.md as arc's own). `next_step` RETRY means "a retry": retry_wait, or
failed.exhausted / todo.paused_budget when the limit or the budget says so (decided in
settle). A Result whose model_error.kind is unavailable or usage_limit turns a retry into a
model wait ("A worker wait on an unavailable model").

Our row: `interrupted`, an attempt arc stopped itself (Ctrl-C or SIGTERM of `run` or
`start`, which is what a service restart sends). A stop is not a failure: no retry is used,
no counter moves, the cost the worker reported so far counts, and the task is claimable at
once (todo.ready; todo.paused_budget when that cost used a budget up) with its session kept
for the next attempt to resume.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

from radian.arc.states import State

if TYPE_CHECKING:  # the attempt module is loaded when an attempt runs, not by every command
    from radian.arc.worker.attempt import AttemptEnd


class Next(StrEnum):
    VERIFY = "review.verifying"
    REWORK_PENDING = "review.rework_pending"
    IRRECOVERABLE = "failed.irrecoverable"
    RETRY = "retry"
    CANCELLED = "failed.cancelled"
    VERIFY_AT_ONCE = "review.verifying, verified at once"
    # ours: claimable again at once, no retry used (todo.paused_budget when a budget is used up)
    READY_AGAIN = "todo.ready, no retry used"


@dataclass(frozen=True)
class Row:
    key: str
    result: str  # the chapter's words
    failure_class: str | None  # None: the chapter's "—"
    next_step: Next
    ours: bool = False  # not a row of the chapter: arc's own (radian/README.md)


TABLE: tuple[Row, ...] = (
    Row("completed_pushed", "completed and pushed", None, Next.VERIFY),
    Row("completed_undelivered", "completed, but the delivery check failed", "verification",
        Next.REWORK_PENDING),
    Row("poisoned", "poisoned", "model", Next.IRRECOVERABLE),
    Row("refused", "refused", "model", Next.RETRY),
    Row("failed", "failed", "model", Next.RETRY),
    Row("incomplete", "incomplete", "model", Next.RETRY),
    Row("budget_exceeded", "budget_exceeded", "model", Next.RETRY),
    Row("cancelled", "cancelled from inside the worker", "model", Next.RETRY),
    Row("terminated", "terminated (no Result, a crash or a kill)", "infrastructure", Next.RETRY),
    Row("unknown_outcome", "an outcome this build does not know", "infrastructure", Next.RETRY),
    Row("lock_held", "a wrapper exit 4 (the worktree lock is held)", "infrastructure",
        Next.RETRY),
    Row("stall", "stall (the wrapper sent SIGTERM)", "stall", Next.RETRY),
    Row("wall_time", "wall_time (the wrapper sent SIGTERM)", "wall_time", Next.RETRY),
    Row("cancel", "cancelled by radian arc cancel", "cancel", Next.CANCELLED),
    Row("reverify", "reverify (no worker: radian arc reverify)", "reverify",
        Next.VERIFY_AT_ONCE),
    # ours, after the chapter's fifteen
    Row("interrupted", "interrupted (arc stopped the worker: Ctrl-C, SIGTERM, a restart)",
        "interrupted", Next.READY_AGAIN, ours=True),
)  # fmt: skip

# The chapter's own rows, in its order (each keeps the chapter's class and next state).
CHAPTER_TABLE: tuple[Row, ...] = tuple(row for row in TABLE if not row.ours)

ROWS: dict[str, Row] = {row.key: row for row in TABLE}

# The outcomes a worker's Result may carry that this build knows (each its own row).
KNOWN_OUTCOMES = frozenset({"refused", "failed", "incomplete", "budget_exceeded", "cancelled"})
# wrapper_class of an AttemptEnd: the row it selects, before the Result is looked at.
# "interrupted": arc's Ctrl-C or SIGTERM stopped the worker (our row). "stopped_by_arc": arc
# stopped it for another reason (an earlier build's recovery): a kill, so terminated.
WRAPPER_ROWS = {"cancelled": "cancel", "stall": "stall", "wall_time": "wall_time",
                "lock_held": "lock_held", "interrupted": "interrupted",
                "stopped_by_arc": "terminated"}  # fmt: skip
MODEL_WAIT_KINDS = frozenset({"unavailable", "usage_limit"})


@dataclass(frozen=True)
class Classification:
    row: Row
    outcome: str | None  # the Result's outcome as printed; None without a Result
    model_wait: bool
    reason: str | None  # a failed delivery check's reason

    @property
    def failure_class(self) -> str | None:
        return self.row.failure_class

    @property
    def next_state(self) -> State | None:
        """The state the row names; None for a retry (the loop decides which)."""
        return {
            Next.VERIFY: State.VERIFYING,
            Next.VERIFY_AT_ONCE: State.VERIFYING,
            Next.REWORK_PENDING: State.REWORK_PENDING,
            Next.IRRECOVERABLE: State.IRRECOVERABLE,
            Next.CANCELLED: State.CANCELLED,
            Next.RETRY: None,
            Next.READY_AGAIN: None,
        }[self.row.next_step]


def classify(end: AttemptEnd) -> Classification:
    """The row of the table for one worker attempt's end.

    Who stopped the worker is in its wrapper_class: the lead's cancel, a stall, the wall
    time, or arc's own Ctrl-C or SIGTERM (interrupted). A worker that ended by itself is
    read by its Result, even when arc was being stopped at that moment.
    """
    result = end.result
    outcome = result.outcome if result is not None else None
    if end.wrapper_class is not None:
        key = WRAPPER_ROWS.get(end.wrapper_class, "terminated")
        return Classification(ROWS[key], outcome, False, None)
    if result is None:
        return Classification(ROWS["terminated"], None, False, None)
    if outcome == "completed":
        delivery = end.delivery
        if delivery is not None and delivery.ok:
            return Classification(ROWS["completed_pushed"], outcome, False, None)
        reason = (delivery.reason if delivery is not None else None) or "no delivery check"
        return Classification(ROWS["completed_undelivered"], outcome, False, reason)
    if outcome == "poisoned":
        return Classification(ROWS["poisoned"], outcome, False, None)
    key = outcome if outcome in KNOWN_OUTCOMES else "unknown_outcome"
    model_error = result.model_error
    model_wait = model_error is not None and model_error.kind in MODEL_WAIT_KINDS
    return Classification(ROWS[key], outcome, model_wait, None)


def reverify() -> Classification:
    """The row GATE uses for an attempt without a worker."""
    return Classification(ROWS["reverify"], None, False, None)

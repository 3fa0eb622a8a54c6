"""The ten task states and the one table of allowed transitions.

Every state change in arc goes through `radian.arc.records.transition`, which checks this
table; nothing else assigns a task's state.
"""

from __future__ import annotations

from enum import StrEnum


class State(StrEnum):
    READY = "todo.ready"
    RETRY_WAIT = "todo.retry_wait"
    PAUSED_BUDGET = "todo.paused_budget"
    WORKING = "doing.working"
    VERIFYING = "review.verifying"
    REWORK_PENDING = "review.rework_pending"
    INTEGRATED = "done.integrated"
    IRRECOVERABLE = "failed.irrecoverable"
    CANCELLED = "failed.cancelled"
    EXHAUSTED = "failed.exhausted"


S = State

# from-state: the states it may move to (and why, for the reader).
ALLOWED: dict[State, frozenset[State]] = {
    S.READY: frozenset(
        {
            S.WORKING,  # claimed by run or start
            S.VERIFYING,  # radian arc reverify: an attempt without a worker
            S.CANCELLED,  # radian arc cancel
        }
    ),
    S.RETRY_WAIT: frozenset(
        {
            S.READY,  # retry_at has passed
            S.WORKING,  # start claims it without waiting
            S.CANCELLED,
        }
    ),
    S.PAUSED_BUDGET: frozenset(
        {
            S.READY,  # reset-budget, the only way back
            S.CANCELLED,
        }
    ),
    S.WORKING: frozenset(
        {
            S.VERIFYING,  # completed and pushed
            S.REWORK_PENDING,  # completed, the delivery check failed
            S.RETRY_WAIT,  # a retry or a model wait
            S.PAUSED_BUDGET,  # a retry was due with the budget used up
            S.IRRECOVERABLE,  # poisoned
            S.CANCELLED,  # radian arc cancel
            S.EXHAUSTED,  # a retry was due with retry_count at max_attempts
            S.READY,  # arc stopped the attempt itself (interrupted): no retry used
        }
    ),
    S.VERIFYING: frozenset(
        {
            S.INTEGRATED,  # the gate passed and the task was integrated
            S.REWORK_PENDING,  # a stage failed
            S.READY,  # arc wrote a review or conflict rework
            S.PAUSED_BUDGET,  # a review cost reached the budget
            S.CANCELLED,
        }
    ),
    S.REWORK_PENDING: frozenset(
        {
            S.READY,  # the lead's rework
            S.VERIFYING,  # reverify, by hand or automatic
            S.CANCELLED,
        }
    ),
    S.INTEGRATED: frozenset(),
    S.IRRECOVERABLE: frozenset({S.READY}),  # only through the lead's rework
    S.CANCELLED: frozenset({S.READY}),
    S.EXHAUSTED: frozenset({S.READY}),
}

FAILED_STATES = frozenset({S.IRRECOVERABLE, S.CANCELLED, S.EXHAUSTED})
# States a lead's rework may start from: the task is not running and not done.
REWORKABLE_STATES = frozenset({S.READY, S.RETRY_WAIT, S.REWORK_PENDING}) | FAILED_STATES


def is_allowed(from_state: State | str, to_state: State | str) -> bool:
    return State(to_state) in ALLOWED[State(from_state)]

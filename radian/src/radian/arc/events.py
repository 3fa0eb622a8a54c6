"""What `radian arc run` and `start` report as they go: typed events, one per printed line.

Each event carries the line a person reads (`text`, from radian.arc.texts, exact) and what a
program reads instead: its `kind`, the task, the state the task is in after it, the attempt.
The CLI prints `text`, or with --json the event's document as one JSON line.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

EventKind = Literal[
    # a claim and the states a pass moves tasks through
    "claimed",
    "retry_due",
    # another host on the same remote has the task, or the remote refused the claim
    "claimed_elsewhere",
    "claim_refused",
    # an attempt's end (radian.arc.settle)
    "delivered",
    "delivery_failed",
    "retry",
    "remote_wait",
    "model_wait",
    "exhausted",
    "paused_budget",
    "poisoned",
    "cancelled",
    "ended_after_cancel",
    "attempt_interrupted",
    "infrastructure_reason",
    # recovery of an attempt whose run died (radian.arc.claims)
    "ended_unwatched",
    "left_no_result",
    "adopted",
    # a shared store's leases (radian.arc.store_postgres): another host's attempt taken over,
    # or this host's end of an attempt another host took over, not written
    "lease_taken_over",
    "lease_lost",
    # a gate's verdicts applied (radian.arc.gate)
    "integrated",
    "stage_failed",
    "review_rework",
    "review_paused_budget",
    "conflict_rework",
    "conflict_pending",
    "gate_remote_wait",
    "reverify_started",
    "auto_reverify",
    "auto_reverify_limit",
    # plans
    "plan_auto_off",
    # the loop itself
    "quarantined",
    "waiting",
    "stopping",
    "interrupted",
]


@dataclass(frozen=True)
class Event:
    kind: EventKind
    text: str  # the line `run` prints, exactly
    task: str | None = None
    state: str | None = None  # the task's state after the event, when it moved
    attempt_id: str | None = None
    plan: str | None = None

    def document(self) -> dict[str, Any]:
        """The event as `run --json` prints it (one JSON line, keys stable)."""
        return {
            "event": self.kind,
            "task": self.task,
            "state": self.state,
            "attempt_id": self.attempt_id,
            "plan": self.plan,
            "text": self.text,
        }


def texts_of(events: Iterable[Event]) -> list[str]:
    """The printed lines of `events`, in order."""
    return [event.text for event in events]

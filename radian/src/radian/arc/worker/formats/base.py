"""What every worker format turns its output into."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from datetime import datetime
from enum import StrEnum
from typing import Any


class CostScope(StrEnum):
    """What the cost a Result carries covers; arc's per-attempt cost follows it."""

    SESSION_TOTAL = "session_total"  # the session's running total: differenced on resume
    PROCESS = "process"  # what this worker process spent: taken as it stands


@dataclass(frozen=True)
class ModelError:
    kind: str | None  # None: an error told as text only (the radian worker's _meta.radian.error)
    retry_after_secs: float | None = None
    message: str | None = None


@dataclass(frozen=True)
class WorkerResult:
    """The normalized Result of one attempt."""

    outcome: str
    session_id: str | None
    session_cost_usd: float | None  # the cost the Result carried, in `cost_scope`
    model_error: ModelError | None
    format: str  # "radian" | "claude" | "codex"
    raw: dict[str, Any]
    cost_scope: CostScope = CostScope.SESSION_TOTAL
    # The session must not be resumed: it refused (Claude Code says a refused session is not
    # to be continued) or the worker no longer has it. The next attempt starts fresh.
    fresh_session_next: bool = False
    # Set when the Result carried a cost that is no amount (NaN, infinite, negative): the
    # cost is then unknown (session_cost_usd None), never trusted. See checked_costs.
    cost_problem: str | None = None


def checked_costs(result: WorkerResult) -> WorkerResult:
    """`result` with a cost that is no amount in USD refused (NaN would disable every budget
    and make show --json non-standard JSON), and a retry_after_secs that is no number
    dropped. Applied to every format's Result in one place."""
    changes: dict[str, Any] = {}
    cost = result.session_cost_usd
    if cost is not None and not (math.isfinite(cost) and cost >= 0):
        changes["session_cost_usd"] = None
        changes["cost_problem"] = f"the worker reported cost {cost!r}, which is no amount in USD"
    error = result.model_error
    after = error.retry_after_secs if error is not None else None
    if error is not None and after is not None and not math.isfinite(after):
        changes["model_error"] = replace(error, retry_after_secs=None)
    return replace(result, **changes) if changes else result


@dataclass(frozen=True)
class CostSeen:
    """The cost a worker reported before it ended without a Result (radian's format's
    progress line): what it had spent so far, in its cost scope. An attempt arc stopped
    (Ctrl-C, SIGTERM), or that crashed, counts it as the Result's cost would count."""

    cost_usd: float
    cost_scope: CostScope = CostScope.SESSION_TOTAL


def checked_cost(value: Any) -> float | None:
    """`value` as an amount in USD, or None when it is no amount (NaN, infinite, negative)."""
    number = number_or_none(value)
    return number if number is not None and math.isfinite(number) and number >= 0 else None


@dataclass(frozen=True)
class Output:
    """What one attempt's worker printed."""

    stdout: str
    stderr: str
    objects: tuple[dict[str, Any], ...]  # every JSON object on stdout, in order
    now: datetime  # aware: anchors a reset time given as a clock time
    model: str | None = None  # [worker] model: prices a worker that reports tokens (Codex)
    prices: dict[str, Any] = field(default_factory=dict)  # model -> prices.Price


def text_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def number_or_none(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)

"""radian's own Result: `{"type": "result", "outcome": ..., "cost_usd": ...}`.

Cost scope: the session's total (`cost_usd` is the session's running total), so arc
differences it on a resumed attempt.

Before its Result a worker may print progress lines, `{"type": "progress", "session_id": ...,
"cost_usd": ...}` (each key optional): the session it runs in and what it has spent so far,
in the Result's scope. An attempt that ends without a Result (arc stopped it, it crashed)
resumes that session next and counts that cost.
"""

from __future__ import annotations

from typing import Any

from radian.arc.worker.formats.base import (
    CostScope,
    CostSeen,
    ModelError,
    Output,
    WorkerResult,
    checked_cost,
    number_or_none,
    text_or_none,
)

COST_SCOPE = CostScope.SESSION_TOTAL


def is_result(obj: dict[str, Any]) -> bool:
    return obj.get("type") in ("result", None) and isinstance(obj.get("outcome"), str)


def parse(output: Output) -> WorkerResult | None:
    raw = next((o for o in reversed(output.objects) if is_result(o)), None)
    if raw is None:
        return None
    return WorkerResult(
        outcome=raw["outcome"],
        session_id=text_or_none(raw.get("session_id")),
        session_cost_usd=number_or_none(raw.get("cost_usd")),
        model_error=_model_error(raw.get("model_error")),
        format="radian",
        raw=raw,
        cost_scope=CostScope.PROCESS if raw.get("cost_scope") == "process" else COST_SCOPE,
        # arc's ACP client names why an agent's cost is not known (it reported none)
        cost_problem=text_or_none(raw.get("cost_unknown")) if raw.get("cost_usd") is None else None,
    )


def is_progress(obj: dict[str, Any]) -> bool:
    return obj.get("type") == "progress"


def session_seen(objects: tuple[dict[str, Any], ...]) -> str | None:
    """The session the last progress line named (the Result names its own)."""
    for obj in reversed(objects):
        if is_progress(obj) and text_or_none(obj.get("session_id")):
            return str(obj["session_id"])
    return None


def cost_seen(objects: tuple[dict[str, Any], ...]) -> CostSeen | None:
    """What the last progress line with a cost said was spent so far (an amount that is no
    amount is passed over: the cost stays unknown rather than wrong)."""
    for obj in reversed(objects):
        if not is_progress(obj):
            continue
        cost = checked_cost(obj.get("cost_usd"))
        if cost is not None:
            scope = CostScope.PROCESS if obj.get("cost_scope") == "process" else COST_SCOPE
            return CostSeen(cost, scope)
    return None


def _model_error(value: Any) -> ModelError | None:
    if not isinstance(value, dict):
        return None
    if not isinstance(value.get("kind"), str):
        # an error told as text with no kind: kept, and it takes the ordinary retry rules
        message = text_or_none(value.get("message"))
        return ModelError(kind=None, message=message) if message else None
    return ModelError(
        kind=value["kind"],
        retry_after_secs=number_or_none(value.get("retry_after_secs")),
        message=text_or_none(value.get("message")),
    )

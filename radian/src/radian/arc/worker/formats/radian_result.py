"""radian's own Result: `{"type": "result", "outcome": ..., "cost_usd": ...}`.

Cost scope: the session's total (`cost_usd` is the session's running total), so arc
differences it on a resumed attempt.
"""

from __future__ import annotations

from typing import Any

from radian.arc.worker.formats.base import (
    CostScope,
    ModelError,
    Output,
    WorkerResult,
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


def session_seen(objects: tuple[dict[str, Any], ...]) -> str | None:
    return None  # radian's format names its session in the Result only


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

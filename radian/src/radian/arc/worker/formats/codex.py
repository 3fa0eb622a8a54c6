"""The Codex CLI's `codex exec --json`: JSON Lines events (thread.started, turn.started,
item.*, error, turn.completed with the token usage, turn.failed with the error).

Checked against @openai/codex 0.171.0 (fixtures: radian/tests/cli_fixtures/).

Cost: Codex prints tokens, not money; the cost is the usage times the model's price
(prices.py, extendable in .radian/arc.toml), None when the model has no price. Cost scope:
the session's total, because a `codex exec resume <thread>` process reports the thread's
usage so far (checked on 0.171.0: 1000 tokens, then 1000 + 3000 on resume).
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import Any

from radian.arc.worker.formats.base import (
    CostScope,
    CostSeen,
    ModelError,
    Output,
    WorkerResult,
    text_or_none,
)
from radian.arc.worker.formats.prices import cost_usd

FORMAT = "codex"
COST_SCOPE = CostScope.SESSION_TOTAL
EVENT_TYPES = frozenset({"thread.started", "turn.started", "turn.completed", "turn.failed",
                         "item.started", "item.updated", "item.completed", "error"})  # fmt: skip

# The error message's kind, first match wins ("You've hit your usage limit. ... try again at
# 9:08 AM.", "exceeded retry limit, last status: 429 Too Many Requests", "unexpected status
# 503 Service Unavailable: ...", "unexpected status 401 Unauthorized: ...").
ERROR_KINDS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"hit your usage limit|usage_limit_reached|out of credits|usage limit", re.I),
     "usage_limit"),
    (re.compile(r"\b(401|403)\b|unauthorized|api key|not logged in|login|forbidden", re.I),
     "authentication"),
    (re.compile(r"\b(500|502|503|504|529)\b|overloaded|service unavailable|server_error", re.I),
     "unavailable"),
    (re.compile(r"\b429\b|rate limit|too many requests", re.I), "rate_limit"),
    (re.compile(r"context window|context_length|too long|maximum context", re.I),
     "context_overflow"),
)  # fmt: skip
LOST_THREAD_TEXT = re.compile(r"no rollout found for thread id|thread/resume failed", re.I)
# "try again at 9:08 AM" (the worker's local time, today), "try again at Dec 2nd, 2026
# 12:16 AM" (another day: a reset past midnight, a weekly limit), "try again in 2 hours 5
# minutes".
TRY_AT_TEXT = re.compile(
    r"try again at "
    r"(?:(?P<month>[A-Z][a-z]{2}) (?P<day>\d{1,2})(?:st|nd|rd|th)?,? (?P<year>\d{4}) )?"
    r"(?P<hour>\d{1,2}):(?P<minute>\d{2})\s*(?P<ampm>AM|PM)?",
    re.I,
)
MONTH_NAMES = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
MONTHS = {name: number for number, name in enumerate(MONTH_NAMES, 1)}
TRY_IN_TEXT = re.compile(
    r"try again in ((?:\d+\s*(?:days?|hours?|minutes?|seconds?)[,\s]*(?:and\s*)?)+)", re.I
)
UNIT_SECS = {"day": 86400, "hour": 3600, "minute": 60, "second": 1}
MESSAGE_LIMIT = 500


def parse(output: Output) -> WorkerResult | None:
    events = [o for o in output.objects if o.get("type") in EVENT_TYPES]
    thread = session_seen(tuple(events))
    ends = [e for e in events if e.get("type") in ("turn.completed", "turn.failed")]
    end = ends[-1] if ends else None
    if end is None:
        if LOST_THREAD_TEXT.search(output.stderr):
            return WorkerResult("failed", None, None, None, FORMAT,
                                {"stderr": _line(output.stderr, LOST_THREAD_TEXT)},
                                COST_SCOPE, fresh_session_next=True)  # fmt: skip
        return None
    cost = _cost(events, output)
    if end["type"] == "turn.completed":
        return WorkerResult("completed", thread, cost, None, FORMAT, end, COST_SCOPE)
    message = _error_message(end)
    model_error = _model_error(message, output.now)
    outcome = "poisoned" if model_error and model_error.kind == "authentication" else "failed"
    return WorkerResult(outcome, thread, cost, model_error, FORMAT, end, COST_SCOPE)


def cost_seen(objects: tuple[dict[str, Any], ...]) -> CostSeen | None:
    return None  # Codex's cost is a turn's usage, read with its Result


def session_seen(objects: tuple[dict[str, Any], ...]) -> str | None:
    for obj in objects:
        if obj.get("type") == "thread.started":
            return text_or_none(obj.get("thread_id"))
    return None


def _cost(events: list[dict[str, Any]], output: Output) -> float | None:
    usage = next((e["usage"] for e in reversed(events)
                  if e.get("type") == "turn.completed" and isinstance(e.get("usage"), dict)),
                 None)  # fmt: skip
    price = output.prices.get(output.model or "")
    if usage is None or price is None:
        return None
    return cost_usd(
        price,
        input_tokens=int(usage.get("input_tokens") or 0),
        cached_input_tokens=int(usage.get("cached_input_tokens") or 0),
        output_tokens=int(usage.get("output_tokens") or 0),
    )


def _error_message(end: dict[str, Any]) -> str:
    error = end.get("error")
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return str(error["message"])
    return ""


def _model_error(message: str, now: datetime) -> ModelError | None:
    for pattern, kind in ERROR_KINDS:
        if pattern.search(message):
            retry = _retry_after(message, now) if kind == "usage_limit" else None
            return ModelError(kind, retry, message[:MESSAGE_LIMIT])
    return ModelError("api_error", None, message[:MESSAGE_LIMIT]) if message else None


def _retry_after(message: str, now: datetime) -> float | None:
    found_in = TRY_IN_TEXT.search(message)
    if found_in:
        total = 0
        for amount, unit in re.findall(r"(\d+)\s*(day|hour|minute|second)", found_in.group(1)):
            total += int(amount) * UNIT_SECS[unit]
        return float(total)
    found = TRY_AT_TEXT.search(message)
    if found is None:
        return None
    hour, minute = int(found["hour"]), int(found["minute"])
    ampm = (found["ampm"] or "").upper()
    if ampm:
        hour = hour % 12 + (12 if ampm == "PM" else 0)
    if hour > 23 or minute > 59:
        return None
    # Codex prints the reset in its own local time, which is arc's: the worker inherits it.
    local_now = now.astimezone()
    if found["month"] is None:  # today's clock time, or tomorrow's once it has passed
        reset = local_now.replace(hour=hour, minute=minute, second=0, microsecond=0)
        if reset < local_now:
            reset += timedelta(days=1)
        return (reset - local_now).total_seconds()
    month = MONTHS.get(found["month"].lower())
    if month is None:
        return None
    try:
        reset = local_now.replace(year=int(found["year"]), month=month, day=int(found["day"]),
                                  hour=hour, minute=minute, second=0, microsecond=0)  # fmt: skip
    except ValueError:  # no such day
        return None
    return max(0.0, (reset - local_now).total_seconds())


def _line(text: str, pattern: re.Pattern[str]) -> str:
    return next((ln.strip() for ln in text.splitlines() if pattern.search(ln)), "")

"""The worker's Result: the last JSON object it prints, in radian's format or Claude Code's.

Both formats normalize to one `WorkerResult`; the mapping tables below are the ones
radian/docs/worker.md shows, so read them side by side.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

KNOWN_OUTCOMES: tuple[str, ...] = (
    "completed",
    "refused",
    "failed",
    "incomplete",
    "budget_exceeded",
    "cancelled",
    "poisoned",
)

# Claude Code's `subtype` to our outcome. "success" with is_error true is an API failure that
# Claude Code still reports as success, so it becomes "failed" (see _claude_outcome).
CLAUDE_SUBTYPE_OUTCOMES: dict[str, str] = {
    "success": "completed",
    "error_max_turns": "incomplete",
    "error_max_budget_usd": "budget_exceeded",
    "error_during_execution": "failed",
}

# API status to model_error kind, used when the Result's text says nothing more specific.
STATUS_KINDS: dict[int, str] = {
    429: "rate_limit",
    529: "unavailable",
    503: "unavailable",
    413: "context_overflow",
    401: "authentication",
    403: "authentication",
}

USAGE_LIMIT_TEXTS = re.compile(r"usage limit reached|hit your limit|limit will reset", re.I)
OVERLOADED_TEXT = re.compile(r"overloaded", re.I)
RATE_LIMIT_TEXT = re.compile(r"rate limit", re.I)
CONTEXT_OVERFLOW_TEXT = re.compile(r"prompt is too long|context (window|length) exceeded", re.I)
API_ERROR_STATUS_TEXT = re.compile(r"API Error:?\s*\(?(\d{3})\b")
# "Claude AI usage limit reached|1755615600": the reset as unix seconds.
RESET_UNIX_TEXT = re.compile(r"limit reached\|(\d{9,})")
# "You've hit your limit · resets 4pm (Asia/Kuala_Lumpur)", "resets Nov 3, 7:40pm (UTC)",
# "Your limit will reset at 5pm (Europe/Warsaw)".
RESET_WALL_TEXT = re.compile(
    r"resets?\s+(?:at\s+)?"
    r"(?:(?P<month>[A-Z][a-z]{2})\s+(?P<day>\d{1,2}),?\s+(?:at\s+)?)?"
    r"(?P<hour>\d{1,2})(?::(?P<minute>\d{2}))?\s*(?P<ampm>am|pm)?\s*"
    r"\((?P<zone>[^)]+)\)",
    re.I,
)
MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
MESSAGE_LIMIT = 500


@dataclass(frozen=True)
class ModelError:
    kind: str
    retry_after_secs: float | None = None
    message: str | None = None


@dataclass(frozen=True)
class WorkerResult:
    """The normalized Result: the last JSON object the worker printed."""

    outcome: str
    session_id: str | None
    session_cost_usd: float | None
    model_error: ModelError | None
    format: str  # "radian" | "claude"
    raw: dict[str, Any]


def parse_result(output: str, *, now: datetime | None = None) -> WorkerResult | None:
    """The worker's Result from everything it printed on stdout; None when it printed none.

    `now` (aware) anchors retry_after_secs computed from a usage limit's reset time; the
    system time when omitted.
    """
    objects = list(_json_objects(output))
    result_index = next(
        (i for i in range(len(objects) - 1, -1, -1) if _is_result(objects[i])), None
    )
    if result_index is None:
        return None
    raw = objects[result_index]
    rate_limit_events = [o for o in objects[:result_index] if o.get("type") == "rate_limit_event"]
    moment = now if now is not None else datetime.now(UTC)
    if _is_claude(raw):
        return _from_claude(raw, rate_limit_events, moment)
    return _from_radian(raw)


def _is_result(obj: dict[str, Any]) -> bool:
    kind = obj.get("type")
    if kind == "result":
        return isinstance(obj.get("outcome"), str) or isinstance(obj.get("subtype"), str)
    return kind is None and isinstance(obj.get("outcome"), str)


def _is_claude(raw: dict[str, Any]) -> bool:
    return not isinstance(raw.get("outcome"), str)


def _from_radian(raw: dict[str, Any]) -> WorkerResult:
    return WorkerResult(
        outcome=raw["outcome"],
        session_id=_text(raw.get("session_id")),
        session_cost_usd=_number(raw.get("cost_usd")),
        model_error=_radian_model_error(raw.get("model_error")),
        format="radian",
        raw=raw,
    )


def _radian_model_error(value: Any) -> ModelError | None:
    if not isinstance(value, dict) or not isinstance(value.get("kind"), str):
        return None
    return ModelError(
        kind=value["kind"],
        retry_after_secs=_number(value.get("retry_after_secs")),
        message=_text(value.get("message")),
    )


def _from_claude(
    raw: dict[str, Any], rate_limit_events: list[dict[str, Any]], now: datetime
) -> WorkerResult:
    is_error = raw.get("is_error") is True
    status = raw.get("api_error_status")
    model_error = None
    if is_error or isinstance(status, int):
        model_error = _claude_model_error(raw, rate_limit_events, now)
    return WorkerResult(
        outcome=_claude_outcome(raw["subtype"], is_error),
        session_id=_text(raw.get("session_id")),
        session_cost_usd=_number(raw.get("total_cost_usd")),
        model_error=model_error,
        format="claude",
        raw=raw,
    )


def _claude_outcome(subtype: str, is_error: bool) -> str:
    if subtype == "success" and is_error:
        return "failed"
    return CLAUDE_SUBTYPE_OUTCOMES.get(subtype, subtype)


def _claude_model_error(
    raw: dict[str, Any], rate_limit_events: list[dict[str, Any]], now: datetime
) -> ModelError | None:
    text = _claude_error_text(raw)
    status = raw.get("api_error_status")
    if not isinstance(status, int) or isinstance(status, bool):
        found = API_ERROR_STATUS_TEXT.search(text)
        status = int(found.group(1)) if found else None
    rejected = [e for e in rate_limit_events if _rate_limit_info(e).get("status") == "rejected"]
    message = text[:MESSAGE_LIMIT] or None
    if USAGE_LIMIT_TEXTS.search(text) or (status == 429 and rejected):
        retry_after = _usage_limit_retry_after(text, rejected or rate_limit_events, now)
        return ModelError("usage_limit", retry_after, message)
    if OVERLOADED_TEXT.search(text):
        return ModelError("unavailable", None, message)
    if status in STATUS_KINDS:
        return ModelError(STATUS_KINDS[status], None, message)
    if RATE_LIMIT_TEXT.search(text):
        return ModelError("rate_limit", None, message)
    if CONTEXT_OVERFLOW_TEXT.search(text):
        return ModelError("context_overflow", None, message)
    if status is not None:
        return ModelError("api_error", None, message)
    return None


def _claude_error_text(raw: dict[str, Any]) -> str:
    parts = [raw["result"]] if isinstance(raw.get("result"), str) else []
    errors = raw.get("errors")
    if isinstance(errors, list):
        parts.extend(e for e in errors if isinstance(e, str))
    return "\n".join(parts)


def _usage_limit_retry_after(
    text: str, rate_limit_events: list[dict[str, Any]], now: datetime
) -> float | None:
    """Seconds from now to the limit's reset: the text's unix time, else the stream's
    rate_limit_event resetsAt, else the text's wall-clock reset time."""
    reset = _reset_from_unix_text(text)
    if reset is None:
        reset = _reset_from_events(rate_limit_events)
    if reset is None:
        reset = _reset_from_wall_text(text, now)
    if reset is None:
        return None
    return max(0.0, (reset - now).total_seconds())


def _reset_from_unix_text(text: str) -> datetime | None:
    found = RESET_UNIX_TEXT.search(text)
    return datetime.fromtimestamp(int(found.group(1)), UTC) if found else None


def _reset_from_events(events: list[dict[str, Any]]) -> datetime | None:
    for event in reversed(events):
        resets_at = _number(_rate_limit_info(event).get("resetsAt"))
        if resets_at is not None:
            return datetime.fromtimestamp(resets_at, UTC)
    return None


def _rate_limit_info(event: dict[str, Any]) -> dict[str, Any]:
    info = event.get("rate_limit_info")
    return info if isinstance(info, dict) else event


def _reset_from_wall_text(text: str, now: datetime) -> datetime | None:
    found = RESET_WALL_TEXT.search(text)
    if found is None:
        return None
    try:
        zone = ZoneInfo(found.group("zone").strip())
    except (ZoneInfoNotFoundError, ValueError):
        return None
    hour = int(found.group("hour"))
    minute = int(found.group("minute") or 0)
    ampm = (found.group("ampm") or "").lower()
    if ampm:
        hour = hour % 12 + (12 if ampm == "pm" else 0)
    if hour > 23 or minute > 59:
        return None
    local_now = now.astimezone(zone)
    month_name = found.group("month")
    try:
        if month_name:
            if month_name.lower() not in MONTHS:
                return None
            month = MONTHS.index(month_name.lower()) + 1
            day = int(found.group("day"))
            reset = local_now.replace(
                month=month, day=day, hour=hour, minute=minute, second=0, microsecond=0
            )
            if reset < local_now:
                reset = reset.replace(year=reset.year + 1)
            return reset
        reset = local_now.replace(hour=hour, minute=minute, second=0, microsecond=0)
    except ValueError:
        return None
    if reset < local_now:
        reset += timedelta(days=1)
    return reset


def _json_objects(output: str) -> Iterator[dict[str, Any]]:
    """Every JSON object printed on a line of its own, in order; a JSON array on a line
    (Claude Code's `--output-format json --verbose`) yields its objects. When no line holds
    one, a pretty-printed object that ends the output."""
    found = False
    for line in output.splitlines():
        stripped = line.strip()
        if not stripped or stripped[0] not in "{[" or not _may_matter(stripped):
            continue
        try:
            value = json.loads(stripped)
        except ValueError:
            continue
        for obj in _objects_in(value):
            found = True
            yield obj
    if not found:
        trailing = _trailing_object(output)
        if trailing is not None:
            yield from _objects_in(trailing)


def _may_matter(line: str) -> bool:
    """A cheap test before json.loads: a long stream-json log is mostly other events."""
    return any(token in line for token in ('"result"', '"outcome"', '"rate_limit_event"'))


def _objects_in(value: Any) -> list[dict[str, Any]]:
    if isinstance(value, dict):
        return [value]
    if isinstance(value, list):
        return [item for item in value if isinstance(item, dict)]
    return []


def _trailing_object(output: str) -> Any:
    text = output.rstrip()
    if not text.endswith(("}", "]")):
        return None
    decoder = json.JSONDecoder()
    starts = [m.start() + 1 for m in re.finditer(r"\n[{\[]", text)]
    candidates = ([0] if text[:1] in "{[" else []) + starts
    for start in reversed(candidates[-50:]):
        try:
            value, end = decoder.raw_decode(text, start)
        except ValueError:
            continue
        if end == len(text):
            return value
    return None


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)

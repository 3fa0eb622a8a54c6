"""Claude Code's headless output: `claude -p --output-format json` (one result object) or
`stream-json --verbose` (the session's events, one per line, the result last).

Checked against @anthropic-ai/claude-code 2.1.332 (fixtures: radian/tests/cli_fixtures/).

Cost scope: `total_cost_usd` is the running total of the Claude Code process. Since 2.1.277 a
process started with `--resume` first restores the total the session had saved, so the figure
is the session's total (checked on 2.1.332: a resumed process reported 0.008 + its own 0.024);
before 2.1.277 it restarted at the new process's own spend. The version is read from the
stream's system/init line (`claude_code_version`); plain `json` prints no version, and the
current behaviour is assumed.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from radian.arc.worker.formats.base import (
    CostScope,
    CostSeen,
    ModelError,
    Output,
    WorkerResult,
    number_or_none,
    text_or_none,
)

FORMAT = "claude"
# The first version whose resumed process reports the session's total (see above).
SESSION_TOTAL_SINCE = (2, 1, 277)

# `subtype` to our outcome. "success" with is_error true is an API failure that Claude Code
# still reports as success, so it becomes "failed" (see _outcome).
SUBTYPE_OUTCOMES: dict[str, str] = {
    "success": "completed",
    "error_max_turns": "incomplete",
    "error_max_budget_usd": "budget_exceeded",
    "error_during_execution": "failed",
}

# API status to model_error kind, used when nothing more specific applies.
STATUS_KINDS: dict[int, str] = {
    429: "rate_limit",
    529: "unavailable",
    503: "unavailable",
    413: "context_overflow",
    401: "authentication",
    403: "authentication",
}

# Today's texts ("You've hit your 5-hour limit · resets 10:20am (UTC)", "...weekly limit...",
# "...Opus limit...", "...Sonnet limit...", "You're out of usage credits · resets ...") and
# older ones ("Claude AI usage limit reached|1755615600", "Your limit will reset at 5pm").
USAGE_LIMIT_TEXT = re.compile(
    r"usage limit reached|hit your (?:[\w-]+ )?limit|limit will reset|out of (?:usage |extra )?"
    r"credits|out of extra usage",
    re.I,
)
USAGE_LIMIT_API_ERROR = "usage_limit_reached"  # the result's `api_error` since 2.1.x
OVERLOADED_TEXT = re.compile(r"overloaded", re.I)
RATE_LIMIT_TEXT = re.compile(r"rate limit", re.I)
CONTEXT_OVERFLOW_TEXT = re.compile(r"prompt is too long|context (window|length) exceeded", re.I)
# Claude Code cannot reach the model with the credential it has: no retry can change that.
AUTHENTICATION_TEXT = re.compile(
    r"not logged in|invalid api key|please run /login|oauth token (has )?(expired|revoked)|"
    r"authentication_error|invalid (x-api-key|bearer token)",
    re.I,
)
LOST_SESSION_TEXT = re.compile(r"No conversation found with session ID", re.I)
API_ERROR_STATUS_TEXT = re.compile(r"API Error:?\s*\(?(\d{3})\b|rejected \((\d{3})\)")
RESET_UNIX_TEXT = re.compile(r"limit reached\|(\d{9,})")
RESET_WALL_TEXT = re.compile(
    r"resets?\s+(?:at\s+)?"
    r"(?:(?P<month>[A-Z][a-z]{2})\s+(?P<day>\d{1,2}),?\s+(?:at\s+)?)?"
    r"(?P<hour>\d{1,2})(?::(?P<minute>\d{2}))?\s*(?P<ampm>am|pm)?\s*"
    r"\((?P<zone>[^)]+)\)",
    re.I,
)
MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
MESSAGE_LIMIT = 500
MODEL_WAIT_KINDS = ("usage_limit", "unavailable")


def is_result(obj: dict[str, Any]) -> bool:
    return (
        obj.get("type") == "result"
        and isinstance(obj.get("subtype"), str)
        and not isinstance(obj.get("outcome"), str)
    )


def parse(output: Output) -> WorkerResult | None:
    index = next((i for i in range(len(output.objects) - 1, -1, -1)
                  if is_result(output.objects[i])), None)  # fmt: skip
    if index is None:
        return _lost_session_without_result(output)
    raw = output.objects[index]
    events = output.objects[:index]
    lost = any(LOST_SESSION_TEXT.search(t) for t in _error_texts(raw))
    refused = _refused(raw, events)
    is_error = raw.get("is_error") is True
    model_error = None
    if is_error or isinstance(raw.get("api_error_status"), int):
        model_error = _model_error(raw, events, output.now)
    outcome = _outcome(raw["subtype"], is_error)
    if refused:
        outcome = "refused"
    elif model_error is not None and model_error.kind == "authentication":
        # A worker that cannot log in fails every retry the same way: arc stops (poisoned ->
        # failed.irrecoverable) and the model_error says why; fix the login, then rework.
        outcome = "poisoned"
    return WorkerResult(
        outcome=outcome,
        session_id=None if lost else text_or_none(raw.get("session_id")),
        session_cost_usd=number_or_none(raw.get("total_cost_usd")),
        model_error=model_error,
        format=FORMAT,
        raw=raw,
        cost_scope=cost_scope(events),
        fresh_session_next=lost or refused,
    )


def cost_seen(objects: tuple[dict[str, Any], ...]) -> CostSeen | None:
    return None  # Claude Code prints its cost in the result alone


def session_seen(objects: tuple[dict[str, Any], ...]) -> str | None:
    """The session id of the first system/init line."""
    for obj in objects:
        if obj.get("type") == "system" and obj.get("subtype") == "init":
            return text_or_none(obj.get("session_id"))
    return None


def cost_scope(events: tuple[dict[str, Any], ...]) -> CostScope:
    version = _version(events)
    if version is not None and version < SESSION_TOTAL_SINCE:
        return CostScope.PROCESS
    return CostScope.SESSION_TOTAL


def _version(events: tuple[dict[str, Any], ...]) -> tuple[int, ...] | None:
    for obj in events:
        if obj.get("type") == "system" and obj.get("subtype") == "init":
            found = re.match(r"(\d+)\.(\d+)\.(\d+)", str(obj.get("claude_code_version", "")))
            return tuple(int(part) for part in found.groups()) if found else None
    return None


def _lost_session_without_result(output: Output) -> WorkerResult | None:
    """`--output-format json` prints nothing for a lost session; its stderr says why."""
    found = LOST_SESSION_TEXT.search(output.stderr)
    if found is None:
        return None
    line = next(ln for ln in output.stderr.splitlines() if LOST_SESSION_TEXT.search(ln))
    return WorkerResult(
        outcome="failed",
        session_id=None,
        session_cost_usd=None,
        model_error=None,
        format=FORMAT,
        raw={"stderr": line.strip()},
        cost_scope=CostScope.SESSION_TOTAL,
        fresh_session_next=True,
    )


def _outcome(subtype: str, is_error: bool) -> str:
    if subtype == "success" and is_error:
        return "failed"
    return SUBTYPE_OUTCOMES.get(subtype, subtype)


def _refused(raw: dict[str, Any], events: tuple[dict[str, Any], ...]) -> bool:
    if raw.get("stop_reason") == "refusal":
        return True
    return any(
        e.get("type") == "system" and e.get("subtype") == "model_refusal_no_fallback"
        for e in events
    )


def _model_error(
    raw: dict[str, Any], events: tuple[dict[str, Any], ...], now: datetime
) -> ModelError | None:
    text = "\n".join(_error_texts(raw))
    status = raw.get("api_error_status")
    if not isinstance(status, int) or isinstance(status, bool):
        found = API_ERROR_STATUS_TEXT.search(text)
        status = int(found.group(1) or found.group(2)) if found else None
    message = text[:MESSAGE_LIMIT] or None
    limits = _rate_limit_infos(events)
    rejected = [info for info in limits if info.get("status") == "rejected"]
    if (
        raw.get("api_error") == USAGE_LIMIT_API_ERROR
        or USAGE_LIMIT_TEXT.search(text)
        or (status == 429 and rejected)
    ):
        return ModelError("usage_limit", _retry_after(text, rejected or limits, now), message)
    if AUTHENTICATION_TEXT.search(text) or status in (401, 403):
        return ModelError("authentication", None, message)
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


def _error_texts(raw: dict[str, Any]) -> list[str]:
    parts = [raw["result"]] if isinstance(raw.get("result"), str) else []
    errors = raw.get("errors")
    if isinstance(errors, list):
        parts.extend(e for e in errors if isinstance(e, str))
    return parts


def _rate_limit_infos(events: tuple[dict[str, Any], ...]) -> list[dict[str, Any]]:
    """Each rate_limit_event's info (stream-json), and the rate_limit_info an API error
    message carries in its api_error_params (stream-json too), in order."""
    infos: list[dict[str, Any]] = []
    for event in events:
        if event.get("type") == "rate_limit_event":
            info = event.get("rate_limit_info")
            infos.append(info if isinstance(info, dict) else event)
        params = event.get("api_error_params")
        if isinstance(params, dict) and isinstance(params.get("rate_limit_info"), dict):
            infos.append(params["rate_limit_info"])
    return infos


def _retry_after(text: str, infos: list[dict[str, Any]], now: datetime) -> float | None:
    """Seconds from now to the limit's reset: the stream's rate-limit info (resetsAt), else
    the text's unix time, else the text's clock time in its zone."""
    reset = _reset_from_infos(infos)
    if reset is None:
        reset = _reset_from_unix_text(text)
    if reset is None:
        reset = _reset_from_wall_text(text, now)
    if reset is None:
        return None
    return max(0.0, (reset - now).total_seconds())


def _reset_from_infos(infos: list[dict[str, Any]]) -> datetime | None:
    for info in reversed(infos):
        resets_at = number_or_none(info.get("resetsAt"))
        if resets_at is not None:
            return datetime.fromtimestamp(resets_at, UTC)
    return None


def _reset_from_unix_text(text: str) -> datetime | None:
    found = RESET_UNIX_TEXT.search(text)
    return datetime.fromtimestamp(int(found.group(1)), UTC) if found else None


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

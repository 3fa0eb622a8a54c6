"""parse_result: both Result formats, the outcome mapping and model errors."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from radian.arc.worker import ModelError, parse_result
from radian.arc.worker.attempt import telling_line
from radian.arc.worker.formats import CostScope, CostSeen, cost_seen, session_seen

pytestmark = pytest.mark.unit

NOW = datetime(2026, 1, 21, 7, 0, tzinfo=UTC)


def lines(*objects: object) -> str:
    return "\n".join(o if isinstance(o, str) else json.dumps(o) for o in objects) + "\n"


def claude(**fields: object) -> dict[str, object]:
    base: dict[str, object] = {
        "type": "result",
        "subtype": "success",
        "is_error": False,
        "duration_ms": 1200,
        "num_turns": 3,
        "result": "Done.",
        "session_id": "0b7c1e2a-session",
        "total_cost_usd": 0.42,
    }
    base.update(fields)
    return base


# --- radian's own format ---


@pytest.mark.parametrize(
    "outcome",
    ["completed", "refused", "failed", "incomplete", "budget_exceeded", "cancelled", "poisoned"],
)
def test_radian_outcomes_are_kept(outcome: str) -> None:
    printed = lines("working...", {"type": "result", "outcome": outcome, "session_id": "s-1"})
    result = parse_result(printed, now=NOW)
    assert result is not None
    assert (result.outcome, result.format, result.session_id) == (outcome, "radian", "s-1")


def test_radian_result_carries_cost_and_model_error() -> None:
    printed = lines(
        {
            "type": "result",
            "outcome": "failed",
            "session_id": "s-2",
            "cost_usd": 1.25,
            "model_error": {"kind": "unavailable", "retry_after_secs": 90, "message": "529"},
        }
    )
    result = parse_result(printed, now=NOW)
    assert result is not None
    assert result.session_cost_usd == 1.25
    assert result.model_error == ModelError("unavailable", 90.0, "529")
    assert result.raw["cost_usd"] == 1.25


def test_unknown_outcome_is_kept_as_printed() -> None:
    result = parse_result(lines({"type": "result", "outcome": "exploded"}), now=NOW)
    assert result is not None
    assert result.outcome == "exploded"
    assert result.session_id is None and result.session_cost_usd is None


def test_the_last_result_wins_and_later_non_results_are_ignored() -> None:
    printed = lines(
        {"type": "result", "outcome": "failed"},
        {"type": "result", "outcome": "completed"},
        {"type": "progress", "step": 3},
        "bye",
    )
    result = parse_result(printed, now=NOW)
    assert result is not None and result.outcome == "completed"


def test_no_result_is_none() -> None:
    assert parse_result("", now=NOW) is None
    assert parse_result("hello\n{not json}\n[1, 2]\n", now=NOW) is None
    assert parse_result(lines({"type": "assistant", "message": {}}), now=NOW) is None
    # a result object without an outcome or a subtype is not a Result
    assert parse_result(lines({"type": "result", "cost_usd": 1}), now=NOW) is None


def test_pretty_printed_result_at_the_end() -> None:
    printed = "log line\n" + json.dumps(
        {"type": "result", "outcome": "completed", "session_id": "p"}, indent=2
    )
    result = parse_result(printed, now=NOW)
    assert result is not None and result.session_id == "p"


def test_malformed_fields_are_dropped_not_trusted() -> None:
    printed = lines(
        {
            "type": "result",
            "outcome": "failed",
            "session_id": 7,
            "cost_usd": "lots",
            "model_error": {"retry_after_secs": 3},
        }
    )
    result = parse_result(printed, now=NOW)
    assert result is not None
    assert (result.session_id, result.session_cost_usd, result.model_error) == (None, None, None)


# --- Claude Code's headless format ---


@pytest.mark.parametrize(
    ("subtype", "is_error", "outcome"),
    [
        ("success", False, "completed"),
        ("success", True, "failed"),
        ("error_max_turns", True, "incomplete"),
        ("error_max_budget_usd", True, "budget_exceeded"),
        ("error_during_execution", True, "failed"),
        ("error_something_new", True, "error_something_new"),
    ],
)
def test_claude_subtypes_map_to_outcomes(subtype: str, is_error: bool, outcome: str) -> None:
    result = parse_result(lines(claude(subtype=subtype, is_error=is_error)), now=NOW)
    assert result is not None
    assert (result.outcome, result.format) == (outcome, "claude")
    assert result.session_id == "0b7c1e2a-session"
    assert result.session_cost_usd == 0.42


def test_claude_success_has_no_model_error() -> None:
    result = parse_result(lines(claude()), now=NOW)
    assert result is not None and result.model_error is None


def test_claude_usage_limit_with_unix_reset() -> None:
    reset = int(NOW.timestamp()) + 7200
    raw = claude(is_error=True, result=f"Claude AI usage limit reached|{reset}")
    result = parse_result(lines(raw), now=NOW)
    assert result is not None
    assert result.outcome == "failed"
    assert result.model_error is not None
    assert (result.model_error.kind, result.model_error.retry_after_secs) == ("usage_limit", 7200.0)


def test_claude_usage_limit_with_wall_clock_reset() -> None:
    # 4pm in Kuala Lumpur (UTC+8) is 08:00 UTC, an hour after NOW.
    raw = claude(
        is_error=True,
        api_error_status=429,
        result="You've hit your limit · resets 4pm (Asia/Kuala_Lumpur)",
    )
    result = parse_result(lines(raw), now=NOW)
    assert result is not None and result.model_error is not None
    assert result.model_error.kind == "usage_limit"
    assert result.model_error.retry_after_secs == 3600.0


def test_wall_clock_reset_earlier_today_means_tomorrow() -> None:
    # 6am UTC has passed at NOW (07:00): the reset is tomorrow's 6am.
    raw = claude(is_error=True, result="You've hit your limit · resets 6am (UTC)")
    result = parse_result(lines(raw), now=NOW)
    assert result is not None and result.model_error is not None
    assert result.model_error.retry_after_secs == 23 * 3600.0


def test_wall_clock_reset_with_a_date_and_minutes() -> None:
    raw = claude(is_error=True, result="You've hit your limit · resets Jan 23, 7:30pm (UTC)")
    result = parse_result(lines(raw), now=NOW)
    assert result is not None and result.model_error is not None
    assert result.model_error.retry_after_secs == (2 * 24 + 12) * 3600.0 + 1800.0


def test_unknown_zone_gives_no_retry_after() -> None:
    raw = claude(is_error=True, result="You've hit your limit · resets 4pm (Mars/Olympus)")
    result = parse_result(lines(raw), now=NOW)
    assert result is not None
    assert result.model_error == ModelError("usage_limit", None, str(raw["result"]))


def test_stream_json_uses_the_rate_limit_event_reset() -> None:
    resets_at = int(NOW.timestamp()) + 1800
    printed = lines(
        {"type": "system", "subtype": "init", "session_id": "st-1"},
        {
            "type": "rate_limit_event",
            "rate_limit_info": {"status": "rejected", "resetsAt": resets_at},
        },
        {"type": "assistant", "message": {"content": [{"type": "text", "text": "hmm"}]}},
        claude(
            is_error=True,
            api_error_status=429,
            result="Your group's usage limit is set to $0",
            session_id="st-1",
        ),
    )
    result = parse_result(printed, now=NOW)
    assert result is not None and result.model_error is not None
    assert result.model_error.kind == "usage_limit"
    assert result.model_error.retry_after_secs == 1800.0
    assert result.session_id == "st-1"


def test_the_stream_event_beats_the_unix_reset_in_text() -> None:
    # issue 15: the rate_limit_event is preferred where present (it is the API's own reset).
    reset = int(NOW.timestamp()) + 120
    printed = lines(
        {"type": "rate_limit_event", "rate_limit_info": {"status": "rejected", "resetsAt": reset}},
        claude(is_error=True, result=f"Claude AI usage limit reached|{int(NOW.timestamp()) + 60}"),
    )
    result = parse_result(printed, now=NOW)
    assert result is not None and result.model_error is not None
    assert result.model_error.retry_after_secs == 120.0


def test_a_reset_in_the_past_waits_zero() -> None:
    raw = claude(is_error=True, result=f"Claude AI usage limit reached|{int(NOW.timestamp()) - 5}")
    result = parse_result(lines(raw), now=NOW)
    assert result is not None and result.model_error is not None
    assert result.model_error.retry_after_secs == 0.0


@pytest.mark.parametrize(
    ("status", "text", "kind"),
    [
        (529, "API Error: 529", "unavailable"),
        (
            None,
            'API Error: 529 {"type":"error","error":{"type":"overloaded_error"}}',
            "unavailable",
        ),
        (500, "Overloaded", "unavailable"),
        (429, "API Error: Rate limit reached", "rate_limit"),
        (None, "API Error: Rate limit reached", "rate_limit"),
        (400, "Prompt is too long", "context_overflow"),
        (401, "Invalid API key", "authentication"),
        (500, "Internal server error", "api_error"),
    ],
)
def test_claude_api_errors_map_to_model_error_kinds(
    status: int | None, text: str, kind: str
) -> None:
    fields: dict[str, object] = {"is_error": True, "result": text}
    if status is not None:
        fields["api_error_status"] = status
    result = parse_result(lines(claude(**fields)), now=NOW)
    assert result is not None and result.model_error is not None
    assert result.model_error.kind == kind
    assert result.model_error.retry_after_secs is None


def test_claude_error_without_an_api_cause_has_no_model_error() -> None:
    raw = claude(subtype="error_during_execution", is_error=True, result="tool crashed")
    result = parse_result(lines(raw), now=NOW)
    assert result is not None
    assert (result.outcome, result.model_error) == ("failed", None)


def test_claude_verbose_json_array() -> None:
    printed = json.dumps([{"type": "system", "subtype": "init"}, claude(session_id="arr")])
    result = parse_result(printed, now=NOW)
    assert result is not None and result.session_id == "arr"


def test_a_progress_line_tells_the_session_and_the_cost_so_far_without_a_result() -> None:
    lines = [
        {"type": "progress", "text": "thinking"},
        {"type": "progress", "session_id": "s-1", "cost_usd": 0.25},
        {"type": "progress", "cost_usd": float("nan")},  # no amount: passed over
        {"type": "progress", "cost_usd": -1},
    ]
    stdout = "\n".join(json.dumps(line) for line in lines) + "\n"
    assert parse_result(stdout) is None  # a progress line is no Result
    assert session_seen(stdout) == "s-1"
    assert cost_seen(stdout) == CostSeen(0.25, CostScope.SESSION_TOTAL)
    process = json.dumps({"type": "progress", "cost_usd": 0.01, "cost_scope": "process"})
    assert cost_seen(process) == CostSeen(0.01, CostScope.PROCESS)
    assert cost_seen(json.dumps({"type": "progress", "session_id": "s-2"})) is None


@pytest.mark.parametrize(
    ("stderr", "line"),
    [
        ("", None),
        ("hint: only a hint\n", None),
        # git's own: the refused ref's line, not the error or the hints after it
        (" ! [rejected]        HEAD -> arc/t (fetch first)\n"
         "error: failed to push some refs to 'origin'\nhint: Updates were rejected\n",
         "! [rejected]        HEAD -> arc/t (fetch first)"),
        # a Python worker's traceback: its last line, the exception
        ('Traceback (most recent call last):\n  File "w.py", line 3, in <module>\n'
         "    main()\nKeyError: 'ANTHROPIC_API_KEY'\n", "KeyError: 'ANTHROPIC_API_KEY'"),
        ("x" * 400 + "\n", "x" * 299 + "…"),
    ],
)  # fmt: skip
def test_the_telling_line_of_a_workers_stderr(stderr: str, line: str | None) -> None:
    assert telling_line(stderr) == line

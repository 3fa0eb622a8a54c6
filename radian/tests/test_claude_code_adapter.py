"""The Claude Code adapter on outputs captured from the real CLI (@anthropic-ai/claude-code
2.1.332, cli_fixtures/claude-code/2.1.332/), and on the texts of older versions."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from cli_fixture import captured

from radian.arc.worker.formats import CostScope, parse_output, session_seen

pytestmark = pytest.mark.unit

VERSION = "2.1.332"


def parsed(case: str):  # type: ignore[no-untyped-def]
    shot = captured("claude-code", VERSION, case)
    return parse_output(shot.stdout, shot.stderr, now=shot.now), shot


@pytest.mark.parametrize("case", ["success.json", "success.stream-json"])
def test_a_success_is_completed_with_its_session_and_cost(case: str) -> None:
    result, _ = parsed(case)
    assert result is not None
    assert result.outcome == "completed" and result.model_error is None
    assert result.session_id and result.format == "claude"
    assert result.session_cost_usd is not None and result.session_cost_usd > 0
    assert result.cost_scope is CostScope.SESSION_TOTAL
    assert not result.fresh_session_next


def test_the_session_id_is_read_from_the_first_init_line() -> None:
    shot = captured("claude-code", VERSION, "success.stream-json")
    cut = shot.stdout.splitlines()[0]  # a worker killed after its system/init line
    result = parse_output(shot.stdout, now=shot.now)
    assert result is not None
    assert session_seen(cut + "\n") == result.session_id


@pytest.mark.parametrize(
    ("case", "text"),
    [
        ("usage_limit_five_hour.json", "You've hit your 5-hour limit · resets 10:20am (UTC)"),
        (
            "usage_limit_five_hour.stream-json",
            "You've hit your 5-hour limit · resets 10:20am (UTC)",
        ),
        (
            "usage_limit_weekly.json",
            "You've hit your weekly limit · resets 5:20am (America/New_York)",
        ),
        ("usage_limit_opus.json", "You've hit your Opus limit · resets 6:20pm (Asia/Kuala_Lumpur)"),
        (
            "usage_limit_sonnet.stream-json",
            "You've hit your Sonnet limit · resets 11:20am (Europe/Warsaw)",
        ),
    ],
)
def test_usage_limits_wait_until_the_parsed_reset(case: str, text: str) -> None:
    result, shot = parsed(case)
    assert result is not None and result.model_error is not None
    assert result.outcome == "failed"
    assert result.model_error.kind == "usage_limit"
    assert result.model_error.message == text
    reset = shot.manifest["reset_at"]
    expected = reset - shot.manifest["captured_at"]
    if case.endswith(".json"):
        expected -= reset % 60  # the text gives the reset to the minute
    assert result.model_error.retry_after_secs == pytest.approx(expected, abs=1)


def test_the_rate_limit_event_is_preferred_to_the_text() -> None:
    shot = captured("claude-code", VERSION, "usage_limit_five_hour.stream-json")
    result = parse_output(shot.stdout, now=shot.now)
    assert result is not None and result.model_error is not None
    # resetsAt to the second, where the text says only 10:20am
    assert (
        result.model_error.retry_after_secs
        == shot.manifest["reset_at"] - shot.manifest["captured_at"]
    )


@pytest.mark.parametrize("case", ["overloaded.json", "overloaded.stream-json"])
def test_529_overloaded_is_unavailable(case: str) -> None:
    result, _ = parsed(case)
    assert result is not None and result.model_error is not None
    assert result.outcome == "failed" and result.model_error.kind == "unavailable"


def test_a_plain_429_is_an_ordinary_rate_limit() -> None:
    result, _ = parsed("rate_limit.json")
    assert result is not None and result.model_error is not None
    assert result.model_error.kind == "rate_limit"


@pytest.mark.parametrize("case", ["refusal.json", "refusal.stream-json"])
def test_a_refusal_is_refused_and_its_session_is_not_resumed(case: str) -> None:
    result, _ = parsed(case)
    assert result is not None
    assert result.outcome == "refused"
    assert result.fresh_session_next


@pytest.mark.parametrize("case", ["lost_session.json", "lost_session.stream-json"])
def test_a_lost_session_fails_and_the_next_attempt_starts_fresh(case: str) -> None:
    result, _ = parsed(case)
    assert result is not None  # json prints nothing: the adapter reads the stderr line
    assert result.outcome == "failed"
    assert result.session_id is None
    assert result.fresh_session_next


@pytest.mark.parametrize(
    ("case", "text"),
    [
        ("not_logged_in.json", "Not logged in · Please run /login"),
        ("not_logged_in.stream-json", "Not logged in · Please run /login"),
        ("invalid_key.json", "Invalid API key · Fix external API key"),
    ],
)
def test_an_authentication_failure_stops_retrying(case: str, text: str) -> None:
    result, _ = parsed(case)
    assert result is not None and result.model_error is not None
    assert result.outcome == "poisoned"  # -> failed.irrecoverable: no retry can log in
    assert result.model_error.kind == "authentication"
    assert result.model_error.message == text


def test_a_resumed_process_reports_the_session_total() -> None:
    first, _ = parsed("resume_first.json")
    second, _ = parsed("resume_second.json")
    assert first is not None and second is not None
    assert first.session_id == second.session_id
    # 2.1.332: the resumed process restored the session's 0.008 and added its own
    assert second.session_cost_usd == pytest.approx(first.session_cost_usd * 2)
    assert second.cost_scope is CostScope.SESSION_TOTAL


def test_before_2_1_277_the_cost_is_the_process_spend() -> None:
    shot = captured("claude-code", VERSION, "success.stream-json")
    older = shot.stdout.replace(
        '"claude_code_version":"2.1.332"', '"claude_code_version":"2.1.200"'
    )
    result = parse_output(older, now=shot.now)
    assert result is not None and result.cost_scope is CostScope.PROCESS


NOW = datetime(2026, 11, 30, 7, 0, tzinfo=UTC)


def _result_line(text: str) -> str:
    return (
        '{"type":"result","subtype":"success","is_error":true,"session_id":"s-1",'
        f'"total_cost_usd":0,"result":"{text}"}}\n'
    )


@pytest.mark.parametrize(
    ("text", "secs"),
    [
        # older versions
        (f"Claude AI usage limit reached|{int(NOW.timestamp()) + 5400}", 5400.0),
        ("You've hit your limit · resets 10pm (America/New_York)", 20 * 3600.0),  # 02:00 EST now
        ("Your limit will reset at 5pm (Europe/Warsaw)", 9 * 3600.0),  # 08:00 CET now
        ("You've hit your session limit · resets 6:54am (UTC)", 23 * 3600.0 + 54 * 60),
        (
            "You're out of usage credits · resets Dec 3, 7:40pm (UTC)",
            3 * 86400.0 + 12 * 3600 + 40 * 60,
        ),
    ],
)
def test_usage_limit_texts_old_and_new(text: str, secs: float) -> None:
    result = parse_output(_result_line(text), now=NOW)
    assert result is not None and result.model_error is not None
    assert result.model_error.kind == "usage_limit"
    assert result.model_error.retry_after_secs == secs

"""The Codex adapter on `codex exec --json` outputs captured from the real CLI (@openai/codex
0.171.0, cli_fixtures/codex/0.171.0/)."""

from __future__ import annotations

import pytest
from cli_fixture import captured

from radian.arc.worker.formats import CostScope, Price, parse_output, session_seen
from radian.arc.worker.formats.prices import PRICES

pytestmark = pytest.mark.unit

VERSION = "0.171.0"


def parsed(case: str, **kwargs):  # type: ignore[no-untyped-def]
    shot = captured("codex", VERSION, case)
    return parse_output(shot.stdout, shot.stderr, now=shot.now, **kwargs), shot


def test_a_completed_turn_costs_its_tokens_at_the_models_price() -> None:
    result, shot = parsed("success", model="gpt-5-codex")
    assert result is not None
    assert result.outcome == "completed" and result.format == "codex"
    assert result.session_id == session_seen(shot.stdout.splitlines()[0])
    # 3000 input of which 500 cached, 200 output, at gpt-5-codex's 1.25 / 0.125 / 10 per M
    assert result.session_cost_usd == pytest.approx((2500 * 1.25 + 500 * 0.125 + 200 * 10) / 1e6)
    assert result.cost_scope is CostScope.SESSION_TOTAL


def test_the_price_table_is_extendable_and_an_unpriced_model_costs_none() -> None:
    result, _ = parsed("success", model="my-model", prices={"my-model": Price(input=2, output=4)})
    assert result is not None
    assert result.session_cost_usd == pytest.approx((3000 * 2 + 200 * 4) / 1e6)
    unpriced, _ = parsed("success", model="unknown-model")
    assert unpriced is not None and unpriced.session_cost_usd is None
    assert "gpt-5-codex" in PRICES


def test_a_resumed_thread_reports_the_threads_usage_so_far() -> None:
    first, _ = parsed("resume_first", model="gpt-5-codex")
    second, _ = parsed("resume_second", model="gpt-5-codex")
    assert first is not None and second is not None
    assert first.session_id == second.session_id
    assert second.session_cost_usd == pytest.approx(first.session_cost_usd * 4)


def test_a_usage_limit_waits_until_the_clock_time_it_names() -> None:
    result, shot = parsed("usage_limit")
    assert result is not None and result.model_error is not None
    assert result.outcome == "failed" and result.model_error.kind == "usage_limit"
    assert "try again at" in (result.model_error.message or "")
    expected = shot.manifest["reset_at"] - shot.manifest["captured_at"]
    assert result.model_error.retry_after_secs == pytest.approx(expected, abs=60)


@pytest.mark.parametrize(
    ("case", "kind", "outcome"),
    [
        ("rate_limit", "rate_limit", "failed"),
        ("unavailable", "unavailable", "failed"),
        ("unauthorized", "authentication", "poisoned"),
    ],
)
def test_failed_turns_map_to_model_errors(case: str, kind: str, outcome: str) -> None:
    result, _ = parsed(case)
    assert result is not None and result.model_error is not None
    assert result.model_error.kind == kind and result.outcome == outcome


def test_a_lost_thread_fails_and_the_next_attempt_starts_fresh() -> None:
    result, _ = parsed("lost_thread")
    assert result is not None
    assert result.outcome == "failed" and result.fresh_session_next and result.session_id is None


def test_a_usage_limit_reset_on_another_day_is_waited_for() -> None:
    """Codex names a reset on another day with its date ("try again at Dec 2nd, 2026
    12:16 AM": past midnight, or a weekly limit); it was read as no time at all, so arc
    retried after its default wait, into the same limit."""
    from datetime import datetime

    from radian.arc.worker.formats.codex import _retry_after

    now = datetime(2026, 12, 1, 23, 56).astimezone()
    late = "You've hit your usage limit. ... or try again at Dec 2nd, 2026 12:16 AM."
    assert _retry_after(late, now) == 20 * 60
    weekly = "You've hit your usage limit. ... or try again at Dec 8th, 2026 9:05 PM."
    assert _retry_after(weekly, now) == (6 * 24 + 21) * 3600 + 9 * 60
    assert _retry_after("try again at 11:59 PM.", now) == 3 * 60  # today, as before
    assert _retry_after("try again at Feb 30th, 2027 1:00 AM.", now) is None

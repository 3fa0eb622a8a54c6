"""The ACP client's parts on their own: the stop-reason table, the permission policy and the
worktree fence, the Result it prints, the terminals' output limit, the cost scope."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from radian.arc.budget import attempt_cost
from radian.arc.config import DEFAULT_CONFIG, parse_config
from radian.arc.worker import parse_result
from radian.arc.worker.acp import client_exec_args, permissions
from radian.arc.worker.acp.client import result_line
from radian.arc.worker.acp.stop_reasons import outcome_of
from radian.arc.worker.acp.terminals import Terminal
from radian.arc.worker.attempt import wrapper_exec_args
from radian.arc.worker.presets import config_with_worker

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("stop_reason", "outcome"),
    [
        ("end_turn", "completed"),
        ("refusal", "refused"),
        ("max_tokens", "incomplete"),
        ("max_turn_requests", "incomplete"),
        ("cancelled", "cancelled"),
        ("paused_for_lunch", "paused_for_lunch"),  # unknown: kept, an outcome arc does not know
    ],
)
def test_stop_reasons_map_to_the_chapter_s_outcomes(stop_reason: str, outcome: str) -> None:
    assert outcome_of(stop_reason, model_error=None) == outcome


def test_a_model_error_fails_the_attempt_whatever_the_stop_reason() -> None:
    assert outcome_of("end_turn", model_error="anthropic: 529") == "failed"


def test_the_policy_allows_inside_and_refuses_outside(tmp_path: Path) -> None:
    worktree = tmp_path / "wt"
    worktree.mkdir()
    (worktree / "link").symlink_to(tmp_path)
    policy = permissions.Policy()
    assert permissions.decide("edit", [str(worktree / "a.py")], None, worktree, policy).allowed
    assert permissions.decide("execute", [], {"command": "make"}, worktree, policy).allowed
    outside = permissions.decide("edit", [str(tmp_path / "b.py")], None, worktree, policy)
    assert not outside.allowed and outside.reason == f"outside the worktree: {tmp_path / 'b.py'}"
    # a symlink inside the worktree that leads out of it is outside
    assert not permissions.decide("read", ["link/x"], None, worktree, policy).allowed
    # a command whose working directory is elsewhere is outside
    assert not permissions.decide("execute", [], {"cwd": "/"}, worktree, policy).allowed
    refusing = permissions.Policy(edits="refuse", commands="refuse")
    assert not permissions.decide("edit", ["a.py"], None, worktree, refusing).allowed
    assert not permissions.decide("execute", [], None, worktree, refusing).allowed
    assert permissions.decide("read", ["a.py"], None, worktree, refusing).allowed


def test_the_answer_is_the_offered_option_of_the_right_kind() -> None:
    offered = [
        {"kind": "allow_always", "option_id": "always"},
        {"kind": "allow_once", "option_id": "once"},
        {"kind": "reject_once", "option_id": "no"},
    ]
    assert permissions.choose_option(offered, True) == "once"
    assert permissions.choose_option(offered, False) == "no"
    assert permissions.choose_option(offered[:2], False) is None  # answered as cancelled


def test_the_result_carries_the_fee_its_scope_and_the_error_text() -> None:
    turn = result_line(
        stop_reason="end_turn",
        meta={"radian": {"cost_usd": 0.25, "error": "openai: 500"}},
        session_id="rw-1",
        session_cost_usd=None,
    )
    assert turn == {
        "type": "result", "outcome": "failed", "session_id": "rw-1", "stop_reason": "end_turn",
        "cost_usd": 0.25, "cost_scope": "process",
        "model_error": {"kind": None, "message": "openai: 500"},
    }  # fmt: skip
    parsed = parse_result(json.dumps(turn))
    assert parsed is not None
    assert (parsed.outcome, parsed.cost_scope, parsed.session_cost_usd) == (
        "failed",
        "process",
        0.25,
    )
    assert parsed.model_error is not None and parsed.model_error.kind is None
    # another agent's cumulative usage_update cost is a session total
    other = result_line(stop_reason="end_turn", meta=None, session_id="s", session_cost_usd=1.5)
    assert (other["cost_usd"], other["cost_scope"]) == (1.5, "session_total")
    # no cost at all: none reported, so arc adds 0 and show says the cost is unknown
    silent = result_line(stop_reason="end_turn", meta={}, session_id="s", session_cost_usd=None)
    assert "cost_usd" not in silent
    unknown = parse_result(json.dumps(silent))
    assert unknown is not None and unknown.session_cost_usd is None
    assert unknown.cost_problem == "the agent reported no cost for this prompt turn"


def test_an_attempt_s_own_fee_is_never_differenced() -> None:
    assert attempt_cost(0.5, resumed=True, previous_session_cost_usd=0.4, per_process=True) == 0.5
    assert attempt_cost(0.5, resumed=True, previous_session_cost_usd=0.4) == pytest.approx(0.1)


def test_terminal_output_is_cut_from_the_start_at_a_character_boundary() -> None:
    terminal = Terminal("t", process=None, limit=4)  # type: ignore[arg-type]
    terminal.append("ab€cd".encode())  # € is three bytes: 7 bytes in all
    assert terminal.truncated
    assert terminal.text() == "cd"  # the last 4 bytes would start inside the €: it goes whole
    roomy = Terminal("t", process=None, limit=5)  # type: ignore[arg-type]
    roomy.append("ab€cd".encode())
    assert roomy.text() == "€cd"


def test_an_acp_worker_runs_the_client_in_front_of_the_agent() -> None:
    config = parse_config(
        '[worker]\nkind = "acp"\nexec_args = ["my-agent", "--acp"]\n'
        '[worker.permissions]\ncommands = "refuse"\n',
        "arc.toml",
    )
    assert wrapper_exec_args(config.worker) == [
        sys.executable, "-m", "radian.arc.worker.acp", "--session-id", "{session_id}",
        "--edits", "allow", "--commands", "refuse", "--", "my-agent", "--acp",
    ]  # fmt: skip
    radian = parse_config('[worker]\nkind = "radian"\n', "arc.toml").worker
    assert radian.agent_args == ["radian", "worker"]
    assert wrapper_exec_args(radian)[-3:] == ["--", "radian", "worker"]
    command = parse_config('[worker]\nexec_args = ["w"]\n', "arc.toml").worker
    assert wrapper_exec_args(command) == ["w"]
    assert client_exec_args(["a"])[-2:] == ["--", "a"]


def test_init_worker_radian_configures_the_radian_worker_over_acp() -> None:
    text = config_with_worker(DEFAULT_CONFIG, "radian")
    worker = parse_config(text, "arc.toml").worker
    assert (worker.kind, worker.speaks_acp) == ("radian", True)
    assert worker.agent_args == ["radian", "worker", "--model", "anthropic:claude-sonnet-4-5"]
    assert (worker.permissions.edits, worker.permissions.commands) == ("allow", "allow")
    assert wrapper_exec_args(worker)[:3] == [sys.executable, "-m", "radian.arc.worker.acp"]

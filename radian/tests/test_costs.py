"""Costs that are no numbers are refused (issue 14, bug 5): the attempt's cost is unknown,
show says so, the budgets keep working and `show --json` stays standard JSON."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from arc_helpers import make_plan, task
from conftest import run_env, write_config

from radian.arc.clock import FakeClock
from radian.arc.worker import parse_result

pytestmark = pytest.mark.acceptance

Worker = Callable[..., list[str]]
RADIAN = str(Path(sys.executable).parent / "radian")


def radian(repo: Path, *args: str, fake_now: str) -> subprocess.CompletedProcess[str]:
    env = {**run_env(), "RADIAN_ARC_FAKE_NOW": fake_now}
    return subprocess.run([RADIAN, "arc", *args], cwd=repo, env=env, capture_output=True,
                          text=True, timeout=120)  # fmt: skip


def strict_json(text: str) -> Any:
    def refuse(constant: str) -> Any:
        raise ValueError(f"non-standard JSON constant {constant}")

    return json.loads(text, parse_constant=refuse)


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf, -1.5])
def test_a_cost_that_is_no_amount_is_unknown_and_the_budget_still_holds(
    git_repo: Path, clock: FakeClock, scripted_worker: Worker, bad: float
) -> None:
    scenario = {
        "001": {"outcome": "failed", "cost": bad, "session": "s1"},
        "default": {"outcome": "failed", "cost": 0.6, "session": "s2"},
    }
    write_config(git_repo, scripted_worker(scenario), worker={"session": "fresh"})
    make_plan(git_repo, clock, {"t": {"max_cost_usd": 0.5}})

    first = radian(git_repo, "run", "--once", fake_now="2026-11-30T07:00:00Z")
    assert first.returncode == 0, first.stderr
    after_first = task(git_repo, "t")
    assert (after_first.cost_usd, after_first.state) == (0.0, "todo.retry_wait")
    document = strict_json(radian(git_repo, "show", "t", "--json",
                                  fake_now="2026-11-30T07:00:00Z").stdout)  # fmt: skip
    attempt = document["attempts"][0]
    assert attempt["cost_usd"] is None
    assert "which is no amount in USD" in attempt["cost_unknown"]
    text = radian(git_repo, "show", "t", fake_now="2026-11-30T07:00:00Z").stdout
    assert "    cost unknown: the worker reported cost" in text

    second = radian(git_repo, "run", "--once", fake_now="2026-11-30T08:00:00Z")
    assert second.returncode == 0, second.stderr
    # The next attempt's real cost counts, and the task's budget stops it.
    assert task(git_repo, "t").cost_usd == pytest.approx(0.6)
    assert task(git_repo, "t").state == "todo.paused_budget"
    for path in (git_repo / ".radian" / "arc").rglob("*.json"):
        strict_json(path.read_text())


def test_parse_result_refuses_costs_that_are_no_amount() -> None:
    refused = (
        '{"outcome": "failed", "cost_usd": NaN}',
        '{"outcome": "failed", "cost_usd": -2}',
        '{"type": "result", "subtype": "success", "total_cost_usd": Infinity}',
    )
    for text in refused:
        result = parse_result(text)
        assert result is not None
        assert result.session_cost_usd is None and result.cost_problem is not None
    fine = parse_result('{"outcome": "failed", "cost_usd": 0.25}')
    assert fine is not None and (fine.session_cost_usd, fine.cost_problem) == (0.25, None)

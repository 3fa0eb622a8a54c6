"""`radian arc status`: counts, costs, budget left, the last hour's rate, who waits on a person."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from conftest import run_env

from radian.arc import commands, status
from radian.arc.clock import FakeClock, format_utc
from radian.arc.states import State
from radian.arc.store import ArcStore

pytestmark = pytest.mark.unit


def set_task(store: ArcStore, name: str, state: State, clock: FakeClock, **fields: object) -> None:
    task = store.load_task(name)
    task.state = state
    task.updated_at = format_utc(clock.now())
    for key, value in fields.items():
        setattr(task, key, value)
    store.save_task(task)


def fleet(tmp_path: Path, clock: FakeClock) -> ArcStore:
    """Plan "web" (added task by task, a $1.00 budget) and plan "big" (loaded from a file,
    ten tasks, most never written for)."""
    store = ArcStore(tmp_path)
    commands.add_plan(store, "web", max_cost_usd=1.0)
    for name in ("w1", "w2", "w3", "w4"):
        commands.add_task(store, clock, "web", name, f"Do {name}.\n")
    web = store.load_plan("web")
    web.confirmed = True
    store.save_plan(web)
    plan_file = tmp_path / "big.toml"
    plan_file.write_text('[plan]\nname = "big"\n\n' + "\n".join(
        f'[[task]]\nname = "b{n}"\nbrief = "Do {n}."\n' for n in range(10)))  # fmt: skip
    commands.load_plan_file(store, clock, plan_file)
    set_task(store, "w1", State.INTEGRATED, clock, cost_usd=0.3, total_cost_usd=0.3)
    clock.advance(3600 + 60)  # w1 was integrated more than an hour ago
    set_task(store, "w2", State.INTEGRATED, clock, cost_usd=0.2, total_cost_usd=0.5)
    set_task(store, "w3", State.REWORK_PENDING, clock, cost_usd=0.1, total_cost_usd=0.1,
             rework_reason="review_findings: 1 major finding")  # fmt: skip
    set_task(store, "w4", State.PAUSED_BUDGET, clock, cost_usd=0.25, total_cost_usd=0.25)
    set_task(store, "b0", State.INTEGRATED, clock, cost_usd=0.05, total_cost_usd=0.05)
    set_task(store, "b1", State.EXHAUSTED, clock)
    store.save_task(store.load_task("b2"))
    store.task_path("b2").write_text("{not json")
    return store


def test_status_counts_costs_the_rate_and_who_waits(tmp_path: Path, clock: FakeClock) -> None:
    store = fleet(tmp_path, clock)
    found = status.fleet_status(ArcStore(store.repo_root), clock)
    web, big = {plan.name: plan for plan in found.plans}["web"], found.plans[0]
    assert big.name == "big"
    assert big.counts == {"todo.ready": 7, "done.integrated": 1, "failed.exhausted": 1,
                          "damaged": 1}  # fmt: skip
    assert web.counts == {"done.integrated": 2, "review.rework_pending": 1,
                          "todo.paused_budget": 1}  # fmt: skip
    assert web.cost_usd == pytest.approx(0.85) and web.total_cost_usd == pytest.approx(1.15)
    assert web.budget_left_usd == pytest.approx(0.15) and big.budget_left_usd is None
    assert found.done_last_hour == 2  # w2 and b0; w1 is older than the hour
    assert found.remaining == 9  # 7 ready in big; w3 and w4 in web
    assert found.finish_in_secs == pytest.approx(9 / 2 * 3600)
    assert [(w.task, w.state) for w in found.waiting] == [
        ("w3", "review.rework_pending"),
        ("w4", "todo.paused_budget"),
    ]
    assert found.waiting[0].reason == "review_findings: 1 major finding"
    assert "reset-budget" in found.waiting[1].reason
    text = status.status_text(found)
    assert text[0] == "plan big (auto on, not confirmed): 10 task(s), cost $0.05"
    assert "plan web (auto on, confirmed): 4 task(s), cost $0.85, budget $1.00, left $0.15" in text
    assert "2 task(s) integrated in the last hour, about 4 h 30 min to finish 9" in text
    assert "  w3 (web) review.rework_pending: review_findings: 1 major finding" in text


def test_status_filters_by_plan_and_state_and_keeps_the_plans_cost_whole(
    tmp_path: Path, clock: FakeClock
) -> None:
    store = fleet(tmp_path, clock)
    found = status.fleet_status(store, clock, plan="web", state="done.integrated")
    assert [plan.name for plan in found.plans] == ["web"]
    assert found.counts == {"done.integrated": 2}
    assert found.plans[0].cost_usd == pytest.approx(0.85)  # every task of the plan counts
    assert found.waiting == []


def test_status_without_a_rate_says_what_is_left(tmp_path: Path, clock: FakeClock) -> None:
    store = ArcStore(tmp_path)
    commands.add_plan(store, "p")
    commands.add_task(store, clock, "p", "t", "Do it.\n")
    found = status.fleet_status(store, clock)
    assert found.finish_in_secs is None
    assert status.status_text(found)[-1] == "0 task(s) integrated in the last hour, 1 not finished"
    assert status.status_text(status.fleet_status(ArcStore(tmp_path / "none"), clock)) == [
        "no plans"
    ]


@pytest.mark.integration
def test_the_status_command_prints_text_and_json_and_refuses_an_unknown_plan(
    tmp_path: Path, clock: FakeClock, radian_bin: Path
) -> None:
    fleet(tmp_path, clock)
    env = {**run_env(), "RADIAN_ARC_FAKE_NOW": format_utc(clock.now())}

    def arc(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(radian_bin), "arc", "--repo", str(tmp_path), *args],
                              capture_output=True, text=True, env=env)  # fmt: skip

    text = arc("status")
    assert text.returncode == 0, text.stderr
    assert "waiting on a person: 2" in text.stdout
    document = json.loads(arc("status", "--json", "--plan", "web").stdout)
    assert document["format_version"] >= 1
    assert document["plans"][0]["budget_left_usd"] == pytest.approx(0.15)
    assert document["counts"]["todo.paused_budget"] == 1
    refused = arc("status", "--plan", "nope")
    assert refused.returncode == 1 and "no plan named 'nope'" in refused.stderr
    wrong = arc("status", "--state", "todo.nope")
    assert wrong.returncode == 2

"""Task and plan budgets, reset-budget, and check_after_cost (GATE's entry), with real workers."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from arc_helpers import make_plan, run_once, task
from conftest import run_env, write_config

from radian.arc import commands
from radian.arc.budget import add_cost, attempt_cost, check_after_cost, plan_spent
from radian.arc.clock import FakeClock
from radian.arc.config import load_config
from radian.arc.errors import ArcError
from radian.arc.states import State
from radian.arc.store import ArcStore

pytestmark = pytest.mark.integration

Worker = Callable[..., list[str]]


def test_attempt_cost_from_session_totals() -> None:
    assert attempt_cost(0.5, resumed=True, previous_session_cost_usd=0.3) == pytest.approx(0.2)
    assert attempt_cost(0.5, resumed=False, previous_session_cost_usd=0.3) == 0.5
    assert attempt_cost(0.1, resumed=True, previous_session_cost_usd=0.3) == 0.1  # a reset
    assert attempt_cost(0.4, resumed=True, previous_session_cost_usd=None) == 0.4
    assert attempt_cost(None, resumed=True, previous_session_cost_usd=0.3) == 0.0


def test_a_task_budget_pauses_the_retry_and_reset_budget_is_the_way_back(
    git_repo: Path, clock: FakeClock, scripted_worker: Worker
) -> None:
    scenario = {
        "001": {"outcome": "failed", "cost": 0.6},
        "002": {"outcome": "failed", "cost": 0.8},
    }
    write_config(git_repo, scripted_worker(scenario), limits={"max_cost_usd": 0.5})
    store = make_plan(git_repo, clock, ["t"])
    lines = run_once(git_repo, clock)
    assert lines[-1] == "t failed (model) -> todo.paused_budget (task budget: $0.60 of $0.50 used)"
    paused = task(git_repo, "t")
    assert paused.state == "todo.paused_budget"
    assert paused.retry_count == 0
    assert run_once(git_repo, clock) == []  # nothing claims a paused task
    with pytest.raises(ArcError, match="cannot move|is todo.paused_budget"):
        commands.rework(store, clock, "t", "try again")
    assert commands.reset_budget(store, clock, "t").lines() == ["t budget reset -> todo.ready"]
    reset = task(git_repo, "t")
    assert (reset.state, reset.cost_usd, reset.total_cost_usd) == ("todo.ready", 0.0, 0.6)
    run_once(git_repo, clock)
    again = task(git_repo, "t")
    assert again.state == "todo.retry_wait"  # $0.20 since the reset: within $0.50
    assert round(again.cost_usd, 6) == 0.2  # resumed session: 0.8 - 0.6
    assert round(again.total_cost_usd, 6) == 0.8


def test_the_tasks_own_budget_overrides_the_limit(
    git_repo: Path, clock: FakeClock, scripted_worker: Worker
) -> None:
    scenario = {"default": {"outcome": "failed", "cost": 0.6}}
    write_config(git_repo, scripted_worker(scenario), limits={"max_cost_usd": 0.5})
    make_plan(git_repo, clock, {"t": {"max_cost_usd": 1.0}})
    run_once(git_repo, clock)
    assert task(git_repo, "t").state == "todo.retry_wait"


def test_a_plan_budget_counts_every_task_and_turns_auto_off(
    git_repo: Path, clock: FakeClock, scripted_worker: Worker
) -> None:
    scenario = {"default": {"outcome": "failed", "cost": 0.6}}
    write_config(git_repo, scripted_worker(scenario), limits={"parallel": 1})
    store = make_plan(git_repo, clock, ["a", "b"], max_cost_usd=1.0)
    run_once(git_repo, clock)  # a: $0.60 of the plan's $1.00
    assert task(git_repo, "a").state == "todo.retry_wait"
    lines = run_once(git_repo, clock)  # b: $1.20
    assert lines[-2:] == [
        "b failed (model) -> todo.paused_budget (plan budget: $1.20 of $1.00 used)",
        "plan p auto -> off (plan budget used up)",
    ]
    assert task(git_repo, "b").state == "todo.paused_budget"
    assert store.load_plan("p").auto == "off"
    clock.advance(60)
    assert run_once(git_repo, clock) == ["a todo.retry_wait -> todo.ready"]  # auto off: no claim
    commands.reset_budget(store, clock, "b")
    commands.set_plan_auto(store, "p", "on")
    assert store.load_plan("p").auto == "on"


def test_check_after_cost_reports_which_budget_is_used_up(git_repo: Path, clock: FakeClock) -> None:
    tasks = {"a": {"max_cost_usd": 1.0}, "b": {}}
    store = make_plan(git_repo, clock, tasks, confirm=False, max_cost_usd=2.0)
    config = load_config(git_repo)
    plan = store.load_plan("p")
    a = store.load_task("a")
    add_cost(store, a, 0.9)  # costs reach the plan's running total through add_cost
    assert not check_after_cost(store, a, plan, config).used_up
    add_cost(store, a, 0.1)
    verdict = check_after_cost(store, a, plan, config)
    assert (verdict.used_up, verdict.scope, verdict.limit) == (True, "task", 1.0)
    with store.task_lock("a"):
        store.save_task(a)
    b = store.load_task("b")
    add_cost(store, b, 0.5)
    assert not check_after_cost(store, b, plan, config).used_up
    add_cost(store, b, 0.5)
    verdict = check_after_cost(store, b, plan, config)
    assert (verdict.used_up, verdict.scope, verdict.spent) == (True, "plan", 2.0)


def test_reset_budget_refuses_a_task_that_is_not_paused(git_repo: Path, clock: FakeClock) -> None:
    store = make_plan(git_repo, clock, ["t"], confirm=False)
    with pytest.raises(ArcError, match="reset-budget applies to a todo.paused_budget task"):
        commands.reset_budget(store, clock, "t")
    assert ArcStore(git_repo).load_task("t").state == "todo.ready"


def test_the_plans_running_cost_follows_its_tasks_and_is_read_without_them(
    git_repo: Path, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = make_plan(git_repo, clock, ["a", "b"], confirm=False, max_cost_usd=5.0)
    plan = store.load_plan("p")
    for name, cost in (("a", 0.25), ("b", 0.5), ("a", 0.125)):
        with store.task_lock(name):
            task = store.load_task(name)
            add_cost(store, task, cost)
            store.save_task(task)
    assert plan_spent(store, plan) == 0.875
    # constant time: the check reads the kept total, never a task
    monkeypatch.setattr(ArcStore, "try_load_task", lambda self, name: pytest.fail(name))
    assert plan_spent(ArcStore(git_repo), plan) == 0.875
    monkeypatch.undo()
    task = store.load_task("a")
    task.state = State.PAUSED_BUDGET
    store.save_task(task)
    commands.reset_budget(store, clock, "a")  # frees what a spent, in the plan's total too
    assert plan_spent(store, plan) == 0.5
    assert store.count_plan_cost("p") == 0.5


def test_doctor_reconciles_a_running_cost_with_the_tasks(
    git_repo: Path, clock: FakeClock, radian_bin: Path
) -> None:
    store = make_plan(git_repo, clock, ["a"], confirm=False)
    with store.task_lock("a"):
        task = store.load_task("a")
        add_cost(store, task, 0.25)
        store.save_task(task)
    store.set_plan_cost("p", 9.0)  # as a crash, or a hand, could leave it
    done = subprocess.run([str(radian_bin), "arc", "doctor"], cwd=git_repo, capture_output=True,
                          text=True, env=run_env())  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout == "plan p: running cost was $9.0000, its tasks say $0.2500: set to that\n"
    assert store.plan_cost("p") == 0.25
    again = subprocess.run([str(radian_bin), "arc", "doctor", "--json"], cwd=git_repo,
                           capture_output=True, text=True, env=run_env())  # fmt: skip
    assert json.loads(again.stdout)["costs"] == [
        {"plan": "p", "kept": 0.25, "counted": 0.25, "fixed": False}
    ]
    store.plan_cost_path("p").unlink()  # a repository from before running totals
    assert plan_spent(store, store.load_plan("p")) == 0.25

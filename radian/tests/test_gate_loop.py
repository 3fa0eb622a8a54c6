"""The gate inside `radian arc run`: integration, review rework, review cost and budgets."""

from __future__ import annotations

import pytest
from gate_fixtures.arc_world import (
    CHEAP_CHECK,
    PYTEST,
    add_plan,
    brief,
    run_arc,
    task,
    worker_args,
    write_arc_config,
)
from gate_fixtures.world import OPS_WITH_DOUBLE, GitWorld

from radian.arc import show
from radian.arc.clock import FakeClock
from radian.arc.config import load_config
from radian.arc.gate.verdict import last_verdict
from radian.arc.store import ArcStore

pytestmark = pytest.mark.integration

DOUBLE_FILES = {"src/calc/ops.py": OPS_WITH_DOUBLE}
TODO_FILES = {"src/calc/ops.py": OPS_WITH_DOUBLE + "\n# TODO handle overflow\n"}


def test_a_task_that_passes_its_gate_is_integrated(world: GitWorld, clock: FakeClock) -> None:
    args = worker_args(world, {"double": {"default": {"files": DOUBLE_FILES}}})
    write_arc_config(world, args)
    add_plan(world, clock, ["double"])

    lines = run_arc(world, clock)

    done = task(world, "double")
    assert str(done.state) == "done.integrated"
    integrated = last_verdict(ArcStore(world.repo).task_dir("double"))
    assert integrated is not None and integrated.stage == "integration"
    assert integrated.integrated_sha is not None
    assert (
        f"double integrated -> done.integrated ({integrated.integrated_sha[:12]} on main)" in lines
    )
    assert "def double" in world.read_main("src/calc/ops.py")
    # The review ran once and its cost counts: 250000 micros = $0.25.
    assert done.cost_usd == pytest.approx(0.25) and done.total_cost_usd == pytest.approx(0.25)


def test_review_findings_get_an_automatic_rework_then_integrate(
    world: GitWorld, clock: FakeClock
) -> None:
    scenario = {"todo": {"001": {"files": TODO_FILES}, "default": {"files": DOUBLE_FILES}}}
    write_arc_config(world, worker_args(world, scenario), review_mode="todo")
    add_plan(world, clock, ["todo"], auto_rework=1)

    lines = run_arc(world, clock)

    assert "todo review findings -> todo.ready (Rework 1)" in lines
    done = task(world, "todo")
    assert str(done.state) == "done.integrated"
    assert done.auto_rework_used == 1 and done.rework_count == 1
    assert done.attempts == ["001", "002"]
    text = brief(world, "todo")
    assert "## Rework 1\n" in text
    assert "- [major] unfinished: # TODO handle overflow (src/calc/ops.py)" in text
    # Two reviews ran: both costs count.
    assert done.cost_usd == pytest.approx(0.5)
    assert "TODO" not in world.read_main("src/calc/ops.py")


def test_without_auto_rework_a_review_failure_waits_for_the_lead(
    world: GitWorld, clock: FakeClock
) -> None:
    write_arc_config(world, worker_args(world, {"t": {"default": {"files": TODO_FILES}}}),
                     review_mode="todo")  # fmt: skip
    add_plan(world, clock, ["t"], auto_rework=0)

    lines = run_arc(world, clock)

    waiting = task(world, "t")
    assert str(waiting.state) == "review.rework_pending"
    assert waiting.rework_reason == (
        "review failed (review_findings): 1 finding(s) at or above fix_level major"
    )
    assert (
        "t review failed (review_findings) -> review.rework_pending: "
        "1 finding(s) at or above fix_level major"
    ) in lines
    assert "## Rework" not in brief(world, "t")
    # show prints the last verdict and the rework_reason.
    store = ArcStore(world.repo)
    document = show.task_document(store, load_config(world.repo), waiting)
    text = "\n".join(show.task_text(document))
    assert "rework_reason: review failed (review_findings)" in text
    assert document["last_verdict"]["stage"] == "review"
    assert document["last_verdict"]["reason"] == "review_findings"
    assert "last_verdict: review review_findings" in text


def test_the_tasks_fix_level_wins_over_the_plans_and_the_configs(
    world: GitWorld, clock: FakeClock
) -> None:
    write_arc_config(world, worker_args(world, {"t": {"default": {"files": DOUBLE_FILES}}}),
                     review_mode="major", fix_level="info")  # fmt: skip
    add_plan(world, clock, {"t": {"fix_level": "critical"}}, fix_level="minor", auto_rework=0)

    run_arc(world, clock)

    assert str(task(world, "t").state) == "done.integrated"


def test_a_review_cost_that_reaches_the_budget_pauses_without_a_rework(
    world: GitWorld, clock: FakeClock
) -> None:
    write_arc_config(world, worker_args(world, {"t": {"default": {"files": TODO_FILES}}}),
                     review_mode="todo")  # fmt: skip
    add_plan(world, clock, {"t": {"max_cost_usd": 0.2}}, auto_rework=3)

    lines = run_arc(world, clock)

    paused = task(world, "t")
    assert str(paused.state) == "todo.paused_budget"
    assert paused.cost_usd == pytest.approx(0.25)
    assert "## Rework" not in brief(world, "t")
    assert paused.auto_rework_used == 0
    assert (
        "t review cost reached the budget -> todo.paused_budget (task budget: $0.25 of $0.20 used)"
        in lines
    )


def test_a_plan_budget_reached_by_review_costs_turns_the_plans_auto_off(
    world: GitWorld, clock: FakeClock
) -> None:
    write_arc_config(world, worker_args(world, {"t": {"default": {"files": TODO_FILES}}}),
                     review_mode="todo")  # fmt: skip
    add_plan(world, clock, ["t"], max_cost_usd=0.1)

    lines = run_arc(world, clock)

    assert str(task(world, "t").state) == "todo.paused_budget"
    assert ArcStore(world.repo).load_plan("p").auto == "off"
    assert "plan p auto -> off (plan budget used up)" in lines


def test_a_failing_commands_stage_waits_for_the_lead(world: GitWorld, clock: FakeClock) -> None:
    broken = {"src/calc/ops.py": OPS_WITH_DOUBLE.replace("a + b", "a - b")}
    write_arc_config(world, worker_args(world, {"t": {"default": {"files": broken}}}),
                     gate_commands=(PYTEST,))  # fmt: skip
    add_plan(world, clock, ["t"])

    run_arc(world, clock)

    waiting = task(world, "t")
    assert str(waiting.state) == "review.rework_pending"
    assert waiting.rework_reason is not None
    assert waiting.rework_reason == f"commands failed (command_failed): `{PYTEST}` exited 1"
    assert waiting.retry_count == 0 and waiting.attempts == ["001"]


def test_a_budget_the_worker_used_up_pauses_the_task_when_its_review_is_applied(
    world: GitWorld, clock: FakeClock
) -> None:
    # The worker's completed attempt costs $0.30 of a $0.25 budget: no retry is due, so the
    # task goes on to its gate. The review costs nothing (it prints no verdict), but applying
    # it checks both budgets: the task stops there instead of waiting for a rework.
    scenario = {"t": {"default": {"files": DOUBLE_FILES, "cost": 0.3}}}
    write_arc_config(world, worker_args(world, scenario), review_mode="garbage")
    add_plan(world, clock, {"t": {"max_cost_usd": 0.25}})

    lines = run_arc(world, clock)

    paused = task(world, "t")
    assert str(paused.state) == "todo.paused_budget"
    assert paused.cost_usd == pytest.approx(0.3)
    assert paused.rework_reason is not None
    assert paused.rework_reason.startswith("review failed (review_output)")
    assert (
        "t review cost reached the budget -> todo.paused_budget (task budget: $0.30 of $0.25 used)"
        in lines
    )


def test_a_failure_before_the_review_does_not_check_the_budget(
    world: GitWorld, clock: FakeClock
) -> None:
    broken = {"src/calc/ops.py": OPS_WITH_DOUBLE.replace("a + b", "a - b")}
    scenario = {"t": {"default": {"files": broken, "cost": 0.3}}}
    write_arc_config(world, worker_args(world, scenario), gate_commands=(PYTEST,))
    add_plan(world, clock, {"t": {"max_cost_usd": 0.25}})

    run_arc(world, clock)

    assert str(task(world, "t").state) == "review.rework_pending"


def test_a_conflict_found_before_the_review_never_pauses_the_plan(
    world: GitWorld, clock: FakeClock
) -> None:
    # issue 14, bug 7: the commands stage passes, then main moves in a conflicting way, so
    # the review stage's conflict check fails; the budget is used up by the worker's cost.
    theirs = OPS_WITH_DOUBLE.replace("return x * 2", "return x + x")
    moves_main = (
        f"cd {world.other} && git pull -q origin main && "
        f"printf '%s' '{theirs}' > src/calc/ops.py && git commit -qam theirs && "
        "git push -q origin HEAD:main"
    )
    scenario = {"t": {"default": {"files": DOUBLE_FILES, "cost": 0.3}}}
    write_arc_config(world, worker_args(world, scenario),
                     gate_commands=(CHEAP_CHECK, moves_main))  # fmt: skip
    add_plan(world, clock, ["t"], max_cost_usd=0.25)

    lines = run_arc(world, clock, once=True)

    done = task(world, "t")
    assert str(done.state) == "todo.ready", lines
    assert done.merge_pending
    verdict = last_verdict(ArcStore(world.repo).task_dir("t"))
    assert verdict is not None and (verdict.stage, verdict.reason) == ("review", "conflict")
    plan = ArcStore(world.repo).load_plan("p")
    assert plan.auto == "on"
    assert not any("paused_budget" in line or "auto -> off" in line for line in lines)

"""A gate's fetch during a remote outage is a wait, like the delivery check's: the task stays
review.verifying, no gate_error verdict is written, no retry is used, and the gate runs
again once its retry_at has passed (issue 14: "A remote outage"). A real bare remote, made
unreachable by moving it away."""

from __future__ import annotations

from pathlib import Path

import pytest
from gate_fixtures.arc_world import add_plan, run_arc, task, worker_args, write_arc_config
from gate_fixtures.world import OPS_WITH_DOUBLE, GitWorld

from radian.arc.clock import FakeClock, format_utc_ceil
from radian.arc.config import load_config
from radian.arc.gate.verdict import all_verdicts
from radian.arc.loop import Loop
from radian.arc.schedule import due_at
from radian.arc.states import State
from radian.arc.store import ArcStore

pytestmark = pytest.mark.integration


def delivered_without_gate(world: GitWorld, clock: FakeClock) -> None:
    """The worker delivers; no gate runs yet (a loop without a verifier)."""
    args = worker_args(world, {"t": {"default": {"files": {"src/calc/ops.py": OPS_WITH_DOUBLE}}}})
    write_arc_config(world, args, stages=("commands",))
    add_plan(world, clock, ["t"])
    store = ArcStore(world.repo)
    Loop(store, load_config(world.repo), clock, echo=lambda line: None).run(once=True)
    assert task(world, "t").state is State.VERIFYING


def away(world: GitWorld) -> Path:
    moved = world.remote.with_name("remote-away.git")
    world.remote.rename(moved)
    return moved


def test_a_gate_that_cannot_fetch_waits_and_runs_again_when_the_remote_is_back(
    world: GitWorld, clock: FakeClock
) -> None:
    delivered_without_gate(world, clock)
    moved = away(world)

    lines = run_arc(world, clock, once=True)

    first_wait = format_utc_ceil(due_at(clock.now(), 10))
    assert lines == [
        f"t gate: remote unreachable -> review.verifying, gate again at {first_wait} "
        "(no retry used)"
    ]
    waiting = task(world, "t")
    assert waiting.state is State.VERIFYING
    assert (waiting.retry_count, waiting.remote_wait_streak, waiting.retry_at) == (0, 1, first_wait)
    assert all_verdicts(ArcStore(world.repo).task_dir("t")) == []  # no gate_error

    # Before its retry_at the gate is not run again.
    assert run_arc(world, clock, once=True) == []
    assert task(world, "t").retry_at == waiting.retry_at

    # Still away at the retry: the wait doubles.
    clock.advance(11)
    again = run_arc(world, clock, once=True)
    assert len(again) == 1 and "gate: remote unreachable" in again[0]
    assert task(world, "t").remote_wait_streak == 2

    moved.rename(world.remote)  # the remote is back
    clock.advance(21)
    done = run_arc(world, clock, once=True)

    integrated = task(world, "t")
    assert integrated.state is State.INTEGRATED, done
    assert (integrated.retry_count, integrated.remote_wait_streak) == (0, 0)
    assert integrated.retry_at is None
    assert "def double" in world.read_main("src/calc/ops.py")
    stages = [verdict.stage for verdict in all_verdicts(ArcStore(world.repo).task_dir("t"))]
    assert stages == ["commands", "integration"]


def test_run_keeps_going_through_the_gates_wait(world: GitWorld, clock: FakeClock) -> None:
    """Without --once, `run` sleeps (on its clock) until the gate's retry_at and runs it."""
    delivered_without_gate(world, clock)
    moved = away(world)

    class ComesBack(FakeClock):
        def sleep(self, seconds: float) -> None:
            if not world.remote.exists():
                moved.rename(world.remote)  # the outage ends while run waits
            super().sleep(seconds)

    back = ComesBack(clock.now())
    lines = run_arc(world, back)

    assert lines[0].startswith("t gate: remote unreachable -> review.verifying")
    assert any(line.startswith("waiting until ") for line in lines)
    assert task(world, "t").state is State.INTEGRATED, lines

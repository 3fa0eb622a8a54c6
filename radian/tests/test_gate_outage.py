"""A gate's fetch, or its integration's push, during a remote outage is a wait, like the
delivery check's: the task stays review.verifying, no gate_error verdict is written, no retry
is used, and the gate runs again once its retry_at has passed (issue 14: "A remote outage").
A real bare remote, made unreachable by moving it away. A push the remote answered and
refused (a hook) is no outage: it stays gate_error."""

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


def delivered_without_gate(
    world: GitWorld, clock: FakeClock, integration_commands: tuple[str, ...] = ()
) -> None:
    """The worker delivers; no gate runs yet (a loop without a verifier)."""
    args = worker_args(world, {"t": {"default": {"files": {"src/calc/ops.py": OPS_WITH_DOUBLE}}}})
    write_arc_config(world, args, stages=("commands",), integration_commands=integration_commands)
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


def test_a_push_that_cannot_reach_the_remote_waits_and_pushes_when_it_is_back(
    world: GitWorld, clock: FakeClock
) -> None:
    """The remote goes away after the integration's fetch and merge, before its push: the
    integration command (a real shell command, run between the two) moves it, once."""
    moved = world.remote.with_name("remote-away.git")
    marker = world.root / "moved-once"
    goes_away = f"test -e {marker} || (touch {marker} && mv {world.remote} {moved})"
    delivered_without_gate(world, clock, integration_commands=(goes_away,))
    main_before = world.main_sha()

    lines = run_arc(world, clock, once=True)

    first_wait = format_utc_ceil(due_at(clock.now(), 10))
    assert lines == [
        f"t gate: remote unreachable -> review.verifying, gate again at {first_wait} "
        "(no retry used)"
    ]
    assert marker.exists() and not world.remote.exists()  # the push itself met the outage
    waiting = task(world, "t")
    assert waiting.state is State.VERIFYING
    assert (waiting.retry_count, waiting.remote_wait_streak, waiting.retry_at) == (0, 1, first_wait)
    verdicts = all_verdicts(ArcStore(world.repo).task_dir("t"))
    assert [(verdict.stage, verdict.passed) for verdict in verdicts] == [("commands", True)]
    integration_log = sorted((ArcStore(world.repo).task_dir("t")).rglob("*integration*.log"))
    assert integration_log, "the integration stage keeps its log"
    logged = integration_log[-1].read_text()
    assert "the remote cannot be reached (no verdict for this stage; the gate waits)" in logged
    assert "git push: fatal:" in logged

    # Before its retry_at the push is not tried again.
    assert run_arc(world, clock, once=True) == []

    moved.rename(world.remote)  # the remote is back
    assert world.main_sha() == main_before  # nothing was pushed during the outage
    clock.advance(11)
    done = run_arc(world, clock, once=True)

    integrated = task(world, "t")
    assert integrated.state is State.INTEGRATED, done
    assert (integrated.retry_count, integrated.remote_wait_streak, integrated.retry_at) == (
        0,
        0,
        None,
    )
    assert "def double" in world.read_main("src/calc/ops.py")
    stages = [verdict.stage for verdict in all_verdicts(ArcStore(world.repo).task_dir("t"))]
    assert stages == ["commands", "commands", "integration"]


def test_a_push_the_remote_refuses_is_no_outage(world: GitWorld, clock: FakeClock) -> None:
    """A hook on the remote declines the push: the remote answered, so it is gate_error and
    the lead's turn, as before; no wait, no retry_at."""
    delivered_without_gate(world, clock)
    hook = world.remote / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\necho main is frozen >&2\nexit 1\n")
    hook.chmod(0o755)
    main_before = world.main_sha()

    lines = run_arc(world, clock, once=True)

    assert len(lines) == 1, lines
    assert lines[0].startswith(
        "t integration failed (gate_error) -> review.rework_pending: git push failed:"
    )
    assert "remote: main is frozen" in lines[0]  # the hook's own words
    refused = task(world, "t")
    assert refused.state is State.REWORK_PENDING
    assert (refused.retry_count, refused.remote_wait_streak, refused.retry_at) == (0, 0, None)
    last = all_verdicts(ArcStore(world.repo).task_dir("t"))[-1]
    assert (last.stage, last.reason) == ("integration", "gate_error")
    assert world.main_sha() == main_before

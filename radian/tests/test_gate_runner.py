"""GateVerifier as the loop's Verifier: background gates, Ctrl-C, and gates taken up again."""

from __future__ import annotations

import sys
import threading
import time

import pytest
from gate_fixtures.arc_world import add_plan, run_arc, task, worker_args, write_arc_config
from gate_fixtures.world import OPS_WITH_DOUBLE, GitWorld

from radian.arc import commands
from radian.arc.clock import FakeClock
from radian.arc.config import load_config
from radian.arc.events import texts_of
from radian.arc.gate import GateVerifier
from radian.arc.gate.conflict import integration_lock
from radian.arc.gate.jobs import build_job
from radian.arc.gate.pipeline import run_gate
from radian.arc.gate.verdict import all_verdicts
from radian.arc.loop import Loop
from radian.arc.store import ArcStore

pytestmark = pytest.mark.integration

SLEEP = f"{sys.executable} -c 'import time; time.sleep(1.5)'"
HANG = f"{sys.executable} -c 'import time; time.sleep(60)'"


def files(name: str) -> dict[str, str]:
    return {f"src/calc/{name}.py": "def f():\n    return 1\n"}


def test_a_slow_gate_does_not_keep_the_loop_from_claiming(
    world: GitWorld, clock: FakeClock
) -> None:
    scenario = {"a": {"default": {"files": files("a")}}, "b": {"default": {"files": files("b")}}}
    write_arc_config(world, worker_args(world, scenario), stages=("commands",),
                     gate_commands=(SLEEP,), limits={"parallel": 1})  # fmt: skip
    add_plan(world, clock, ["a", "b"])

    lines = run_arc(world, clock)

    # b was claimed while a's gate was still running.
    assert lines.index("b todo.ready -> doing.working (attempt 001)") < next(
        i for i, line in enumerate(lines) if line.startswith("a integrated")
    )
    assert str(task(world, "a").state) == str(task(world, "b").state) == "done.integrated"


def test_stop_ends_a_running_gate_and_the_next_run_takes_it_up(
    world: GitWorld, clock: FakeClock
) -> None:
    scenario = {"t": {"default": {"files": {"src/calc/ops.py": OPS_WITH_DOUBLE}}}}
    write_arc_config(world, worker_args(world, scenario), stages=("commands",),
                     gate_commands=(HANG,))  # fmt: skip
    add_plan(world, clock, ["t"])
    store = ArcStore(world.repo)
    config = load_config(world.repo)
    # A run without a gate leaves the task in review.verifying.
    Loop(store, config, clock, echo=lambda line: None).run()
    assert str(task(world, "t").state) == "review.verifying"

    verifier = GateVerifier(store, config, clock)
    verifier.start("t", "001")
    time.sleep(0.5)  # let the gate reach its command
    started = time.monotonic()
    verifier.stop()
    assert time.monotonic() - started < 10
    assert verifier.active() == 0
    assert str(task(world, "t").state) == "review.verifying"
    assert all_verdicts(store.task_dir("t")) == []

    # The next run finds the task verifying with no gate anywhere, and runs its gate.
    write_arc_config(world, worker_args(world, scenario), stages=("commands",),
                     gate_commands=("true",))  # fmt: skip
    lines = run_arc(world, clock)
    assert str(task(world, "t").state) == "done.integrated"
    assert any(line.startswith("t integrated") for line in lines)


def test_verdicts_written_but_never_applied_are_applied_without_running_again(
    world: GitWorld, clock: FakeClock
) -> None:
    scenario = {"t": {"default": {"files": {"src/calc/ops.py": OPS_WITH_DOUBLE}}}}
    write_arc_config(world, worker_args(world, scenario), stages=("commands",),
                     gate_commands=("exit 2",))  # fmt: skip
    add_plan(world, clock, ["t"])
    store = ArcStore(world.repo)
    config = load_config(world.repo)
    Loop(store, config, clock, echo=lambda line: None).run()
    # A run killed after its gate wrote the verdict, before applying it.
    job = build_job(store, config, store.load_task("t"), "001", threading.Event())
    run_gate(job, clock)
    assert len(all_verdicts(store.task_dir("t"))) == 1

    lines = run_arc(world, clock)

    assert lines == [
        "t commands failed (command_failed) -> review.rework_pending: `exit 2` exited 2"
    ]
    assert len(all_verdicts(store.task_dir("t"))) == 1


def test_a_task_cancelled_while_its_gate_runs_is_never_integrated(
    world: GitWorld, clock: FakeClock
) -> None:
    scenario = {"t": {"default": {"files": {"src/calc/ops.py": OPS_WITH_DOUBLE}}}}
    write_arc_config(world, worker_args(world, scenario), stages=("commands",),
                     gate_commands=(SLEEP,))  # fmt: skip
    add_plan(world, clock, ["t"])
    store = ArcStore(world.repo)
    config = load_config(world.repo)
    Loop(store, config, clock, echo=lambda line: None).run()
    main_before = world.main_sha()

    verifier = GateVerifier(store, config, clock)
    verifier.start("t", "001")
    commands.cancel(store, clock, "t")
    lines: list[str] = []
    while verifier.active():
        lines += texts_of(verifier.collect())
        time.sleep(0.05)  # polling a real background thread, not a backoff

    assert lines == []
    assert str(task(world, "t").state) == "failed.cancelled"
    assert world.main_sha() == main_before
    assert [v.stage for v in all_verdicts(store.task_dir("t"))] in ([], ["commands"])


def test_a_gate_that_cannot_start_leaves_a_gate_error_for_the_lead(
    world: GitWorld, clock: FakeClock
) -> None:
    scenario = {"t": {"default": {"files": {"src/calc/ops.py": OPS_WITH_DOUBLE}}}}
    write_arc_config(world, worker_args(world, scenario))
    add_plan(world, clock, ["t"])
    store = ArcStore(world.repo)
    Loop(store, load_config(world.repo), clock, echo=lambda line: None).run()
    broken = store.load_task("t")
    broken.head_sha = None  # a task file damaged by hand
    store.save_task(broken)

    lines = run_arc(world, clock)

    assert lines == [
        "t gate failed (gate_error) -> review.rework_pending: "
        "the gate could not run: ArcError: t has no head_sha to verify"
    ]
    assert str(task(world, "t").state) == "review.rework_pending"


def test_integrations_wait_for_each_other_and_stop_ends_the_wait(
    world: GitWorld, clock: FakeClock
) -> None:
    scenario = {"t": {"default": {"files": {"src/calc/ops.py": OPS_WITH_DOUBLE}}}}
    write_arc_config(world, worker_args(world, scenario), stages=())
    add_plan(world, clock, ["t"])
    store = ArcStore(world.repo)
    config = load_config(world.repo)
    Loop(store, config, clock, echo=lambda line: None).run()
    main_before = world.main_sha()

    other_integration = integration_lock(world.repo)
    other_integration.acquire()  # another process is integrating
    try:
        verifier = GateVerifier(store, config, clock)
        verifier.start("t", "001")
        time.sleep(1.0)  # the gate is waiting for the lock, not pushing
        assert world.main_sha() == main_before
        verifier.stop()
    finally:
        other_integration.release()
    assert str(task(world, "t").state) == "review.verifying"
    assert world.main_sha() == main_before

"""The bounded kill test (issue 14): `radian arc run` SIGKILLed 30 times at random moments
during attempts and gates, with a worker that ignores SIGTERM among them. After every kill:
every file parses, no task is lost, none is counted twice (each task's total cost is the sum
of its attempts' costs), and no task is in a state nobody asked for (no failed.*)."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from gate_fixtures.arc_world import add_plan, worker_args, write_arc_config
from gate_fixtures.world import GitWorld

from radian.arc.clock import FakeClock
from radian.arc.states import State
from radian.arc.store import ArcStore
from radian.arc.worker import kill_attempt, stop_attempt

pytestmark = pytest.mark.integration

RADIAN = str(Path(sys.executable).parent / "radian")
KILLS = 30
TASKS = ("a", "b", "c", "stubborn")
# Files whose appearance marks a moment worth a kill: a claim, a running worker, a wrapper
# that has ended, a gate's verdict.
MOMENTS = ("attempt.json", "worker.pid", "wrapper_status.json", "verdict-*.json")


def check_invariants(repo: Path) -> None:
    for folder in ("runs", "plans"):
        for path in (repo / ".radian" / "arc" / folder).rglob("*.json"):
            json.loads(path.read_text())  # whole
    store = ArcStore(repo)
    assert sorted(store.load_plan("p").tasks) == sorted(TASKS)  # none lost
    for name in TASKS:
        task = store.load_task(name)
        assert not str(task.state).startswith("failed."), (name, task.state)
        assert len(set(task.attempts)) == len(task.attempts)
        costs = 0.0
        for attempt_id in task.attempts:
            if task.state == State.WORKING and attempt_id == task.last_attempt_id:
                continue  # its result may be written and not applied yet: the next run does
            record = store.read_attempt_result(name, attempt_id)
            costs += (record.cost_usd if record is not None else None) or 0.0
        assert task.total_cost_usd == pytest.approx(costs), name  # none counted twice


def test_thirty_sigkills_leave_every_file_whole_and_every_task_where_it_was_asked(
    world: GitWorld, clock: FakeClock
) -> None:
    chosen = random.Random(14)
    slow_fail = {"sleep": 0.4, "outcome": "failed", "cost": 0.01}
    scenario = {
        "a": {"default": slow_fail},
        "b": {"default": {"files": {"b.txt": "work {attempt}\n"}, "cost": 0.02}},
        "c": {"001": slow_fail, "default": {"files": {"c.txt": "c {attempt}\n"}}},
        "stubborn": {"default": {"stubborn": True}},
    }
    write_arc_config(world, worker_args(world, scenario), stages=("commands",),
                     limits={"max_attempts": 1000, "parallel": 4})  # fmt: skip
    add_plan(world, clock, list(TASKS))
    root = world.repo / ".radian" / "arc" / "runs"
    try:
        kill_thirty_times(world, root, chosen)
    finally:
        store = ArcStore(world.repo)
        for name in TASKS:  # no worker outlives the test
            for attempt_id in store.load_task(name).attempts:
                stop_attempt(store.attempt_dir(name, attempt_id), "interrupt", wait=False)
                kill_attempt(store.attempt_dir(name, attempt_id))


def kill_thirty_times(world: GitWorld, root: Path, chosen: random.Random) -> None:
    for kill in range(KILLS):
        moment = chosen.choice(MOMENTS)
        seen = set(root.rglob(moment))
        env = {**os.environ, "RADIAN_ARC_FAKE_NOW": f"2026-12-{1 + kill // 24:02d}T"
               f"{kill % 24:02d}:00:00Z"}  # fmt: skip
        run = subprocess.Popen([RADIAN, "arc", "run"], cwd=world.repo, env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               start_new_session=True)  # fmt: skip
        try:
            deadline = time.monotonic() + chosen.uniform(0.3, 4.0)
            while time.monotonic() < deadline and run.poll() is None:
                if set(root.rglob(moment)) - seen:
                    time.sleep(chosen.uniform(0.0, 0.2))
                    break
                time.sleep(0.02)
        finally:
            if run.poll() is None:
                os.kill(run.pid, signal.SIGKILL)  # run alone: its wrappers live on
            run.wait()
        check_invariants(world.repo)

"""Cancel from a second terminal, Ctrl-C, and a `run` killed with SIGKILL at any moment."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest
from arc_helpers import attempt_result, make_plan, run_once, task
from conftest import run_env, write_config

from radian.arc import commands
from radian.arc import git as arc_git
from radian.arc.attempt_result import AttemptResult
from radian.arc.claims import claim, recover_orphans
from radian.arc.clock import FakeClock
from radian.arc.config import load_config
from radian.arc.errors import ArcError
from radian.arc.events import texts_of
from radian.arc.settle import terminated_outcome
from radian.arc.states import State
from radian.arc.store import ArcStore
from radian.arc.worker import run_attempt

pytestmark = pytest.mark.integration

Worker = Callable[..., list[str]]
RADIAN = str(Path(sys.executable).parent / "radian")


def wait_for(predicate: Callable[[], bool], timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("timed out")
        time.sleep(0.05)


def wrapper_running(repo: Path, name: str, attempt_id: str = "001") -> bool:
    return (ArcStore(repo).attempt_dir(name, attempt_id) / "wrapper.pid").is_file()


def every_json_file_is_whole(repo: Path) -> int:
    count = 0
    for path in (repo / ".radian" / "arc").rglob("*.json"):
        json.loads(path.read_text())
        count += 1
    return count


def test_cancel_from_a_second_terminal_stops_the_worker(
    git_repo: Path, clock: FakeClock, scripted_worker: Worker
) -> None:
    write_config(git_repo, scripted_worker({"default": {"do": "silent"}}),
                 worker={"stall_secs": 60.0})  # fmt: skip
    make_plan(git_repo, clock, ["t"])
    lines: list[str] = []
    runner = threading.Thread(target=lambda: lines.extend(run_once(git_repo, clock)))
    runner.start()
    wait_for(lambda: wrapper_running(git_repo, "t"))
    done = subprocess.run(
        [RADIAN, "arc", "cancel", "t"], cwd=git_repo, capture_output=True, text=True,
        env=run_env(), timeout=60,
    )  # fmt: skip
    runner.join(timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "t cancelled -> failed.cancelled (was doing.working)\n"
    assert lines[-1] == "t attempt 001 ended after cancel"
    assert task(git_repo, "t").state == "failed.cancelled"
    record = attempt_result(git_repo, "t", "001")
    assert record["class"] == "cancel"
    assert record["next_state"] == "failed.cancelled"
    assert not wrapper_running(git_repo, "t")


def test_cancel_of_a_task_not_running_and_of_a_failed_one(git_repo: Path, clock: FakeClock) -> None:
    store = make_plan(git_repo, clock, ["t"], confirm=False)
    cancelled = commands.cancel(store, clock, "t")
    assert cancelled.lines() == ["t cancelled -> failed.cancelled (was todo.ready)"]
    assert (cancelled.task, cancelled.from_state, cancelled.state) == (
        "t", "todo.ready", "failed.cancelled")  # fmt: skip
    with pytest.raises(ArcError, match="t is failed.cancelled: there is nothing to cancel"):
        commands.cancel(store, clock, "t")
    with pytest.raises(ArcError, match="no task named 'nope'"):
        commands.cancel(store, clock, "nope")


def test_ctrl_c_stops_workers_and_records_an_interrupted_attempt(
    git_repo: Path, clock: FakeClock, scripted_worker: Worker
) -> None:
    write_config(git_repo, scripted_worker({"default": {"do": "silent"}}),
                 worker={"stall_secs": 60.0})  # fmt: skip
    make_plan(git_repo, clock, ["t"])
    run = subprocess.Popen(
        [RADIAN, "arc", "run"], cwd=git_repo, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, env=run_env(),
    )  # fmt: skip
    try:
        wait_for(lambda: wrapper_running(git_repo, "t"))
        run.send_signal(signal.SIGINT)
        out, err = run.communicate(timeout=60)
    finally:
        run.kill()
        run.communicate()
    assert run.returncode == 130, err
    assert "interrupted: workers stopped, every task file written" in out
    record = attempt_result(git_repo, "t", "001")
    assert record["class"] == "interrupted"
    assert record["row"] == "interrupted (arc stopped the worker: Ctrl-C, SIGTERM, a restart)"
    assert task(git_repo, "t").state == "todo.ready"
    every_json_file_is_whole(git_repo)


def new_file(repo: Path, pattern: str, seen: set[Path]) -> Callable[[], bool]:
    """True once a file matching `pattern` appears under .radian/arc that was not in `seen`."""
    return lambda: bool(set((repo / ".radian" / "arc").rglob(pattern)) - seen)


# The moments a `run` is killed at, each seen from the files it writes rather than guessed
# from a delay (a loaded machine starts a process late): just after a claim wrote its
# attempt.json, while a worker runs, and when a wrapper has ended but its end may not be
# applied yet.
KILL_MOMENTS = ("attempt.json", "wrapper.pid", "wrapper_status.json")


def attempts_told(repo: Path, name: str) -> list[str]:
    """Each attempt of task `name`: its row and its worker.log, for a failure's message."""
    store = ArcStore(repo)
    told = []
    for attempt_id in store.load_task(name).attempts:
        record = store.read_attempt_result(name, attempt_id)
        log = store.attempt_dir(name, attempt_id) / "worker.log"
        text = log.read_text(errors="replace") if log.is_file() else "(no worker.log)"
        told.append(f"{attempt_id}: {record.row if record is not None else None}\n{text}")
    return told


def run_arc_once(repo: Path, env: dict[str, str], fake_now: str) -> str:
    done = subprocess.run([RADIAN, "arc", "run", "--once"], cwd=repo,
                          env={**env, "RADIAN_ARC_FAKE_NOW": fake_now},
                          capture_output=True, text=True, timeout=100)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_run_killed_with_sigkill_at_any_moment_leaves_whole_files_and_continues(
    git_repo: Path, clock: FakeClock, scripted_worker: Worker
) -> None:
    # The worker outlives the killed run by seconds, so the next run (a new process, slow to
    # start on a loaded machine) still finds its wrapper running and adopts it.
    scenario = {
        "default": {"do": "sleep", "secs": 4.0, "then": {"outcome": "failed", "cost": 0.1}},
    }
    exec_args = scripted_worker(scenario, name="kill")
    scenario_file = Path(exec_args[0].removesuffix(".sh") + ".json")
    write_config(git_repo, exec_args, limits={"max_attempts": 10, "parallel": 2})
    make_plan(git_repo, clock, ["a", "b"])
    env = run_env()
    outputs = []
    for hour, moment in enumerate(KILL_MOMENTS, start=8):
        if hour > 8:
            # The next run takes up what the killed one left (an attempt with no Result is
            # terminated: a retry due in 10 s of its clock)...
            outputs.append(run_arc_once(git_repo, env, f"2026-11-30T{hour:02d}:00:00Z"))
        # ...and the run killed next starts half an hour on, when every retry is due.
        seen = set((git_repo / ".radian" / "arc").rglob(moment))
        run = subprocess.Popen([RADIAN, "arc", "run"], cwd=git_repo,
                               env={**env, "RADIAN_ARC_FAKE_NOW": f"2026-11-30T{hour:02d}:30:00Z"},
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
        try:
            wait_for(new_file(git_repo, moment, seen), timeout=60)
        finally:
            run.kill()
            run.wait()
        assert every_json_file_is_whole(git_repo) > 0
        for name in ("a", "b"):
            task(git_repo, name)  # every task file loads as a Task
    # The next runs recover what the last one left and carry the tasks on: the worker now
    # delivers, and each pass's fake clock is an hour on, so no retry is waited for. Two
    # passes do it, or a third: a wrapper a killed run had just started, whose pid file
    # recovery could not see yet, holds its task's worktree lock until its worker ends, and
    # the attempt that meets that lock is one more infrastructure retry (lock_held).
    scenario_file.write_text(json.dumps({"default": {"do": "result", "commit": True}}))
    for hour in range(3):
        outputs.append(run_arc_once(git_repo, env, f"2026-12-01T{hour:02d}:00:00Z"))
        if hour > 0 and all(task(git_repo, n).state == "review.verifying" for n in ("a", "b")):
            break
    every_json_file_is_whole(git_repo)
    for name in ("a", "b"):
        final = task(git_repo, name)
        assert final.state == "review.verifying", (outputs, attempts_told(git_repo, name))
        for attempt_id in final.attempts:
            assert attempt_result(git_repo, name, attempt_id)["next_state"]
    # The run killed while a worker ran left it running: the next run adopted it, and its
    # Result (failed, a model retry) was applied when it ended; never taken for gone.
    assert any("-> adopted (its Result is read when it ends)" in out for out in outputs)


def test_recovery_applies_a_result_written_before_the_task_was_saved(
    git_repo: Path, clock: FakeClock, scripted_worker: Worker
) -> None:
    write_config(git_repo, scripted_worker({"default": {"outcome": "failed"}}))
    store = make_plan(git_repo, clock, ["t", "u"])
    config = load_config(git_repo)
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    dead_pid = int(dead.stdout)
    for name in ("t", "u"):
        with store.task_lock(name):
            record = store.load_task(name)
            record.state = State.WORKING  # as a claim leaves it
            record.attempts = ["001"]
            record.last_attempt_id = "001"
            store.save_task(record)
        store.write_attempt_intent(name, "001", {"owner_pid": dead_pid, "claimed_at": None})
    # t's owner died after writing its attempt result (a stall) but before saving the task.
    stalled = replace(terminated_outcome(None, "2026-11-30T07:00:00Z"), row="stall")
    store.write_attempt_result("t", "001", AttemptResult(task="t", attempt_id="001",
                                                         outcome_record=stalled))  # fmt: skip
    lines = texts_of(recover_orphans(store, config, clock, running=set()))
    assert lines == [
        "t failed (stall) -> retry at 2026-11-30T07:00:10Z",
        "u attempt 001 has no live worker and no Result -> terminated",
        "u failed (infrastructure) -> retry at 2026-11-30T07:00:10Z",
        "u attempt 001 (infrastructure): its run ended and its worker is gone, with no Result",
    ]
    assert attempt_result(git_repo, "t", "001")["class"] == "stall"


def test_recovery_applies_the_end_a_wrapper_left_after_its_run_was_killed(
    git_repo: Path, clock: FakeClock, scripted_worker: Worker
) -> None:
    # The run that claimed the attempt died while its worker delivered: the wrapper ran on
    # (a session of its own) and left its status and the Result. Nobody applied them.
    write_config(git_repo, scripted_worker({"default": {"do": "result", "commit": True,
                                                        "cost": 0.4}}))  # fmt: skip
    store = make_plan(git_repo, clock, ["t"])
    config = load_config(git_repo)
    claimed = claim(store, config, "t", clock)
    assert claimed is not None
    run_attempt(claimed[0].spec, clock)
    assert task(git_repo, "t").state == "doing.working"

    lines = texts_of(recover_orphans(store, config, clock, running=set()))

    final = task(git_repo, "t")
    assert lines == [
        "t attempt 001 ended while no run watched it -> its end applied now",
        f"t completed -> review.verifying (head {(final.head_sha or '')[:12]})",
    ]
    assert final.state == "review.verifying"
    assert final.head_sha == arc_git.remote_branch_sha(git_repo, "origin", "arc/t")
    assert final.cost_usd == 0.4 and final.session_id == "sess-001"
    record = attempt_result(git_repo, "t", "001")
    assert (record["outcome"], record["class"], record["next_state"]) == (
        "completed",
        None,
        "review.verifying",
    )


def test_a_live_owner_keeps_its_attempt(git_repo: Path, clock: FakeClock) -> None:
    store = make_plan(git_repo, clock, ["t"], confirm=False)
    with store.task_lock("t"):
        record = store.load_task("t")
        record.state = State.WORKING
        record.attempts = ["001"]
        record.last_attempt_id = "001"
        store.save_task(record)
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        store.write_attempt_intent("t", "001", {"owner_pid": sleeper.pid})
        assert recover_orphans(store, load_config(git_repo), clock, running=set()) == []
        assert task(git_repo, "t").state == "doing.working"
    finally:
        sleeper.kill()
        sleeper.wait()
    assert os.path.exists(store.task_path("t"))

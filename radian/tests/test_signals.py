"""Stops and kills of `radian arc run` through the real command line, with real workers:
a task nobody cancelled never ends failed.cancelled (issue 14, bug 1), Ctrl-C never fails a
gate (bug 4), the exit codes the README gives (bug 11), a reused pid (bug 12), SIGTERM."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from arc_helpers import attempt_result, make_plan, task
from conftest import run_env, write_config
from gate_fixtures.arc_world import add_plan, worker_args, write_arc_config
from gate_fixtures.world import OPS_WITH_DOUBLE, GitWorld

from radian.arc.clock import FakeClock
from radian.arc.gate.verdict import attempt_verdicts
from radian.arc.states import State
from radian.arc.store import ArcStore

pytestmark = pytest.mark.acceptance

Worker = Callable[..., list[str]]
RADIAN = str(Path(sys.executable).parent / "radian")
FAKE_NOW = "2026-11-30T07:00:00Z"
INTERRUPTED = "interrupted (arc stopped the worker: Ctrl-C, SIGTERM, a restart)"


def wait_for(predicate: Callable[[], bool], timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("timed out")
        time.sleep(0.05)


def attempt_file(repo: Path, name: str, attempt_id: str, file: str) -> Path:
    return ArcStore(repo).attempt_dir(name, attempt_id) / file


@contextmanager
def arc_run(repo: Path, out: Path, *args: str) -> Iterator[subprocess.Popen[bytes]]:
    """`radian arc run` in a process group of its own (a terminal's foreground job), its
    output in `out`; killed at the end whatever happens."""
    with out.open("wb") as sink:
        run = subprocess.Popen([RADIAN, "arc", "run", *args], cwd=repo, stdout=sink,
                               stderr=subprocess.STDOUT, start_new_session=True,
                               env={**run_env(), "RADIAN_ARC_FAKE_NOW": FAKE_NOW})  # fmt: skip
        try:
            yield run
        finally:
            if run.poll() is None:
                os.killpg(run.pid, signal.SIGKILL)
            run.wait()


def run_once(repo: Path, fake_now: str = FAKE_NOW) -> subprocess.CompletedProcess[str]:
    return subprocess.run([RADIAN, "arc", "run", "--once"], cwd=repo, capture_output=True,
                          text=True, timeout=120,
                          env={**run_env(), "RADIAN_ARC_FAKE_NOW": fake_now})  # fmt: skip


def stubborn_config(repo: Path, scripted_worker: Worker, grace: float) -> None:
    write_config(repo, scripted_worker({"default": {"do": "stubborn"}}),
                 worker={"stall_secs": 60.0, "term_grace_secs": grace})  # fmt: skip


def test_ctrl_c_twice_kills_the_workers_exits_130_and_cancels_nothing(
    git_repo: Path, clock: FakeClock, scripted_worker: Worker, tmp_path: Path
) -> None:
    stubborn_config(git_repo, scripted_worker, grace=30.0)
    make_plan(git_repo, clock, ["t", "u"])
    out = tmp_path / "run.out"
    with arc_run(git_repo, out) as run:
        for name in ("t", "u"):
            wait_for(attempt_file(git_repo, name, "001", "worker.pid").is_file)
        os.killpg(run.pid, signal.SIGINT)
        wait_for(lambda: b"stopping 2 worker(s): waiting for them to end" in out.read_bytes())
        os.killpg(run.pid, signal.SIGINT)
        assert run.wait(timeout=20) == 130, out.read_text()
    text = out.read_text()
    assert "Traceback" not in text
    # the last line of the loop's own (run's report follows it)
    assert "interrupted: workers stopped, every task file written\nreport: " in text
    for name in ("t", "u"):
        # Killed by the second Ctrl-C, still arc's own stop: interrupted, no retry used.
        assert (task(git_repo, name).state, task(git_repo, name).retry_count) == (State.READY, 0)
        assert attempt_result(git_repo, name, "001")["row"] == INTERRUPTED
    again = run_once(git_repo)
    assert again.returncode == 0 and "cancelled" not in again.stdout


def test_sigterm_stops_run_like_ctrl_c_and_exits_143(
    git_repo: Path, clock: FakeClock, scripted_worker: Worker, tmp_path: Path
) -> None:
    stubborn_config(git_repo, scripted_worker, grace=0.5)
    make_plan(git_repo, clock, ["t"])
    out = tmp_path / "run.out"
    with arc_run(git_repo, out) as run:
        wait_for(lambda: attempt_file(git_repo, "t", "001", "worker.pid").is_file())
        run.send_signal(signal.SIGTERM)  # to run alone, as systemd's stop does
        assert run.wait(timeout=60) == 143, out.read_text()
    assert "interrupted: workers stopped, every task file written\nreport: " in out.read_text()
    assert task(git_repo, "t").state == State.READY
    assert attempt_result(git_repo, "t", "001")["row"] == INTERRUPTED
    worker_pid = int(attempt_file(git_repo, "t", "001", "worker.pid").read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(worker_pid, 0)
    for path in (git_repo / ".radian" / "arc").rglob("*.json"):
        json.loads(path.read_text())


def orphan(repo: Path, clock: FakeClock, owner: dict[str, object]) -> None:
    """Task t in doing.working, as a claim leaves it, its attempt.json naming `owner`."""
    store = ArcStore(repo)
    with store.task_lock("t"):
        record = store.load_task("t")
        record.state = State.WORKING
        record.attempts = ["001"]
        record.last_attempt_id = "001"
        store.save_task(record)
    store.write_attempt_intent("t", "001", {"task": "t", "attempt_id": "001",
                                            "claimed_at": FAKE_NOW, **owner})  # fmt: skip


def dead_pid() -> int:
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    return int(done.stdout)


def test_recovery_that_fails_a_task_exits_3(
    git_repo: Path, clock: FakeClock, scripted_worker: Worker
) -> None:
    write_config(git_repo, scripted_worker({"default": {"outcome": "failed"}}))
    make_plan(git_repo, clock, {"t": {"max_attempts": 0}})
    orphan(git_repo, clock, {"owner_pid": dead_pid()})

    done = run_once(git_repo)

    assert done.returncode == 3, done.stdout + done.stderr
    assert "t failed (infrastructure) -> failed.exhausted" in done.stdout


def test_a_task_cancelled_from_another_terminal_does_not_fail_the_run(
    git_repo: Path, clock: FakeClock, scripted_worker: Worker, tmp_path: Path
) -> None:
    write_config(git_repo, scripted_worker({"default": {"do": "silent"}}),
                 worker={"stall_secs": 60.0, "term_grace_secs": 0.5})  # fmt: skip
    make_plan(git_repo, clock, ["t"])
    out = tmp_path / "run.out"
    with arc_run(git_repo, out, "--once") as run:
        wait_for(lambda: attempt_file(git_repo, "t", "001", "worker.pid").is_file())
        cancel = subprocess.run([RADIAN, "arc", "cancel", "t"], cwd=git_repo, env=run_env(),
                                capture_output=True, text=True, timeout=60)  # fmt: skip
        assert cancel.returncode == 0, cancel.stderr
        assert run.wait(timeout=60) == 0, out.read_text()
    assert "t attempt 001 ended after cancel" in out.read_text()
    assert task(git_repo, "t").state == State.CANCELLED


def test_a_config_that_is_not_utf8_exits_2(git_repo: Path) -> None:
    config = git_repo / ".radian" / "arc.toml"
    config.parent.mkdir(parents=True)
    config.write_bytes(b'[worker]\nexec_args = ["caf\xe9"]\n')
    for args in (("run", "--once"), ("show",)):
        done = subprocess.run([RADIAN, "arc", *args], cwd=git_repo, env=run_env(),
                              capture_output=True, text=True, timeout=60)  # fmt: skip
        assert done.returncode == 2, done.stderr
        assert done.stderr.startswith(".radian/arc.toml: not UTF-8 text (byte 26")
        assert "Traceback" not in done.stderr


def test_a_pid_used_again_by_another_process_is_no_owner(
    git_repo: Path, clock: FakeClock, scripted_worker: Worker
) -> None:
    write_config(git_repo, scripted_worker({"default": {"outcome": "failed"}}))
    make_plan(git_repo, clock, ["t"])
    stranger = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        # The claim's owner had this pid before a reboot: another process has it now.
        orphan(git_repo, clock, {"owner_pid": stranger.pid, "owner_start": "another-boot:42"})
        done = run_once(git_repo)
    finally:
        stranger.kill()
        stranger.wait()
    assert done.returncode == 0, done.stderr
    assert "t attempt 001 has no live worker and no Result -> terminated" in done.stdout
    assert task(git_repo, "t").state == State.RETRY_WAIT


PRE_RECEIVE = """#!/bin/sh
# Slow pushes to main only: the gate's integration push is in flight for two seconds.
while read old new ref; do
  if [ "$ref" = "refs/heads/main" ]; then touch "{flag}"; sleep 2; fi
done
"""


def test_ctrl_c_during_a_gates_push_leaves_the_task_verifying(
    world: GitWorld, clock: FakeClock, tmp_path: Path
) -> None:
    flag = tmp_path / "push-started"
    hook = world.remote / "hooks" / "pre-receive"
    hook.write_text(PRE_RECEIVE.replace("{flag}", str(flag)))
    hook.chmod(0o755)
    scenario = {"t": {"default": {"files": {"src/calc/ops.py": OPS_WITH_DOUBLE}}}}
    write_arc_config(world, worker_args(world, scenario), stages=("commands",))
    add_plan(world, clock, ["t"])
    out = tmp_path / "run.out"
    with arc_run(world.repo, out) as run:
        wait_for(flag.is_file)
        os.killpg(run.pid, signal.SIGINT)  # the terminal's Ctrl-C: the whole foreground group
        assert run.wait(timeout=60) == 130, out.read_text()
    store = ArcStore(world.repo)
    assert store.load_task("t").state == State.VERIFYING, out.read_text()
    reasons = [verdict.reason for verdict in attempt_verdicts(store.task_dir("t"), "001")]
    assert "gate_error" not in reasons
    flag.unlink()
    again = run_once(world.repo)
    assert again.returncode == 0, again.stdout + again.stderr
    assert store.load_task("t").state == State.INTEGRATED

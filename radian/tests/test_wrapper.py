"""The wrapper, run for real through run_attempt: stall, wall_time, SIGKILL after the grace
period, the worktree lock (exit 4), failures before the worker starts, and its status file."""

from __future__ import annotations

import fcntl
import itertools
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from worker_fixtures import (
    HOLD_LOCK,
    ArcRepo,
    arc_repo,
    emit_file,
    misbehaving_worker,
    result_worker,
)

from radian.arc import git as arc_git
from radian.arc.clock import FakeClock
from radian.arc.worker import run_attempt
from radian.arc.worker.wrapper import EXIT_LOCK_HELD, EXIT_NOT_STARTED, Limits, supervise

pytestmark = pytest.mark.integration

__all__ = ["arc_repo"]


def status_of(repo: ArcRepo, attempt_id: str = "a1") -> dict[str, object]:
    path = repo.attempt_dir("t1", attempt_id) / "wrapper_status.json"
    status: dict[str, object] = json.loads(path.read_text())
    return status


def test_a_silent_worker_is_stopped_as_stall(arc_repo: ArcRepo) -> None:
    # stall_secs leaves a loaded machine time to start the worker and print its first line.
    spec = arc_repo.spec(misbehaving_worker("silent"), stall_secs=1.5, term_grace_secs=2)
    began = time.monotonic()
    end = run_attempt(spec, FakeClock())
    assert time.monotonic() - began < 10
    assert (end.wrapper_class, end.result, end.worker_started) == ("stall", None, True)
    assert end.exit_code == -15  # it died of the SIGTERM, within the grace period
    log = end.log_path.read_text()
    assert "misbehaving: silent" in log
    assert "radian arc wrapper: stall: sending SIGTERM to the worker" in log
    assert "SIGKILL" not in log


def test_output_keeps_a_worker_from_stalling_but_not_past_wall_time(arc_repo: ArcRepo) -> None:
    # A line every 0.1 s: silent for a whole second only on a badly stalled machine.
    spec = arc_repo.spec(
        misbehaving_worker("chatter"), stall_secs=1.0, wall_time_secs=2.0, term_grace_secs=1
    )
    end = run_attempt(spec, FakeClock())
    assert end.wrapper_class == "wall_time"
    assert end.exit_code == -15
    assert end.log_path.read_text().count("still busy") >= 5


def test_a_worker_ignoring_sigterm_is_killed_after_the_grace_period(arc_repo: ArcRepo) -> None:
    # stall_secs leaves the worker time to start and ignore SIGTERM before it gets one.
    spec = arc_repo.spec(misbehaving_worker("ignore_sigterm"), stall_secs=1.5, term_grace_secs=0.5)
    end = run_attempt(spec, FakeClock())
    assert (end.wrapper_class, end.exit_code) == ("stall", -9)
    assert (
        "radian arc wrapper: the worker outlived 0.5 s after SIGTERM: sending SIGKILL"
        in end.log_path.read_text()
    )


def test_the_worker_group_is_killed_when_the_worker_exits(
    arc_repo: ArcRepo, tmp_path: Path
) -> None:
    pid_file = tmp_path / "grandchild.pid"
    end = run_attempt(arc_repo.spec(misbehaving_worker("orphan", str(pid_file))), FakeClock())
    assert end.result is not None and end.result.outcome == "failed"
    grandchild = int(pid_file.read_text())
    deadline = time.monotonic() + 5
    while not gone(grandchild) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert gone(grandchild)


def gone(pid: int) -> bool:
    """Dead: no process, or a zombie waiting for init to reap it."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return True
    return stat.rpartition(")")[2].split()[0] == "Z"


def test_a_crash_leaves_no_result(arc_repo: ArcRepo) -> None:
    end = run_attempt(arc_repo.spec(misbehaving_worker("crash")), FakeClock())
    assert (end.result, end.wrapper_class, end.exit_code, end.worker_started) == (
        None,
        None,
        1,
        True,
    )
    assert "RuntimeError: the worker crashed" in end.log_path.read_text()
    assert end.delivery is None


def test_lock_held_by_another_process_exits_4(arc_repo: ArcRepo, tmp_path: Path) -> None:
    lock_path = arc_git.worktree_lock_path(arc_repo.root, "t1")
    lock_path.parent.mkdir(parents=True)
    holder = subprocess.Popen(
        [sys.executable, str(HOLD_LOCK), str(lock_path)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "locked\n"
        end = run_attempt(
            arc_repo.spec(result_worker("--record", str(tmp_path / "ran.json"))), FakeClock()
        )
    finally:
        holder.kill()
        holder.wait()
        assert holder.stdout is not None
        holder.stdout.close()
    assert (end.wrapper_class, end.exit_code, end.worker_started) == ("lock_held", 4, False)
    assert (end.result, end.session_id) == (None, None)
    assert not (tmp_path / "ran.json").exists()
    assert "is held by another process" in end.log_path.read_text()
    assert status_of(arc_repo)["wrapper_exit"] == EXIT_LOCK_HELD


def test_lock_held_in_this_process_exits_4_and_the_worktree_is_untouched(
    arc_repo: ArcRepo,
) -> None:
    lock_path = arc_git.worktree_lock_path(arc_repo.root, "t1")
    lock_path.parent.mkdir(parents=True)
    with open(lock_path, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        end = run_attempt(arc_repo.spec(result_worker()), FakeClock())
    assert end.wrapper_class == "lock_held"
    assert not arc_git.worktree_path(arc_repo.root, "t1").exists()
    # released: the next attempt runs
    again = run_attempt(arc_repo.spec(result_worker(), attempt_id="a2"), FakeClock())
    assert again.wrapper_class is None and again.worker_started


def test_resuming_while_the_lock_is_held_keeps_the_session(arc_repo: ArcRepo) -> None:
    lock_path = arc_git.worktree_lock_path(arc_repo.root, "t1")
    lock_path.parent.mkdir(parents=True)
    with open(lock_path, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        end = run_attempt(arc_repo.spec(result_worker(), resume_session_id="s-7"), FakeClock())
    assert (end.worker_started, end.session_id) == (False, "s-7")


def test_a_worktree_that_cannot_be_prepared_never_starts_the_worker(
    arc_repo: ArcRepo, tmp_path: Path
) -> None:
    spec = arc_repo.spec(result_worker("--record", str(tmp_path / "ran.json")))
    spec = type(spec)(**{**spec.__dict__, "target_branch": "no-such-branch"})
    end = run_attempt(spec, FakeClock())
    assert (end.worker_started, end.wrapper_class, end.exit_code) == (
        False,
        None,
        EXIT_NOT_STARTED,
    )
    assert end.result is None and not (tmp_path / "ran.json").exists()
    assert "the worktree could not be prepared: git rev-parse" in end.log_path.read_text()
    assert "origin/no-such-branch" in str(status_of(arc_repo)["error"])


def test_a_program_that_cannot_run_never_starts(arc_repo: ArcRepo) -> None:
    end = run_attempt(arc_repo.spec([str(arc_repo.root / "missing-worker")]), FakeClock())
    assert (end.worker_started, end.exit_code, end.result) == (False, EXIT_NOT_STARTED, None)
    assert "the worker could not be started" in end.log_path.read_text()


def test_status_file_and_logs(arc_repo: ArcRepo, tmp_path: Path) -> None:
    emit = emit_file(tmp_path, {"type": "result", "outcome": "refused"})
    end = run_attempt(arc_repo.spec(result_worker("--emit", str(emit), "--exit", "3")), FakeClock())
    attempt_dir = arc_repo.attempt_dir("t1", "a1")
    status = status_of(arc_repo)
    assert status["wrapper_class"] is None
    assert (status["exit_code"], status["worker_started"], status["wrapper_exit"]) == (3, True, 0)
    assert status["worktree"] == str(arc_git.worktree_path(arc_repo.root, "t1"))
    assert status["base_sha"] == arc_repo.remote_sha("main")
    assert end.exit_code == 3
    assert end.log_path == attempt_dir / "worker.log"
    assert "a note on stderr" in end.log_path.read_text()
    stdout = (attempt_dir / "worker.stdout").read_text()
    assert "a note on stderr" not in stdout and '"outcome": "refused"' in stdout
    assert not (attempt_dir / "wrapper.pid").exists()
    assert not [p for p in attempt_dir.iterdir() if p.name.endswith(".tmp")]


def test_the_wrapper_refuses_a_bad_invocation(tmp_path: Path) -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "radian.arc.worker.wrapper", str(tmp_path)],
        capture_output=True,
        text=True,
        env={**os.environ},
    )
    assert completed.returncode == 2
    assert "usage: python -m radian.arc.worker.wrapper <attempt dir>" in completed.stderr


# --- supervise alone, with injected time: each call of the clock moves it 10 s on ---


def sleeper(*, ignore_sigterm: bool = False) -> subprocess.Popen[bytes]:
    code = "import signal, time\n"
    if ignore_sigterm:
        code += "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
    code += "print('ready', flush=True)\ntime.sleep(60)\n"
    process = subprocess.Popen(
        [sys.executable, "-c", code],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    assert process.stdout is not None and process.stdout.readline() == b"ready\n"
    return process


def supervise_with_ticks(
    process: subprocess.Popen[bytes], limits: Limits, stop: bool = False
) -> tuple[str | None, list[str]]:
    ticks = itertools.count(0.0, 10.0)
    notes: list[str] = []
    assert process.stdout is not None and process.stderr is not None
    stop_class = supervise(
        process,
        {process.stdout: (), process.stderr: ()},
        limits,
        lambda: stop,
        notes.append,
        monotonic=lambda: next(ticks),
    )
    return stop_class, notes


@pytest.mark.parametrize(
    ("limits", "stop", "expected"),
    [
        (Limits(stall_secs=25, wall_time_secs=1000, term_grace_secs=1e9), False, "stall"),
        (Limits(stall_secs=1000, wall_time_secs=25, term_grace_secs=1e9), False, "wall_time"),
        (Limits(stall_secs=1000, wall_time_secs=1000, term_grace_secs=1e9), True, "cancelled"),
    ],
)
def test_supervise_classes(limits: Limits, stop: bool, expected: str) -> None:
    process = sleeper()
    stop_class, notes = supervise_with_ticks(process, limits, stop)
    assert (stop_class, process.returncode) == (expected, -15)
    assert notes == [f"radian arc wrapper: {expected}: sending SIGTERM to the worker"]


def test_supervise_kills_after_the_grace_period() -> None:
    process = sleeper(ignore_sigterm=True)
    stop_class, notes = supervise_with_ticks(
        process, Limits(stall_secs=15, wall_time_secs=1000, term_grace_secs=30)
    )
    assert (stop_class, process.returncode) == ("stall", -9)
    assert notes[1] == "radian arc wrapper: the worker outlived 30 s after SIGTERM: sending SIGKILL"

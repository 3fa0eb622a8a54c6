"""A crash of arc itself is not the worker's (issue 31, point 3): after a SIGKILL of
`radian arc run`, the next `run` finds the workers it left still running and adopts them (it
becomes their owner and reads their Result when they end), instead of stopping them, calling
them gone and using a retry. A worker that is truly gone is terminated, as the chapter says.
Real `radian arc run` processes, real wrappers and workers."""

from __future__ import annotations

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

from radian.arc.clock import FakeClock
from radian.arc.states import State
from radian.arc.store import ArcStore
from radian.arc.worker import kill_attempt

pytestmark = pytest.mark.acceptance

Worker = Callable[..., list[str]]
RADIAN = str(Path(sys.executable).parent / "radian")
FAKE_NOW = "2026-11-30T07:00:00Z"
ADOPTED = (
    "t attempt 001 still running after its run ended -> adopted (its Result is read when it ends)\n"
)


def wait_for(predicate: Callable[[], bool], timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("timed out")
        time.sleep(0.05)


@contextmanager
def arc_run(repo: Path, out: Path, *args: str) -> Iterator[subprocess.Popen[bytes]]:
    """`radian arc run` in a process group of its own; killed at the end whatever happens."""
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


def attempt_file(repo: Path, name: str) -> Path:
    return ArcStore(repo).attempt_dir("t", "001") / name


def alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"


def adopted_by(repo: Path, run: subprocess.Popen[bytes]) -> Callable[[], bool]:
    """True once `run` has made itself the attempt's owner (or has ended: then it did not)."""

    def check() -> bool:
        intent = ArcStore(repo).read_attempt_intent("t", "001") or {}
        return intent.get("owner_pid") == run.pid or run.poll() is not None

    return check


def killed_while_working(repo: Path, out: Path) -> int:
    """A `run` that claims t and is SIGKILLed (alone) while t's worker runs; the worker's pid."""
    with arc_run(repo, out) as run:
        wait_for(attempt_file(repo, "worker.pid").is_file)
        run.kill()  # run alone: its wrapper and worker, each in a session of its own, live on
        run.wait()
    return int(attempt_file(repo, "worker.pid").read_text())


def delivers_when(flag: Path, cost: float = 0.2) -> dict[str, object]:
    """A worker that waits for `flag`, then commits, pushes and reports `cost`."""
    then = {"do": "result", "commit": True, "cost": cost}
    return {"001": {"do": "sleep", "until": str(flag), "secs": 90, "then": then}}


def test_the_next_run_adopts_a_live_worker_and_applies_its_result(
    git_repo: Path, clock: FakeClock, scripted_worker: Worker, tmp_path: Path
) -> None:
    flag = tmp_path / "go"
    write_config(git_repo, scripted_worker(delivers_when(flag)), worker={"stall_secs": 60.0})
    make_plan(git_repo, clock, ["t"])
    worker_pid = killed_while_working(git_repo, tmp_path / "a.out")

    out = tmp_path / "b.out"
    with arc_run(git_repo, out, "--once") as run:
        wait_for(adopted_by(git_repo, run))
        assert alive(worker_pid), out.read_text()  # adopted, not stopped
        flag.touch()
        assert run.wait(timeout=60) == 0, out.read_text()

    text = out.read_text()
    assert text.startswith(ADOPTED), text
    assert "no live worker" not in text
    final = task(git_repo, "t")
    assert f"t completed -> review.verifying (head {(final.head_sha or '')[:12]})\n" in text
    assert (final.state, final.retry_count, final.attempts) == (State.VERIFYING, 0, ["001"])
    assert final.cost_usd == pytest.approx(0.2)
    record = attempt_result(git_repo, "t", "001")
    assert (record["outcome"], record["class"], record["cost_usd"]) == ("completed", None, 0.2)
    intent = ArcStore(git_repo).read_attempt_intent("t", "001") or {}
    assert intent["adopted_at"] == FAKE_NOW


def test_a_run_killed_while_it_watches_an_adopted_worker_leaves_it_to_be_adopted_again(
    git_repo: Path, clock: FakeClock, scripted_worker: Worker, tmp_path: Path
) -> None:
    flag = tmp_path / "go"
    write_config(git_repo, scripted_worker(delivers_when(flag)), worker={"stall_secs": 60.0})
    make_plan(git_repo, clock, ["t"])
    worker_pid = killed_while_working(git_repo, tmp_path / "a.out")
    with arc_run(git_repo, tmp_path / "b.out") as run_b:
        wait_for(adopted_by(git_repo, run_b))
        run_b.kill()
        run_b.wait()
    assert alive(worker_pid)

    out = tmp_path / "c.out"
    with arc_run(git_repo, out, "--once") as run_c:
        wait_for(adopted_by(git_repo, run_c))
        flag.touch()
        assert run_c.wait(timeout=60) == 0, out.read_text()
    assert out.read_text().startswith(ADOPTED)
    final = task(git_repo, "t")
    assert (final.state, final.retry_count, final.attempts) == (State.VERIFYING, 0, ["001"])


def test_ctrl_c_of_the_adopting_run_interrupts_the_adopted_worker(
    git_repo: Path, clock: FakeClock, scripted_worker: Worker, tmp_path: Path
) -> None:
    flag = tmp_path / "never"
    write_config(git_repo, scripted_worker(delivers_when(flag)), worker={"stall_secs": 60.0})
    make_plan(git_repo, clock, ["t"])
    worker_pid = killed_while_working(git_repo, tmp_path / "a.out")
    out = tmp_path / "b.out"
    with arc_run(git_repo, out) as run:
        wait_for(adopted_by(git_repo, run))
        os.killpg(run.pid, signal.SIGINT)
        assert run.wait(timeout=60) == 130, out.read_text()
    text = out.read_text()
    assert "t interrupted -> todo.ready (no retry used)\n" in text, text
    assert "cancelled" not in text
    assert not alive(worker_pid)
    stopped = task(git_repo, "t")
    assert (stopped.state, stopped.retry_count) == (State.READY, 0)
    assert attempt_result(git_repo, "t", "001")["class"] == "interrupted"


def test_a_worker_that_is_truly_gone_is_terminated(
    git_repo: Path, clock: FakeClock, scripted_worker: Worker, tmp_path: Path
) -> None:
    write_config(git_repo, scripted_worker(delivers_when(tmp_path / "never")),
                 worker={"stall_secs": 60.0})  # fmt: skip
    make_plan(git_repo, clock, ["t"])
    worker_pid = killed_while_working(git_repo, tmp_path / "a.out")
    kill_attempt(ArcStore(git_repo).attempt_dir("t", "001"))  # the wrapper and worker die too
    wait_for(lambda: not alive(worker_pid))

    done = subprocess.run([RADIAN, "arc", "run", "--once"], cwd=git_repo, capture_output=True,
                          text=True, timeout=120,
                          env={**run_env(), "RADIAN_ARC_FAKE_NOW": FAKE_NOW})  # fmt: skip

    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith(
        "t attempt 001 has no live worker and no Result -> terminated\n"
        "t failed (infrastructure) -> retry at 2026-11-30T07:00:1"
    ), done.stdout
    gone = task(git_repo, "t")
    assert (gone.state, gone.retry_count) == (State.RETRY_WAIT, 1)
    assert (
        attempt_result(git_repo, "t", "001")["row"] == "terminated (no Result, a crash or a kill)"
    )

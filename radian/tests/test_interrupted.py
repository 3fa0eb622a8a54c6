"""A stop is not a failure (issue 31, point 3): an attempt arc itself stopped, by Ctrl-C or by
SIGTERM (a service's stop or restart), is `interrupted`, our row of the table. It uses no
retry, counts what the worker reported spending so far, leaves the task claimable at once and
its session for the next attempt to resume. Through the real command line, real workers."""

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
from acp_fixtures import REPLY_FEE_USD, StandIn, deliver_script, radian_worker_config
from acp_fixtures import stand_in as stand_in  # the fixture, for pytest to find
from arc_helpers import attempt_result, make_plan, task
from conftest import run_env, write_config

from radian.arc.clock import FakeClock
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


@contextmanager
def arc_run(repo: Path, out: Path, *args: str) -> Iterator[subprocess.Popen[bytes]]:
    """`radian arc run` in a process group of its own (a terminal's foreground job); killed
    at the end whatever happens."""
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


def reported(repo: Path, attempt_id: str) -> Callable[[], bool]:
    """True once attempt `attempt_id` of t printed its progress line (its worker runs)."""
    stdout = ArcStore(repo).attempt_dir("t", attempt_id) / "worker.stdout"
    return lambda: stdout.is_file() and b'"progress"' in stdout.read_bytes()


def stop(run: subprocess.Popen[bytes], how: str, repo: Path | None = None) -> None:
    if how == "ctrl-c":
        os.killpg(run.pid, signal.SIGINT)  # the terminal's Ctrl-C: the whole foreground group
    elif how == "sigterm":
        run.send_signal(signal.SIGTERM)  # to run alone, as a service manager's stop does
    else:  # `radian arc stop`, from another terminal
        assert repo is not None
        said = subprocess.run([RADIAN, "arc", "stop", "--json"], cwd=repo, capture_output=True,
                              text=True, timeout=120, env=run_env())  # fmt: skip
        assert said.returncode == 0, said.stdout + said.stderr
        result = json.loads(said.stdout)["result"]
        assert (result["kind"], result["pid"], result["stopped"]) == ("run_stopped", run.pid, True)


# The session's total as the worker reports it at each stop, then at its Result.
SO_FAR = {"001": 0.10, "002": 0.25, "003": 0.45}
FINAL = 0.60


def test_stop_with_no_run_says_so(
    git_repo: Path, clock: FakeClock, scripted_worker: Worker
) -> None:
    write_config(git_repo, scripted_worker({}))
    said = subprocess.run([RADIAN, "arc", "stop"], cwd=git_repo, capture_output=True,
                          text=True, timeout=60, env=run_env())  # fmt: skip
    assert (said.returncode, said.stdout) == (1, "")
    assert said.stderr == "no radian arc run is working on this repository\n"


@pytest.mark.parametrize(
    ("how", "exit_code"), [("ctrl-c", 130), ("sigterm", 143), ("radian arc stop", 143)]
)
def test_three_stops_use_no_retry_count_the_spend_and_resume_the_session(
    git_repo: Path,
    clock: FakeClock,
    scripted_worker: Worker,
    tmp_path: Path,
    how: str,
    exit_code: int,
) -> None:
    scenario: dict[str, object] = {
        attempt: {"do": "silent", "progress": cost} for attempt, cost in SO_FAR.items()
    }
    scenario["004"] = {"do": "result", "commit": True, "cost": FINAL}
    write_config(git_repo, scripted_worker(scenario), worker={"stall_secs": 60.0})
    # max_attempts 2: before, the third stop left the task failed.exhausted.
    make_plan(git_repo, clock, {"t": {"max_attempts": 2}})

    for number, attempt_id in enumerate(SO_FAR, start=1):
        out = tmp_path / f"run-{number}.out"
        with arc_run(git_repo, out) as run:
            wait_for(reported(git_repo, attempt_id))
            stop(run, how, git_repo)
            assert run.wait(timeout=60) == exit_code, out.read_text()
        text = out.read_text()
        assert "t interrupted -> todo.ready (no retry used)\n" in text, text
        assert "interrupted: workers stopped, every task file written\n" in text
        stopped = task(git_repo, "t")
        assert (stopped.state, stopped.retry_count, stopped.retry_at) == (State.READY, 0, None)
        assert stopped.session_id == "sess-001"
        assert stopped.cost_usd == pytest.approx(SO_FAR[attempt_id])
        record = attempt_result(git_repo, "t", attempt_id)
        assert (record["class"], record["row"], record["next_state"]) == (
            "interrupted", INTERRUPTED, "todo.ready")  # fmt: skip
        assert record["session_cost_usd"] == SO_FAR[attempt_id]

    done = subprocess.run([RADIAN, "arc", "run", "--once"], cwd=git_repo, capture_output=True,
                          text=True, timeout=120,
                          env={**run_env(), "RADIAN_ARC_FAKE_NOW": FAKE_NOW})  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("t todo.ready -> doing.working (attempt 004)\n")
    final = task(git_repo, "t")
    assert (final.state, final.retry_count) == (State.VERIFYING, 0)
    store = ArcStore(git_repo)
    resumed = [store.read_attempt_intent("t", a)["resume_session_id"]  # type: ignore[index]
               for a in ("002", "003", "004")]  # fmt: skip
    assert resumed == ["sess-001"] * 3
    # Each attempt cost what the session grew by: the task counts the session's total once.
    costs = [attempt_result(git_repo, "t", a)["cost_usd"] for a in ("001", "002", "003", "004")]
    assert costs == pytest.approx([0.10, 0.15, 0.20, 0.15])
    assert final.cost_usd == final.total_cost_usd == pytest.approx(FINAL)


def test_an_interrupted_spend_that_uses_the_budget_up_pauses_the_task(
    git_repo: Path, clock: FakeClock, scripted_worker: Worker, tmp_path: Path
) -> None:
    write_config(git_repo, scripted_worker({"001": {"do": "silent", "progress": 0.30}}),
                 worker={"stall_secs": 60.0})  # fmt: skip
    make_plan(git_repo, clock, {"t": {"max_cost_usd": 0.25}})
    out = tmp_path / "run.out"
    with arc_run(git_repo, out) as run:
        wait_for(reported(git_repo, "001"))
        stop(run, "ctrl-c")
        assert run.wait(timeout=60) == 130, out.read_text()
    assert "t interrupted -> todo.paused_budget (task budget: $0.30 of $0.25 used)\n" in (
        out.read_text()
    )
    paused = task(git_repo, "t")
    assert (paused.state, paused.retry_count, paused.cost_usd) == (State.PAUSED_BUDGET, 0, 0.30)


def test_a_worker_that_ended_by_itself_as_run_stops_is_read_by_its_result(
    git_repo: Path, clock: FakeClock, scripted_worker: Worker, tmp_path: Path
) -> None:
    # The worker delivers and exits at once; the SIGTERM reaches run while the attempt's end
    # is read. Before, every attempt that ended during a stop was terminated, even this one.
    write_config(git_repo, scripted_worker({"001": {"do": "result", "commit": True}}))
    make_plan(git_repo, clock, ["t"])
    status = ArcStore(git_repo).attempt_dir("t", "001") / "wrapper_status.json"
    out = tmp_path / "run.out"
    with arc_run(git_repo, out) as run:
        wait_for(status.is_file)
        stop(run, "sigterm")
        run.wait(timeout=60)
    record = attempt_result(git_repo, "t", "001")
    assert (record["outcome"], record["class"]) == ("completed", None), out.read_text()
    assert task(git_repo, "t").state == State.VERIFYING


@pytest.mark.timeout(240)
def test_the_radian_worker_stopped_mid_turn_counts_its_fee_and_resumes_its_session(
    git_repo: Path, clock: FakeClock, stand_in: StandIn, tmp_path: Path
) -> None:
    # Over ACP: the first model reply (a tool call) is billed, the second request hangs; Ctrl-C
    # then. The client reports the cancelled turn's fee and session, arc counts and keeps them.
    radian_worker_config(git_repo, worker={"stall_secs": 60.0, "term_grace_secs": 10.0})
    make_plan(git_repo, clock, ["greet"])
    stand_in.script.extend([{"tool": "write_file", "input": {"path": "a.md", "content": "a"}},
                            {"hang": True}])  # fmt: skip
    out = tmp_path / "run.out"
    with arc_run(git_repo, out) as run:
        wait_for(lambda: len(stand_in.requests) == 2, timeout=120)
        stop(run, "ctrl-c")
        assert run.wait(timeout=60) == 130, out.read_text()
    assert "greet interrupted -> todo.ready (no retry used)\n" in out.read_text()
    stopped = task(git_repo, "greet")
    record = attempt_result(git_repo, "greet", "001")
    assert record["class"] == "interrupted"
    assert record["cost_usd"] == pytest.approx(REPLY_FEE_USD["anthropic"])
    assert stopped.cost_usd == pytest.approx(REPLY_FEE_USD["anthropic"])
    assert stopped.session_id and record["session_id"] == stopped.session_id

    stand_in.script[:] = deliver_script("greet")
    done = subprocess.run([RADIAN, "arc", "run", "--once"], cwd=git_repo, capture_output=True,
                          text=True, timeout=180,
                          env={**run_env(), "RADIAN_ARC_FAKE_NOW": FAKE_NOW})  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    intent = ArcStore(git_repo).read_attempt_intent("greet", "002") or {}
    assert intent["resume_session_id"] == stopped.session_id
    log = (ArcStore(git_repo).attempt_dir("greet", "002") / "worker.log").read_text()
    assert f"session/load {stopped.session_id}" in log, log
    assert task(git_repo, "greet").state == State.VERIFYING

"""A remote outage is an infrastructure wait, not the task's failure: no retry is used, and
`run` never crashes on it (issue 14: "A remote outage")."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from arc_helpers import attempt_result, make_plan, task
from conftest import run_env, write_config

from radian.arc.clock import FakeClock
from radian.arc.states import State

pytestmark = pytest.mark.acceptance

Worker = Callable[..., list[str]]
RADIAN = str(Path(sys.executable).parent / "radian")


def run_once(repo: Path, fake_now: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([RADIAN, "arc", "run", "--once"], cwd=repo, capture_output=True,
                          text=True, timeout=120,
                          env={**run_env(), "RADIAN_ARC_FAKE_NOW": fake_now})  # fmt: skip


def test_an_unreachable_remote_waits_without_using_retries(
    git_repo: Path, clock: FakeClock, scripted_worker: Worker
) -> None:
    write_config(git_repo, scripted_worker({"default": {"do": "result", "commit": True}}),
                 limits={"max_attempts": 1})  # fmt: skip
    make_plan(git_repo, clock, ["t"])
    remote = git_repo.parent / "remote.git"
    away = git_repo.parent / "remote-away.git"
    remote.rename(away)  # the outage
    for hour in (8, 9, 10):  # more outages than max_attempts allows retries
        done = run_once(git_repo, f"2026-11-30T{hour:02d}:00:00Z")
        assert done.returncode == 0, done.stdout + done.stderr
        assert "t remote unreachable -> retry at " in done.stdout
        assert "(no retry used)" in done.stdout
        waiting = task(git_repo, "t")
        assert (waiting.state, waiting.retry_count) == (State.RETRY_WAIT, 0)
    assert attempt_result(git_repo, "t", "001")["class"] == "infrastructure"
    away.rename(remote)  # the remote is back

    done = run_once(git_repo, "2026-11-30T12:00:00Z")

    assert done.returncode == 0, done.stderr
    delivered = task(git_repo, "t")
    assert delivered.state == State.VERIFYING and delivered.remote_wait_streak == 0

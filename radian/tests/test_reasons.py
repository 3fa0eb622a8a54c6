"""Reasons where people look (issue 31, point 4): `run` and `show` print why an attempt was an
infrastructure retry (the held lock, the rejected push, the missing credential), not only
the class. Through the real command line, with real workers."""

from __future__ import annotations

import fcntl
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from arc_helpers import attempt_result, make_plan
from conftest import run_env, write_config

from radian.arc import git as arc_git
from radian.arc.clock import FakeClock

pytestmark = pytest.mark.acceptance

Worker = Callable[..., list[str]]
RADIAN = str(Path(sys.executable).parent / "radian")
FAKE_NOW = "2026-11-30T07:00:00Z"


def retry_then(why: str) -> re.Pattern[str]:
    """The retry's line (at the OffsetClock's time), then the reason's, as run prints them."""
    return re.compile(r"(?m)^t failed \(infrastructure\) -> retry at \S+\n"
                      r"t attempt 001 \(infrastructure\): " + re.escape(why) + "\n")  # fmt: skip


def arc(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**run_env(), "RADIAN_ARC_FAKE_NOW": FAKE_NOW}
    return subprocess.run([RADIAN, "arc", *args], cwd=repo, capture_output=True, text=True,
                          timeout=120, env=env)  # fmt: skip


def run_and_show(repo: Path) -> tuple[str, str]:
    done = arc(repo, "run", "--once")
    assert done.returncode == 0, done.stdout + done.stderr
    shown = arc(repo, "show", "t")
    assert shown.returncode == 0, shown.stderr
    return done.stdout, shown.stdout


def test_a_held_worktree_lock_is_named(
    git_repo: Path, clock: FakeClock, scripted_worker: Worker
) -> None:
    write_config(git_repo, scripted_worker({"default": {"do": "result", "commit": True}}))
    make_plan(git_repo, clock, ["t"])
    lock = arc_git.worktree_lock_path(git_repo, "t")
    lock.parent.mkdir(parents=True, exist_ok=True)
    descriptor = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
    fcntl.flock(descriptor, fcntl.LOCK_EX)  # another process holds the task's worktree
    try:
        out, shown = run_and_show(git_repo)
    finally:
        os.close(descriptor)
    why = f"the worktree lock {lock} is held by another process"
    assert retry_then(why).search(out), out
    assert f"    reason: {why}\n" in shown, shown
    assert attempt_result(git_repo, "t", "001")["reason"] == why


REFUSE = """#!/bin/sh
while read old new ref; do
  case "$ref" in refs/heads/arc/*) echo "arc/ branches are frozen" >&2; exit 1;; esac
done
"""


def test_a_rejected_push_is_named(
    git_repo: Path, clock: FakeClock, scripted_worker: Worker
) -> None:
    hook = git_repo.parent / "remote.git" / "hooks" / "pre-receive"
    hook.write_text(REFUSE)
    hook.chmod(0o755)
    # The worker commits and pushes; the remote refuses; the worker fails without a Result.
    write_config(git_repo, scripted_worker({"default": {"do": "result", "commit": True}}))
    make_plan(git_repo, clock, ["t"])
    out, shown = run_and_show(git_repo)
    why = (
        "the worker exited 1 without a Result: "
        "! [remote rejected] HEAD -> arc/t (pre-receive hook declined)"
    )
    assert retry_then(why).search(out), out
    assert f"    reason: {why}\n" in shown, shown


def test_a_missing_credential_is_named(
    git_repo: Path, clock: FakeClock, scripted_worker: Worker
) -> None:
    said = "error: ANTHROPIC_API_KEY is not set; log in or export it"
    write_config(git_repo, scripted_worker({"default": {"do": "crash", "stderr": said}}))
    make_plan(git_repo, clock, ["t"])
    out, shown = run_and_show(git_repo)
    why = f"the worker exited 1 without a Result: {said}"
    assert retry_then(why).search(out), out
    assert f"    reason: {why}\n" in shown, shown
    document = arc(git_repo, "show", "t", "--json").stdout
    assert why in document


def test_an_outcome_this_build_does_not_know_is_named(
    git_repo: Path, clock: FakeClock, scripted_worker: Worker
) -> None:
    write_config(git_repo, scripted_worker({"default": {"outcome": "exploded"}}))
    make_plan(git_repo, clock, ["t"])
    out, shown = run_and_show(git_repo)
    why = "the worker reported the outcome 'exploded', which this build does not know"
    assert retry_then(why).search(out), out
    assert f"    reason: {why}\n" in shown, shown

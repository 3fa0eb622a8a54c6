"""A cancelled attempt ends a run of model waits (issue 14, bug 10)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import pytest
from arc_helpers import make_plan, run_once, task
from conftest import write_config
from test_cancel_and_recovery import wait_for, wrapper_running

from radian.arc import commands
from radian.arc.clock import FakeClock, parse_utc
from radian.arc.store import ArcStore

pytestmark = pytest.mark.integration

Worker = Callable[..., list[str]]
UNAVAILABLE = {"outcome": "failed", "model_error": {"kind": "unavailable"}}


def test_a_cancelled_attempt_ends_the_run_of_model_waits(
    git_repo: Path, clock: FakeClock, scripted_worker: Worker
) -> None:
    scenario = {"001": UNAVAILABLE, "002": {"do": "silent"}, "default": UNAVAILABLE}
    write_config(git_repo, scripted_worker(scenario), worker={"stall_secs": 60.0})
    store = make_plan(git_repo, clock, ["t"])

    run_once(git_repo, clock)  # attempt 001: the first model wait, 5 minutes
    first = task(git_repo, "t")
    assert parse_utc(first.retry_at or "") - clock.now() == timedelta(minutes=5)
    assert first.model_wait_streak == 1

    clock.advance(301)
    runner = threading.Thread(target=lambda: run_once(git_repo, clock))
    runner.start()  # attempt 002 runs, and the lead cancels it
    try:
        wait_for(lambda: wrapper_running(git_repo, "t", "002"), timeout=60)
        commands.cancel(store, clock, "t")
    finally:
        runner.join(timeout=60)
    assert task(git_repo, "t").model_wait_streak == 0
    commands.rework(store, clock, "t", "Try again.")

    run_once(git_repo, clock)  # attempt 003: a model wait again, the first of a new run
    third = task(git_repo, "t")
    assert third.attempts == ["001", "002", "003"]
    assert parse_utc(third.retry_at or "") - clock.now() == timedelta(minutes=5)
    cancelled = ArcStore(git_repo).read_attempt_result("t", "002")
    assert cancelled is not None and cancelled.failure_class == "cancel"

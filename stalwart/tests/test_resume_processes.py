"""Runs left mid-call by a killed process, resumed by another; workers racing on a session.

Every worker here is a real process: a tool blocks after the call was recorded in flight,
the test kills its process with SIGKILL, and another process (the `stalwart` command, or
a fresh Agent) takes the run up from the record.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import session_identity
from service import keys_log, turn, write_service_project

from stalwart import Agent
from stalwart._engine.keys import idempotency_key

WAIT = 30.0  # a bound on what should take a moment; reaching it fails the test
STALWART = Path(sys.executable).with_name("stalwart")

WORKER = """
import json, os, sys, time
from pathlib import Path
from stalwart import Agent, AnswerError

agent = Agent.from_file(sys.argv[1])
what, user = sys.argv[2], sys.argv[3]
go = Path(sys.argv[1]).with_name("go")
asked = None
if what == "race":
    asked = agent.pending(user).waiting[0]  # the question this worker was shown
    go.with_name(f"ready-{os.getpid()}").touch()
    while not go.exists():
        time.sleep(0.005)
try:
    if what in ("confirm", "race"):
        if asked is None:
            reply = agent.confirm_current(user, "approve")
        else:
            reply = agent.confirm(user, "approve", question=asked)
    elif what == "answer":
        reply = agent.answer_current(user, sys.argv[4])
    else:
        reply = agent.resume(user)
except AnswerError as error:
    print(json.dumps({"error": str(error)}))
else:
    print(json.dumps({"state": reply.state, "text": reply.text,
                      "waiting": [w.kind for w in reply.waiting]}))
"""


def _worker(yaml: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", WORKER, str(yaml), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _finish(worker: subprocess.Popen[str]) -> dict[str, Any]:
    try:
        out, err = worker.communicate(timeout=WAIT)
    finally:
        _reap(worker)
    assert worker.returncode == 0, err
    finished: dict[str, Any] = json.loads(out)
    return finished


def _kill_when_started(worker: subprocess.Popen[str], started: Path) -> None:
    """SIGKILL the worker once its tool has begun (the call is in flight in the record)."""
    try:
        deadline = time.monotonic() + WAIT
        while not started.exists():
            if worker.poll() is not None:
                pytest.fail(f"the worker ended before its tool began: {worker.communicate()}")
            assert time.monotonic() < deadline, "the tool never began"
            time.sleep(0.01)
        os.kill(worker.pid, signal.SIGKILL)
        worker.communicate(timeout=WAIT)
    finally:
        _reap(worker)
    assert worker.returncode == -signal.SIGKILL


def _reap(worker: subprocess.Popen[str]) -> None:
    """A worker a failed assertion left running is killed and waited for, its pipes closed."""
    if worker.poll() is None:
        worker.kill()
    worker.communicate()


def _statuses(yaml: Path, user: str = "u") -> list[tuple[str, str, int]]:
    with Agent.from_file(yaml) as agent:
        return [(c.tool, c.status, c.tries) for c in agent.record(user)]


def test_a_retry_safe_write_killed_mid_call_is_sent_again_under_its_key_by_another_process(
    tmp_path: Path,
) -> None:
    project = write_service_project(tmp_path)
    with project.agent() as agent:
        assert agent.chat(turn(("book_slot", 1)), user="u").waiting[0].kind == "confirm"
    (tmp_path / "block-book_slot").touch()
    _kill_when_started(_worker(project.yaml, "confirm", "u"), tmp_path / "started-book_slot")
    assert _statuses(project.yaml) == [("book_slot", "in_flight", 1)]

    (tmp_path / "block-book_slot").unlink()
    resumed = subprocess.run(
        [str(STALWART), "resume", str(project.yaml)],
        capture_output=True,
        text=True,
        timeout=WAIT,
        check=False,
    )
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.stdout.splitlines() == [
        'u: done: Done: book_slot returned {"order":1,"slot":"s-1"}.'
    ]
    with project.agent() as agent:
        key = idempotency_key(session_identity(agent.store, "u"), "1.1", "book_slot", {"order": 1})
    assert keys_log(tmp_path) == [("book_slot", key, 1), ("book_slot", key, 2)]
    assert _statuses(project.yaml) == [("book_slot", "ran", 2)]


def test_a_write_not_retry_safe_killed_mid_call_becomes_a_question_in_another_process(
    tmp_path: Path,
) -> None:
    project = write_service_project(tmp_path)
    with project.agent() as agent:
        agent.chat(turn(("charge_card", 1)), user="u")
    (tmp_path / "block-charge_card").touch()
    _kill_when_started(_worker(project.yaml, "confirm", "u"), tmp_path / "started-charge_card")
    (tmp_path / "block-charge_card").unlink()

    asked = _finish(_worker(project.yaml, "resume", "u"))
    assert asked == {
        "state": "waiting",
        "text": "Did charge_card take effect? It was being sent when the run stopped.",
        "waiting": ["outcome"],
    }
    assert len(keys_log(tmp_path)) == 1, "never sent again"
    assert _statuses(project.yaml) == [("charge_card", "in_doubt", 1)]

    answered = _finish(_worker(project.yaml, "answer", "u", "did not happen"))
    assert answered["text"] == (
        "This run stopped: you said charge_card did not take effect. "
        "Nothing had been written, so nothing needed undoing."
    )


def test_an_undo_killed_mid_call_is_sent_again_under_its_own_key(tmp_path: Path) -> None:
    project = write_service_project(tmp_path)
    with project.agent() as agent:
        agent.chat(turn(("book_slot", 1), ("stamp_form", 2)), user="u")
        assert agent.confirm_current("u", "approve").waiting[0].tool == "stamp_form"
    (tmp_path / "fail-stamp_form").touch()
    (tmp_path / "block-free_slot").touch()
    _kill_when_started(_worker(project.yaml, "confirm", "u"), tmp_path / "started-free_slot")
    (tmp_path / "block-free_slot").unlink()

    resumed = _finish(_worker(project.yaml, "resume", "u"))
    assert resumed["text"] == (
        "This run stopped: stamp_form failed (RuntimeError). "
        "Undone, latest first: book_slot (by free_slot)."
    )
    undo_sends = [(key, tries) for tool, key, tries in keys_log(tmp_path) if tool == "free_slot"]
    undo_key = undo_sends[0][0]
    assert undo_sends == [(undo_key, 1), (undo_key, 2)]
    assert _statuses(project.yaml)[-1] == ("free_slot", "ran", 2)


def test_workers_racing_to_approve_one_question_run_the_tool_once_and_approve_nothing_else(
    tmp_path: Path, record: str
) -> None:
    project = write_service_project(tmp_path, record=record)
    with project.agent() as agent:
        agent.chat(turn(("book_slot", 1), ("charge_card", 2)), user="u")
    workers = [_worker(project.yaml, "race", "u") for _ in range(4)]
    try:
        deadline = time.monotonic() + WAIT
        while len(list(tmp_path.glob("ready-*"))) < len(workers):  # all at the barrier
            assert time.monotonic() < deadline, "the workers never got ready"
            time.sleep(0.01)
        (tmp_path / "go").touch()
        results = [_finish(worker) for worker in workers]
    finally:
        for worker in workers:
            _reap(worker)

    advanced = [r for r in results if "state" in r]
    assert advanced == [
        {"state": "waiting", "text": "Run charge_card(order=2)?", "waiting": ["confirm"]}
    ]
    errors = [r["error"] for r in results if "error" in r]
    assert len(errors) == 3, "no racer's approval of book_slot approved charge_card"
    for error in errors:
        assert error.startswith("The question answered (u#1/1/confirm/")
        assert "no longer waits; nothing was changed. Waiting now: 'Run charge_card(order=2)?'" in (
            error
        )
    assert [tool for tool, _, _ in keys_log(tmp_path)] == ["book_slot"]
    assert _statuses(project.yaml) == [("book_slot", "ran", 1)]

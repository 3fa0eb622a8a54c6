"""Resuming never stalls on one busy session: `pending()` never blocks behind another
worker's call, and `resume_all` / `stalwart resume` skip a session another worker holds
and go on with the rest. Real worker processes, on SQLite and PostgreSQL.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import ServiceProject
from service import turn

from stalwart import texts

WAIT = 30.0  # a bound on what should take a moment; reaching it fails the test

CONFIRM = """
import sys
from stalwart import Agent

Agent.from_file(sys.argv[1]).confirm_current(sys.argv[2], "approve")
"""


def _wait_for(path: Path, worker: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + WAIT
    while not path.exists():
        if worker.poll() is not None:
            pytest.fail(f"the worker ended before its tool began: {worker.communicate()}")
        assert time.monotonic() < deadline, "the tool never began"
        time.sleep(0.01)


@pytest.mark.timeout(120)
def test_pending_and_resume_all_skip_a_session_another_worker_is_advancing(
    service_project: ServiceProject,
) -> None:
    project, agent, module = service_project
    # Session "v": its process stopped mid-call, so its run is left for any worker.
    module.PLAN["book_slot"] = ["crash"]
    agent.chat(turn(("book_slot", 1)), user="v")
    with pytest.raises(module.SimulatedCrash):
        agent.confirm_current("v", "approve")
    # Session "u": another worker is inside charge_card, holding the session.
    agent.chat(turn(("charge_card", 2)), user="u")
    (project.folder / "block-charge_card").touch()
    worker = subprocess.Popen(
        [sys.executable, "-c", CONFIRM, str(project.yaml), "u"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        _wait_for(project.folder / "started-charge_card", worker)
        reply = agent.pending("u")  # returns at once; before, it waited for the worker
        assert reply is not None
        assert (reply.state, reply.text) == ("running", texts.BUSY_ELSEWHERE)
        resumed = dict(agent.resume_all())
        assert resumed["u"].text == texts.BUSY_ELSEWHERE
        assert resumed["v"].state == "done"
        assert [name for name, *_ in module.CALLS] == ["book_slot", "book_slot"]
    finally:
        os.kill(worker.pid, signal.SIGKILL)
        worker.communicate(timeout=WAIT)

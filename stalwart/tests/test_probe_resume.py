"""A write's probe across a killed process: the evidence is neither lost nor duplicated.

The probe's row and its evidence are committed with the outcome question, in one commit
(`_engine/probe.py`). A process killed while the probe is being asked has committed
neither: the record still shows the write in flight, and the process that resumes the
run asks the question and the probe again, keeping one probe row. A process killed after
that commit leaves the evidence in the record, and the next process shows it without
asking again. Every worker is a real process killed with SIGKILL, on each backend.
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
from probe_shop import TURN, probes_asked, write_probe_project

from stalwart import Agent, texts

pytestmark = pytest.mark.integration

WAIT = 30.0  # a bound on what should take a moment; reaching it fails the test

WORKER = """
import json, sys
from stalwart import Agent

agent = Agent.from_file(sys.argv[1])
if sys.argv[2] == "confirm":
    reply = agent.confirm_current("u", "approve")
else:
    reply = agent.resume("u") or agent.pending("u")
evidence = [w.evidence.text if w.evidence else None for w in reply.waiting]
print(json.dumps({"state": reply.state, "questions": [w.text for w in reply.waiting],
                  "evidence": evidence}), flush=True)
if sys.argv[2] == "confirm" and len(sys.argv) > 3:
    import time
    while True:  # killed here, after the question and its evidence were committed
        time.sleep(0.01)
"""


def _worker(yaml: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", WORKER, str(yaml), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _kill_when(worker: subprocess.Popen[str], ready: Any) -> str:
    """SIGKILL the worker once `ready()` is true; what it printed before."""
    try:
        deadline = time.monotonic() + WAIT
        while not ready():
            if worker.poll() is not None:
                pytest.fail(f"the worker ended early: {worker.communicate()}")
            assert time.monotonic() < deadline, "the worker never got there"
            time.sleep(0.01)
        os.kill(worker.pid, signal.SIGKILL)
        out, _ = worker.communicate(timeout=WAIT)
    finally:
        if worker.poll() is None:
            worker.kill()
            worker.communicate()
    assert worker.returncode == -signal.SIGKILL
    return out


def _finish(worker: subprocess.Popen[str]) -> dict[str, Any]:
    out, err = worker.communicate(timeout=WAIT)
    assert worker.returncode == 0, err
    finished: dict[str, Any] = json.loads(out)
    return finished


def _calls(yaml: Path) -> list[tuple[str, str, str, int]]:
    with Agent.from_file(yaml) as agent:
        return [(c.kind, c.tool, c.status, c.tries) for c in agent.record("u")]


@pytest.fixture
def project(tmp_path: Path, record: str) -> Any:
    project = write_probe_project(tmp_path, record=record)
    with project.agent() as agent:
        agent.chat(TURN, user="u")
    (tmp_path / "lose-charge_card").touch()
    return project


def test_a_process_killed_while_its_probe_is_asked_leaves_the_probe_to_the_resumed_run(
    tmp_path: Path, project: Any
) -> None:
    (tmp_path / "block-get_charge").touch()
    started = tmp_path / "started-get_charge"
    _kill_when(_worker(project.yaml, "confirm"), started.exists)
    # Nothing of the probe was committed: the write is still in flight.
    assert _calls(project.yaml) == [("write", "charge_card", "in_flight", 1)]
    assert len(probes_asked(tmp_path)) == 1

    (tmp_path / "block-get_charge").unlink()
    resumed = _finish(_worker(project.yaml, "resume"))
    assert resumed == {
        "state": "waiting",
        "questions": [texts.outcome_question("charge_card", stopped=True)],
        "evidence": ["get_charge found charge ch_19 for order 4411 under this key"],
    }
    assert len(probes_asked(tmp_path)) == 2, "asked again by the resumed run, once"
    assert _calls(project.yaml) == [
        ("write", "charge_card", "in_doubt", 1),
        ("probe", "get_charge", "ran", 1),
    ]


def test_a_process_killed_after_the_question_leaves_its_evidence_in_the_record(
    tmp_path: Path, project: Any
) -> None:
    worker = _worker(project.yaml, "confirm", "then-hang")
    assert worker.stdout is not None
    printed = json.loads(worker.stdout.readline())  # the reply: committed before it is given
    _kill_when(worker, lambda: True)
    evidence = "get_charge found charge ch_19 for order 4411 under this key"
    assert printed["evidence"] == [evidence]

    again = _finish(_worker(project.yaml, "resume"))
    assert again["evidence"] == [evidence]
    assert again["questions"] == [texts.outcome_question("charge_card", stopped=False)]
    assert len(probes_asked(tmp_path)) == 1, "never asked again"
    assert _calls(project.yaml) == [
        ("write", "charge_card", "in_doubt", 1),
        ("probe", "get_charge", "ran", 1),
    ]

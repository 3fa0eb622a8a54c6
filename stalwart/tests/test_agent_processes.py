"""A session goes on across processes: one chats, another confirms, a third finishes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from conftest import write_project

from stalwart import Agent

STEP = """
import json, sys
from stalwart import Agent

agent = Agent.from_file(sys.argv[1])
what, user = sys.argv[2], sys.argv[3]
if what == "chat":
    reply = agent.chat(sys.argv[4], user=user)
else:
    reply = agent.confirm_current(user, sys.argv[4])
module = sys.modules[next(iter(agent.config.project.modules))]
print(json.dumps({
    "text": reply.text,
    "state": reply.state,
    "waiting": [w.tool for w in reply.waiting],
    "calls": [name for name, _ in module.CALLS],
}))
"""


def _step(yaml: Path, *args: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-c", STEP, str(yaml), *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    stepped: dict[str, Any] = json.loads(done.stdout)
    return stepped


def test_a_confirmation_waiting_in_one_process_is_answered_in_another(tmp_path: Path) -> None:
    project = write_project(tmp_path)
    first = _step(
        project.yaml,
        "chat",
        "u-17",
        "paint the fence for order 1, then plant a tree for order 2",
    )
    assert first["state"] == "waiting"
    assert first["waiting"] == ["paint_fence"]
    assert first["calls"] == []

    second = _step(project.yaml, "confirm", "u-17", "approve")
    assert second["waiting"] == ["plant_tree"]
    assert second["calls"] == ["paint_fence"]  # this process sent only what it approved

    third = _step(project.yaml, "confirm", "u-17", "cancel all")
    assert third["state"] == "rolled_back"
    assert third["calls"] == ["unpaint_fence"]  # undone here, from what the record kept
    assert third["text"] == (
        "This run stopped: you cancelled it at plant_tree. "
        "Undone, latest first: paint_fence (by unpaint_fence)."
    )

    with Agent.from_file(project.yaml) as agent:
        record = agent.record("u-17")
    assert [(c.tool, c.kind, c.status) for c in record] == [
        ("paint_fence", "write", "ran"),
        ("unpaint_fence", "undo", "ran"),
    ]
    assert record[1].args == {"order": 1, "colour": "green"}

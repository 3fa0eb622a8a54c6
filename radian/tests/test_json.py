"""--json on every command: one JSON document each (JSON lines for run and start), each with
its format_version; a refusal is a document too, with the exit code."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import write_config

from radian.cli import JSON_FORMAT_VERSION, main

pytestmark = pytest.mark.acceptance

Worker = Callable[..., list[str]]


def arc_json(repo: Path, *args: str) -> tuple[int, list[dict[str, Any]]]:
    result = CliRunner().invoke(main, ["arc", "--repo", str(repo), *args, "--json"],
                                env={"RADIAN_ARC_FAKE_NOW": "2026-11-30T07:00:00Z"})  # fmt: skip
    text = result.stdout
    documents = (
        [json.loads(line) for line in text.splitlines()]
        if text.startswith('{"')
        else [json.loads(text)]
    )
    for document in documents:
        assert document["format_version"] == JSON_FORMAT_VERSION
    return result.exit_code, documents


def test_every_command_speaks_json(git_repo: Path, scripted_worker: Worker, tmp_path: Path) -> None:
    write_config(git_repo, scripted_worker({"default": {"outcome": "failed", "cost": 0.1}}))
    brief = tmp_path / "brief.md"
    brief.write_text("# t\n")
    plan_file = tmp_path / "plan.toml"
    plan_file.write_text('[plan]\nname = "q"\n\n[[task]]\nname = "u"\nbrief = "x"\n')
    steps: list[tuple[tuple[str, ...], list[str], dict[str, Any]]] = [
        (("init",), [".radian/arc.toml exists; left as it is"],
         {"kind": "init", "path": ".radian/arc.toml", "written": False}),
        (("plan", "add", "p"), ["plan p added (not confirmed)"],
         {"kind": "plan_added", "plan": "p"}),
        (("task", "add", "p", "t", "--brief", str(brief)), ["t added to plan p: todo.ready"],
         {"kind": "task_added", "task": "t", "plan": "p", "state": "todo.ready"}),
        (("plan", "load", str(plan_file)), ["plan q loaded with 1 task(s) (not confirmed)"],
         {"kind": "plan_loaded", "plan": "q", "tasks": 1}),
        (("confirm", "p"), ["plan p confirmed"], {"kind": "plan_confirmed", "plan": "p"}),
        (("plan", "auto", "q", "off"), ["plan q auto -> off"],
         {"kind": "plan_auto", "plan": "q", "auto": "off"}),
        (("rework", "u", "--brief", str(brief)), ["u rework 1 -> todo.ready"],
         {"kind": "task_reworked", "task": "u", "rework": 1, "state": "todo.ready"}),
        (("cancel", "u"), ["u cancelled -> failed.cancelled (was todo.ready)"],
         {"kind": "task_cancelled", "task": "u", "from_state": "todo.ready",
          "state": "failed.cancelled"}),
        (("gc",), ["nothing to clean up"], {"kind": "cleaned_up", "removed": []}),
    ]  # fmt: skip
    for args, lines, result in steps:
        code, documents = arc_json(git_repo, *args)
        assert code == 0, documents
        assert documents == [{"format_version": JSON_FORMAT_VERSION,
                              "command": f"arc {args[0]}" if args[0] not in ("plan", "task")
                              else f"arc {args[0]} {args[1]}",
                              "ok": True, "lines": lines, "result": result}]  # fmt: skip

    code, events = arc_json(git_repo, "run", "--once")
    assert code == 0
    assert [event["event"] for event in events] == ["claimed", "retry", "end"]
    assert events[0] == {"format_version": 2, "command": "arc run", "event": "claimed",
                         "task": "t", "state": "doing.working", "attempt_id": "001",
                         "plan": None,
                         "text": "t todo.ready -> doing.working (attempt 001)"}  # fmt: skip
    retry = events[1]
    # RADIAN_ARC_FAKE_NOW starts the clock there; it runs on while the attempt does.
    assert retry.pop("text").startswith("t failed (model) -> retry at 2026-11-30T07:00:1")
    assert retry == {"format_version": 2, "command": "arc run", "event": "retry", "task": "t",
                     "state": "todo.retry_wait", "attempt_id": "001", "plan": None}  # fmt: skip
    assert events[-1]["exit_code"] == 0 and events[-1]["failed"] == []

    code, (shown,) = arc_json(git_repo, "show", "t")
    assert code == 0 and shown["state"] == "todo.retry_wait" and shown["cost_usd"] == 0.1
    code, (overview,) = arc_json(git_repo, "show")
    assert [plan["name"] for plan in overview["plans"]] == ["p", "q"]
    code, events = arc_json(git_repo, "start", "t")
    assert code == 0 and events[-1]["event"] == "end"
    code, (refused,) = arc_json(git_repo, "reset-budget", "t")
    assert code == 1 and refused["ok"] is False and refused["exit_code"] == 1
    assert refused["error"].startswith("t is todo.retry_wait: reset-budget applies")
    code, (refused,) = arc_json(git_repo, "reverify", "t")
    assert code == 2 and "has no [gate]" in refused["error"]

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
    steps: list[tuple[tuple[str, ...], list[str]]] = [
        (("init",), [".radian/arc.toml exists; left as it is"]),
        (("plan", "add", "p"), ["plan p added (not confirmed)"]),
        (("task", "add", "p", "t", "--brief", str(brief)), ["t added to plan p: todo.ready"]),
        (("plan", "load", str(plan_file)), ["plan q loaded with 1 task(s) (not confirmed)"]),
        (("confirm", "p"), ["plan p confirmed"]),
        (("plan", "auto", "q", "off"), ["plan q auto -> off"]),
        (("rework", "u", "--brief", str(brief)), ["u rework 1 -> todo.ready"]),
        (("cancel", "u"), ["u cancelled -> failed.cancelled (was todo.ready)"]),
    ]
    for args, lines in steps:
        code, documents = arc_json(git_repo, *args)
        assert code == 0, documents
        assert documents == [{"format_version": JSON_FORMAT_VERSION,
                              "command": f"arc {args[0]}" if args[0] not in ("plan", "task")
                              else f"arc {args[0]} {args[1]}",
                              "ok": True, "lines": lines}]  # fmt: skip

    code, events = arc_json(git_repo, "run", "--once")
    assert code == 0
    assert [event["event"] for event in events] == ["line", "line", "end"]
    assert events[0] == {"format_version": 1, "command": "arc run", "event": "line", "task": "t",
                         "text": "t todo.ready -> doing.working (attempt 001)"}  # fmt: skip
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

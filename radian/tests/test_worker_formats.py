"""The adapters' cost scope and session rules applied by arc, with a real worker process
printing each format, and `radian arc init --worker` writing configurations that load."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from arc_helpers import attempt_result, make_plan, run_once, task
from conftest import run_env, write_config

from radian.arc.clock import FakeClock
from radian.arc.config import DEFAULT_CONFIG, load_config
from radian.arc.worker.command import CommandValues, expand_exec_args
from radian.arc.worker.presets import config_with_worker

OLD_CLAUDE = """\
import json, os
session = os.environ["RADIAN_ARC_SESSION_ID"] or "sess-old"
print(json.dumps({"type": "system", "subtype": "init", "session_id": session,
                  "claude_code_version": "2.1.200"}))
print(json.dumps({"type": "result", "subtype": "success", "is_error": True,
                  "api_error_status": 429, "result": "API Error: Request rejected (429)",
                  "session_id": session, "total_cost_usd": 0.5}))
"""


def launcher(tmp_path: Path, source: str) -> list[str]:
    script = tmp_path / "worker.py"
    script.write_text(source)
    shell = tmp_path / "worker.sh"
    shell.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{script}"\n')
    shell.chmod(shell.stat().st_mode | stat.S_IXUSR)
    return [str(shell)]


def test_a_per_process_cost_is_taken_as_it_stands_on_a_resumed_session(
    git_repo: Path, clock: FakeClock, tmp_path: Path
) -> None:
    # Claude Code before 2.1.277: a resumed process reports its own spend, not the session's.
    write_config(git_repo, launcher(tmp_path, OLD_CLAUDE))
    make_plan(git_repo, clock, ["t1"])
    run_once(git_repo, clock)
    clock.advance(11)
    run_once(git_repo, clock)

    first, second = attempt_result(git_repo, "t1", "001"), attempt_result(git_repo, "t1", "002")
    assert second["session_id"] == first["session_id"] == "sess-old"  # resumed
    assert first["cost_usd"] == 0.5
    assert second["cost_usd"] == 0.5  # differenced, it would be 0.00
    assert second["cost_scope"] == "process" and second["session_cost_usd"] == 0.5
    assert task(git_repo, "t1").total_cost_usd == pytest.approx(1.0)


@pytest.mark.parametrize("worker", ["claude-code", "codex"])
def test_init_writes_a_worker_config_that_loads(
    git_repo: Path, radian_bin: Path, worker: str
) -> None:
    done = subprocess.run([str(radian_bin), "arc", "init", "--worker", worker], cwd=git_repo,
                          capture_output=True, text=True, env=run_env(), check=True)  # fmt: skip
    assert done.stdout.strip()
    config = load_config(git_repo)
    expected = tomllib.loads(config_with_worker(DEFAULT_CONFIG, worker))["worker"]
    assert config.worker.exec_args == expected["exec_args"]
    assert config.worker.resume_args == expected["resume_args"]
    assert "{resume_args}" in config.worker.exec_args
    # the rest of the default config is kept
    assert config.repository.remote == "origin" and config.limits.max_attempts == 3


def test_the_claude_code_preset_allows_delivery_and_no_blanket_permission() -> None:
    args = tomllib.loads(config_with_worker(DEFAULT_CONFIG, "claude-code"))["worker"]["exec_args"]
    assert args[args.index("--output-format") + 1] == "stream-json"
    assert args[args.index("--permission-mode") + 1] == "default"
    tools = args[args.index("--allowedTools") + 1].split(",")
    assert {"Bash(git add:*)", "Bash(git commit:*)", "Bash(git push:*)", "Write"} <= set(tools)
    assert "Bash" not in tools and "bypassPermissions" not in args and "acceptEdits" not in args


def test_codex_resumes_with_its_subcommand(tmp_path: Path) -> None:
    worker = tomllib.loads(config_with_worker(DEFAULT_CONFIG, "codex"))["worker"]
    values = CommandValues(brief_file=tmp_path / "b.md", session_id="th-1", worktree=tmp_path,
                           task="t", attempt_id="001", base_sha="0" * 40, branch="arc/t",
                           remote="origin")  # fmt: skip
    args = expand_exec_args(worker["exec_args"], values, worker["resume_args"])
    assert args[-3:] == ["resume", "th-1", "-"]
    fresh = expand_exec_args(worker["exec_args"], values.__class__(**{**values.__dict__,
                                                                       "session_id": None}),
                             worker["resume_args"])  # fmt: skip
    assert fresh[-1] == "-" and "resume" not in fresh
    assert json.dumps(worker["exec_args"]).count("danger-full-access") == 1
    assert os.sep not in worker["exec_args"][0]

"""An ACP agent nobody here wrote as arc's worker: Zed's Claude Code adapter
(@zed-industries/claude-agent-acp, from `make npm-tools`), running Claude Code through the
Claude Agent SDK against the streaming Anthropic stand-in (standins/anthropic_api.py) on
127.0.0.1. No key, no internet.

The adapter asks arc's permission for Claude Code's Write and Bash tools over ACP, and reports
the session's cumulative cost in `usage_update`s, which arc takes as a session total.
As root (CI) the adapter needs IS_SANDBOX=1, or the Claude Code it starts refuses to run
(it passes --dangerously-skip-permissions so that bypass can be offered as a mode; nothing is
bypassed: every tool call below still asks arc). Checked against claude-agent-acp 0.23.1.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from conftest import git, write_config
from npm_tools import NpmCli, npm_cli
from standins.anthropic_api import AnthropicStandIn, bash, text, write
from standins.claude_env import claude_env

from radian.arc.store import ArcStore
from radian.cli import main

CHECKED_VERSION = "0.23.1"
pytestmark = pytest.mark.timeout(240)


@pytest.fixture
def adapter() -> NpmCli:
    return npm_cli("claude-agent-acp", checked=CHECKED_VERSION)


@pytest.fixture
def stand_in() -> Iterator[AnthropicStandIn]:
    with AnthropicStandIn() as server:
        yield server


def arc(repo: Path, *args: str) -> Result:
    fake_now = {"RADIAN_ARC_FAKE_NOW": "2026-11-30T07:00:00Z"}
    return CliRunner().invoke(main, ["arc", "--repo", str(repo), *args], env=fake_now)


def test_the_claude_code_acp_adapter_delivers_a_task_under_arc(
    monkeypatch: pytest.MonkeyPatch,
    git_repo: Path,
    tmp_path: Path,
    adapter: NpmCli,
    stand_in: AnthropicStandIn,
) -> None:
    for name, value in claude_env(stand_in.url, tmp_path / "home").items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("IS_SANDBOX", "1")
    write_config(
        git_repo,
        [str(adapter.path)],
        worker={"kind": "acp", "stall_secs": 90.0, "wall_time_secs": 180.0},
        gate={"stages": []},
    )
    worktree = git_repo / ".radian" / "arc" / "worktrees" / "greet"
    stand_in.add(
        write(str(worktree / "GREETING.md"), "hello\n"),
        bash("git add -A && git commit -q -m 'Add greeting' && git push -q origin HEAD:arc/greet"),
        text("Added GREETING.md, committed and pushed."),
    )
    brief = tmp_path / "brief.md"
    brief.write_text("# Add a greeting\n\nWrite GREETING.md, commit it and push the branch.\n")
    arc(git_repo, "plan", "add", "p")
    arc(git_repo, "task", "add", "p", "greet", "--brief", str(brief))
    arc(git_repo, "confirm", "p")

    result = arc(git_repo, "run")

    log = (git_repo / ".radian/arc/runs/greet/attempts/001/worker.log").read_text(errors="replace")
    task = ArcStore(git_repo).load_task("greet")
    assert str(task.state) == "done.integrated", result.output + log
    git(git_repo, "fetch", "-q", "origin")
    assert git(git_repo, "show", "origin/main:GREETING.md") == "hello"
    # both of Claude Code's tool calls asked arc over ACP, and the policy allowed them
    assert "(edit): allowed, edits: allow by [worker.permissions]" in log
    assert "(execute): allowed, commands: allow by [worker.permissions]" in log
    document = json.loads(arc(git_repo, "show", "greet", "--json").output)
    first = document["attempts"][0]
    assert first["outcome"] == "completed"
    # the adapter's cumulative usage_update cost: three replies of 1,000 in / 100 out tokens
    assert first["cost_usd"] == pytest.approx(3 * (1000 * 3.0 + 100 * 15.0) / 1_000_000)

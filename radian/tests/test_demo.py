"""`make demo`'s radian part: both demos run as `make demo` runs them, and show what they must."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import run_env
from npm_tools import npm_cli
from standins.claude_env import CHECKED_VERSION

pytestmark = pytest.mark.acceptance

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def run_example(name: str) -> str:
    done = subprocess.run([sys.executable, str(EXAMPLES / name)], capture_output=True,
                          text=True, env=run_env(), timeout=100)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_the_demo_runs_its_plan_to_review() -> None:
    out = run_example("demo.py")
    assert "add-greeting completed -> review.verifying" in out
    assert "fix-typo failed (model) -> retry at 2026-11-30T07:00:1" in out
    assert "write-docs worker model unavailable -> retry at 2026-11-30T07:05:0" in out
    assert "fix-typo todo.ready -> doing.working (attempt 002)" in out
    assert "write-docs completed -> review.verifying" in out
    assert "    attempt_model_error: unavailable: the model is overloaded" in out
    # The worker does only what its brief says: each brief's file is on its pushed branch.
    assert out.rstrip().endswith(
        "arc/add-greeting: greet.py has 'return f\"Hello, {name}!\"'\n"
        "arc/fix-typo: README.md has '# Example'\n"
        "arc/write-docs: docs.md has 'Call greet(name) to greet someone.'"
    )


def test_the_gate_demo_integrates_every_task_with_a_review_rework_and_a_conflict_rework() -> None:
    out = run_example("gate_demo.py")
    lines = [line.strip() for line in out.splitlines()]
    for task in ("double", "halve", "tidy-add"):
        assert any(re.fullmatch(rf"{task} integrated -> done.integrated \(\w{{12}} on main\)", line)
                   for line in lines), task  # fmt: skip
    # halve: a review finding, "## Rework 1" listing it, a second attempt.
    assert "halve review findings -> todo.ready (Rework 1)" in lines
    assert "halve todo.ready -> doing.working (attempt 002)" in lines
    assert "## Rework 1" in lines
    assert "- [major] unfinished: # TODO odd numbers" in lines
    # tidy-add: a conflict with main, "## Rework 1 (conflict with main)", a mid-merge attempt.
    assert "tidy-add conflict with main -> todo.ready (Rework 1, starts mid-merge)" in lines
    assert "tidy-add todo.ready -> doing.working (attempt 002)" in lines
    assert "## Rework 1 (conflict with main)" in lines
    assert "- src/calc/ops.py" in lines
    # double integrated at its first attempt, with no rework.
    assert "double todo.ready -> doing.working (attempt 002)" not in lines
    assert lines[-1] == "gate demo: every task integrated"


def test_the_claude_demo_runs_a_plan_with_the_real_claude_code_cli() -> None:
    npm_cli("claude", checked=CHECKED_VERSION)
    out = run_example("claude_demo.py")
    assert f"== Claude Code {CHECKED_VERSION} (" in out
    assert "add-greeting todo.ready -> doing.working (attempt 001)" in out
    assert re.search(r"add-greeting completed -> review\.verifying \(head \w{12}\)", out)
    # The stand-in agent wrote the file the loaded brief names, and pushed it.
    assert out.rstrip().endswith("Add GREETING.md\nGREETING.md: Hello from arc.")

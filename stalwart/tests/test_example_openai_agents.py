"""The OpenAI Agents SDK example prints chapter 34's first block byte for byte, twice on one record.

Checked against openai-agents 0.24.0 (the version constraints-dev.txt pins; the extra's floor
in stalwart/pyproject.toml); its model on a local stand-in of the Chat Completions API,
tracing off.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from test_example import CHAPTER_PRINTED

pytestmark = pytest.mark.acceptance

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"

# The chapter's first block: the failed order's reply and the five calls in the order they ran.
FIRST_BLOCK = "\n".join(CHAPTER_PRINTED.splitlines()[:7]) + "\n"


def _run(folder: Path) -> str:
    done = subprocess.run(
        [sys.executable, "run.py"], cwd=folder, capture_output=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr.decode()
    return done.stdout.decode("utf-8")


def test_the_openai_agents_order_prints_the_chapters_first_block_twice_on_one_record(
    tmp_path: Path,
) -> None:
    # Copies (the example uses the shop's agent.yaml and tools, beside it), so the test
    # neither races `make demo` nor leaves a record in the source tree.
    for name in ("shop", "openai_agents"):
        shutil.copytree(
            EXAMPLES / name,
            tmp_path / name,
            ignore=shutil.ignore_patterns("*.sqlite*", "__pycache__"),
        )
    folder = tmp_path / "openai_agents"
    expected = (EXAMPLES / "openai_agents" / "expected_output.txt").read_text(encoding="utf-8")
    assert expected == FIRST_BLOCK
    assert _run(folder) == expected
    assert (folder / "agent.record.sqlite").exists()
    assert _run(folder) == expected  # session u-17 now has the first run in its history

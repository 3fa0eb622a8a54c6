"""`make demo`'s radian part runs and shows a delivery, a retry and a model wait."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from conftest import run_env

DEMO = Path(__file__).resolve().parents[1] / "examples" / "demo.py"


def test_the_demo_runs_its_plan_to_review() -> None:
    done = subprocess.run([sys.executable, str(DEMO)], capture_output=True, text=True,
                          env=run_env(), timeout=90)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert "add-greeting completed -> review.verifying" in out
    assert "fix-typo failed (model) -> retry at 2026-11-30T07:00:1" in out
    assert "write-docs worker model unavailable -> retry at 2026-11-30T07:05:0" in out
    assert "fix-typo todo.ready -> doing.working (attempt 002)" in out
    assert "write-docs completed -> review.verifying" in out
    assert "    attempt_model_error: unavailable: the model is overloaded" in out

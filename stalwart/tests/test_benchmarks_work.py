"""The benchmarks still run: `make bench` is not part of the suite, so a change to the
runtime's interface could break them unseen (the serve load benchmark once named its own
sessions after the server began to name them, and failed with a KeyError). Each runs here
in a subprocess on a few runs; the figures are not looked at, only that every check the
benchmark makes of its own results passed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def run_benchmark(*args: str) -> str:
    done = subprocess.run(
        [sys.executable, *args], capture_output=True, text=True, timeout=300, cwd=BENCHMARKS
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_the_record_benchmark_runs_on_sqlite() -> None:
    out = run_benchmark("run.py", "--runs", "3", "--backend", "sqlite", "--sessions", "0",
                        "--turns", "20")  # fmt: skip
    assert "sqlite failed order: ms/run" in out
    assert "sqlite happy order: ms/run" in out
    assert "selector, shop desk, three-clause turns/s" in out


def test_the_serve_load_benchmark_runs() -> None:
    out = run_benchmark("serve_load.py", "--sessions", "4", "--sleep", "0")
    assert "4 sessions at once" in out
    assert "no answer lost or applied twice" in out

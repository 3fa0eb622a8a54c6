"""A plan load is all or nothing (issue 14, bug 6), through the real command line."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import run_env

pytestmark = pytest.mark.acceptance

RADIAN = str(Path(sys.executable).parent / "radian")
TASKS = 3000


def big_plan(folder: Path) -> Path:
    path = folder / "big.toml"
    lines = ['[plan]\nname = "big"\n']
    for number in range(TASKS):
        lines.append(f'[[task]]\nname = "t{number:05d}"\nbrief = "Do {number}."\n')
    path.write_text("\n".join(lines))
    return path


def radian(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([RADIAN, "arc", *args], cwd=repo, env=run_env(),
                          capture_output=True, text=True, timeout=120)  # fmt: skip


def interrupted_load(repo: Path, plan_file: Path, signum: int) -> int:
    runs = repo / ".radian" / "arc" / "runs"
    load = subprocess.Popen(
        [RADIAN, "arc", "plan", "load", str(plan_file)],
        cwd=repo,
        env=run_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 60
        while not (runs.is_dir() and len(os.listdir(runs)) >= 50):
            assert load.poll() is None, "the load ended before it could be interrupted"
            assert time.monotonic() < deadline
            time.sleep(0.001)
        load.send_signal(signum)
        load.communicate(timeout=60)
    finally:
        load.kill()
        load.wait()
    return load.returncode


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGKILL])
def test_an_interrupted_plan_load_leaves_nothing_and_loads_again(
    tmp_path: Path, signum: int
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    plan_file = big_plan(tmp_path)

    code = interrupted_load(repo, plan_file, signum)

    assert code == (130 if signum == signal.SIGINT else -signal.SIGKILL)
    assert radian(repo, "show").stdout == "no plans\n"
    runs = repo / ".radian" / "arc" / "runs"
    if signum == signal.SIGINT:  # undone at once
        assert not runs.is_dir() or os.listdir(runs) == []
    loaded = radian(repo, "plan", "load", str(plan_file))
    assert loaded.returncode == 0, loaded.stderr
    assert loaded.stdout == f"plan big loaded with {TASKS} task(s) (not confirmed)\n"
    assert len(os.listdir(runs)) == TASKS
    shown = radian(repo, "show").stdout.splitlines()
    assert shown[0] == "plan big (auto on, not confirmed)" and len(shown) == TASKS + 1

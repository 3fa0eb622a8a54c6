"""Shared fixtures for radian's tests (arc's CORE, WORKER and GATE use them alike).

- `clock`: a FakeClock at 2026-11-30T07:00:00Z; its sleep advances at once.
- `git_repo`: a real git repository in tmp_path with one commit on main, pushed to a bare
  remote named origin (tmp_path/remote.git). Commits work: user.name/email are set.
- `scripted_worker`: writes a scenario (attempt id -> step, see scripted_worker.py) and
  returns the exec_args that run it.
- `world`: the gate's GitWorld (gate_fixtures/world.py): a bare remote and three clones.
- `write_config`: .radian/arc.toml with fast worker limits.
"""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from gate_fixtures.world import GitWorld, make_world
from postgres_fixtures import pg_server, pg_url, pytest_terminal_summary  # noqa: F401

from radian.arc.clock import FakeClock

TESTS_DIR = Path(__file__).resolve().parent
SCRIPTED_WORKER = TESTS_DIR / "scripted_worker.py"

# A suite started with SIGINT ignored (a background job of a non-interactive shell, nohup)
# handed the ignore down to every `radian arc run` its tests start, and Python keeps it: their
# Ctrl-C never stopped the run (test_signals' two Ctrl-C tests failed, timed out).
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True)
    return done.stdout.strip()


TIERS = ("unit", "integration", "acceptance")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A test module that names no tier (pytestmark) is an integration test: it is left out
    of `make test-fast` rather than slowing it down; so is the PostgreSQL case of a unit
    test."""
    for item in items:
        if not any(item.get_closest_marker(tier) for tier in TIERS) or (
            item.get_closest_marker("postgres") and item.get_closest_marker("unit")
        ):
            item.add_marker(pytest.mark.integration)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def world(tmp_path: Path) -> GitWorld:
    """The gate's git world (gate_fixtures/world.py): a bare remote and three clones."""
    return make_world(tmp_path / "world")


def make_git_repo(root: Path) -> Path:
    remote = root / "remote.git"
    repo = root / "repo"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(remote)], check=True)
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    git(repo, "config", "user.name", "Arc Test")
    git(repo, "config", "user.email", "arc@example.invalid")
    git(repo, "config", "commit.gpgsign", "false")
    (repo / "README.md").write_text("example\n")
    (repo / ".gitignore").write_text(".radian/arc/\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "initial")
    git(repo, "remote", "add", "origin", str(remote))
    git(repo, "push", "-q", "origin", "main")
    return repo


@pytest.fixture
def git_repo(tmp_path: Path) -> Path:
    return make_git_repo(tmp_path)


def worker_exec_args(scenario_path: Path) -> list[str]:
    """exec_args that run scripted_worker.py under this Python with `scenario_path`."""
    launcher = scenario_path.with_suffix(".sh")
    launcher.write_text(
        f'#!/bin/sh\nexec "{sys.executable}" "{SCRIPTED_WORKER}" "{scenario_path}"\n'
    )
    launcher.chmod(launcher.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return [str(launcher)]


@pytest.fixture
def scripted_worker(tmp_path: Path) -> Callable[..., list[str]]:
    counter = iter(range(1, 1000))

    def write(steps: dict[str, Any], name: str | None = None) -> list[str]:
        path = tmp_path / f"{name or f'scenario{next(counter)}'}.json"
        path.write_text(json.dumps(steps))
        return worker_exec_args(path)

    return write


def write_config(repo: Path, exec_args: list[str], **sections: dict[str, Any]) -> Path:
    """`.radian/arc.toml` with fast worker limits; `sections` override or add keys.

    stall_secs is long enough for a worker that commits and pushes before it prints a word on
    a loaded machine; a test of the stall sets its own.
    """
    values: dict[str, dict[str, Any]] = {
        "limits": {"max_attempts": 3, "parallel": 2},
        "worker": {
            "exec_args": exec_args,
            "stall_secs": 10.0,
            "wall_time_secs": 30.0,
            "term_grace_secs": 0.5,
            "session": "resume",
        },
    }
    for section, keys in sections.items():
        values.setdefault(section, {}).update(keys)
    lines = []
    for section, keys in values.items():
        lines.append(f"[{section}]")
        lines.extend(f"{key} = {json.dumps(value)}" for key, value in keys.items())
    path = repo / ".radian" / "arc.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture
def radian_bin() -> Path:
    """The installed console script."""
    return Path(sys.executable).parent / "radian"


def run_env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("RADIAN_ARC_FAKE_NOW", None)
    return env

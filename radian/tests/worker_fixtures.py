"""Fixtures for the worker's tests: a real repository with a bare remote, and attempt specs.

Import the fixtures you use into a test module: `from worker_fixtures import arc_repo`.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from radian.arc.config import WorkerConfig
from radian.arc.worker import AttemptSpec

WORKERS = Path(__file__).parent / "workers"
RESULT_WORKER = WORKERS / "result_worker.py"
MISBEHAVING_WORKER = WORKERS / "misbehaving_worker.py"
HOLD_LOCK = WORKERS / "hold_lock.py"


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True
    ).stdout.strip()


@dataclass
class ArcRepo:
    """A clone (`root`) of a bare remote (`remote_dir`, known as origin) with one commit on
    main."""

    root: Path
    remote_dir: Path

    def commit(self, name: str, text: str, branch: str = "main", push: bool = True) -> str:
        """Commits name=text on branch in the clone (and pushes it); the new sha."""
        current = git(self.root, "symbolic-ref", "--short", "HEAD")
        if current != branch:
            git(self.root, "checkout", "-q", "-B", branch)
        (self.root / name).write_text(text)
        git(self.root, "add", name)
        git(self.root, "commit", "-q", "-m", f"{name} on {branch}")
        if push:
            git(self.root, "push", "-q", "origin", f"{branch}:{branch}")
        sha = git(self.root, "rev-parse", "HEAD")
        if current != branch:
            git(self.root, "checkout", "-q", current)
        return sha

    def remote_sha(self, branch: str) -> str | None:
        out = git(self.remote_dir, "for-each-ref", "--format=%(objectname)", f"refs/heads/{branch}")
        return out or None

    def attempt_dir(self, task: str, attempt_id: str) -> Path:
        return self.root / ".radian" / "arc" / "runs" / task / "attempts" / attempt_id

    def spec(
        self,
        exec_args: list[str],
        *,
        task: str = "t1",
        attempt_id: str = "a1",
        brief: str = "# Brief\nDo the thing.\n",
        resume_session_id: str | None = None,
        start_mid_merge: bool = False,
        **worker: Any,
    ) -> AttemptSpec:
        settings: dict[str, Any] = {"stall_secs": 30, "wall_time_secs": 60, "term_grace_secs": 1}
        settings.update(worker)
        return AttemptSpec(
            repo_root=self.root,
            task=task,
            attempt_id=attempt_id,
            attempt_dir=self.attempt_dir(task, attempt_id),
            brief_text=brief,
            worker=WorkerConfig(exec_args=exec_args, **settings),
            resume_session_id=resume_session_id,
            target_branch="main",
            remote="origin",
            branch=f"arc/{task}",
            start_mid_merge=start_mid_merge,
        )


@pytest.fixture
def arc_repo(tmp_path: Path) -> ArcRepo:
    remote = tmp_path / "remote.git"
    root = tmp_path / "repo"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    git(tmp_path, "init", "-q", "-b", "main", str(root))
    git(root, "config", "user.name", "Arc Test")
    git(root, "config", "user.email", "arc@example.com")
    git(root, "remote", "add", "origin", str(remote))
    repo = ArcRepo(root, remote)
    repo.commit("README.md", "hello\n")
    return repo


def result_worker(*options: str) -> list[str]:
    return [sys.executable, str(RESULT_WORKER), *options]


def misbehaving_worker(*options: str) -> list[str]:
    return [sys.executable, str(MISBEHAVING_WORKER), *options]


def emit_file(tmp_path: Path, *objects: object, name: str = "emit.txt") -> Path:
    """A file holding the lines a result_worker prints (dicts as JSON lines)."""
    path = tmp_path / name
    path.write_text("".join((o if isinstance(o, str) else json.dumps(o)) + "\n" for o in objects))
    return path

"""A real git world in a temp folder: a bare remote, the arc repository, and other clones.

`seed` holds the tiny calc project on main; `repo` is the user's clone where arc keeps its
state; `worker` plays a worker that pushes task branches; `other` plays a colleague who
pushes to main (for conflicts and moved targets).
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent
CALC_PROJECT = FIXTURES / "calcproj"
REVIEWER = FIXTURES / "reviewer.py"


def run_git(cwd: Path, *args: str) -> str:
    completed = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=False)
    if completed.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} in {cwd}: {completed.stderr}")
    return completed.stdout.strip()


def _identity(clone: Path, name: str) -> None:
    run_git(clone, "config", "user.name", name)
    run_git(clone, "config", "user.email", f"{name}@example.invalid")


@dataclass
class GitWorld:
    root: Path
    remote: Path
    repo: Path
    worker: Path
    other: Path

    def clone(self, name: str) -> Path:
        path = self.root / name
        run_git(self.root, "clone", "--quiet", str(self.remote), str(path))
        _identity(path, name)
        return path

    def main_sha(self) -> str:
        return run_git(self.remote, "rev-parse", "refs/heads/main")

    def commit_files(
        self, clone: Path, branch: str, files: dict[str, str | None], message: str,
        start: str = "origin/main",
    ) -> str:  # fmt: skip
        """Commit `files` (None deletes) on `branch` in `clone` and push it; returns the sha."""
        run_git(clone, "fetch", "--quiet", "origin")
        exists = subprocess.run(
            ["git", "rev-parse", "--verify", "--quiet", f"refs/remotes/origin/{branch}"],
            cwd=clone, capture_output=True, check=False,
        ).returncode == 0  # fmt: skip
        base = f"origin/{branch}" if exists else start
        run_git(clone, "checkout", "--quiet", "-B", branch, base)
        for relative, text in files.items():
            path = clone / relative
            if text is None:
                path.unlink()
                continue
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        run_git(clone, "add", "-A")
        run_git(clone, "commit", "--quiet", "-m", message)
        run_git(clone, "push", "--quiet", "origin", f"HEAD:refs/heads/{branch}")
        return run_git(clone, "rev-parse", "HEAD")

    def task_commit(self, task: str, files: dict[str, str | None], message: str = "") -> str:
        """The worker's commit on arc/<task>, pushed; the arc repo has fetched it."""
        sha = self.commit_files(self.worker, f"arc/{task}", files, message or f"work on {task}")
        run_git(self.repo, "fetch", "--quiet", "origin")
        return sha

    def push_main(self, files: dict[str, str | None], message: str = "main moves") -> str:
        return self.commit_files(self.other, "main", files, message)

    def read_main(self, relative: str) -> str:
        return run_git(self.remote, "show", f"refs/heads/main:{relative}")


def make_world(root: Path) -> GitWorld:
    root.mkdir(parents=True, exist_ok=True)
    remote = root / "remote.git"
    run_git(root, "init", "--quiet", "--bare", "--initial-branch=main", str(remote))
    seed = root / "seed"
    shutil.copytree(CALC_PROJECT, seed, ignore=shutil.ignore_patterns("__pycache__", "mutants"))
    run_git(seed, "init", "--quiet", "--initial-branch=main")
    _identity(seed, "seed")
    run_git(seed, "add", "-A")
    run_git(seed, "commit", "--quiet", "-m", "calc project")
    run_git(seed, "remote", "add", "origin", str(remote))
    run_git(seed, "push", "--quiet", "origin", "main")
    world = GitWorld(root=root, remote=remote, repo=root / "repo", worker=root / "worker",
                     other=root / "other")  # fmt: skip
    for path in (world.repo, world.worker, world.other):
        run_git(root, "clone", "--quiet", str(remote), str(path))
        _identity(path, path.name)
    return world


OPS_WITH_DOUBLE = """\
def add(a, b):
    return a + b


def is_positive(x):
    return x > 0


def double(x):
    return x * 2
"""

CHECK_DOUBLE = """\
from calc.ops import double


def test_double():
    assert double(3) == 6
"""

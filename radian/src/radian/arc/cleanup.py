"""Clean-up: the worktrees (and, by option, the branches) of tasks that are done with them.

A task in done.integrated or failed.* needs its worktree no more (a rework re-creates it
from the branch, which is kept unless `[cleanup] branches = true`). `radian arc run` removes
it when the task gets there; `radian arc gc` removes what is left: worktrees of such tasks,
worktrees of tasks that no longer exist, and gate scratch worktrees no gate is using.
A worktree whose lock a wrapper holds (an attempt still running) is never touched.
"""

from __future__ import annotations

import fcntl
import os
import shutil
from pathlib import Path

from radian.arc import git, texts
from radian.arc.results import CleanedUp
from radian.arc.states import FAILED_STATES, State
from radian.arc.store import ArcStore

DONE_STATES = FAILED_STATES | {State.INTEGRATED}


def clean_task(store: ArcStore, name: str, *, branches: bool = False) -> list[str]:
    """Remove the worktree (and with `branches` the local branch) of a task that is done;
    the printed lines. Nothing when the task is not done or an attempt holds the worktree."""
    task = store.try_load_task(name)
    if task is None or task.state not in DONE_STATES:
        return []
    return _remove(store, name, task.branch if branches else None)


def gc(store: ArcStore, *, branches: bool = False) -> CleanedUp:
    """`radian arc gc`: every leftover worktree of a done or unknown task, and the gate's
    scratch worktrees of tasks no gate runs for; what was removed."""
    lines: list[str] = []
    folder = store.repo_root / git.WORKTREES_DIR
    for path in sorted(folder.iterdir()) if folder.is_dir() else []:
        if not path.is_dir():
            continue
        name = path.name
        task = store.try_load_task(name) if store.task_exists(name) else None
        if task is not None and task.state not in DONE_STATES:
            continue
        if task is None and store.task_dir(name).is_dir():
            continue  # a damaged task: its worktree may hold the only copy of its work
        lines += _remove(store, name, task.branch if task is not None and branches else None)
    gate_folder = store.repo_root / git.GATE_WORKTREES_DIR
    for path in sorted(gate_folder.iterdir()) if gate_folder.is_dir() else []:
        lock = store.gate_lock(path.name)
        try:
            lock.acquire(timeout=0)
        except Exception:  # noqa: BLE001 - filelock.Timeout: a gate runs for this task
            continue
        try:
            trees = sorted(p for p in path.iterdir() if p.is_dir())
            for tree in trees:
                git.remove_worktree(store.repo_root, tree)
            shutil.rmtree(path, ignore_errors=True)
            if trees:
                lines.append(texts.gate_worktrees_removed(path.name))
        finally:
            lock.release()
    return CleanedUp(tuple(lines))


def _remove(store: ArcStore, name: str, branch: str | None) -> list[str]:
    repo = store.repo_root
    path = git.worktree_path(repo, name)
    lines: list[str] = []
    if path.exists():
        if not _worktree_free(repo, name):
            return []
        git.remove_worktree(repo, path)
        lines.append(texts.worktree_removed(name))
    if branch is not None and git.local_branch_exists(repo, branch):
        git.run_git(repo, "branch", "-D", branch)
        lines.append(texts.branch_removed(name, branch))
    return lines


def _worktree_free(repo: Path, task: str) -> bool:
    """No wrapper (nor a worker it started) holds the task's worktree lock."""
    lock_path = git.worktree_lock_path(repo, task)
    if not lock_path.exists():
        return True
    descriptor = os.open(lock_path, os.O_RDWR)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    finally:
        os.close(descriptor)
    return True

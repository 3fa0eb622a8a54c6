"""Clean-up: what integrated and failed tasks no longer need, by the `[cleanup]` policy.

A task in done.integrated or failed.* needs its worktree no more: `radian arc run` removes it
when the task gets there (`worktrees = true`, the default); `radian arc gc` removes what is
left: worktrees of such tasks, worktrees of tasks that no longer exist, and gate scratch
worktrees no gate is using. A worktree whose lock a wrapper holds (an attempt still running)
is never touched.

Branches, by the policy (both off by default; `gc --branches` / `--remote-branches` once):
- `branches = true`: the local `arc/<task>` of an integrated task, and of a failed one whose
  work the remote has (the remote's branch holds the local one's head): a rework of a failed
  task continues from the remote's branch, so nothing it needs is lost. A local branch with
  commits the remote lacks is kept.
- `remote_branches = true`: the remote's `arc/<task>` of an integrated task only, once the
  target branch holds it. done.integrated is final (no rework leaves it), so nothing can need
  the branch again. A failed task's remote branch is never removed: a lead's rework (allowed
  from every failed.* state) continues from it. The deletion is leased on the head arc last
  saw, so a branch pushed to since is left alone.
With the worktree go the task's lock files no one can need again: the worktree's lock (of
any finished task) and, for an integrated task, its task and gate locks.
"""

from __future__ import annotations

import fcntl
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from radian.arc import git, texts
from radian.arc.config import ArcConfig
from radian.arc.records import Task
from radian.arc.results import CleanedUp
from radian.arc.states import FAILED_STATES, State
from radian.arc.store import ArcStore, lock_path

DONE_STATES = FAILED_STATES | {State.INTEGRATED}


@dataclass(frozen=True)
class Policy:
    """What a clean-up removes beside worktrees (see the module's docstring)."""

    worktrees: bool = True
    branches: bool = False
    remote_branches: bool = False
    remote: str = "origin"
    target_branch: str = "main"

    @classmethod
    def of(
        cls,
        config: ArcConfig,
        *,
        worktrees: bool = False,
        branches: bool = False,
        remote_branches: bool = False,
    ) -> Policy:
        """The config's policy; `worktrees`, `branches`, `remote_branches` turn a part on
        for this once (gc removes worktrees whatever the config says)."""
        return cls(
            worktrees=worktrees or config.cleanup.worktrees,
            branches=branches or config.cleanup.branches,
            remote_branches=remote_branches or config.cleanup.remote_branches,
            remote=config.repository.remote,
            target_branch=config.target_branch,
        )


def clean_task(
    store: ArcStore, name: str, *, branches: bool = False, policy: Policy | None = None
) -> list[str]:
    """Remove the worktree (and by the policy the branches) of a task that is done; the
    printed lines. Nothing when the task is not done or an attempt holds the worktree."""
    task = store.try_load_task(name)
    if task is None or task.state not in DONE_STATES:
        return []
    return _remove(store, task, policy or Policy(branches=branches))


def gc(store: ArcStore, *, branches: bool = False, policy: Policy | None = None) -> CleanedUp:
    """`radian arc gc`: every leftover worktree of a done or unknown task (and by the policy
    the branches of done tasks), and the gate's scratch worktrees of tasks no gate runs for;
    what was removed."""
    policy = policy or Policy(branches=branches)
    lines: list[str] = []
    folder = store.repo_root / git.WORKTREES_DIR
    seen: set[str] = set()
    for path in sorted(folder.iterdir()) if folder.is_dir() else []:
        if not path.is_dir():
            continue
        name = path.name
        seen.add(name)
        task = store.try_load_task(name) if store.task_exists(name) else None
        if task is not None and task.state not in DONE_STATES:
            continue
        if task is None and store.task_dir(name).is_dir():
            continue  # a damaged task: its worktree may hold the only copy of its work
        if task is None:
            lines += _remove_worktree(store.repo_root, name)
        else:
            lines += _remove(store, task, policy)
    if policy.branches or policy.remote_branches:
        for name in store.names_in(*DONE_STATES):
            if name not in seen and (task := store.try_load_task(name)) is not None:
                lines += _remove(store, task, policy)
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
    git.pack_refs(store.repo_root)
    return CleanedUp(tuple(lines))


def _remove(store: ArcStore, task: Task, policy: Policy) -> list[str]:
    repo = store.repo_root
    name = task.name
    if git.worktree_path(repo, name).exists() and (
        not policy.worktrees or not _worktree_free(repo, name)
    ):
        return []  # the worktree stays, and its branch with it (git keeps it so)
    lines = _remove_worktree(repo, name)
    _remove_lock_files(store, task)
    if policy.branches or policy.remote_branches:
        lines += _remove_branches(repo, task, policy)
    return lines


def _remove_branches(repo: Path, task: Task, policy: Policy) -> list[str]:
    name = task.name
    lines: list[str] = []
    tracking = git.rev_parse(repo, f"refs/remotes/{policy.remote}/{task.branch}")
    target = git.rev_parse(repo, f"refs/remotes/{policy.remote}/{policy.target_branch}")
    integrated = task.state is State.INTEGRATED
    local = git.rev_parse(repo, f"refs/heads/{task.branch}")
    if policy.branches and local is not None:
        # the work is safe elsewhere: in the target (integrated) or on the remote's branch
        kept_by = [ref for ref in (target if integrated else None, tracking) if ref is not None]
        if any(git.is_ancestor(repo, local, ref) for ref in kept_by):
            git.run_git(repo, "branch", "-D", task.branch)
            lines.append(texts.branch_removed(name, task.branch))
    if (
        policy.remote_branches
        and integrated
        and tracking is not None
        and target is not None
        and git.is_ancestor(repo, tracking, target)
        and git.delete_remote_branch(repo, policy.remote, task.branch, tracking)
    ):
        lines.append(texts.remote_branch_removed(name, task.branch, policy.remote))
    return lines


def _remove_worktree(repo: Path, name: str) -> list[str]:
    path = git.worktree_path(repo, name)
    if not path.exists():
        return []
    if not _worktree_free(repo, name):
        return []
    git.remove_worktree(repo, path)
    return [texts.worktree_removed(name)]


def _remove_lock_files(store: ArcStore, task: Task) -> None:
    """The lock files of a finished task no one takes again (see the module's docstring),
    each unlinked while held, so no one holding it is left on a file that is gone."""
    repo = store.repo_root
    paths = [git.worktree_lock_path(repo, task.name)]
    if task.state is State.INTEGRATED:
        paths += [lock_path(repo, "task", task.name), lock_path(repo, "gate", task.name)]
    for path in paths:
        try:
            descriptor = os.open(path, os.O_RDWR)
        except FileNotFoundError:
            continue
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
            path.unlink(missing_ok=True)
        except BlockingIOError:
            pass  # held: left for the next clean-up
        finally:
            os.close(descriptor)


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

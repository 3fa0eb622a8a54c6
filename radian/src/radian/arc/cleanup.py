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

Whatever those two say, the branches of integrated tasks do not pile up: `run` keeps those of
the newest `keep_integrated_branches` (100 by default) and prunes the older ones, local and
remote, once a quarter as many again are waiting, in one batch (one `branch -D`, one push).
The same batch moves the tasks' claims on the remote (`refs/arc-claims/<task>`, with
`[hosts] claim_refs`) into the one archive ref and deletes their refs there and here
(radian.arc.hosts says why no other host can then take such a task). Every fetch and push
reads every ref of the repository and the push every ref of the remote too, so a branch
(or a claim) kept per task ever integrated made each attempt slower as history grew (a push
18 ms of CPU at 1,000 tasks done, 36 ms at 3,000, 11 ms with none); `gc` prunes down to the
same number at once. Only a branch the target holds goes (integrated work is reachable from
the target's merge commit), a remote one leased on the head arc last fetched.
"""

from __future__ import annotations

import fcntl
import os
import shutil
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from radian.arc import git, texts
from radian.arc.config import ArcConfig
from radian.arc.hosts import default_host_name
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
    keep_integrated_branches: int = 100
    claims: bool = True  # [hosts] claim_refs: integrated tasks' claims go to the archive
    host: str | None = None  # [hosts] name (None: the default, radian.arc.hosts)

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
            keep_integrated_branches=config.cleanup.keep_integrated_branches,
            claims=config.hosts.claim_refs,
            host=config.hosts.name,
        )


def clean_task(
    store: ArcStore, name: str, *, branches: bool = False, policy: Policy | None = None
) -> list[str]:
    """Remove the worktree (and by the policy the branches) of a task that is done; the
    printed lines. Nothing when the task is not done or an attempt holds the worktree."""
    return clean_tasks(store, [name], policy or Policy(branches=branches))


def clean_tasks(
    store: ArcStore,
    names: Iterable[str],
    policy: Policy,
    noted: IntegratedBranches | None = None,
) -> list[str]:
    """clean_task of each of `names`, the integrated tasks' branches in one batch; the lines
    of each task together, in the order of `names`. Each done task is noted in `noted`."""
    return [line for found in _clean(store, names, policy, noted).values() for line in found]


def _clean(
    store: ArcStore,
    names: Iterable[str],
    policy: Policy,
    noted: IntegratedBranches | None = None,
) -> dict[str, list[str]]:
    lines: dict[str, list[str]] = {}
    integrated: list[Task] = []
    for name in names:
        task = store.try_load_task(name)
        if task is None or task.state not in DONE_STATES:
            continue
        if noted is not None:
            noted.note(task)
        if not (policy.worktrees or policy.branches or policy.remote_branches):
            continue
        lines[name], free = _remove(store, task, policy)
        if not free or not (policy.branches or policy.remote_branches):
            continue
        if task.state is State.INTEGRATED:
            integrated.append(task)
        else:
            lines[name] += _remove_failed_branch(store.repo_root, task, policy)
    pruned = prune_integrated(
        store.repo_root, integrated, policy, local=policy.branches, remote=policy.remote_branches
    )
    for name, line in pruned:
        lines[name].append(line)
    return lines


@dataclass
class IntegratedBranches:
    """The integrated tasks whose branches may still be there, newest kept: `run` notes each
    task it sees integrated (those of earlier runs when it starts) and prunes the oldest
    beyond the policy's number (see the module's docstring)."""

    policy: Policy
    _noted: list[tuple[str, str]] = field(default_factory=list)  # (updated_at, task)

    def note(self, task: Task) -> None:
        if task.state is State.INTEGRATED:
            self._noted.append((task.updated_at, task.name))

    def prune(self, store: ArcStore, *, slack: int | None = None) -> list[str]:
        """When more than keep + slack (a quarter of keep unless given) are noted, prune all
        but the newest keep; the lines."""
        keep = self.policy.keep_integrated_branches
        if len(self._noted) <= keep + (keep // 4 if slack is None else slack):
            return []
        self._noted.sort()
        cut = len(self._noted) - keep
        old, self._noted = self._noted[:cut], self._noted[cut:]
        tasks = [task for _, name in old
                 if (task := store.try_load_task(name)) is not None
                 and task.state is State.INTEGRATED]  # fmt: skip
        pruned = prune_integrated(store.repo_root, tasks, self.policy, local=True, remote=True)
        return [line for _, line in pruned]


def prune_integrated(
    repo: Path, tasks: list[Task], policy: Policy, *, local: bool, remote: bool
) -> list[tuple[str, str]]:
    """Delete integrated `tasks`' branches the target holds (`local`: arc/<task> here;
    `remote`: on the remote, leased on its tracking ref's head, and this host's claims there
    archived first) and the local copies of their claim refs, in one batch: a few git
    commands however many tasks. (task, line) of each branch removed."""
    if not tasks or not (local or remote):
        return []
    target = git.rev_parse(repo, f"refs/remotes/{policy.remote}/{policy.target_branch}")
    if target is None:
        return []
    tracking_prefix = f"refs/remotes/{policy.remote}/"
    # Every branch here and tracking ref the target holds: one listing, not one per task
    # (what is left is bounded: the pruning keeps it so).
    held = git.refs_at(repo, ["refs/heads/", tracking_prefix], merged_into=target)
    found: list[tuple[str, str]] = []
    if local:
        wanted = [task.branch for task in tasks if f"refs/heads/{task.branch}" in held]
        deleted = git.delete_branches(repo, wanted)
        found += [(task.name, texts.branch_removed(task.name, task.branch))
                  for task in tasks if task.branch in deleted]  # fmt: skip
    if remote:
        leases = {task.branch: held[ref] for task in tasks
                  if (ref := f"{tracking_prefix}{task.branch}") in held}  # fmt: skip
        deleted = git.delete_remote_branches(repo, policy.remote, leases) if leases else set()
        found += [(task.name, texts.remote_branch_removed(task.name, task.branch, policy.remote))
                  for task in tasks if task.branch in deleted]  # fmt: skip
    if remote and policy.claims:
        host = policy.host or default_host_name(repo)
        git.archive_claims(repo, policy.remote, host, [task.name for task in tasks])
    claims = {git.claim_ref(task.name) for task in tasks}
    git.delete_refs(repo, {ref: sha for ref, sha in git.refs_at(repo, [git.CLAIMS_PREFIX]).items()
                           if ref in claims})  # fmt: skip
    order = {task.name: index for index, task in enumerate(tasks)}
    return sorted(found, key=lambda pair: order[pair[0]])


def gc(store: ArcStore, *, branches: bool = False, policy: Policy | None = None) -> CleanedUp:
    """`radian arc gc`: every leftover worktree of a done or unknown task (and by the policy
    the branches of done tasks), and the gate's scratch worktrees of tasks no gate runs for;
    what was removed."""
    policy = policy or Policy(branches=branches)
    folder = store.repo_root / git.WORKTREES_DIR
    order: list[str] = []  # the tasks whose lines are printed, in this order
    unknown: dict[str, list[str]] = {}
    for path in sorted(folder.iterdir()) if folder.is_dir() else []:
        if not path.is_dir():
            continue
        name = path.name
        task = store.try_load_task(name) if store.task_exists(name) else None
        if task is not None and task.state not in DONE_STATES:
            continue
        if task is None and store.task_dir(name).is_dir():
            continue  # a damaged task: its worktree may hold the only copy of its work
        order.append(name)
        if task is None:
            unknown[name] = _remove_worktree(store.repo_root, name)
    if policy.branches or policy.remote_branches:
        seen = set(order)
        order += [name for name in store.names_in(*DONE_STATES) if name not in seen]
    cleaned = _clean(store, [name for name in order if name not in unknown], policy)
    lines = [line for name in order for line in unknown.get(name, cleaned.get(name, []))]
    integrated = store.names_in(State.INTEGRATED)
    if len(integrated) > policy.keep_integrated_branches:
        newest = IntegratedBranches(policy)
        for name in integrated:
            if (task := store.try_load_task(name)) is not None:
                newest.note(task)
        lines += newest.prune(store, slack=0)
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


def _remove(store: ArcStore, task: Task, policy: Policy) -> tuple[list[str], bool]:
    """The task's worktree and lock files removed: the lines, and whether its branches may
    go too (False: the worktree stays, and its branch with it, as git keeps it so)."""
    repo = store.repo_root
    name = task.name
    if git.worktree_path(repo, name).exists() and (
        not policy.worktrees or not _worktree_free(repo, name)
    ):
        return [], False
    lines = _remove_worktree(repo, name)
    _remove_lock_files(store, task)
    return lines, True


def _remove_failed_branch(repo: Path, task: Task, policy: Policy) -> list[str]:
    """A failed task's local branch, when the remote's branch holds its head (a rework
    continues from the remote's)."""
    if not policy.branches:
        return []
    tracking = git.rev_parse(repo, f"refs/remotes/{policy.remote}/{task.branch}")
    local = git.rev_parse(repo, f"refs/heads/{task.branch}")
    if local is None or tracking is None or not git.is_ancestor(repo, local, tracking):
        return []
    git.run_git(repo, "branch", "-D", task.branch)
    return [texts.branch_removed(task.name, task.branch)]


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

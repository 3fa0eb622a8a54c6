"""A conflict with the target branch: detected before each stage, answered by a rework.

Before every stage the gate fetches the target branch and asks git whether the task's
commit merges with it (`git merge-tree --write-tree`, in memory: no worktree is touched).
When it does not, the stage fails with reason `conflict` and the conflicted paths.
"""

from __future__ import annotations

from pathlib import Path

from filelock import FileLock

from radian.arc import git
from radian.arc.gate import texts
from radian.arc.gate.stage import GateJob, RemoteUnreachable, StageResult, failed
from radian.arc.gate.verdict import CONFLICT
from radian.arc.store import arc_lock


def remote_lock(repo_root: Path) -> FileLock:
    """Held around fetches and pushes of the target branch, so two gates never race a ref."""
    return arc_lock(repo_root, "gate-remote")


def integration_lock(repo_root: Path) -> FileLock:
    """Held for a whole integration (fetch, merge, key commands, push): arc integrates one
    task at a time, a merge queue, so its own gates never push past each other."""
    return arc_lock(repo_root, "gate-integration")


def fetch_target(job: GateJob) -> str:
    """The remote target branch's head, fetched. A fetch that fails is an outage
    (RemoteUnreachable), the way the worker's fetch and the delivery check read it, unless
    the remote answered that it has no such branch: that is the configuration's fault."""
    with remote_lock(job.repo_root):
        try:
            return git.fetch_branch(job.repo_root, job.remote, job.target_branch)
        except git.GitError as error:
            if git.names_no_remote_branch(error.stderr):
                raise
            raise RemoteUnreachable(error.stderr or str(error)) from error


def fetch_head(job: GateJob) -> bool:
    """Fetch the remote's task branch when the task's head is not in this clone (a gate
    taken up from another host, whose worker pushed it; an attempt fetches its own task
    branch only). True when it fetched. A fetch that fails is an outage, as fetch_target's;
    a branch the remote no longer has (cleaned up once the task was integrated) is left to
    the stages, which find the task's integration on the target before they need its head."""
    if not job.branch or git.rev_parse(job.repo_root, job.head_sha) is not None:
        return False
    with remote_lock(job.repo_root):
        try:
            git.fetch_branch(job.repo_root, job.remote, job.branch)
        except git.GitError as error:
            if git.names_no_remote_branch(error.stderr):
                return False
            raise RemoteUnreachable(error.stderr or str(error)) from error
    return True


def check_conflict(job: GateJob, stage: str, main_sha: str) -> StageResult | None:
    """The `conflict` failure of `stage`, or None when the head merges with main_sha."""
    check = git.merge_check(job.repo_root, main_sha, job.head_sha)
    if not check.clean and not check.conflicted_paths and fetch_head(job):
        # git merge-tree answers a commit it does not have as it answers a conflict (in no
        # path): the head was not here; asked again now that it is.
        check = git.merge_check(job.repo_root, main_sha, job.head_sha)
    if check.clean:
        return None
    paths = list(check.conflicted_paths)
    return failed(CONFLICT, texts.conflict(stage, main_sha, paths), conflicted_paths=paths)

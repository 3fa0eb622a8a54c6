"""The delivery check: did a worker that reported "completed" also deliver its work?

Delivered means the worker committed everything on the task's branch, the branch has at
least one commit beyond the base, and the worker pushed the branch: the remote's head of
the branch is the worktree's head. arc never pushes for the worker.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from radian.arc import git

# The reasons, in the order they are checked: the first that applies is the one reported.
NO_WORKTREE = "no_worktree"
NOT_ON_BRANCH = "not_on_branch"
MERGE_IN_PROGRESS = "merge_in_progress"
UNCOMMITTED_CHANGES = "uncommitted_changes"
NO_COMMITS = "no_commits"
NOT_PUSHED = "not_pushed"
# Not a verdict on the work: the remote could not be asked (an outage). An infrastructure
# wait, after which the attempt's delivery is looked at again by the next attempt.
REMOTE_UNREACHABLE = "remote_unreachable"


@dataclass(frozen=True)
class Delivery:
    ok: bool
    reason: str | None  # one of the reasons above when not ok
    base_sha: str | None
    head_sha: str | None
    detail: str | None = None  # git's own words, for remote_unreachable


def check_delivery(worktree: Path, branch: str, remote: str, base_sha: str | None) -> Delivery:
    head_sha = git.rev_parse(worktree, "HEAD") if worktree.is_dir() else None
    if head_sha is None:
        return Delivery(False, NO_WORKTREE, base_sha, None)

    def failed(reason: str) -> Delivery:
        return Delivery(False, reason, base_sha, head_sha)

    if git.current_branch(worktree) != branch:
        return failed(NOT_ON_BRANCH)
    if git.merge_in_progress(worktree):
        return failed(MERGE_IN_PROGRESS)
    if git.uncommitted_changes(worktree):
        return failed(UNCOMMITTED_CHANGES)
    if base_sha is None or not git.commits_between(worktree, base_sha, head_sha):
        return failed(NO_COMMITS)
    try:
        pushed = git.remote_branch_sha(worktree, remote, branch)
    except git.GitError as error:
        return Delivery(False, REMOTE_UNREACHABLE, base_sha, head_sha, str(error))
    if pushed != head_sha:
        return failed(NOT_PUSHED)
    return Delivery(True, None, base_sha, head_sha)

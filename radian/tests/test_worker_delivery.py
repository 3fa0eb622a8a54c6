"""The delivery check on real worktrees: committed, beyond the base, and pushed."""

from __future__ import annotations

from pathlib import Path

import pytest
from worker_fixtures import ArcRepo, arc_repo, git

from radian.arc import git as arc_git
from radian.arc.worker.delivery import Delivery, check_delivery

pytestmark = pytest.mark.integration

__all__ = ["arc_repo"]


def prepare(repo: ArcRepo) -> arc_git.PreparedWorktree:
    return arc_git.prepare_worktree(repo.root, "t1", "arc/t1", "origin", "main")


def commit(worktree: Path, name: str) -> str:
    (worktree / name).write_text(f"{name}\n")
    git(worktree, "add", name)
    git(worktree, "commit", "-q", "-m", name)
    return git(worktree, "rev-parse", "HEAD")


def test_committed_and_pushed_is_delivered(arc_repo: ArcRepo) -> None:
    prepared = prepare(arc_repo)
    head = commit(prepared.path, "a.txt")
    git(prepared.path, "push", "-q", "origin", "HEAD:arc/t1")
    assert check_delivery(prepared.path, "arc/t1", "origin", prepared.base_sha) == Delivery(
        True, None, prepared.base_sha, head
    )


def test_not_pushed(arc_repo: ArcRepo) -> None:
    prepared = prepare(arc_repo)
    commit(prepared.path, "a.txt")
    git(prepared.path, "push", "-q", "origin", "HEAD:arc/t1")
    head = commit(prepared.path, "b.txt")  # the remote is one commit behind
    delivery = check_delivery(prepared.path, "arc/t1", "origin", prepared.base_sha)
    assert (delivery.ok, delivery.reason, delivery.head_sha) == (False, "not_pushed", head)


def test_no_commits_beyond_the_base(arc_repo: ArcRepo) -> None:
    prepared = prepare(arc_repo)
    git(prepared.path, "push", "-q", "origin", "HEAD:arc/t1")
    delivery = check_delivery(prepared.path, "arc/t1", "origin", prepared.base_sha)
    assert (delivery.ok, delivery.reason) == (False, "no_commits")


def test_uncommitted_changes_and_untracked_files(arc_repo: ArcRepo) -> None:
    prepared = prepare(arc_repo)
    commit(prepared.path, "a.txt")
    git(prepared.path, "push", "-q", "origin", "HEAD:arc/t1")
    (prepared.path / "new.txt").write_text("untracked\n")
    assert check_delivery(prepared.path, "arc/t1", "origin", prepared.base_sha).reason == (
        "uncommitted_changes"
    )


def test_a_merge_left_in_progress(arc_repo: ArcRepo) -> None:
    prepare(arc_repo)
    arc_repo.commit("main.txt", "main moved\n")
    prepared = arc_git.prepare_worktree(
        arc_repo.root, "t1", "arc/t1", "origin", "main", start_mid_merge=True
    )
    assert check_delivery(prepared.path, "arc/t1", "origin", prepared.base_sha).reason == (
        "merge_in_progress"
    )


def test_not_on_the_task_branch_and_no_worktree(arc_repo: ArcRepo, tmp_path: Path) -> None:
    prepared = prepare(arc_repo)
    git(prepared.path, "checkout", "-q", "--detach")
    assert check_delivery(prepared.path, "arc/t1", "origin", prepared.base_sha).reason == (
        "not_on_branch"
    )
    missing = check_delivery(tmp_path / "gone", "arc/t1", "origin", "abc")
    assert missing == Delivery(False, "no_worktree", "abc", None)

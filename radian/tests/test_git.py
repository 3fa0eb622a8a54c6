"""radian.arc.git: worktrees on the task's branch, remote heads, merges left conflicted."""

from __future__ import annotations

from pathlib import Path

import pytest
from worker_fixtures import ArcRepo, arc_repo, git

from radian.arc import git as arc_git

pytestmark = pytest.mark.integration

__all__ = ["arc_repo"]


def test_first_prepare_branches_from_the_remote_target(arc_repo: ArcRepo) -> None:
    # main moves on the remote after the clone: prepare must fetch and start from it
    moved = arc_repo.commit("later.txt", "later\n")
    git(arc_repo.root, "reset", "-q", "--hard", "HEAD~1")

    prepared = arc_git.prepare_worktree(arc_repo.root, "t1", "arc/t1", "origin", "main")

    assert prepared.path == arc_repo.root / ".radian" / "arc" / "worktrees" / "t1"
    assert (prepared.base_sha, prepared.head_sha) == (moved, moved)
    assert arc_git.current_branch(prepared.path) == "arc/t1"
    assert (prepared.path / "later.txt").exists()
    assert prepared.merge_conflicts == ()
    # arc's state, worktrees included, stays out of the repository's status
    assert git(arc_repo.root, "status", "--porcelain") == ""


def test_a_retry_continues_the_branch_and_drops_leftovers(arc_repo: ArcRepo) -> None:
    first = arc_git.prepare_worktree(arc_repo.root, "t1", "arc/t1", "origin", "main")
    (first.path / "work.txt").write_text("committed\n")
    git(first.path, "add", "work.txt")
    git(first.path, "commit", "-q", "-m", "work")
    (first.path / "scratch.txt").write_text("uncommitted\n")
    (first.path / "README.md").write_text("edited, not committed\n")
    head = git(first.path, "rev-parse", "HEAD")

    second = arc_git.prepare_worktree(arc_repo.root, "t1", "arc/t1", "origin", "main")

    assert second.path == first.path
    assert second.head_sha == head
    assert (second.path / "work.txt").read_text() == "committed\n"
    assert not (second.path / "scratch.txt").exists()
    assert (second.path / "README.md").read_text() == "hello\n"
    assert arc_git.uncommitted_changes(second.path) == []


def test_a_stale_worktree_holding_the_branch_is_removed(arc_repo: ArcRepo, tmp_path: Path) -> None:
    elsewhere = tmp_path / "old-worktree"
    git(arc_repo.root, "worktree", "add", "-q", "-b", "arc/t1", str(elsewhere), "main")

    prepared = arc_git.prepare_worktree(arc_repo.root, "t1", "arc/t1", "origin", "main")

    assert not elsewhere.exists()
    assert arc_git.current_branch(prepared.path) == "arc/t1"


def test_a_deleted_worktree_directory_is_pruned(arc_repo: ArcRepo) -> None:
    first = arc_git.prepare_worktree(arc_repo.root, "t1", "arc/t1", "origin", "main")
    arc_git.remove_worktree(arc_repo.root, first.path)
    assert not first.path.exists()
    second = arc_git.prepare_worktree(arc_repo.root, "t1", "arc/t1", "origin", "main")
    assert second.path.is_dir()


def test_the_branch_checked_out_in_the_repository_itself_is_refused(arc_repo: ArcRepo) -> None:
    git(arc_repo.root, "checkout", "-q", "-b", "arc/t1")
    with pytest.raises(arc_git.GitError, match="checked out in the repository itself"):
        arc_git.prepare_worktree(arc_repo.root, "t1", "arc/t1", "origin", "main")


def test_a_branch_only_the_remote_has_is_continued(arc_repo: ArcRepo) -> None:
    pushed = arc_repo.commit("remote-work.txt", "from elsewhere\n", branch="arc/t1")
    git(arc_repo.root, "branch", "-q", "-D", "arc/t1")

    prepared = arc_git.prepare_worktree(arc_repo.root, "t1", "arc/t1", "origin", "main")

    assert prepared.head_sha == pushed
    assert (prepared.path / "remote-work.txt").exists()


def test_a_missing_target_branch_is_an_error(arc_repo: ArcRepo) -> None:
    with pytest.raises(arc_git.GitError, match="origin/develop"):
        arc_git.prepare_worktree(arc_repo.root, "t1", "arc/t1", "origin", "develop")


def test_start_mid_merge_leaves_the_conflict(arc_repo: ArcRepo) -> None:
    first = arc_git.prepare_worktree(arc_repo.root, "t1", "arc/t1", "origin", "main")
    (first.path / "README.md").write_text("the task's version\n")
    git(first.path, "commit", "-q", "-am", "task edits README")
    main_sha = arc_repo.commit("README.md", "main's version\n")

    prepared = arc_git.prepare_worktree(
        arc_repo.root, "t1", "arc/t1", "origin", "main", start_mid_merge=True
    )

    assert prepared.base_sha == main_sha
    assert prepared.merge_conflicts == ("README.md",)
    assert arc_git.merge_in_progress(prepared.path)
    assert "<<<<<<<" in (prepared.path / "README.md").read_text()


def test_start_mid_merge_without_conflicts_leaves_the_merge_uncommitted(
    arc_repo: ArcRepo,
) -> None:
    arc_git.prepare_worktree(arc_repo.root, "t1", "arc/t1", "origin", "main")
    arc_repo.commit("other.txt", "main moved\n")

    prepared = arc_git.prepare_worktree(
        arc_repo.root, "t1", "arc/t1", "origin", "main", start_mid_merge=True
    )

    assert prepared.merge_conflicts == ()
    assert arc_git.merge_in_progress(prepared.path)
    assert arc_git.uncommitted_changes(prepared.path) == ["A  other.txt"]


def test_remote_heads_and_commit_counts(arc_repo: ArcRepo) -> None:
    main_sha = git(arc_repo.root, "rev-parse", "HEAD")
    assert arc_git.remote_branch_sha(arc_repo.root, "origin", "main") == main_sha
    assert arc_git.remote_branch_sha(arc_repo.root, "origin", "arc/none") is None
    assert arc_git.rev_parse(arc_repo.root, "no-such-ref") is None
    later = arc_repo.commit("b.txt", "b\n")
    assert arc_git.commits_between(arc_repo.root, main_sha, later) == 1
    assert arc_git.commits_between(arc_repo.root, later, main_sha) == 0


def test_git_error_names_the_command(arc_repo: ArcRepo) -> None:
    with pytest.raises(arc_git.GitError) as caught:
        arc_git.run_git(arc_repo.root, "checkout", "no-such-branch")
    assert caught.value.returncode != 0
    assert str(caught.value).startswith(f"git checkout no-such-branch (in {arc_repo.root}) exited")


def test_prepare_fetches_the_target_and_its_own_branch_only(arc_repo: ArcRepo) -> None:
    # issue 33: every attempt fetched every arc/* branch, a cost that grew with history
    moved = arc_repo.commit("later.txt", "later\n")
    git(arc_repo.root, "reset", "-q", "--hard", "HEAD~1")
    own = arc_repo.commit("own.txt", "mine\n", branch="arc/t1")
    other = arc_repo.commit("other.txt", "theirs\n", branch="arc/t2")
    for name in ("arc/t1", "arc/t2"):
        git(arc_repo.root, "branch", "-q", "-D", name)
        git(arc_repo.root, "update-ref", "-d", f"refs/remotes/origin/{name}")

    prepared = arc_git.prepare_worktree(arc_repo.root, "t1", "arc/t1", "origin", "main")

    assert prepared.base_sha == moved
    assert prepared.head_sha == own
    assert arc_git.rev_parse(arc_repo.root, "refs/remotes/origin/arc/t2") is None
    assert other != own


def test_a_tracking_ref_of_a_branch_the_remote_dropped_is_not_taken(arc_repo: ArcRepo) -> None:
    # the remote's arc/t1 was pruned: the attempt starts from the target, not the stale ref
    old = arc_repo.commit("old.txt", "old\n", branch="arc/t1")
    git(arc_repo.root, "branch", "-q", "-D", "arc/t1")
    git(arc_repo.root, "push", "-q", "origin", "--delete", "arc/t1")
    git(arc_repo.root, "update-ref", "refs/remotes/origin/arc/t1", old)  # as a fetch left it
    main = arc_git.rev_parse(arc_repo.root, "refs/remotes/origin/main")

    prepared = arc_git.prepare_worktree(arc_repo.root, "t1", "arc/t1", "origin", "main")

    assert prepared.head_sha == main
    assert arc_git.rev_parse(arc_repo.root, "refs/remotes/origin/arc/t1") is None

"""The one place that runs git: remote heads, task branches, worktrees and merges.

Every attempt of a task runs in the task's worktree, `<repo>/.radian/arc/worktrees/<task>/`,
on the task's branch. The path stays the same across attempts because a worker's session
(Claude Code's, for one) is tied to its working directory, so `--resume` needs it; the
worktree itself is re-created for each attempt from the branch's last commit.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ARC_STATE_DIR = Path(".radian") / "arc"
WORKTREES_DIR = ARC_STATE_DIR / "worktrees"
EXCLUDE_LINE = "/.radian/arc/"
# git's own messages must not be translated, and a fetch must never ask for a password.
GIT_ENV = {"LC_ALL": "C", "GIT_TERMINAL_PROMPT": "0"}
MERGE_CONFLICT_EXIT = 1


class GitError(Exception):
    """A git command failed; the message names the command and carries git's stderr."""

    def __init__(self, args: list[str], cwd: Path, returncode: int, stderr: str) -> None:
        self.args_run = args
        self.cwd = cwd
        self.returncode = returncode
        self.stderr = stderr.strip()
        super().__init__(
            f"git {' '.join(args)} (in {cwd}) exited {returncode}: {self.stderr or 'no output'}"
        )


@dataclass(frozen=True)
class PreparedWorktree:
    path: Path
    branch: str
    base_sha: str  # the remote target branch's head the attempt starts from
    head_sha: str  # the branch's head when the worker starts (before any merge commit)
    merge_conflicts: tuple[str, ...]  # paths left conflicted by start_mid_merge
    # The local branch's head when it was stale (the remote's had commits it lacks) and the
    # worktree started from the remote's branch instead; None when the local one was used.
    stale_local_sha: str | None = None


def run_git(cwd: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    """Runs git in cwd; raises GitError on a non-zero exit when check is true.

    git runs in a session of its own: a Ctrl-C in the terminal goes to `radian arc run`
    alone, which decides what to stop; an in-flight push or fetch of a gate is never killed
    by it half-way (and so never turned into a gate_error verdict).
    """
    completed = subprocess.run(
        ["git", *args],
        cwd=cwd,
        env={**os.environ, **GIT_ENV},
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        check=False,
        start_new_session=True,
    )
    if check and completed.returncode != 0:
        raise GitError(list(args), cwd, completed.returncode, completed.stderr)
    return completed


# A fetch that lost a race to another git command in the same repository: another fetch
# updating the same ref (a gate's and an attempt's, both updating <remote>/<target>), or a
# worktree being added while the fetch checks every HEAD (a gate's scratch worktree: "bad
# object worktrees/<name>/HEAD"). git's words, and how often the fetch is run again. Not a
# backoff: the other command is done within milliseconds.
LOCAL_REF_RACE = "cannot lock ref"
LOCAL_RACES = (LOCAL_REF_RACE, "fatal: bad object worktrees/")
FETCH_TRIES = 5
FETCH_RACE_PAUSE_SECS = 0.05


def run_fetch(repo: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    """`git fetch args`, run again when it lost a race in this repository (see above)."""
    for attempt in range(1, FETCH_TRIES + 1):
        completed = run_git(repo, "fetch", *args, check=False)
        if completed.returncode == 0 or not any(r in completed.stderr for r in LOCAL_RACES):
            break
        if attempt < FETCH_TRIES:
            time.sleep(FETCH_RACE_PAUSE_SECS * attempt)
    if check and completed.returncode != 0:
        raise GitError(["fetch", *args], repo, completed.returncode, completed.stderr)
    return completed


def fetch(repo: Path, remote: str) -> None:
    run_fetch(repo, "--quiet", remote)


def fetch_for_attempt(repo: Path, remote: str, target_branch: str, branch: str) -> None:
    """Fetch what an attempt needs and nothing else: the target branch and the task's own
    branch, into refs/remotes/<remote>/ (a fetch of every `arc/*` branch grows with history:
    43 ms at 0 done, 295 ms at 1,000). One fetch; when the remote has no such task branch
    (a first attempt, or a branch pruned since), the target alone, and a tracking ref left
    from before is dropped so a branch the remote no longer has is not taken for its."""
    target_spec = f"+refs/heads/{target_branch}:refs/remotes/{remote}/{target_branch}"
    tracking = f"refs/remotes/{remote}/{branch}"
    both = run_fetch(repo, "--quiet", remote, target_spec, f"+refs/heads/{branch}:{tracking}",
                     check=False)  # fmt: skip
    if both.returncode == 0:
        return
    if not names_no_remote_branch(both.stderr.lower()):
        raise GitError(["fetch", remote, target_branch, branch], repo, both.returncode,
                       both.stderr)  # fmt: skip
    # The target missing is said by the caller (no refs/remotes/<remote>/<target>).
    alone = run_fetch(repo, "--quiet", remote, target_spec, check=False)
    if alone.returncode == 0 and rev_parse(repo, tracking) is not None:
        run_git(repo, "update-ref", "-d", tracking)


def rev_parse(repo: Path, ref: str) -> str | None:
    """The commit ref names, or None when it names none."""
    completed = run_git(repo, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}", check=False)
    return completed.stdout.strip() if completed.returncode == 0 else None


def remote_branch_sha(repo: Path, remote: str, branch: str) -> str | None:
    """The remote's own head of branch, asked of the remote (not the fetched copy)."""
    completed = run_git(repo, "ls-remote", "--heads", remote, f"refs/heads/{branch}")
    for line in completed.stdout.splitlines():
        sha, _, ref = line.partition("\t")
        if ref == f"refs/heads/{branch}":
            return sha
    return None


def local_branch_exists(repo: Path, branch: str) -> bool:
    return rev_parse(repo, f"refs/heads/{branch}") is not None


def worktree_path(repo: Path, task: str) -> Path:
    return repo / WORKTREES_DIR / task


def worktree_lock_path(repo: Path, task: str) -> Path:
    """The worktree's lock file: beside the worktree, so it outlives re-creating it."""
    return repo / WORKTREES_DIR / f"{task}.lock"


def prepare_worktree(
    repo: Path,
    task: str,
    branch: str,
    remote: str,
    target_branch: str,
    start_mid_merge: bool = False,
) -> PreparedWorktree:
    """Fetches the target and the task's branch and (re-)creates the task's worktree on it.

    The branch is created from `<remote>/<target_branch>` the first time (or from
    `<remote>/<branch>` if only the remote has it) and reused after, so a retry continues
    the task's work. With start_mid_merge the worktree is left in
    `git merge --no-commit <remote>/<target_branch>`, conflicts and all, for the worker.
    """
    # Two tasks' attempts prepare at once under `radian arc run`: one's `worktree prune`
    # or fetch must not see the other's half-added worktree, so one at a time per repo.
    with worktrees_changing(repo):
        return _prepare_worktree(repo, task, branch, remote, target_branch, start_mid_merge)


@contextmanager
def worktrees_changing(repo: Path) -> Iterator[None]:
    """The repository's worktrees change one at a time, whoever changes them: an attempt's
    preparation (its fetch too), a gate's scratch worktrees, a clean-up. A `worktree prune`
    or a fetch must never meet another's half-added worktree (the fetch fails on its HEAD, a
    prune forgets it). An flock on a descriptor of its own: threads exclude each other too."""
    lock_path = repo / WORKTREES_DIR / ".prepare.lock"
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    with open(lock_path, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _prepare_worktree(
    repo: Path,
    task: str,
    branch: str,
    remote: str,
    target_branch: str,
    start_mid_merge: bool,
) -> PreparedWorktree:
    fetch_for_attempt(repo, remote, target_branch, branch)
    base_sha = rev_parse(repo, f"refs/remotes/{remote}/{target_branch}")
    if base_sha is None:
        raise GitError(
            ["rev-parse", f"{remote}/{target_branch}"], repo, 1, "the remote has no such branch"
        )
    _exclude_arc_state(repo)
    path = worktree_path(repo, task)
    _remove_worktrees_holding(repo, branch, also=path)
    path.parent.mkdir(parents=True, exist_ok=True)
    pushed = rev_parse(repo, f"refs/remotes/{remote}/{branch}")
    stale: str | None = None
    if local_branch_exists(repo, branch):
        local = rev_parse(repo, f"refs/heads/{branch}")
        if pushed is not None and local is not None and not is_ancestor(repo, pushed, local):
            # The remote's branch has commits the local one lacks (pushed from another clone,
            # or the local one went another way and was never delivered): the local branch is
            # stale, and every push from it would be rejected. The remote's wins.
            run_git(repo, "branch", "--force", branch, pushed)
            stale = local
        run_git(repo, "worktree", "add", "--quiet", str(path), branch)
    else:
        start = pushed or base_sha
        run_git(repo, "worktree", "add", "--quiet", "--no-track", "-b", branch, str(path), start)
    head_sha = rev_parse(path, "HEAD")
    assert head_sha is not None  # a worktree just added has a HEAD
    conflicts: tuple[str, ...] = ()
    if start_mid_merge:
        conflicts = start_merge(path, f"{remote}/{target_branch}")
    return PreparedWorktree(path, branch, base_sha, head_sha, conflicts, stale)


def is_ancestor(repo: Path, ancestor: str, descendant: str) -> bool:
    """Is `ancestor` reachable from `descendant` (or the same commit)?"""
    completed = run_git(repo, "merge-base", "--is-ancestor", ancestor, descendant, check=False)
    return completed.returncode == 0


def start_merge(worktree: Path, ref: str) -> tuple[str, ...]:
    """`git merge --no-commit --no-ff ref`, left as it stands; the conflicted paths."""
    completed = run_git(worktree, "merge", "--no-commit", "--no-ff", ref, check=False)
    conflicts = conflicted_paths(worktree)
    if completed.returncode not in (0, MERGE_CONFLICT_EXIT) or (
        completed.returncode == MERGE_CONFLICT_EXIT and not conflicts
    ):
        raise GitError(
            ["merge", "--no-commit", "--no-ff", ref],
            worktree,
            completed.returncode,
            completed.stderr or completed.stdout,
        )
    return conflicts


def conflicted_paths(worktree: Path) -> tuple[str, ...]:
    completed = run_git(worktree, "diff", "--name-only", "--diff-filter=U")
    return tuple(line for line in completed.stdout.splitlines() if line)


def merge_in_progress(worktree: Path) -> bool:
    return rev_parse(worktree, "MERGE_HEAD") is not None


def uncommitted_changes(worktree: Path) -> list[str]:
    """`git status --porcelain` lines: changed, staged and untracked (not ignored) files."""
    completed = run_git(worktree, "status", "--porcelain", "--untracked-files=all")
    return [line for line in completed.stdout.splitlines() if line]


def current_branch(worktree: Path) -> str | None:
    completed = run_git(worktree, "symbolic-ref", "--quiet", "--short", "HEAD", check=False)
    return completed.stdout.strip() if completed.returncode == 0 else None


def commits_between(repo: Path, base: str, head: str) -> int:
    """How many commits head has that base does not."""
    completed = run_git(repo, "rev-list", "--count", f"{base}..{head}")
    return int(completed.stdout.strip())


def remove_worktree(repo: Path, path: Path) -> None:
    """Removes a worktree (uncommitted changes and all) and forgets it."""
    with worktrees_changing(repo):
        _remove_worktree(repo, path)


def _remove_worktree(repo: Path, path: Path) -> None:
    """remove_worktree, for a caller that holds worktrees_changing already."""
    run_git(repo, "worktree", "remove", "--force", "--force", str(path), check=False)
    if path.exists():
        shutil.rmtree(path)
    run_git(repo, "worktree", "prune")


def pack_refs(repo: Path) -> None:
    """Pack the repository's loose refs. Each task leaves a few (its branch, its tracking ref,
    its claim ref), each a file, and every fetch and push reads them all: with 1,000 tasks
    done a push cost 77 ms of CPU, 36 ms with them packed. Best effort: git locks what it
    packs, and a folder that is no repository is left as it is."""
    run_git(repo, "pack-refs", "--all", check=False)


# Many refs in one git command: a batch of the clean-up's (radian.arc.cleanup) is one
# for-each-ref, one `branch -D` and one push however many tasks it holds, at most this many
# refs a command line.
REFS_A_COMMAND = 200


def _chunks(items: list[str]) -> Iterator[list[str]]:
    for start in range(0, len(items), REFS_A_COMMAND):
        yield items[start : start + REFS_A_COMMAND]


def refs_at(repo: Path, refs: list[str], merged_into: str | None = None) -> dict[str, str]:
    """Of `refs` (full names), those that exist, with their commits; with `merged_into`, only
    those it holds (reachable from that commit)."""
    merged = [f"--merged={merged_into}"] if merged_into is not None else []
    found: dict[str, str] = {}
    for chunk in _chunks(refs):
        listed = run_git(repo, "for-each-ref", "--format=%(objectname) %(refname)", *merged,
                         *chunk)  # fmt: skip
        for line in listed.stdout.splitlines():
            sha, _, ref = line.partition(" ")
            found[ref] = sha
    return found


def delete_branches(repo: Path, branches: list[str]) -> set[str]:
    """`git branch -D` of each of `branches` (short names); the ones deleted. A branch checked
    out in a worktree (or the repository itself) is refused by git and kept."""
    deleted: set[str] = set()
    for chunk in _chunks(branches):
        completed = run_git(repo, "branch", "-D", *chunk, check=False)
        for line in completed.stdout.splitlines():
            if line.startswith("Deleted branch "):
                deleted.add(line.removeprefix("Deleted branch ").split(" (was ")[0])
    return deleted


def delete_refs(repo: Path, expected: dict[str, str]) -> None:
    """Delete local refs, each only if it still points at the commit given: one transaction
    (when one has moved since, none is deleted; a later clean-up tries again)."""
    for chunk in _chunks(sorted(expected)):
        lines = "".join(f"delete {ref} {expected[ref]}\n" for ref in chunk)
        subprocess.run(["git", "update-ref", "--stdin"], cwd=repo, env={**os.environ, **GIT_ENV},
                       input=lines, capture_output=True, text=True, check=False,
                       start_new_session=True)  # fmt: skip


def delete_remote_branches(repo: Path, remote: str, expected: dict[str, str]) -> set[str]:
    """Delete `remote`'s branches `expected` names, each only if it still points at the commit
    given (a lease each; a branch pushed to since is left alone), in one push a batch; the
    ones deleted (their tracking refs go with them); none when the remote could not be
    reached (a later clean-up tries again)."""
    deleted: set[str] = set()
    for chunk in _chunks(sorted(expected)):
        leases = [f"--force-with-lease=refs/heads/{b}:{expected[b]}" for b in chunk]
        deletes = [f":refs/heads/{branch}" for branch in chunk]
        completed = run_git(repo, "push", "--porcelain", *leases, remote, *deletes, check=False)
        for line in completed.stdout.splitlines():
            flag, _, rest = line.partition("\t")
            if flag == "-" and rest.startswith(":refs/heads/"):
                deleted.add(rest.partition("\t")[0].removeprefix(":refs/heads/"))
    return deleted


def _remove_worktrees_holding(repo: Path, branch: str, also: Path) -> None:
    """A branch can be checked out in one worktree only: remove the stale worktree of an
    earlier attempt (and anything left at `also`), never the repository's own."""
    run_git(repo, "worktree", "prune")
    worktrees = _worktrees(repo)
    main = worktrees[0][0] if worktrees else repo.resolve()
    for path, checked_out in worktrees:
        if checked_out != f"refs/heads/{branch}":
            continue
        if path == main:
            raise GitError(
                ["worktree", "add", branch],
                repo,
                1,
                f"branch {branch} is checked out in the repository itself ({path})",
            )
        _remove_worktree(repo, path)
    if also.exists():
        _remove_worktree(repo, also)


def _worktrees(repo: Path) -> list[tuple[Path, str | None]]:
    """(path, checked-out ref) of every worktree, the repository's own first."""
    completed = run_git(repo, "worktree", "list", "--porcelain")
    found: list[tuple[Path, str | None]] = []
    for block in completed.stdout.strip().split("\n\n"):
        fields = dict(line.partition(" ")[::2] for line in block.splitlines() if line)
        if "worktree" in fields:
            found.append((Path(fields["worktree"]).resolve(), fields.get("branch")))
    return found


def _exclude_arc_state(repo: Path) -> None:
    """Keeps arc's state (and the worktrees inside it) out of the repository's status."""
    common = run_git(repo, "rev-parse", "--git-common-dir").stdout.strip()
    exclude = (repo / common / "info" / "exclude").resolve()
    existing = exclude.read_text() if exclude.exists() else ""
    if EXCLUDE_LINE in existing.splitlines():
        return
    exclude.parent.mkdir(parents=True, exist_ok=True)
    separator = "" if not existing or existing.endswith("\n") else "\n"
    exclude.write_text(f"{existing}{separator}{EXCLUDE_LINE}\n")


# == GATE (radian.arc.gate): mergeability, scratch worktrees, integration merge and push ====
# Added by the gate's engineer. The gate never touches the user's checkout or the task's own
# worktree: it verifies in detached scratch worktrees under .radian/arc/gate-worktrees/.
GATE_WORKTREES_DIR = ARC_STATE_DIR / "gate-worktrees"
# Used only when the repository has no identity of its own, so an integration merge commit
# can always be written.
FALLBACK_IDENTITY = ("radian arc", "arc@radian.invalid")


@dataclass(frozen=True)
class MergeCheck:
    clean: bool
    conflicted_paths: tuple[str, ...]


def fetch_branch(repo: Path, remote: str, branch: str) -> str:
    """Fetch `remote`'s `branch` into refs/remotes/<remote>/<branch>; return its sha."""
    tracking = f"refs/remotes/{remote}/{branch}"
    run_fetch(repo, "--quiet", remote, f"+refs/heads/{branch}:{tracking}")
    sha = rev_parse(repo, tracking)
    if sha is None:
        raise GitError(["rev-parse", tracking], repo, 1, "the remote has no such branch")
    return sha


# What git (LC_ALL=C) says when the remote answered but has no such branch: no outage.
_NO_REMOTE_BRANCH = ("couldn't find remote ref", "the remote has no such branch")


def names_no_remote_branch(stderr: str) -> bool:
    """Did a failed fetch reach the remote, which then had no such branch?"""
    return any(words in stderr for words in _NO_REMOTE_BRANCH)


def merge_check(repo: Path, ours: str, theirs: str) -> MergeCheck:
    """Would `theirs` merge into `ours` without a conflict? Computed in memory (git 2.38+)."""
    completed = run_git(
        repo, "merge-tree", "--write-tree", "--name-only", "--no-messages", ours, theirs,
        check=False,
    )  # fmt: skip
    if completed.returncode == 0:
        return MergeCheck(clean=True, conflicted_paths=())
    if completed.returncode == MERGE_CONFLICT_EXIT:
        # The first line is the tree written with conflict markers; then one path a line.
        lines = [line for line in completed.stdout.splitlines()[1:] if line]
        return MergeCheck(clean=False, conflicted_paths=tuple(dict.fromkeys(lines)))
    raise GitError(["merge-tree", ours, theirs], repo, completed.returncode, completed.stderr)


def changed_paths(repo: Path, target: str, head: str) -> list[str]:
    """The files head changed since it forked from target (the merge base)."""
    completed = run_git(repo, "diff", "--name-only", "--no-renames", f"{target}...{head}")
    return [line for line in completed.stdout.splitlines() if line]


def diff_since_fork(repo: Path, target: str, head: str) -> str:
    return run_git(repo, "diff", f"{target}...{head}").stdout


def add_detached_worktree(repo: Path, path: Path, commit: str) -> None:
    """A fresh detached worktree of `commit` at `path`, replacing one left from before."""
    with worktrees_changing(repo):
        if path.exists():
            _remove_worktree(repo, path)
        path.parent.mkdir(parents=True, exist_ok=True)
        _exclude_arc_state(repo)
        run_git(repo, "worktree", "add", "--quiet", "--force", "--detach", str(path), commit)


def identity_args(repo: Path) -> list[str]:
    """`-c user.name=… -c user.email=…` when the repository has no identity configured."""
    name = run_git(repo, "config", "user.name", check=False).stdout.strip()
    email = run_git(repo, "config", "user.email", check=False).stdout.strip()
    if name and email:
        return []
    fallback_name, fallback_email = FALLBACK_IDENTITY
    return ["-c", f"user.name={fallback_name}", "-c", f"user.email={fallback_email}"]


def merge_no_ff(worktree: Path, commit: str, message: str) -> subprocess.CompletedProcess[str]:
    return run_git(
        worktree, *identity_args(worktree), "merge", "--no-ff", "--no-edit", "-m", message, commit,
        check=False,
    )  # fmt: skip


def push_head(worktree: Path, remote: str, branch: str) -> subprocess.CompletedProcess[str]:
    """Push HEAD to `remote`'s `branch` without force: a branch that moved is rejected."""
    refspec = f"HEAD:refs/heads/{branch}"
    return run_git(worktree, "push", "--porcelain", remote, refspec, check=False)


def push_was_rejected(completed: subprocess.CompletedProcess[str]) -> bool:
    """The push failed because the branch moved (non-fast-forward), not for another reason:
    also when the remote lost the race for the branch to another push landing at the same
    moment (it cannot lock the ref: "is at <sha> but expected <sha>")."""
    text = completed.stdout + completed.stderr
    return ("[rejected]" in text or "non-fast-forward" in text or "fetch first" in text
            or LOCAL_REF_RACE in text)  # fmt: skip


def push_reached_remote(completed: subprocess.CompletedProcess[str]) -> bool:
    """Did a failed `push_head` get an answer from the remote about the branch?

    With --porcelain, git prints a status line for each ref (flag, tab, refspec, tab, summary)
    once the remote has answered: rejected for a moved branch, or refused by a hook or by
    permissions on the remote's side. A push that never reached the remote (moved away, no
    network, no access to its folder) prints none: that is an outage, not a verdict.
    """
    return any(line.count("\t") >= 2 for line in completed.stdout.splitlines())


# == Claims on the remote (radian.arc.hosts): one ref per task a host has taken ==============
# `refs/arc-claims/<task>` on the remote names a commit (no parent, the empty tree) whose
# message holds the claim as JSON: the host, the task, its plan, when. It is created only where
# it does not exist (--force-with-lease with an empty expected value: a compare-and-swap on the
# remote), so of two hosts that take a task at once, one gets it; the other reads who has it.
# An integrated task's claim moves into ONE ref, the archive (`refs/arc-archive/claims`: a
# commit whose tree holds a file per task, the claim commit's message), before its ref is
# deleted, so the remote's refs (which every push reads) do not grow with the tasks done; a
# host whose create of a claim succeeds reads the archive after it (why that is enough:
# radian.arc.hosts).
CLAIMS_PREFIX = "refs/arc-claims/"
CLAIM_SUBJECT = "arc claim"
CLAIMS_ARCHIVE = "refs/arc-archive/claims"
ARCHIVE_SUBJECT = "arc claims archive"
ARCHIVE_TRIES = 5  # an archive write that lost the race to another host's: fetched and redone


def claim_ref(task: str) -> str:
    return f"{CLAIMS_PREFIX}{task}"


@dataclass(frozen=True)
class ClaimAnswer:
    """What the remote said to a host taking a task: taken by it (`ours`), held by another
    (`holder`, the claim it found), or refused by the remote itself (`refused`: git's words)."""

    ours: bool
    holder: dict[str, Any] | None = None
    refused: str | None = None
    ref: str | None = None  # where the holder's claim is kept, when not at its claim_ref


def archived_claim_ref(task: str) -> str:
    """Where the archive keeps `task`'s claim (`git show refs/arc-archive/claims:<task>`)."""
    return f"{CLAIMS_ARCHIVE}:{task}"


def take_claim(repo: Path, remote: str, task: str, claim: dict[str, Any]) -> ClaimAnswer:
    """Take `task` on `remote` for the host `claim["host"]` names, or find who has it.

    A claim already on the remote that names this host is this host's (taken by an earlier
    run). A claim this host holds (new or found) counts only once the archive, read after it,
    does not hold the task: an archived task is its archived claim's (see above). Raises
    GitError when the remote cannot be reached."""
    ref = claim_ref(task)
    for _ in range(2):  # a claim deleted between the refused push and the read: once more
        sha = _claim_commit(repo, task, claim)
        push = run_git(repo, "push", "--porcelain", "--atomic", "--no-verify",
                       f"--force-with-lease={ref}:", remote, f"{sha}:{ref}",
                       check=False)  # fmt: skip
        if push.returncode == 0:
            run_git(repo, "update-ref", ref, sha)
            return _unless_archived(repo, remote, task, claim, sha)
        if not push_reached_remote(push):
            raise GitError(["push", remote, ref], repo, push.returncode, push.stderr)
        holder = read_claim(repo, remote, task)
        if holder is not None:
            if holder.get("host") != claim.get("host"):
                return ClaimAnswer(False, holder)
            return _unless_archived(repo, remote, task, holder, rev_parse(repo, ref))
        if "stale info" not in push.stdout:  # not there, and still refused: the remote's no
            return ClaimAnswer(False, None, (push.stdout + push.stderr).strip())
    return ClaimAnswer(False, None, (push.stdout + push.stderr).strip())


def _unless_archived(
    repo: Path, remote: str, task: str, claim: dict[str, Any], sha: str | None
) -> ClaimAnswer:
    """This host holds `task`'s claim ref (`sha`): its own, unless the archive (read now, after
    the claim was made) holds the task; then the claim ref just made goes again (leased on
    `sha`) and the archived claim answers, this host's only when it names it."""
    archived = read_archived_claim(repo, remote, task)
    if archived is None:
        return ClaimAnswer(True, claim)
    if sha is not None:
        _delete_claim_refs(repo, remote, {task: sha})
    ours = archived.get("host") == claim.get("host")
    return ClaimAnswer(ours, archived, ref=archived_claim_ref(task))


def read_claim(repo: Path, remote: str, task: str) -> dict[str, Any] | None:
    """The claim the remote holds for `task` (fetched into the same ref here), or None when it
    holds none. Raises GitError when the remote cannot be reached."""
    ref = claim_ref(task)
    fetched = run_fetch(repo, "--quiet", "--no-write-fetch-head", remote, f"+{ref}:{ref}",
                        check=False)  # fmt: skip
    if fetched.returncode != 0:
        if names_no_remote_branch(fetched.stderr.lower()):
            run_git(repo, "update-ref", "-d", ref, check=False)
            return None
        raise GitError(["fetch", remote, ref], repo, fetched.returncode, fetched.stderr)
    body = run_git(repo, "log", "-1", "--format=%B", ref).stdout
    return parse_claim(body)


def parse_claim(message: str) -> dict[str, Any]:
    """A claim commit's message read back: its JSON, or what can be said without it."""
    for line in message.splitlines():
        if line.startswith("{"):
            try:
                found = json.loads(line)
            except ValueError:
                break
            if isinstance(found, dict):
                return found
    return {"host": "an unknown host"}


def _claim_commit(repo: Path, task: str, claim: dict[str, Any]) -> str:
    empty_tree = run_git(repo, "mktree", check=True).stdout.strip()
    message = f"{CLAIM_SUBJECT} {task}\n\n{json.dumps(claim, sort_keys=True)}\n"
    done = run_git(repo, *identity_args(repo), "commit-tree", empty_tree, "-m", message)
    return done.stdout.strip()


def read_archived_claim(repo: Path, remote: str, task: str) -> dict[str, Any] | None:
    """The claim the remote's archive holds for `task`, or None. One narrow fetch of the
    archive ref alone (git asks the remote for that ref only; nothing is sent when it has not
    moved). Raises GitError when the remote cannot be reached."""
    tip = fetch_archive(repo, remote)
    if tip is None:
        return None
    shown = run_git(repo, "cat-file", "blob", f"{tip}:{task}", check=False)
    return parse_claim(shown.stdout) if shown.returncode == 0 else None


def fetch_archive(repo: Path, remote: str) -> str | None:
    """The remote's claims archive, fetched into the same ref here: its commit, or None when
    the remote has none. The refspec has no `+`: the local copy moves forward only (every
    archive commit's parent is the one before), so two fetches racing in this repository never
    leave it older than either saw; one the remote rewrote (a person's doing) is fetched over.
    Raises GitError when the remote cannot be reached."""
    spec = f"{CLAIMS_ARCHIVE}:{CLAIMS_ARCHIVE}"
    fetched = run_fetch(repo, "--quiet", "--no-write-fetch-head", remote, spec, check=False)
    if fetched.returncode != 0 and "rejected" in fetched.stderr:
        fetched = run_fetch(repo, "--quiet", "--no-write-fetch-head", remote, f"+{spec}",
                            check=False)  # fmt: skip
    if fetched.returncode != 0:
        if names_no_remote_branch(fetched.stderr.lower()):
            return None
        raise GitError(["fetch", remote, CLAIMS_ARCHIVE], repo, fetched.returncode,
                       fetched.stderr)  # fmt: skip
    return rev_parse(repo, CLAIMS_ARCHIVE)


def archive_claims(repo: Path, remote: str, host: str, tasks: list[str]) -> set[str]:
    """Move the claims this `host` holds on `remote` for `tasks` (integrated ones) into the
    archive, then delete their refs there and here; the tasks whose claim ref went.

    Two pushes, in this order: the archive (leased on the commit fetched, so a write of
    another host's in between is fetched and redone, never lost), then the claim refs (each
    leased on the commit archived). A claim naming another host is left alone (a host that
    just made one for an archived task deletes it itself), and a task the archive holds
    already keeps its first entry. Nothing when the remote cannot be reached: a later
    clean-up tries again."""
    try:
        return _archive_claims(repo, remote, host, tasks)
    except GitError:
        return set()


def _archive_claims(repo: Path, remote: str, host: str, tasks: list[str]) -> set[str]:
    wanted = {claim_ref(task): task for task in tasks}
    listed = run_git(repo, "ls-remote", "--refs", remote, f"{CLAIMS_PREFIX}*")
    found: dict[str, str] = {}  # task -> its claim commit on the remote
    for line in listed.stdout.splitlines():
        sha, _, ref = line.partition("\t")
        if ref in wanted:
            found[wanted[ref]] = sha
    if not found or not _have_commits(repo, remote, found):
        return set()
    messages = _messages(repo, list(found.values()))
    ours = {task: sha for task, sha in found.items()
            if parse_claim(messages.get(sha, "")).get("host") == host}  # fmt: skip
    if not ours:
        return set()
    entries = {task: messages[sha] for task, sha in ours.items()}
    if not any(_write_archive(repo, remote, fetch_archive(repo, remote), entries)
               for _ in range(ARCHIVE_TRIES)):  # fmt: skip
        return set()
    return _delete_claim_refs(repo, remote, ours)


def _have_commits(repo: Path, remote: str, claims: dict[str, str]) -> bool:
    """Each of `claims`' commits is here, fetched when it is not (one fetch a batch)."""
    checked = _git_input(repo, ["cat-file", "--batch-check"],
                         "".join(f"{sha}\n" for sha in claims.values()))  # fmt: skip
    absent = {line.split()[0] for line in checked.splitlines() if line.endswith(" missing")}
    missing = [task for task, sha in claims.items() if sha in absent]
    for chunk in _chunks(missing):
        specs = [f"+{claim_ref(task)}:{claim_ref(task)}" for task in chunk]
        fetched = run_fetch(repo, "--quiet", "--no-write-fetch-head", remote, *specs, check=False)
        if fetched.returncode != 0:
            return False
    return True


def _messages(repo: Path, shas: list[str]) -> dict[str, str]:
    """Each commit's message, in one `git log` a chunk."""
    found: dict[str, str] = {}
    for chunk in _chunks(shas):
        shown = run_git(repo, "log", "--no-walk=unsorted", "--format=%H%n%B%x00", *chunk)
        for record in shown.stdout.split("\0"):
            sha, _, body = record.lstrip("\n").partition("\n")
            if sha:
                found[sha] = body
    return found


def _write_archive(repo: Path, remote: str, base: str | None, entries: dict[str, str]) -> bool:
    """Push an archive commit on `base` (its parent) holding `base`'s entries and `entries`
    (task -> claim message) it lacks, leased on `base`; False when the remote's moved since."""
    old: dict[str, str] = {}  # task -> its ls-tree line
    if base is not None:
        for line in run_git(repo, "ls-tree", base).stdout.splitlines():
            old[line.partition("\t")[2]] = line
    new = sorted(task for task in entries if task not in old)
    if not new:
        return True
    blobs = _blobs(repo, [entries[task] for task in new])
    added = zip(new, blobs, strict=True)
    lines = {**old, **{task: f"100644 blob {blob}\t{task}" for task, blob in added}}
    tree = _git_input(repo, ["mktree"], "".join(f"{lines[task]}\n" for task in sorted(lines)))
    message = f"{ARCHIVE_SUBJECT}: {len(new)} more, {len(lines)} in all\n\n" + "".join(
        f"{task}\n" for task in new
    )
    parent = ["-p", base] if base is not None else []
    commit = run_git(repo, *identity_args(repo), "commit-tree", tree, *parent, "-m", message)
    sha = commit.stdout.strip()
    lease = f"--force-with-lease={CLAIMS_ARCHIVE}:{base or ''}"
    push = run_git(repo, "push", "--porcelain", "--no-verify", lease, remote,
                   f"{sha}:{CLAIMS_ARCHIVE}", check=False)  # fmt: skip
    if push.returncode != 0:
        return False
    run_git(repo, "update-ref", CLAIMS_ARCHIVE, sha, base or "", check=False)
    return True


def _blobs(repo: Path, contents: list[str]) -> list[str]:
    """Each of `contents` written as a blob here: their ids, in order (one git command)."""
    with tempfile.TemporaryDirectory(prefix="arc-archive-") as folder:
        paths = []
        for index, content in enumerate(contents):
            path = Path(folder) / str(index)
            path.write_text(content)
            paths.append(f"{path}\n")
        out = _git_input(repo, ["hash-object", "-w", "--no-filters", "--stdin-paths"],
                         "".join(paths))  # fmt: skip
    return out.split()


def _git_input(repo: Path, args: list[str], text: str) -> str:
    """`git args` with `text` on its stdin: its output (raises GitError on failure)."""
    completed = subprocess.run(["git", *args], cwd=repo, env={**os.environ, **GIT_ENV},
                               input=text, capture_output=True, text=True, check=False,
                               start_new_session=True)  # fmt: skip
    if completed.returncode != 0:
        raise GitError(args, repo, completed.returncode, completed.stderr)
    return completed.stdout.strip()


def _delete_claim_refs(repo: Path, remote: str, expected: dict[str, str]) -> set[str]:
    """Delete the claim refs of `expected` (task -> commit) on `remote`, each leased on its
    commit, and the copies here; the tasks whose ref the remote deleted."""
    deleted: set[str] = set()
    for chunk in _chunks(sorted(expected)):
        leases = [f"--force-with-lease={claim_ref(task)}:{expected[task]}" for task in chunk]
        deletes = [f":{claim_ref(task)}" for task in chunk]
        completed = run_git(repo, "push", "--porcelain", "--no-verify", *leases, remote,
                            *deletes, check=False)  # fmt: skip
        for line in completed.stdout.splitlines():
            flag, _, rest = line.partition("\t")
            if flag == "-" and rest.startswith(f":{CLAIMS_PREFIX}"):
                deleted.add(rest.partition("\t")[0].removeprefix(f":{CLAIMS_PREFIX}"))
    here = refs_at(repo, [claim_ref(task) for task in sorted(deleted)])
    delete_refs(repo, {ref: sha for ref, sha in here.items()
                       if sha == expected[ref.removeprefix(CLAIMS_PREFIX)]})  # fmt: skip
    return deleted


def moved_by_integrations_only(repo: Path, old: str, new: str, subject: str) -> bool:
    """Did `old`..`new` of the target branch move by commits whose first-parent subjects all
    start with `subject` (arc's own integrations, from another host), and nothing else?"""
    if not is_ancestor(repo, old, new):
        return False
    completed = run_git(repo, "log", "--first-parent", "--format=%s", f"{old}..{new}",
                        check=False)  # fmt: skip
    subjects = [line for line in completed.stdout.splitlines() if line]
    return (
        completed.returncode == 0
        and bool(subjects)
        and all(line.startswith(subject) for line in subjects)
    )


def integration_commit(repo: Path, target: str, subject: str, since: str | None) -> str | None:
    """The newest commit on `target`'s first-parent line (after `since`, when given) whose
    subject is exactly `subject` (a task's integration: radian.arc.gate.integration), or
    None. git filters the messages (a fixed string); only the few that hold it are read."""
    spec = [target] if since is None else [target, f"^{since}"]
    completed = run_git(repo, "log", "--first-parent", "--fixed-strings", f"--grep={subject}",
                        "--format=%H %s", *spec, "--", check=False)  # fmt: skip
    if completed.returncode != 0 and since is not None:  # `since` unknown here: all of it
        return integration_commit(repo, target, subject, None)
    for line in completed.stdout.splitlines():
        sha, _, found = line.partition(" ")
        if found == subject:
            return sha
    return None

"""The `integration` stage: merge the task into the target branch, run the key commands, push.

The merge is made in a scratch worktree (never the user's checkout) detached at the remote
target branch's head (`base_sha`), with `git merge --no-ff <head_sha>`. The integration
commands run on that merged tree; then HEAD is pushed to the target branch without force.
Integrations run one at a time per repository (a lock held for the whole stage, across
processes; with a shared PostgreSQL store, across hosts: an advisory lock on the target
branch, Store.integration_lock), so arc's own gates never push past each other; only a
push from elsewhere can move the target meanwhile. When the push is rejected for that, the
stage starts over once from a fresh fetch (a new base_sha, a new conflict check, the
commands again); a second rejection fails with reason `target_moved`. A target that moved
only by arc's own integrations (another host's, on the same remote: radian/docs/hosts.md)
is a queue, not a moving target: such a round is not counted, up to QUEUED_ROUNDS of them.
A push that never reached the remote (an outage between the fetch and the push) is no
verdict: RemoteUnreachable, a wait, like a fetch's.

The integration is a write whose outcome can be unknown (its push landed, its record did
not: the host stopped between the two, or its store's connection ended), so it is keyed and
looked up before it is made again: its key is the task, its merge commit's subject
(INTEGRATE_SUBJECT + task, exactly). After every fetch of the target, under the lock, the
target's first-parent line since the task's first delivered attempt began (GateJob.since_sha)
is searched for that subject; found, the stage passes with that commit (integrated, no
second merge), whichever host made it. With locks that can be lost without their holder
knowing (a shared store's, FencedLock), the integration lock and the gate lock are asked
again before the push: lost to another, the gate stops there, without a verdict (the other
host's gate goes on); lost and taken back, the round starts over from a fresh fetch. The
push itself is never forced: of two hosts that both believed they held the lock, the second
push is rejected, and its next round finds the first's merge.
"""

from __future__ import annotations

from pathlib import Path

from filelock import Timeout

from radian.arc import git
from radian.arc.gate import texts
from radian.arc.gate.commands import run_commands
from radian.arc.gate.conflict import check_conflict, fetch_target, integration_lock, remote_lock
from radian.arc.gate.process import StopRequested
from radian.arc.gate.stage import GateJob, RemoteUnreachable, StageResult, failed, passed
from radian.arc.gate.verdict import GATE_ERROR, TARGET_MOVED
from radian.arc.store_protocol import FencedLock, HostLock

ROUNDS = 2  # the first try, and one more after a push rejected for a moved target
# Rounds whose push was rejected because other hosts' integrations landed first: not counted
# in ROUNDS, but bounded all the same.
QUEUED_ROUNDS = 20
INTEGRATE_SUBJECT = "arc: integrate "


# How often a gate waiting for another integration looks at its stop event.
_LOCK_POLL_SECS = 0.2


def run_integration(job: GateJob, *, worktree: Path, log_path: Path) -> StageResult:
    lock = job.integration_lock or integration_lock(job.repo_root)
    while True:
        if job.stop.is_set():
            raise StopRequested("waiting for another integration")
        try:
            lock.acquire(timeout=_LOCK_POLL_SECS)
            break
        except Timeout:
            continue
    try:
        return _integrate(job, worktree=worktree, log_path=log_path)
    finally:
        lock.release()


def integrated_before(job: GateJob, base_sha: str) -> StageResult | None:
    """The task's integration found on the fetched target (`base_sha`): a passed result
    naming it; None when the task has not been integrated."""
    subject = f"{INTEGRATE_SUBJECT}{job.task}"
    found = git.integration_commit(job.repo_root, base_sha, subject, job.since_sha)
    if found is None:
        return None
    detail = texts.integrated_before(found, job.target_branch)
    return passed(detail, base_sha=base_sha, main_sha=base_sha, integrated_sha=found)


def _integrate(job: GateJob, *, worktree: Path, log_path: Path) -> StageResult:
    base_sha = ""
    rounds = queued = retaken = 0
    while rounds < ROUNDS:
        rounds += 1
        previous, base_sha = base_sha, fetch_target(job)
        if (
            previous
            and queued < QUEUED_ROUNDS
            and git.moved_by_integrations_only(job.repo_root, previous, base_sha, INTEGRATE_SUBJECT)
        ):
            rounds -= 1  # another host integrated first: wait in line, not a moving target
            queued += 1
        before = integrated_before(job, base_sha)
        if before is not None:
            _log(log_path, f"$ git log --first-parent {job.target_branch}", before.detail)
            return before
        found = check_conflict(job, "integration", base_sha)
        if found is not None:
            return _with_base(found, base_sha)
        git.add_detached_worktree(job.repo_root, worktree, base_sha)
        merge = git.merge_no_ff(worktree, job.head_sha, f"{INTEGRATE_SUBJECT}{job.task}")
        _log(log_path, f"$ git merge --no-ff {job.head_sha}", merge.stdout + merge.stderr)
        if merge.returncode != 0:
            detail = texts.integration_merge_failed(merge.stdout + merge.stderr)
            return _with_base(failed(GATE_ERROR, detail), base_sha)
        commands = run_commands(
            job.config.integration.commands, cwd=worktree, log_path=log_path, stop=job.stop
        )
        if not commands.passed:
            return _with_base(commands, base_sha)
        merged_sha = git.rev_parse(worktree, "HEAD")
        check = _recheck(job)
        if check == "lost":
            # Another host holds the lock now (this one's ended with its connection): its
            # gate goes on; this one stops without a verdict and pushes nothing.
            _log(log_path, texts.integration_lock_lost(), "")
            raise StopRequested("the integration's lock was lost to another host")
        if check == "taken_again" and retaken < QUEUED_ROUNDS:
            # Lost and taken back: another may have integrated meanwhile. Read again.
            _log(log_path, texts.integration_lock_taken_again(), "")
            rounds -= 1
            retaken += 1
            continue
        with remote_lock(job.repo_root):
            push = git.push_head(worktree, job.remote, job.target_branch)
        _log(
            log_path, f"$ git push {job.remote} HEAD:{job.target_branch}", push.stdout + push.stderr
        )
        if push.returncode == 0:
            detail = texts.integrated(merged_sha or "", job.target_branch)
            return passed(detail, base_sha=base_sha, main_sha=base_sha, integrated_sha=merged_sha)
        if not git.push_reached_remote(push):
            # An outage between the fetch and the push: a wait like the fetch's, no verdict;
            # the gate runs again from a fresh fetch once its retry_at has passed.
            raise RemoteUnreachable(texts.integration_push_unreachable(push.stderr))
        if not git.push_was_rejected(push):
            detail = texts.integration_push_failed(push.stderr or push.stdout)
            return _with_base(failed(GATE_ERROR, detail), base_sha)
    return _with_base(failed(TARGET_MOVED, texts.integration_moved()), base_sha)


def _recheck(job: GateJob) -> str:
    """The integration's and the gate's locks asked again before the push (FencedLock):
    "lost" when either is another's now, "taken_again" when either was lost and taken back,
    else "held". A clone's own file lock cannot be lost so."""
    answers = [_ask(lock) for lock in (job.integration_lock, job.gate_lock)]
    for answer in ("lost", "taken_again"):
        if answer in answers:
            return answer
    return "held"


def _ask(lock: HostLock | None) -> str:
    return lock.recheck() if isinstance(lock, FencedLock) else "held"


def _with_base(result: StageResult, base_sha: str) -> StageResult:
    fields = {**result.fields, "base_sha": base_sha, "main_sha": base_sha}
    return StageResult(result.passed, result.reason, result.detail, fields)


def _log(log_path: Path, header: str, output: str) -> None:
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with log_path.open("a", encoding="utf-8") as log:
        log.write(f"{header}\n{output}")
        if output and not output.endswith("\n"):
            log.write("\n")

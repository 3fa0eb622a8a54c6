"""One gate run: the configured stages in order, then integration, a verdict for each.

Before each verification stage the target branch is fetched and the task's commit checked
for a conflict with it; the first stage that fails ends the run. Stages run in a scratch
worktree detached at the task's head (`.radian/arc/gate-worktrees/<task>/verify`), the
integration in another (`.../integrate`); both are removed when the run ends.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from radian.arc import git
from radian.arc.clock import Clock, format_utc
from radian.arc.gate import texts
from radian.arc.gate.commands import run_commands
from radian.arc.gate.conflict import check_conflict, fetch_target
from radian.arc.gate.integration import integrated_before, run_integration
from radian.arc.gate.mutation import run_mutation
from radian.arc.gate.process import StopRequested
from radian.arc.gate.review import run_review
from radian.arc.gate.stage import GateJob, RemoteUnreachable, StageResult, failed
from radian.arc.gate.verdict import (
    GATE_ERROR,
    Verdict,
    log_path_for,
    next_seq,
    write_verdict,
)


@dataclass(frozen=True)
class GateRun:
    task: str
    attempt_id: str
    verdicts: tuple[Verdict, ...]
    stopped: bool  # Ctrl-C: the run was stopped before its last verdict
    # A fetch before a stage, or the integration's push, could not reach the remote: the run
    # stopped there, with no verdict for that stage; the task waits and its gate runs again
    # (apply_gate).
    remote_error: str | None = None

    @property
    def passed(self) -> bool:
        return (
            bool(self.verdicts)
            and not self.stopped
            and self.remote_error is None
            and self.verdicts[-1].passed
        )

    @property
    def failure(self) -> Verdict | None:
        if self.stopped or self.remote_error is not None:
            return None
        if not self.verdicts or self.verdicts[-1].passed:
            return None
        return self.verdicts[-1]


def gate_worktrees(repo_root: Path, task: str) -> tuple[Path, Path]:
    folder = repo_root / git.GATE_WORKTREES_DIR / task
    return folder / "verify", folder / "integrate"


def stages_of(job: GateJob) -> list[str]:
    configured = list(job.config.gate.stages) if job.config.gate is not None else []
    return [*configured, "integration"]


def run_gate(job: GateJob, clock: Clock, still_wanted: Callable[[], bool] | None = None) -> GateRun:
    """Run the gate's stages. `still_wanted` is asked before each stage: a task cancelled
    (or otherwise moved on) meanwhile must not be integrated, so the run stops there."""
    verify_tree, integrate_tree = gate_worktrees(job.repo_root, job.task)
    verdicts: list[Verdict] = []
    stopped = False
    remote_error: str | None = None
    try:
        for stage in stages_of(job):
            if job.stop.is_set() or (still_wanted is not None and not still_wanted()):
                stopped = True
                break
            verdict = _run_stage(job, stage, clock, verify_tree, integrate_tree)
            verdicts.append(verdict)
            if not verdict.passed:
                break
    except StopRequested:
        stopped = True
    except RemoteUnreachable as error:
        remote_error = str(error)
    finally:
        for tree in (verify_tree, integrate_tree):
            if tree.exists():
                git.remove_worktree(job.repo_root, tree)
    return GateRun(job.task, job.attempt_id, tuple(verdicts), stopped, remote_error)


def _run_stage(
    job: GateJob, stage: str, clock: Clock, verify_tree: Path, integrate_tree: Path
) -> Verdict:
    seq = next_seq(job.task_dir)
    log_path = log_path_for(job.task_dir, seq, stage)
    log_path.parent.mkdir(parents=True, exist_ok=True)
    log_path.touch()
    started_at = format_utc(clock.now())
    main_sha: str | None = None
    try:
        if stage == "integration":
            result = run_integration(job, worktree=integrate_tree, log_path=log_path)
        else:
            main_sha = fetch_target(job)
            result = (
                integrated_before(job, main_sha)  # nothing to verify: integration records it
                or check_conflict(job, stage, main_sha)
                or _verify(job, stage, seq, main_sha, verify_tree, log_path)
            )
    except RemoteUnreachable as error:
        # No verdict: the stage did not run. Its log says why, for whoever reads it.
        _note(log_path, texts.gate_remote_unreachable_log(str(error)))
        raise
    except StopRequested:
        raise
    except Exception as error:  # noqa: BLE001 - any breakage becomes a verdict the lead reads
        result = failed(GATE_ERROR, texts.gate_error(f"{type(error).__name__}: {error}"))
    fields = {"main_sha": main_sha, **result.fields}
    verdict = Verdict(
        task=job.task,
        attempt_id=job.attempt_id,
        stage=stage,
        passed=result.passed,
        reason=result.reason,
        detail=result.detail,
        head_sha=job.head_sha,
        log=str(log_path.relative_to(job.task_dir)),
        started_at=started_at,
        ended_at=format_utc(clock.now()),
        seq=seq,
        **fields,
    )
    write_verdict(job.task_dir, verdict)
    return verdict


def _verify(
    job: GateJob, stage: str, seq: int, main_sha: str, verify_tree: Path, log_path: Path
) -> StageResult:
    if not verify_tree.exists():
        git.add_detached_worktree(job.repo_root, verify_tree, job.head_sha)
    gate = job.config.gate
    assert gate is not None  # a verification stage is configured only under [gate]
    if stage == "commands":
        return run_commands(gate.commands, cwd=verify_tree, log_path=log_path, stop=job.stop)
    if stage == "mutation":
        changed = git.changed_paths(job.repo_root, main_sha, job.head_sha)
        return run_mutation(
            changed, gate.mutation, cwd=verify_tree, log_path=log_path, stop=job.stop
        )
    if stage == "review":
        return run_review(
            gate.review,
            fix_level=job.fix_level,
            diff=git.diff_since_fork(job.repo_root, main_sha, job.head_sha),
            brief=job.brief_text,
            values={"task": job.task, "attempt_id": job.attempt_id},
            cwd=verify_tree,
            files_stem=log_path.with_suffix(""),
            log_path=log_path,
            stop=job.stop,
        )
    raise ValueError(f"unknown gate stage {stage!r}")


def _note(log_path: Path, line: str) -> None:
    with log_path.open("a", encoding="utf-8") as log:
        log.write(line + "\n")

"""Building a gate run for a task, and the lock that says a gate is running for it."""

from __future__ import annotations

import threading

from radian.arc.clock import Clock, format_utc
from radian.arc.config import ArcConfig
from radian.arc.errors import ArcError
from radian.arc.gate import texts
from radian.arc.gate.findings import effective_fix_level
from radian.arc.gate.pipeline import GateRun
from radian.arc.gate.stage import GateJob
from radian.arc.gate.verdict import (
    GATE_ERROR,
    Verdict,
    attempt_verdicts,
    next_seq,
    write_verdict,
)
from radian.arc.records import Task
from radian.arc.states import State
from radian.arc.store_protocol import HostLock, Store


def gate_lock(store: Store, task: str) -> HostLock:
    """Held for as long as a gate runs for `task`, in whichever process runs it."""
    return store.gate_lock(task)


def build_job(
    store: Store, config: ArcConfig, task: Task, attempt_id: str, stop: threading.Event
) -> GateJob:
    if task.head_sha is None:
        raise ArcError(texts.no_head_sha(task.name))
    plan = store.load_plan(task.plan)
    config_level = config.gate.fix_level if config.gate is not None else None
    brief = store.read_brief(task.name)
    return GateJob(
        repo_root=store.repo_root,
        task=task.name,
        attempt_id=attempt_id,
        head_sha=task.head_sha,
        config=config,
        fix_level=effective_fix_level(task.fix_level, plan.fix_level, config_level),
        brief_text=brief,
        task_dir=store.task_dir(task.name),
        stop=stop,
        integration_lock=store.integration_lock(config.target_branch),
        branch=task.branch,
        since_sha=first_base(store, task),
    )


def first_base(store: Store, task: Task) -> str | None:
    """The target's head when the task's first delivered attempt began (its result's
    base_sha): no integration of the task can be older. The task's own base_sha when no
    result says (an attempt of an earlier build)."""
    for attempt_id in task.attempts:
        record = store.read_attempt_result(task.name, attempt_id)
        if record is not None and record.base_sha:
            return record.base_sha
    return task.base_sha


def still_verifying(store: Store, task: str, attempt_id: str) -> bool:
    """Is `attempt_id` still the attempt `task` is verifying? (Not cancelled, not replaced.)"""
    current = store.load_task(task)
    return current.state is State.VERIFYING and current.last_attempt_id == attempt_id


def finished_run_on_file(store: Store, task: str, attempt_id: str) -> GateRun | None:
    """The attempt's gate as its verdict files tell it, when it reached its end; else None.

    A `run` killed after the gate's last verdict but before applying it leaves this.
    """
    verdicts = attempt_verdicts(store.task_dir(task), attempt_id)
    if not verdicts:
        return None
    last = verdicts[-1]
    if last.passed and last.stage != "integration":
        return None
    return GateRun(task, attempt_id, tuple(verdicts), stopped=False)


def error_run(store: Store, task: str, attempt_id: str, error: Exception, clock: Clock) -> GateRun:
    """A gate that could not even start (no head_sha, an unreadable file...): one verdict
    with reason gate_error, so the task waits for the lead instead of retrying forever."""
    task_dir = store.task_dir(task)
    now = format_utc(clock.now())
    verdict = Verdict(
        task=task,
        attempt_id=attempt_id,
        stage="gate",
        passed=False,
        reason=GATE_ERROR,
        detail=texts.gate_error(f"{type(error).__name__}: {error}"),
        started_at=now,
        ended_at=now,
        seq=next_seq(task_dir),
    )
    write_verdict(task_dir, verdict)
    return GateRun(task, attempt_id, (verdict,), stopped=False)

"""Reverify: a new attempt without a worker whose gate runs again on the same head.

By hand (`radian arc reverify <task>`): from review.rework_pending (or todo.ready), always,
using up nothing. Automatically (from `radian arc run`, GateVerifier.before_claim): only for
a task in review.rework_pending because a commands stage or an integration key command
failed with command_failed or timeout, whose plan's auto is not off, when the remote target
branch is no longer the sha the failing verdict ran against. Two guards: each (head_sha,
remote target sha) pair at most once (runs/<task>/auto_reverify.json), and at most
[limits] max_auto_reverify automatic reverifies per task.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from filelock import Timeout

from radian.arc import git
from radian.arc.atomic import read_json, write_json_atomic
from radian.arc.attempt_result import AttemptResult
from radian.arc.claims import claim_record, next_attempt_id
from radian.arc.classify import ROWS
from radian.arc.clock import Clock, format_utc
from radian.arc.config import ArcConfig
from radian.arc.errors import ArcError, UsageError
from radian.arc.events import Event
from radian.arc.gate import texts
from radian.arc.gate.apply import apply_gate, rework_reason_for
from radian.arc.gate.jobs import build_job, gate_lock, still_verifying
from radian.arc.gate.pipeline import run_gate
from radian.arc.gate.verdict import (
    TREE_FAILURE_REASONS,
    TREE_FAILURE_STAGES,
    Verdict,
    last_verdict,
)
from radian.arc.records import Task, transition
from radian.arc.results import Reverified
from radian.arc.states import State
from radian.arc.store_protocol import StateLookup, Store

AUTO_REVERIFY_FILE = "auto_reverify.json"
HAND_STATES = frozenset({State.REWORK_PENDING, State.READY})


def claim_reverify(store: Store, task: Task, clock: Clock, reason: str) -> str:
    """A reverify attempt: recorded (class reverify) before the task moves to
    review.verifying. The caller holds the task's lock; the task is saved here."""
    attempt_id = next_attempt_id(task)
    now = format_utc(clock.now())
    store.write_attempt_intent(
        task.name, attempt_id, claim_record(task.name, attempt_id, None, now, "reverify")
    )
    row = ROWS["reverify"]
    store.write_attempt_result(
        task.name,
        attempt_id,
        AttemptResult(
            task=task.name, attempt_id=attempt_id, failure_class=row.failure_class,
            row=row.result, reason=reason, base_sha=task.base_sha, head_sha=task.head_sha,
            started_at=now, ended_at=now, next_state=str(State.VERIFYING),
        ),
    )  # fmt: skip
    transition(
        task,
        State.VERIFYING,
        clock,
        last_attempt_id=attempt_id,
        attempts=[*task.attempts, attempt_id],
        rework_reason=None,
        retry_at=None,
    )
    store.save_task(task)
    return attempt_id


def reverify_by_hand(store: Store, config: ArcConfig, clock: Clock, name: str) -> Reverified:
    """`radian arc reverify <task>`: run the gate again now, in the foreground.

    Ignores both automatic guards and uses up neither. Without [gate] there is no gate to
    run: refused, nothing changes (gate.md: without [gate] arc runs no gate).
    """
    if config.gate is None:
        raise UsageError(texts.no_gate_to_reverify(name))
    lock = gate_lock(store, name)
    try:
        lock.acquire(timeout=0)
    except Timeout:
        raise ArcError(texts.gate_running(name)) from None
    try:
        with store.task_lock(name):
            task = store.load_task(name)
            if task.state not in HAND_STATES or task.head_sha is None:
                raise ArcError(texts.cannot_reverify(name, str(task.state)))
            attempt_id = claim_reverify(store, task, clock, "radian arc reverify")
        text = texts.reverify_started(name, attempt_id)
        lines = [Event("reverify_started", text, name, str(State.VERIFYING), attempt_id)]
        job = build_job(store, config, store.load_task(name), attempt_id, threading.Event())
        run = run_gate(job, clock, still_wanted=lambda: still_verifying(store, name, attempt_id))
        lines += apply_gate(store, config, run, clock)
        return Reverified(name, tuple(lines))
    finally:
        lock.release()


# -- the automatic path ---------------------------------------------------------------------
def auto_reverify_path(store: Store, task: str) -> Path:
    return store.task_dir(task) / AUTO_REVERIFY_FILE


def reverified_pairs(store: Store, task: str) -> set[tuple[str, str]]:
    path = auto_reverify_path(store, task)
    if not path.is_file():
        return set()
    data: dict[str, Any] = read_json(path)
    return {(pair["head_sha"], pair["target_sha"]) for pair in data.get("pairs", [])}


def _remember_pair(
    store: Store, task: str, head_sha: str, target_sha: str, attempt_id: str, clock: Clock
) -> None:
    path = auto_reverify_path(store, task)
    data: dict[str, Any] = read_json(path) if path.is_file() else {"pairs": []}
    data["pairs"].append(
        {"head_sha": head_sha, "target_sha": target_sha, "attempt_id": attempt_id,
         "at": format_utc(clock.now())}
    )  # fmt: skip
    write_json_atomic(path, data)


def tree_failure(store: Store, task: Task) -> Verdict | None:
    """The failing commands or integration verdict that left `task` in rework_pending, or
    None when the task waits for another reason (review, conflict, delivery, a note...)."""
    if task.state is not State.REWORK_PENDING:
        return None
    verdict = last_verdict(store.task_dir(task.name))
    if verdict is None or verdict.passed or verdict.attempt_id != task.last_attempt_id:
        return None
    if verdict.stage not in TREE_FAILURE_STAGES or verdict.reason not in TREE_FAILURE_REASONS:
        return None
    return verdict


def auto_reverify_candidates(
    store: Store, config: ArcConfig, tasks: StateLookup | None = None
) -> list[tuple[Task, Verdict]]:
    """`tasks`: who says which tasks are in review.rework_pending (a loop's due-index; the
    store by default)."""
    found = []
    off = {plan.name for plan in store.plans() if plan.auto == "off"}
    for name in (tasks or store).names_in(State.REWORK_PENDING):
        task = store.try_load_task(name)
        if task is None or task.plan in off:
            continue
        verdict = tree_failure(store, task)
        if verdict is None:
            continue
        limit_line = texts.auto_reverify_limit(name, config.limits.max_auto_reverify)
        if task.rework_reason not in (rework_reason_for(verdict), limit_line):
            continue  # the lead (or another path) has written its own reason since
        found.append((task, verdict))
    return found


def auto_reverify(
    store: Store,
    config: ArcConfig,
    clock: Clock,
    skip: set[str],
    tasks: StateLookup | None = None,
) -> tuple[list[Event], list[tuple[str, str]]]:
    """Claim the automatic reverifies that are due; (events, (task, attempt) to start)."""
    found = auto_reverify_candidates(store, config, tasks)
    candidates = [(t, v) for t, v in found if t.name not in skip]
    if not candidates:
        return [], []
    remote_sha = git.remote_branch_sha(
        store.repo_root, config.repository.remote, config.target_branch
    )
    lines: list[Event] = []
    started: list[tuple[str, str]] = []
    limit = config.limits.max_auto_reverify
    for candidate, verdict in candidates:
        name = candidate.name
        if remote_sha is None or remote_sha == verdict.target_sha:
            continue
        with store.task_lock(name):
            task = store.try_load_task(name)
            if task is None or tree_failure(store, task) != verdict or task.head_sha is None:
                continue
            if (task.head_sha, remote_sha) in reverified_pairs(store, name):
                continue
            if task.auto_reverify_count >= limit:
                line = texts.auto_reverify_limit(name, limit)
                if task.rework_reason != line:
                    task.rework_reason = line
                    task.updated_at = format_utc(clock.now())
                    store.save_task(task)
                    lines.append(Event("auto_reverify_limit", line, name, str(task.state)))
                continue
            attempt_id = next_attempt_id(task)
            _remember_pair(store, name, task.head_sha, remote_sha, attempt_id, clock)
            task.auto_reverify_count += 1
            claim_reverify(store, task, clock, "automatic reverify: the target branch moved")
        text = texts.auto_reverify_started(name, attempt_id, verdict.target_sha, remote_sha)
        lines.append(Event("auto_reverify", text, name, str(State.VERIFYING), attempt_id))
        started.append((name, attempt_id))
    return lines, started

"""Claiming an attempt, and recovering the attempts whose owner process died.

A claim writes its intent (attempt.json: who runs the attempt, which session it resumes)
and moves the task to doing.working together (Store.claim_next: one transaction on
PostgreSQL, under the task's lock on the files, the intent first). Recovery finds
doing.working tasks whose owner is gone: an attempt whose worker still runs is adopted (the
new owner's name goes into attempt.json, and its Result is read when it ends); any other gets
the end it must have had.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

from radian.arc import texts
from radian.arc import worker as worker_api
from radian.arc.clock import Clock, format_utc, parse_utc
from radian.arc.config import ArcConfig
from radian.arc.errors import ConfigError
from radian.arc.events import Event
from radian.arc.logs import logger
from radian.arc.records import Task, transition
from radian.arc.settle import outcome_from_end, settle, terminated_outcome
from radian.arc.states import FAILED_STATES, State
from radian.arc.store_protocol import ForeignLease, StateLookup, Store

log = logger(__name__)


@dataclass(frozen=True)
class Claim:
    task: str
    attempt_id: str
    attempt_dir: Path
    resume_session_id: str | None
    spec: Any  # radian.arc.worker.AttemptSpec
    # What the task had cost when claimed (total_cost_usd: every attempt and review so far):
    # the live view's "cost so far"; a running attempt adds its own when it ends.
    cost_usd: float = 0.0
    claimed_at: str | None = None
    adopted: bool = False  # a worker another `run` started, watched until it ends (spec None)


def next_attempt_id(task: Task) -> str:
    """The id of the task's next attempt; ids sort in order: 001, 002, ..."""
    return f"{len(task.attempts) + 1:03d}"


def claim_record(
    task: str, attempt_id: str, resume_session_id: str | None, claimed_at: str, kind: str
) -> dict[str, Any]:
    """attempt.json, written before the task moves: who runs the attempt (this process, so a
    later `run` can tell a dead owner; its start time too, so a pid used again by another
    process, after a reboot say, is not taken for the owner) and which session it resumes."""
    return {
        "task": task,
        "attempt_id": attempt_id,
        **owner_fields(),
        "resume_session_id": resume_session_id,
        "claimed_at": claimed_at,
        "kind": kind,
    }


def owner_fields() -> dict[str, Any]:
    """This process as an attempt's owner: its pid and its start time."""
    return {"owner_pid": os.getpid(), "owner_start": process_start(os.getpid())}


def check_exec_args(store: Store, config: ArcConfig) -> None:
    """start, run and confirm refuse a bad worker.exec_args before any claim."""
    problems = worker_api.validate_exec_args(config.worker.agent_args, repo_root=store.repo_root)
    if problems:
        raise ConfigError(texts.bad_exec_args(problems))


def promote_due_retries(store: Store, clock: Clock, names: list[str]) -> list[Event]:
    """todo.retry_wait tasks among `names` (the loop's due-index's, or the one `start`
    names) whose retry_at has passed become todo.ready."""
    events: list[Event] = []
    for name in names:
        found = store.try_load_task(name)
        if found is None or found.state is not State.RETRY_WAIT:
            continue
        with store.task_lock(name):
            task = store.try_load_task(name)
            if (
                task is None
                or task.state is not State.RETRY_WAIT
                or not _is_due(task.retry_at, clock)
            ):
                continue
            transition(task, State.READY, clock, retry_at=None)
            store.save_task(task)
        log.info("%s retry due: todo.retry_wait -> todo.ready", name)
        text = texts.moved(name, str(State.RETRY_WAIT), str(State.READY))
        events.append(Event("retry_due", text, name, str(State.READY)))
    return events


def _is_due(retry_at: str | None, clock: Clock) -> bool:
    return retry_at is None or parse_utc(retry_at) <= clock.now()


def claim(
    store: Store,
    config: ArcConfig,
    name: str,
    clock: Clock,
    *,
    early: bool = False,
    remote_claim: dict[str, Any] | None = None,
) -> tuple[Claim, Event] | None:
    """Claim task `name` for a new attempt: todo.ready (or todo.retry_wait when `early`).

    Returns the claim and its event, or None when the task is no longer claimable. One task
    named: a holder of its lock is waited for, and the task read again after it.
    `remote_claim`: the claim on the remote the attempt's wrapper must take before its worker
    starts (radian.arc.hosts: the run could not).
    """
    return claim_next(store, config, [name], clock, early=early, remote_claim=remote_claim,
                      wait=True)  # fmt: skip


def claim_next(
    store: Store,
    config: ArcConfig,
    names: Sequence[str],
    clock: Clock,
    *,
    early: bool = False,
    remote_claim: dict[str, Any] | None = None,
    wait: bool = False,
) -> tuple[Claim, Event] | None:
    """Claim the first of `names` (in order) that is claimable and that no other host is
    claiming, without waiting for one another holds (Store.claim_next): the intent
    (attempt.json: who runs it, which session it resumes) is written with the task's move to
    doing.working. None when none of them could be claimed."""
    allowed = {State.READY, State.RETRY_WAIT} if early else {State.READY}
    claimed_at = format_utc(clock.now())
    seen: dict[str, Any] = {}

    def build(task: Task) -> tuple[str, dict[str, Any]]:
        attempt_id = next_attempt_id(task)
        resume = task.session_id if config.worker.session == "resume" else None
        seen.update(from_state=str(task.state), resume=resume, branch=task.branch,
                    mid_merge=task.merge_pending)  # fmt: skip
        transition(
            task,
            State.WORKING,
            clock,
            last_attempt_id=attempt_id,
            attempts=[*task.attempts, attempt_id],
            retry_at=None,
        )
        return attempt_id, claim_record(task.name, attempt_id, resume, claimed_at, "worker")

    task = store.claim_next(names, allowed, build, wait=wait)
    if task is None:
        return None
    name, attempt_id = task.name, task.attempts[-1]
    resume, from_state = seen["resume"], seen["from_state"]
    attempt_dir = store.attempt_dir(name, attempt_id)
    spec = worker_api.AttemptSpec(
        repo_root=store.repo_root,
        task=name,
        attempt_id=attempt_id,
        attempt_dir=attempt_dir,
        brief_text=store.read_brief(name),
        worker=config.worker,
        resume_session_id=resume,
        target_branch=config.target_branch,
        remote=config.repository.remote,
        branch=seen["branch"],
        start_mid_merge=seen["mid_merge"],
        claim=remote_claim,
    )
    log.info("claimed %s attempt %s (from %s, resuming %s)", name, attempt_id, from_state, resume)
    line = Event("claimed", texts.claimed(name, from_state, attempt_id), name,
                 str(State.WORKING), attempt_id)  # fmt: skip
    claimed = Claim(name, attempt_id, attempt_dir, resume, spec, task.total_cost_usd, claimed_at)
    return claimed, line


def recover_orphans(
    store: Store,
    config: ArcConfig,
    clock: Clock,
    running: set[tuple[str, str]],
    failed: list[str] | None = None,
    *,
    adopt: Callable[[Claim], None] | None = None,
    tasks: StateLookup | None = None,
) -> list[Event]:
    """doing.working tasks whose attempt has no live owner get the end they must have had
    (`tasks`: who says which tasks are doing.working, a loop's due-index; the store by
    default).

    An attempt_result.json already written (the owner died before saving the task) is
    applied as recorded. A wrapper still running (the owner, a `run`, was killed while its
    worker ran) is adopted: this process becomes the attempt's owner in attempt.json, and
    `adopt` watches it; its Result is applied when it ends. Without `adopt` (a caller that
    cannot watch), such an attempt is left for one that can. A wrapper that had ended by
    itself (its status written) is read as the owner would have read it. Otherwise the
    attempt left no Result and no live worker: terminated, as the chapter says.
    """
    lines: list[Event] = []
    for name in (tasks or store).names_in(State.WORKING):
        found = store.try_load_task(name)
        if found is None or found.state is not State.WORKING:
            continue
        with store.task_lock(name):
            task = store.try_load_task(name)
            if task is None:
                continue
            attempt_id = task.last_attempt_id
            if task.state is not State.WORKING or attempt_id is None:
                continue
            if (name, attempt_id) in running:
                continue
            intent = store.read_attempt_intent(name, attempt_id) or {}
            foreign = store.foreign_lease(name, attempt_id)
            if foreign is not None:  # another host's attempt (a shared store)
                if _may_take_over(foreign, intent, config, clock):
                    lines.extend(_take_over(store, config, task, attempt_id, intent, foreign,
                                            clock))  # fmt: skip
                    if failed is not None and task.state in FAILED_STATES:
                        failed.append(name)
                continue
            if owner_alive(intent):
                continue
            owner = intent.get("owner_pid")
            attempt_dir = store.attempt_dir(name, attempt_id)
            record = store.read_attempt_result(name, attempt_id)
            if record is not None and record.outcome_record is not None:
                log.warning("recovering %s attempt %s: its owner %s is gone", name, attempt_id,
                            owner)  # fmt: skip
                outcome = record.outcome_record
            elif worker_api.live_wrapper(attempt_dir) is not None:
                # Alive: asked before its end is read, so a wrapper ending now is watched
                # to its end rather than taken for gone.
                if adopt is None:
                    continue
                lines.append(_adopt(store, task, attempt_id, attempt_dir, intent, clock, adopt))
                continue
            else:
                log.warning("recovering %s attempt %s: its owner %s is gone", name, attempt_id,
                            owner)  # fmt: skip
                ended = worker_api.ended_attempt(attempt_dir, clock, intent.get("claimed_at"))
                if ended is not None:
                    text = texts.ended_unwatched(name, attempt_id)
                    lines.append(Event("ended_unwatched", text, name, attempt_id=attempt_id))
                    outcome = outcome_from_end(ended, intent.get("resume_session_id"))
                else:
                    text = texts.left_no_result(name, attempt_id)
                    lines.append(Event("left_no_result", text, name, attempt_id=attempt_id))
                    outcome = terminated_outcome(intent.get("claimed_at"),
                                                 format_utc(clock.now()))  # fmt: skip
            lines.extend(settle(store, config, task, attempt_id, outcome, clock))
            if failed is not None and task.state in FAILED_STATES:
                failed.append(name)
    return lines


def _may_take_over(
    lease: ForeignLease, intent: dict[str, Any], config: ArcConfig, clock: Clock
) -> bool:
    """Another host's attempt may be ended here once its lease has expired (its host has
    not renewed it: dead, or cut off) and its worker cannot be writing any more: the
    wrapper ends a worker at wall_time_secs (and term_grace_secs after), counted here from
    the claim with one lease's length to spare."""
    if not lease.expired:
        return False
    claimed_at = intent.get("claimed_at")
    if not isinstance(claimed_at, str):
        return True
    worker = config.worker
    limit = worker.wall_time_secs + worker.term_grace_secs + lease.lease_secs
    return clock.now() >= parse_utc(claimed_at) + timedelta(seconds=limit)


def _take_over(
    store: Store,
    config: ArcConfig,
    task: Task,
    attempt_id: str,
    intent: dict[str, Any],
    lease: ForeignLease,
    clock: Clock,
) -> list[Event]:
    """The lease becomes this host's (the other host is fenced from now on), then the
    attempt gets the end it must have had: its result when its host wrote one, else
    terminated, as the chapter says (an infrastructure retry)."""
    name = task.name
    store.take_over(name, attempt_id)
    log.warning("taking over %s attempt %s: host %s lost its lease", name, attempt_id, lease.host)
    record = store.read_attempt_result(name, attempt_id)
    if record is not None and record.outcome_record is not None:
        outcome = record.outcome_record
    else:
        outcome = terminated_outcome(intent.get("claimed_at"), format_utc(clock.now()))
    text = texts.lease_taken_over(name, attempt_id, lease.host)
    lines = [Event("lease_taken_over", text, name, attempt_id=attempt_id)]
    return lines + settle(store, config, task, attempt_id, outcome, clock)


def _adopt(
    store: Store,
    task: Task,
    attempt_id: str,
    attempt_dir: Path,
    intent: dict[str, Any],
    clock: Clock,
    adopt: Callable[[Claim], None],
) -> Event:
    """`adopt` watches a live attempt, then this process is written as its owner. In that
    order: a Ctrl-C between the two finds it watched (and stops it as one of this run's); a
    kill of this process at any moment leaves it to be adopted again."""
    name = task.name
    log.warning("adopting %s attempt %s: its owner %s is gone, its worker runs", name,
                attempt_id, intent.get("owner_pid"))  # fmt: skip
    claimed = Claim(name, attempt_id, attempt_dir, intent.get("resume_session_id"), None,
                    task.total_cost_usd, intent.get("claimed_at"), adopted=True)  # fmt: skip
    adopt(claimed)
    adopted = {**intent, **owner_fields(), "adopted_at": format_utc(clock.now())}
    store.write_attempt_intent(name, attempt_id, adopted)
    text = texts.adopted(name, attempt_id)
    return Event("adopted", text, name, str(State.WORKING), attempt_id)


def owner_alive(intent: dict[str, Any]) -> bool:
    """Is the process that claimed the attempt still running? A live pid with another start
    time (or boot) than the one recorded is another process that got the pid."""
    owner = intent.get("owner_pid")
    if not isinstance(owner, int) or isinstance(owner, bool):
        return False
    if owner == os.getpid() or not _process_alive(owner):
        return False
    recorded = intent.get("owner_start")
    if isinstance(recorded, str):
        current = process_start(owner)
        if current is not None and current != recorded:
            return False
    return True


def process_start(pid: int) -> str | None:
    """`<boot id>:<start time in clock ticks>` of a live process, from /proc; None where
    there is no /proc (then the pid alone is trusted)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return None
    fields = stat.rpartition(")")[2].split()
    # Field 22 of proc(5), counted after the command name (field 2) ends.
    return f"{boot}:{fields[19]}" if len(fields) > 19 else None


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True

"""The scheduling loop behind `radian arc run` and `radian arc start`.

One pass: recover attempts whose process died, let the verifier collect and look ahead,
move due todo.retry_wait tasks to todo.ready, claim todo.ready tasks of confirmed plans
whose auto is on (up to [limits] parallel running at once), and run each attempt in a
thread (the attempt itself is a subprocess). Results are applied on the loop's own thread,
one task lock at a time.

--once does one pass: it claims what it can, waits for those attempts and for the gates they
start, applies their results and returns. Without --once, `run` keeps going while anything
is ready, running, verifying in a gate or waiting on a retry, and sleeps through the clock
until the next retry_at. Ctrl-C (or SIGTERM) stops the workers, records their attempts as
interrupted (our row of the table: no retry used, the task todo.ready again, its session
kept) and returns.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Literal, Protocol, cast

from filelock import Timeout

from radian.arc import git, texts
from radian.arc import worker as worker_api
from radian.arc.attempt_result import AttemptOutcome
from radian.arc.claims import (
    Claim,
    check_exec_args,
    claim,
    claim_next,
    promote_due_retries,
    recover_orphans,
)
from radian.arc.cleanup import DONE_STATES, IntegratedBranches, Policy, clean_tasks
from radian.arc.clock import Clock, format_utc
from radian.arc.config import ArcConfig
from radian.arc.due import DueIndex
from radian.arc.errors import ArcError, DamagedFile, LeaseLost
from radian.arc.events import Event, texts_of
from radian.arc.hosts import Decision, TaskClaims, task_claims
from radian.arc.logs import logger
from radian.arc.progress import WorkerRow
from radian.arc.settle import outcome_from_end, settle, terminated_outcome
from radian.arc.states import FAILED_STATES, State
from radian.arc.stopping import note_run
from radian.arc.store import ArcStore
from radian.arc.store_protocol import StateLookup, Store
from radian.arc.worker.files import STOP_INTERRUPT

log = logger(__name__)

# How long the loop waits for a running attempt before looking at the files again: a poll
# of real processes, not a backoff.
POLL_SECS = 0.2


class Verifier(Protocol):
    def start(self, task: str, attempt_id: str) -> None: ...

    def collect(self, tasks: StateLookup | None = None) -> list[Event]: ...

    def before_claim(self, tasks: StateLookup | None = None) -> list[Event]: ...

    def active(self) -> int: ...

    def stop(self) -> None: ...


class NoVerifier:
    """No gate: a task that reaches review.verifying waits there for the lead."""

    def start(self, task: str, attempt_id: str) -> None:
        return None

    def collect(self, tasks: StateLookup | None = None) -> list[Event]:
        return []

    def before_claim(self, tasks: StateLookup | None = None) -> list[Event]:
        return []

    def active(self) -> int:
        return 0

    def stop(self) -> None:
        return None


@dataclass
class RunReport:
    """What a `run` or `start` did: its events in order, and how it ended."""

    events: list[Event] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)  # tasks this run moved to failed.*
    interrupted: bool = False
    # The signal that stopped the run (SIGINT for Ctrl-C, SIGTERM); None when not stopped.
    stopped_by: int | None = None

    @property
    def lines(self) -> list[str]:
        """The printed lines, in order."""
        return texts_of(self.events)


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread by the CLI's handler: stopped like Ctrl-C."""

    signum = signal.SIGTERM


def apply_end(
    store: Store,
    config: ArcConfig,
    claimed: Claim,
    outcome: AttemptOutcome,
    clock: Clock,
) -> tuple[list[Event], State | None]:
    """Settle the attempt; its events and the state this end moved the task to (None
    when the task had moved on meanwhile, say cancelled from another terminal)."""
    with store.task_lock(claimed.task):
        task = store.load_task(claimed.task)
        ours = task.state is State.WORKING and task.last_attempt_id == claimed.attempt_id
        lines = settle(store, config, task, claimed.attempt_id, outcome, clock)
        return lines, task.state if ours else None


AttemptRunner = Callable[[Any, Clock], Any]
# Watches an adopted attempt (its dir, a clock, when it was claimed) until it ends: its
# AttemptEnd, or None when its wrapper went without a word.
AttemptWatcher = Callable[[Path, Clock, str | None], Any]


class Loop:
    """`radian arc run` and `radian arc start` over one repository."""

    def __init__(
        self,
        store: Store,
        config: ArcConfig,
        clock: Clock,
        *,
        verifier: Verifier | None = None,
        worker_clock: Clock | None = None,
        echo: Callable[[str], None] = print,
        run_attempt: AttemptRunner | None = None,
        watch_attempt: AttemptWatcher | None = None,
        on_event: Callable[[Event], None] | None = None,
        poll_secs: float = POLL_SECS,
        claims: TaskClaims | None | Literal["config"] = "config",
    ) -> None:
        self.store = store
        self.config = config
        self.clock = clock
        self.verifier: Verifier = verifier or NoVerifier()
        # run_attempt reads the clock for its timestamps only (the wrapper times stalls and
        # wall time in real time itself), so attempts share arc's clock by default.
        self.worker_clock = worker_clock or clock
        self.echo = echo  # each event's text, as it happens
        self.on_event = on_event  # each event itself (the CLI's --json)
        self.run_attempt: AttemptRunner = run_attempt or worker_api.run_attempt
        self.watch_attempt: AttemptWatcher = watch_attempt or worker_api.watch_attempt
        # Who may run a task across hosts (radian.arc.hosts): the claim refs on the remote by
        # default, as [hosts] says; None: this host alone.
        # A shared store (PostgreSQL) holds the claims itself: no claim refs then.
        self.claims: TaskClaims | None = (
            (None if store.shared else task_claims(store.repo_root, config, clock))
            if claims == "config"
            else claims
        )
        self._held: set[str] = set()  # tasks this host holds (asked once per run)
        self._elsewhere: set[str] = set()  # tasks another host holds: not claimed, said once
        # How often the loop looks at running attempts and gates: they are real threads and
        # processes, so this is real time (a poll, not a backoff).
        self.poll_secs = poll_secs
        self.report = RunReport()
        # The tasks by state, kept without rescanning (radian.arc.due): built when `run`
        # starts, refreshed at each look; `start` (one task) asks the store instead.
        self.index = DueIndex(store)
        self._newly_done = self.index.watch(*DONE_STATES)  # what the clean-up looks at
        self._running: dict[Future[Any], Claim] = {}
        self._pool = ThreadPoolExecutor(max_workers=max(1, config.limits.parallel))
        self._quarantined: set[str] = set()
        self._cleaned: set[str] = set()
        self._branches = IntegratedBranches(Policy.of(config))
        self._started: dict[str, float] = {}
        self._next_wake: str | None = None
        self._wake = threading.Event()

    # -- output ---------------------------------------------------------------------------
    def _say(self, events: list[Event], *, recorded: bool = True) -> None:
        for event in events:
            if recorded:
                self.report.events.append(event)
            self.echo(event.text)
            if self.on_event is not None:
                self.on_event(event)

    # -- run ------------------------------------------------------------------------------
    def run(self, *, once: bool = False) -> RunReport:
        check_exec_args(self.store, self.config)
        lock = self.store.run_lock()
        try:
            lock.acquire(timeout=0)
        except Timeout:
            raise ArcError(texts.run_already_active()) from None
        noted = note_run(self.store.repo_root)  # for `radian arc stop`
        try:
            # What a run's attempts fetch and push costs grows with the repository's loose
            # refs (one or more per task ever run): packed once per run, it stays flat.
            git.pack_refs(self.store.repo_root)
            self.index.rebuild()
            self._run(once)
        except KeyboardInterrupt as stop:
            self._interrupt(stop)
        finally:
            self._pool.shutdown(wait=True)
            noted.unlink(missing_ok=True)
            lock.release()
        return self.report

    def _run(self, once: bool) -> None:
        self._pass()
        if once:
            self._finish_running()
            self._finish_gates()
            return
        while True:
            if self._running:
                self._wait_for_attempts(self.poll_secs)
            elif self.verifier.active() or self._others_working():
                self._wake.wait(self.poll_secs)
            elif not self._claimable_now():
                next_due = self._next_retry_at()
                if next_due is None:
                    return
                self._next_wake = format_utc(next_due)
                # Printed, not recorded: the report holds what happened to tasks and plans.
                self._say([Event("waiting", texts.waiting_until(self._next_wake))], recorded=False)
                log.info("nothing to claim: sleeping until %s", format_utc(next_due))
                self.clock.sleep(max(0.0, (next_due - self.clock.now()).total_seconds()))
            self._pass()

    def _pass(self) -> None:
        index = self.index
        index.refresh()
        running = {(claim.task, claim.attempt_id) for claim in self._running.values()}
        self.store.heartbeat(running)  # a shared store: this host's leases live on
        self._say(recover_orphans(self.store, self.config, self.clock, running, self.report.failed,
                                  adopt=self._adopt, tasks=index))  # fmt: skip
        self._say(self.verifier.collect(index))
        self._say(self.verifier.before_claim(index))
        self._say(promote_due_retries(self.store, self.clock, index.due_retries(self.clock.now())))
        index.refresh()
        # No slot free: no claimable task is looked for (sorting 10,000 ready tasks every
        # poll was most of an idle run's CPU).
        free = len(self._running) < self.config.limits.parallel
        if free and self.claims is None:
            self._claim_free_slots()
        for name in self._claimable_tasks() if free and self.claims is not None else []:
            if len(self._running) >= self.config.limits.parallel:
                break
            decision = self._ask_claims(name)
            if decision is not None and not decision.may_claim:
                self._elsewhere.add(name)
                self._say([_refusal(name, decision, self.claims)])
                continue
            pending = decision.claim if decision is not None else None
            try:
                claimed = claim(self.store, self.config, name, self.clock, remote_claim=pending)
            except LeaseLost as error:
                # A shared store: another host's claim of this attempt, its task not moved
                # yet (or never: it died between); asked again next pass, taken once expired.
                log.info("%s", error)
                continue
            if claimed is not None:
                self._launch(*claimed)
        self._report_quarantined()
        self._clean_up()

    def _claim_free_slots(self) -> None:
        """No claims kept on the remote: each free slot takes the next claimable task that
        no other host is claiming (claim_next: a task another host is claiming right now is
        passed over, not waited for)."""
        left = self._claimable_tasks()
        while left and len(self._running) < self.config.limits.parallel:
            try:
                claimed = claim_next(self.store, self.config, left, self.clock)
            except LeaseLost as error:
                log.info("%s", error)  # a write of the intent refused: asked again next pass
                return
            if claimed is None:
                return
            # Those before it were passed over: each name is tried once a pass, as before.
            left = left[left.index(claimed[0].task) + 1 :]
            self._launch(*claimed)

    def _ask_claims(self, name: str) -> Decision | None:
        """May this host claim `name`? None: nothing to ask (no claims kept across hosts, or
        this host holds the task already); else the claims' decision."""
        if self.claims is None or name in self._held:
            return None
        task = self.store.try_load_task(name)
        if task is None:
            return None  # claim() finds it gone or damaged and leaves it
        decision = self.claims.take(name, task.plan)
        if decision.kind == "ours":
            self._held.add(name)
        return decision

    def _clean_up(self) -> None:
        """Worktrees of tasks that reached done.integrated or failed.* are removed (each
        task looked at once per run, so a pass never walks every finished task), and the
        integrated tasks' branches beyond the policy's newest (radian.arc.cleanup)."""
        new = [name for name in self._newly_done() if name not in self._cleaned]
        if not new:
            return
        self._cleaned.update(new)
        # Logged, not printed: the loop's lines stay those of the chapter.
        # cleanup.py reads only this host's folders (worktrees, task folders, gate locks),
        # which every store has; its annotations still name the files store.
        local = cast(ArcStore, self.store)
        for line in clean_tasks(local, new, self._branches.policy, self._branches):
            log.info("%s", line)
        for line in self._branches.prune(local):
            log.info("%s", line)

    def _report_quarantined(self) -> None:
        """Each damaged task once per run: it is left alone, every other task goes on."""
        for name, problem in list(self.store.damaged.items()):
            if name not in self._quarantined:
                self._quarantined.add(name)
                log.warning("quarantined %s: %s", name, problem)
                text = texts.quarantined(name, problem)
                if name.startswith("plan "):
                    self._say([Event("quarantined", text, plan=name.removeprefix("plan "))])
                else:
                    self._say([Event("quarantined", text, name)])

    def _launch(self, claimed: Claim, line: Event) -> None:
        self._say([line])
        future = self._pool.submit(self.run_attempt, claimed.spec, self.worker_clock)
        self._running[future] = claimed
        self._started[claimed.task] = time.monotonic()

    def _adopt(self, claimed: Claim) -> None:
        """An attempt whose `run` died while its worker ran: watched like one of ours until
        it ends, then its end applied (recovery printed the line)."""
        future = self._pool.submit(
            self.watch_attempt, claimed.attempt_dir, self.worker_clock, claimed.claimed_at
        )
        self._running[future] = claimed
        self._started[claimed.task] = time.monotonic()

    # -- what the live view shows (radian.arc.progress) -----------------------------------
    def progress_rows(self) -> list[WorkerRow]:
        return [
            WorkerRow(
                claim.task,
                claim.attempt_id,
                self._started.get(claim.task, 0.0),
                claim.attempt_dir / "worker.log",
                claim.cost_usd,
            )  # fmt: skip
            for claim in list(self._running.values())
        ]

    def next_wake(self) -> str | None:
        return self._next_wake

    def _claimable_tasks(self) -> list[str]:
        """todo.ready tasks of confirmed plans whose auto is on, less those another host
        holds."""
        return [name for name in self.index.claimable() if name not in self._elsewhere]

    def _others_working(self) -> bool:
        """A shared store: another host's attempt or gate is under way. This loop waits for
        it rather than end: should that host die, its attempts are this loop's to recover
        once their leases expire (radian.arc.claims)."""
        if not self.store.shared:
            return False
        mine = {claim.task for claim in self._running.values()}
        # Without a gate a delivered task waits in review.verifying for good: no one's work.
        gating = not isinstance(self.verifier, NoVerifier)
        states = (State.WORKING, State.VERIFYING) if gating else (State.WORKING,)
        return any(name not in mine for name in self.index.names_in(*states))

    def _claimable_now(self) -> bool:
        self.index.refresh()
        return bool(self._claimable_tasks())

    def _next_retry_at(self) -> datetime | None:
        """The earliest retry_at of a waiting task that this loop would claim."""
        # A gate waiting on an unreachable remote keeps the loop going until its retry_at
        # (whatever the plan's auto), when a verifier is there to run it again.
        gates_after = None if isinstance(self.verifier, NoVerifier) else self.clock.now()
        self.index.refresh()
        return self.index.next_retry_at(gates_after)

    def _wait_for_attempts(self, timeout: float | None) -> None:
        done, _ = wait(list(self._running), timeout=timeout, return_when=FIRST_COMPLETED)
        for future in done:
            self._apply(future)

    def _finish_running(self) -> None:
        while self._running:
            self._wait_for_attempts(None)

    def _finish_gates(self) -> None:
        """Wait for the gates this command started, and apply their verdicts."""
        tasks = self.index if self.index.built else None  # `start`: the store is asked
        while self.verifier.active():
            self._wake.wait(self.poll_secs)
            self._say(self.verifier.collect(tasks))
        self._say(self.verifier.collect(tasks))

    def _apply(self, future: Future[Any]) -> None:
        claimed = self._running.pop(future)
        try:
            end = future.result()
        except Exception as error:
            # The wrapper itself broke: the attempt left no Result.
            outcome = terminated_outcome(None, format_utc(self.clock.now()),
                                         texts.wrapper_broke_reason(str(error)))  # fmt: skip
        else:
            if end is None:  # an adopted attempt's wrapper went without a word
                text = texts.left_no_result(claimed.task, claimed.attempt_id)
                self._say([Event("left_no_result", text, claimed.task,
                                 attempt_id=claimed.attempt_id)])  # fmt: skip
                outcome = terminated_outcome(claimed.claimed_at, format_utc(self.clock.now()))
            else:
                # Who stopped the worker (arc's Ctrl-C, the lead's cancel) is in its end.
                outcome = outcome_from_end(end, claimed.resume_session_id)
        try:
            lines, state = apply_end(self.store, self.config, claimed, outcome, self.clock)
        except DamagedFile as error:
            # The task file was damaged while its attempt ran: the attempt's end cannot be
            # written to it; the task stays quarantined, the run goes on.
            self.store.damaged[claimed.task] = str(error)
            self._report_quarantined()
            return
        except LeaseLost as error:
            # A shared store: another host took the attempt over (this host was silent
            # longer than a lease); its end is that host's to write, not ours.
            log.warning("%s", error)
            self._say([Event("lease_lost", str(error), claimed.task,
                             attempt_id=claimed.attempt_id)])  # fmt: skip
            return
        self._say(lines)
        if state in FAILED_STATES:
            self.report.failed.append(claimed.task)
        current = self.store.try_load_task(claimed.task)
        if (
            state is State.VERIFYING
            and current is not None
            and current.last_attempt_id == claimed.attempt_id
        ):
            self.verifier.start(claimed.task, claimed.attempt_id)

    def _interrupt(self, stop: KeyboardInterrupt) -> None:
        """Ctrl-C or SIGTERM: stop the workers, wait for their threads, record what they
        left. A second one kills the workers instead of waiting out their grace period; the
        attempts are recorded all the same."""
        self.report.interrupted = True
        self.report.stopped_by = getattr(stop, "signum", signal.SIGINT)
        log.warning("interrupted: stopping %d attempt(s)", len(self._running))
        claims = list(self._running.values())
        for claimed in claims:
            # The reason first, for whoever reads this attempt's end: arc's stop, no cancel.
            worker_api.stop_attempt(claimed.attempt_dir, STOP_INTERRUPT, wait=False)
        if claims:
            self._say([Event("stopping", texts.stopping_workers(len(claims)))])
        try:
            self._wait_for_stopped()
        except KeyboardInterrupt:
            _ignore_further_stops()
            for claimed in claims:
                worker_api.kill_attempt(claimed.attempt_dir)
            self._wait_for_stopped()
        self._say([Event("interrupted", texts.interrupted())])

    def _wait_for_stopped(self) -> None:
        self.verifier.stop()
        while self._running:
            done, _ = wait(list(self._running), return_when=FIRST_COMPLETED)
            for future in done:
                self._apply(future)

    # -- start ----------------------------------------------------------------------------
    def start(self, name: str) -> RunReport:
        """Claim one task now (todo.ready, or todo.retry_wait without waiting) and run it."""
        check_exec_args(self.store, self.config)
        task = self.store.load_task(name)
        plan = self.store.load_plan(task.plan)
        if not plan.confirmed:
            raise ArcError(texts.not_confirmed(plan.name))
        if task.state not in (State.READY, State.RETRY_WAIT):
            raise ArcError(texts.cannot_start(name, str(task.state)))
        decision = self._ask_claims(name)
        if decision is not None and not decision.may_claim:
            raise ArcError(_refusal(name, decision, self.claims, start=True).text)
        pending = decision.claim if decision is not None else None
        try:
            # This task alone: start never moves another task.
            self._say(promote_due_retries(self.store, self.clock, [name]))
            claimed = claim(self.store, self.config, name, self.clock, early=True,
                            remote_claim=pending)  # fmt: skip
            if claimed is None:
                raise ArcError(texts.cannot_start(name, str(self.store.load_task(name).state)))
            self._launch(*claimed)
            self._finish_running()
            self._finish_gates()
        except KeyboardInterrupt as stop:
            self._interrupt(stop)
        finally:
            self._pool.shutdown(wait=True)
        return self.report


def _refusal(
    name: str, decision: Decision, claims: TaskClaims | None, *, start: bool = False
) -> Event:
    """Another host holds `name` (or the remote refused the claim): what run prints once, and
    start's refusal."""
    where = claims.where if claims is not None else "-"
    ref = decision.ref or "-"
    if decision.kind == "refused":
        text = texts.claim_refused(name, where, ref, decision.detail or "-")
        return Event("claim_refused", text, name)
    if start:
        return Event("claimed_elsewhere", texts.start_claimed_elsewhere(name, decision.host, where,
                                                                        ref), name)  # fmt: skip
    since = str((decision.holder or {}).get("claimed_at") or "-")
    text = texts.claimed_elsewhere(name, decision.host, where, ref, since)
    return Event("claimed_elsewhere", text, name)


def _ignore_further_stops() -> None:
    """After a second Ctrl-C the workers are being killed: a third must not leave the
    records half applied. Only the main thread can set a signal handler."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)

"""GateVerifier: the loop's Verifier. Gates run in background threads; verdicts are applied
on the loop's thread when it collects them.

A slow gate never blocks the loop from claiming other tasks. A task found in
review.verifying with no gate running for it in any process (a `run` that was stopped or
killed) is taken up again: its verdicts are applied when its gate had reached its end, and
its gate runs again from the first stage otherwise. A gate whose fetch or push could not
reach the remote leaves its task review.verifying with a retry_at: it is taken up again from
then on.

A gate holds its task's gate lock (Store.gate_lock; with a shared store, across hosts) from
its start until its verdict is applied on the loop's thread, or until the run stops: no
other process or host starts a second gate of the task between its verdict and its apply,
and one that finds the lock held, or the task past the gate, leaves the task alone. A lock
that can be lost without its holder knowing (FencedLock) and was lost before the apply is
not held: the verdict is not applied then; whoever holds the lock next gates the task
(this host, from the verdict files on its disk; another host, by its own gate).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field, replace

from filelock import Timeout

from radian.arc import git
from radian.arc.clock import Clock, parse_utc
from radian.arc.config import ArcConfig
from radian.arc.events import Event
from radian.arc.gate.apply import apply_gate
from radian.arc.gate.jobs import (
    build_job,
    error_run,
    finished_run_on_file,
    gate_lock,
    still_verifying,
)
from radian.arc.gate.pipeline import GateRun, run_gate
from radian.arc.gate.reverify import auto_reverify
from radian.arc.logs import logger
from radian.arc.states import State
from radian.arc.store_protocol import FencedLock, HostLock, StateLookup, Store

log = logger(__name__)

# How often `run` asks the remote for the target branch's head, at most, while tasks wait
# on a command failure that a moved target could explain.
REVERIFY_POLL_SECS = 10.0


@dataclass
class _Gate:
    task: str
    attempt_id: str
    thread: threading.Thread | None = None
    result: GateRun | None = None
    done: threading.Event = field(default_factory=threading.Event)
    # The task's gate lock once the gate has it: let go when its verdict is applied.
    lock: HostLock | None = None


class GateVerifier:
    def __init__(
        self,
        store: Store,
        config: ArcConfig,
        clock: Clock,
        *,
        reverify_poll_secs: float = REVERIFY_POLL_SECS,
    ) -> None:
        self.store = store
        self.config = config
        self.clock = clock
        self.reverify_poll_secs = reverify_poll_secs
        self._gates: dict[str, _Gate] = {}
        self._stop = threading.Event()
        self._last_poll: float | None = None

    # -- the Verifier protocol ------------------------------------------------------------
    def start(self, task: str, attempt_id: str) -> None:
        """`task` entered review.verifying with `attempt_id`: run its gate in the background."""
        if task in self._gates:
            return
        gate = _Gate(task, attempt_id)
        gate.thread = threading.Thread(target=self._run, args=(gate,), name=f"gate-{task}")
        self._gates[task] = gate
        gate.thread.start()

    def collect(self, tasks: StateLookup | None = None) -> list[Event]:
        """The verdicts of the gates that ended, applied; then the review.verifying tasks
        whose gate no one runs taken up (`tasks`: who says which those are, a loop's
        due-index; the store by default)."""
        lines: list[Event] = []
        for task, gate in list(self._gates.items()):
            if not gate.done.is_set():
                continue
            del self._gates[task]
            try:
                if gate.result is not None and not gate.result.stopped and _still_held(gate):
                    lines += apply_gate(self.store, self.config, gate.result, self.clock)
            finally:
                _let_go(gate)
        if not self._stop.is_set():
            lines += self._take_up_orphans(tasks or self.store)
        return lines

    def before_claim(self, tasks: StateLookup | None = None) -> list[Event]:
        if self._stop.is_set() or not self._poll_due():
            return []
        try:
            lines, started = auto_reverify(
                self.store, self.config, self.clock, set(self._gates), tasks
            )
        except git.GitError as error:
            # The remote cannot be asked now (an outage): nothing is reverified by itself this
            # poll; the next poll asks again. Not a failure of any task.
            log.warning("remote unreachable, automatic reverify waits: %s", error)
            return []
        for task, attempt_id in started:
            self.start(task, attempt_id)
        return lines

    def active(self) -> int:
        """Gates running or finished but not yet collected."""
        return len(self._gates)

    def stop(self) -> None:
        """Ctrl-C: stop every running program, wait for the threads; tasks stay verifying."""
        self._stop.set()
        for gate in list(self._gates.values()):
            if gate.thread is not None:
                gate.thread.join()
            _let_go(gate)
        self._gates.clear()

    # -- inside -------------------------------------------------------------------------
    def _run(self, gate: _Gate) -> None:
        lock = gate_lock(self.store, gate.task)
        try:
            lock.acquire(timeout=0)
        except Timeout:
            gate.done.set()  # another process runs this gate; it applies the verdicts
            return
        gate.lock = lock  # held until the verdict is applied (collect) or the run stops
        try:
            if still_verifying(self.store, gate.task, gate.attempt_id):
                task = self.store.load_task(gate.task)
                job = build_job(self.store, self.config, task, gate.attempt_id, self._stop)
                job = replace(job, gate_lock=lock)  # asked again before the push
                gate.result = run_gate(
                    job,
                    self.clock,
                    still_wanted=lambda: still_verifying(self.store, gate.task, gate.attempt_id),
                )
        except Exception as error:  # noqa: BLE001 - the lead reads it as a verdict, not a trace
            gate.result = error_run(self.store, gate.task, gate.attempt_id, error, self.clock)
        finally:
            gate.done.set()

    def _take_up_orphans(self, tasks: StateLookup) -> list[Event]:
        lines: list[Event] = []
        for name in tasks.names_in(State.VERIFYING):
            if name in self._gates:
                continue
            task = self.store.try_load_task(name)
            if task is None or task.state is not State.VERIFYING or task.last_attempt_id is None:
                continue
            if task.retry_at is not None and parse_utc(task.retry_at) > self.clock.now():
                continue  # waiting on an unreachable remote (apply_gate): not yet
            lock = gate_lock(self.store, name)
            try:
                lock.acquire(timeout=0)
            except Timeout:
                continue  # a gate runs for it, or waits for its verdict to be applied
            try:
                finished = finished_run_on_file(self.store, name, task.last_attempt_id)
                if finished is not None:
                    # Applied under the lock; moved on meanwhile, it keeps its state.
                    lines += apply_gate(self.store, self.config, finished, self.clock)
                    continue
            finally:
                lock.release()
            self.start(name, task.last_attempt_id)  # its thread takes the lock again
        return lines

    def _poll_due(self) -> bool:
        now = self.clock.now().timestamp()
        if self._last_poll is not None and now - self._last_poll < self.reverify_poll_secs:
            return False
        self._last_poll = now
        return True


def _still_held(gate: _Gate) -> bool:
    """Is the gate's lock still its own, to apply its verdict under? A FencedLock lost with
    its connection is not (radian.arc.store_protocol), even if no one has taken it yet."""
    if isinstance(gate.lock, FencedLock) and not gate.lock.held():
        log.warning("%s gate: its lock was lost before its verdict was applied", gate.task)
        return False
    return True


def _let_go(gate: _Gate) -> None:
    if gate.lock is not None:
        gate.lock.release()
        gate.lock = None

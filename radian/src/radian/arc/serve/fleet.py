"""What `radian arc serve` shows, read from arc's files and never written: the status of
`radian arc status` (radian.arc.status), the running attempts with the tail of their
output (each attempt's worker.log, radian.arc.worker.files), and the recent failures.

A read is kept until something changes: the journal every save appends to
(`.radian/arc/changes.log`, radian.arc.store_journal), the plans, the task folders, or a running
attempt's log. Checking costs a few `stat` calls; reading again costs what `status` costs
(about 250 ms at 10,000 tasks), so reads follow one another no faster than four times what
the last one took, whoever asks (the page's event streams and the API share one read).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from radian.arc import show
from radian.arc.attempt_result import AttemptResult
from radian.arc.clock import Clock, format_utc, parse_utc
from radian.arc.config import ArcConfig
from radian.arc.states import State
from radian.arc.status import FleetStatus, fleet_status
from radian.arc.store_protocol import Store
from radian.arc.worker.files import AttemptFiles

TAIL_BYTES = 8192  # read from the end of a running attempt's worker.log
TAIL_LINES = 20  # of which the last lines are shown
TAIL_WIDTH = 400  # a longer line is cut
FAILURES_SHOWN = 20  # the newest
WAITING_SHOWN = 50  # on the page; the API lists them all
STALE_SECS = 10.0  # read again after this long even when nothing changed (elapsed times)
# The states of a task whose last attempt failed: finished for good, or waiting to retry.
FAILURE_STATES = frozenset(
    {State.IRRECOVERABLE, State.CANCELLED, State.EXHAUSTED, State.RETRY_WAIT}
)


@dataclass(frozen=True)
class Running:
    """An attempt in doing.working and what its worker printed last."""

    task: str
    plan: str
    attempt_id: str | None
    started_at: str | None
    elapsed_secs: float | None
    cost_usd: float  # the task's, so far: every attempt and review ended before this one
    last_output_at: str | None  # when worker.log last grew
    tail: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Failure:
    """A task whose last attempt failed, and why (its attempt_result.json)."""

    task: str
    plan: str
    state: str
    attempt_id: str | None
    failure_class: str | None
    reason: str | None
    at: str | None  # when the attempt ended, else when the task last changed
    retry_at: str | None
    cost_usd: float  # total_cost_usd


@dataclass(frozen=True)
class FleetState:
    status: FleetStatus
    running: list[Running]
    failures: list[Failure]

    def document(self) -> dict[str, Any]:
        """`GET /api/v1/state`: the status document, the running attempts, the failures."""
        failures = []
        for failure in self.failures:
            entry = asdict(failure)
            entry["class"] = entry.pop("failure_class")
            failures.append(entry)
        return {
            "generated_at": self.status.at,
            **self.status.document(),
            "running": [asdict(running) for running in self.running],
            "failures": failures,
        }


def read_fleet(store: Store, clock: Clock) -> FleetState:
    """The fleet now: one read of every plan (status) and of every task folder."""
    status = fleet_status(store, clock)
    now = clock.now()
    running: list[Running] = []
    failures: list[Failure] = []
    for name, record in store.all_task_records():
        state = record.get("state") if record is not None else None
        if record is None or state not in _STATE_NAMES:
            continue  # damaged: status counts it, `show <task>` says why
        if state == State.WORKING:
            running.append(_running(store, name, record, now))
        elif State(state) in FAILURE_STATES:
            failures.append(_failure(store, name, record))
    failures.sort(key=lambda failure: failure.at or "", reverse=True)
    return FleetState(status, running, failures[:FAILURES_SHOWN])


_STATE_NAMES = frozenset(str(state) for state in State)


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _money(value: object) -> float:
    return float(value) if isinstance(value, int | float) else 0.0


def _running(store: Store, name: str, record: dict[str, Any], now: datetime) -> Running:
    attempt_id = _text(record.get("last_attempt_id"))
    started = elapsed = last_output = None
    tail: list[str] = []
    if attempt_id is not None:
        intent = store.read_attempt_intent(name, attempt_id) or {}
        started = _text(intent.get("claimed_at"))
        if started is not None:
            with contextlib.suppress(ValueError):
                elapsed = max(0.0, (now - parse_utc(started)).total_seconds())
        last_output, tail = output_tail(AttemptFiles(store.attempt_dir(name, attempt_id)).log)
    return Running(name, str(record.get("plan")), attempt_id, started, elapsed,
                   _money(record.get("total_cost_usd")), last_output, tail)  # fmt: skip


def output_tail(log: Path) -> tuple[str | None, list[str]]:
    """When `log` last grew (UTC) and its last lines; (None, []) when there is none yet."""
    try:
        with log.open("rb") as stream:
            found = os.fstat(stream.fileno())
            size, modified = found.st_size, found.st_mtime
            stream.seek(max(0, size - TAIL_BYTES))
            data = stream.read()
    except OSError:
        return None, []
    lines = data.decode("utf-8", errors="replace").splitlines()
    if size > TAIL_BYTES and lines:
        lines = lines[1:]  # the first line read is cut
    shown = [line[:TAIL_WIDTH] for line in lines if line.strip()][-TAIL_LINES:]
    return format_utc(datetime.fromtimestamp(modified, UTC)), shown


def _failure(store: Store, name: str, record: dict[str, Any]) -> Failure:
    attempt_id = _text(record.get("last_attempt_id"))
    result = store.read_attempt_result(name, attempt_id) if attempt_id else None
    ended = result or AttemptResult(task=name, attempt_id=attempt_id or "")
    reason, error = ended.reason or None, ended.model_error
    if reason is None and error is not None:
        reason = " ".join(part for part in (error.kind, error.message) if part) or None
    return Failure(
        task=name,
        plan=str(record.get("plan")),
        state=str(record.get("state")),
        attempt_id=attempt_id,
        failure_class=ended.failure_class or None,
        reason=reason,
        at=ended.ended_at or _text(record.get("updated_at")),
        retry_at=_text(record.get("retry_at")),
        cost_usd=_money(record.get("total_cost_usd")),
    )


Signature = tuple[Any, ...]


def _stat(path: Path) -> tuple[int, int, int] | None:
    try:
        found = path.stat()
    except OSError:
        return None
    return found.st_ino, found.st_size, found.st_mtime_ns


class Notifier:
    """A version, raised at each change; the event streams wait on it (from any thread)."""

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self.version = 0
        self._waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = []

    def changed(self) -> None:
        with self._guard:
            self.version += 1
            waiters = list(self._waiters)
        for loop, event in waiters:
            with contextlib.suppress(RuntimeError):  # that loop has closed
                loop.call_soon_threadsafe(event.set)

    async def wait(self, since: int, timeout: float) -> int:
        """Wait until the version passes `since`, or `timeout` seconds; the version now."""
        event = asyncio.Event()
        entry = (asyncio.get_running_loop(), event)
        with self._guard:
            if self.version != since:
                return self.version
            self._waiters.append(entry)
        try:
            await asyncio.wait_for(event.wait(), timeout)
        except TimeoutError:
            pass
        finally:
            with self._guard:
                self._waiters.remove(entry)
        return self.version


class Fleet:
    """The fleet of one repository as the server shows it: read when something changed."""

    def __init__(
        self,
        store: Store,
        clock: Clock,
        config: ArcConfig,
        *,
        poll_secs: float = 1.0,
        timer: Callable[[], float] = time.monotonic,
    ) -> None:
        self.store = store
        self.clock = clock  # the status's clock: its `at`, the elapsed times
        self.config = config
        self.poll_secs = poll_secs  # how often an event stream looks for a change
        self.timer = timer
        self.notifier = Notifier()
        self._guard = threading.Lock()
        self._state: FleetState | None = None
        self._signature: Signature | None = None
        self._read_at = 0.0
        self._earliest = 0.0  # no read before this (timer): reads cost
        self.closed = False  # set when the server stops: the event streams end

    def close(self) -> None:
        """End every event stream (the server is stopping: it need not wait for them)."""
        self.closed = True
        self.notifier.changed()

    @property
    def repo_name(self) -> str:
        return self.store.repo_root.name

    def state(self, *, fresh: bool = False) -> FleetState:
        """The fleet: the last read while nothing has changed, else a new one (`fresh`: a new
        one now, whatever changed)."""
        with self._guard:
            now = self.timer()
            files = self._files()
            if self._state is not None and not fresh:
                unchanged = files + self._logs(self._state) == self._signature
                if unchanged and now - self._read_at < STALE_SECS:
                    return self._state
                if now < self._earliest:
                    return self._state
            state = read_fleet(self.store, self.clock)
            done = self.timer()
            self._state, self._signature = state, files + self._logs(state)
            self._read_at = now
            self._earliest = done + 3 * (done - now)  # reading at most a quarter of the time
            return state

    def refresh(self) -> FleetState:
        """Read again now and wake every event stream."""
        state = self.state(fresh=True)
        self.notifier.changed()
        return state

    def task(self, name: str) -> dict[str, Any]:
        """`show <task>`'s document; NotFoundError for a task arc does not know."""
        return show.one_task_document(self.store, self.config, name)

    def _files(self) -> Signature:
        return (self.store.change_mark(),)

    def _logs(self, state: FleetState) -> Signature:
        return tuple(
            _stat(AttemptFiles(self.store.attempt_dir(run.task, run.attempt_id)).log)
            for run in state.running
            if run.attempt_id is not None
        )

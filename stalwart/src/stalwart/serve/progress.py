"""Live progress: what each session's run is doing now, seen from the record's commits.

The run records every send in flight before it sends it (chapter 34), so the commits
themselves say what is happening: `ObservedStore` wraps the agent's store and, on each
commit, turns a call or an undo in flight into a line ("running charge_card(order=4411,
amount=40.0)", the call written as its question writes it; "undoing charge_card (by
refund_card): try 2 of 4", the write named as the stuck question names it). `ProgressClock`
wraps the agent's clock: an undo's backoff wait happens under the session's lock, in the
thread that holds it, so the wait is told as "undoing charge_card (by refund_card): try 3
of 4, next in 2 s".

`Board` keeps those lines (this process's runs only) and a version that moves on every
change; the pages' event streams wait on it, and poll the record as well so a run that
another worker advances shows too.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable, Collection, Iterator, Mapping
from contextlib import contextmanager

from ..clock import Clock
from ..labels import shown_call, step_label, step_labels
from ..record import Changes, SessionRecord, Store
from ..record.lease import Lease
from ..record.schema import MODEL_KIND, CallRow, CallStatus
from ..texts import serve as texts
from ..tools import ToolSpec


class Board:
    """Per session: the progress line of the run this process advances, and a version."""

    def __init__(self, listener: Callable[[str], None] | None = None) -> None:
        self.listener = listener  # told each new line (the terminal prints it)
        self._guard = threading.Lock()
        self._lines: dict[str, str] = {}
        # session -> (the write being undone, its undo, try, tries)
        self._undo: dict[str, tuple[str, str, int, int]] = {}
        self.version = 0
        self._waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = []

    def line(self, session: str) -> str | None:
        with self._guard:
            return self._lines.get(session)

    def set_line(self, session: str, line: str | None) -> None:
        with self._guard:
            if line is None:
                self._lines.pop(session, None)
                self._undo.pop(session, None)
            else:
                self._lines[session] = line
        if line is not None and self.listener is not None:
            self.listener(line)
        self.changed()

    def undoing(self, session: str, write: str, undo: str, try_number: int, tries: int) -> None:
        with self._guard:
            self._undo[session] = (write, undo, try_number, tries)
        self.set_line(session, texts.progress_undo(write, undo, try_number, tries))

    def waiting(self, session: str, seconds: float) -> None:
        with self._guard:
            undoing = self._undo.get(session)
        if undoing is not None:
            write, undo, try_number, tries = undoing
            line = texts.progress_undo_wait(write, undo, try_number + 1, tries, seconds)
            self.set_line(session, line)

    def changed(self) -> None:
        with self._guard:
            self.version += 1
            waiters = list(self._waiters)
        for loop, event in waiters:
            with contextlib.suppress(RuntimeError):  # the loop has closed
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


_locked = threading.local()


def _current_session() -> str | None:
    stack: list[str] = getattr(_locked, "stack", [])
    return stack[-1] if stack else None


class ObservedStore:
    """A `Store` that tells the board what each commit of a run puts in flight; `tools`,
    the agent's catalogue, writes each call as its question does."""

    def __init__(
        self,
        inner: Store,
        board: Board,
        undo_tries: int,
        tools: Mapping[str, ToolSpec] | None = None,
    ) -> None:
        self.inner = inner
        self.board = board
        self.undo_tries = undo_tries
        self.tools: Mapping[str, ToolSpec] = tools or {}

    @property
    def commits(self) -> int:
        return self.inner.commits

    @commits.setter
    def commits(self, value: int) -> None:
        self.inner.commits = value

    def load(self, session: str) -> SessionRecord | None:
        return self.inner.load(session)

    def commit(self, changes: Changes) -> None:
        self.inner.commit(changes)
        for call in changes.calls:
            if call.status != CallStatus.IN_FLIGHT:
                continue
            if call.kind == "undo":
                write = self._undone(call)
                self.board.undoing(call.session, write, call.tool, call.tries, self.undo_tries)
            elif call.kind == MODEL_KIND:
                self.board.set_line(call.session, texts.progress_model(call.tool))
            else:
                shown = shown_call(self.tools, call.tool, call.args)
                self.board.set_line(call.session, texts.progress_call(call.tool, shown, call.tries))
        if changes.runs and not changes.calls:
            self.board.changed()

    def _undone(self, undo: CallRow) -> str:
        """The write `undo` undoes, named as its run's stuck question would name it (read
        from the record, once per try of an undo); the undo's own name if it is not found."""
        record = self.inner.load(undo.session)
        if record is None:
            return undo.tool
        write = next((c for c in record.calls if c.call_id == undo.undoes), None)
        run = next((r for r in record.runs if r.run_id == undo.run_id), None)
        if write is None or run is None:
            return undo.tool
        return step_label(run, step_labels(self.tools, run), write.step, write.tool)

    @contextmanager
    def lock(
        self, session: str, *, wait: bool = True, clock: Clock | None = None
    ) -> Iterator[Lease]:
        with self.inner.lock(session, wait=wait, clock=clock) as lease, _locking(session):
            yield lease

    @contextmanager
    def take_over(self, session: str, *, clock: Clock | None = None) -> Iterator[Lease]:
        with self.inner.take_over(session, clock=clock) as lease, _locking(session):
            yield lease

    def sessions_with_runs_in(self, states: Collection[str]) -> list[str]:
        return self.inner.sessions_with_runs_in(states)

    def close(self) -> None:
        self.inner.close()


@contextmanager
def _locking(session: str) -> Iterator[None]:
    """This thread advances `session` meanwhile (what `_current_session` reads)."""
    stack: list[str] = getattr(_locked, "stack", None) or []
    _locked.stack = stack
    stack.append(session)
    try:
        yield
    finally:
        stack.pop()


class ProgressClock:
    """The agent's clock, telling the board of each wait made under a session's lock."""

    def __init__(self, inner: Clock, board: Board) -> None:
        self.inner = inner
        self.board = board

    def now(self) -> float:
        return self.inner.now()

    def sleep(self, seconds: float) -> None:
        session = _current_session()
        if session is not None:
            self.board.waiting(session, seconds)
        self.inner.sleep(seconds)

"""The `Store` protocol: the narrow interface every record backend implements.

The runtime keeps nothing of a run in process memory between calls; everything lives
in the record, read with `load` and written with `commit`. A backend needs only these
four operations (and a counter), so an embedded SQLite file and a PostgreSQL server
serve the same runtime, and one contract test suite runs against both.

Contract
--------
- `load(session)` returns everything the record holds for one session (its row, its
  runs, its calls in `seq` order, its messages in `seq` order), or None when the session
  has never been recorded. It reads committed data only.
- `commit(changes)` writes every row of `changes` in ONE transaction, atomically and
  durably: when it returns, the rows survive a crash of this process and of the machine
  (SQLite: WAL with synchronous=FULL; PostgreSQL: a committed transaction). Each row is
  an upsert by its table's key (`schema.TABLES`): a row with a key already recorded
  replaces it whole. An empty `Changes` commits nothing and does not count. Each real
  commit adds one to `commits` (the benchmark counts them). Each commit moves the
  `version` of every session it touches on by one, in its own transaction, whatever the
  rows given say (a new session row is written with its own).
- A backend may answer `load` under the session's lock from a copy kept in process
  memory, only when the version it read right after the lock was had is the one the copy
  was kept at (`cache.py`): a change made by any other process or store object wins.
- `lock(session, wait=True, clock=None)` is a context manager giving the caller the sole
  right to advance that session until it exits, across threads and processes: a second
  `lock` of the same session blocks until the first is released (or raises `SessionBusy`
  after the backend's wait limit; with `wait=False`, at once, when another holds it). A
  lock whose holder dies is released (SQLite: an flock on a file; PostgreSQL: an
  advisory lock held by the holder's connection). Under the lock the caller holds the
  session's lease (`record/lease.py`), which the context manager gives: its fencing
  token, its expiry on `clock`; the call's first commit takes it, and every commit and
  the store's heartbeat renew it. A lock had while another holder's lease is live (its
  lock ended, it did not) raises `SessionBusy`. `commit` inside a held lock does NOT
  release it: the runtime commits the in-flight record, sends the call, and commits the
  outcome while holding one lock.
- Every commit of a thread holding a session's lease is fenced: in the one statement the
  commit makes, its token must still be the lease's, or nothing is written and it raises
  `LeaseLost` (code `lease_lost`).
- `take_over(session, clock=None)` is `lock` for an operator who must act though a worker
  that hangs keeps the session's lock: when the lock is not had within the wait limit, the
  session's lease alone, taken at once once it has expired on `clock` (or its holder is
  gone, or it was never taken), so the worker holding the lock is fenced from then on
  (`Lease.taken_over`); `SessionBusy` while that lease is live. Its commits are fenced as
  any, and the lease is given back when it exits.
- `sessions_with_runs_in(states)` names every session with a run in one of `states`,
  sorted (committed data; no lock). `stalwart resume` uses it to find runs whose process
  stopped mid-way.
- `close()` releases the backend's connections.

The runtime always does `with store.lock(s): record = store.load(s); ...; store.commit(...)`,
so a backend may assume loads and commits of a session happen under its lock.
"""

from __future__ import annotations

from collections.abc import Collection
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Protocol

from ..clock import Clock
from .lease import Lease
from .schema import CallRow, MessageRow, RunRow, SessionRow


@dataclass(frozen=True)
class SessionRecord:
    """Everything recorded for one session."""

    session: SessionRow
    runs: tuple[RunRow, ...] = ()
    calls: tuple[CallRow, ...] = ()
    messages: tuple[MessageRow, ...] = ()


@dataclass
class Changes:
    """Rows to upsert in one transaction."""

    sessions: list[SessionRow] = field(default_factory=list)
    runs: list[RunRow] = field(default_factory=list)
    calls: list[CallRow] = field(default_factory=list)
    messages: list[MessageRow] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.sessions or self.runs or self.calls or self.messages)

    def rows(self) -> list[SessionRow | RunRow | CallRow | MessageRow]:
        return [*self.sessions, *self.runs, *self.calls, *self.messages]

    def touched(self) -> list[str]:
        """The sessions the rows belong to, each once, in the order first given."""
        return list(dict.fromkeys(map(_SESSION, self.rows())))


_SESSION = attrgetter("session")


class Store(Protocol):
    """A durable record of sessions, runs, calls and messages (see the module contract)."""

    commits: int

    def load(self, session: str) -> SessionRecord | None: ...

    def commit(self, changes: Changes) -> None: ...

    def lock(
        self, session: str, *, wait: bool = True, clock: Clock | None = None
    ) -> AbstractContextManager[Lease]: ...

    def take_over(
        self, session: str, *, clock: Clock | None = None
    ) -> AbstractContextManager[Lease]: ...

    def sessions_with_runs_in(self, states: Collection[str]) -> list[str]: ...

    def close(self) -> None: ...

"""What every backend of the `Store` does the same way, written once.

SQLite (`sqlite.py`) and PostgreSQL (`postgres/`) differ in how they lock, fence and
send; what they share is here: the checks of a store's settings, the tables' DDL from
the schema, the SET of their upserts, a commit's rows table by table and the sessions it
moves on, the query for the sessions with runs in some states, the error of a lock not
had in time, the operator's take-over, and the leases a store's threads hold (each
thread's stack, every lease for the heartbeat, the session's kept copy while one is
held).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Collection, Iterator, Mapping
from contextlib import AbstractContextManager, ExitStack, contextmanager
from typing import Any, Generic, TypeVar

from ..clock import Clock, SystemClock
from ..errors import SessionBusy
from .base import Changes, SessionRecord
from .cache import MISS, SessionCache
from .lease import Heartbeat, Lease, holder_ended
from .schema import TABLES, CallRow, MessageRow, RunRow, SessionRow, Table, column_names


def check_settings(lock_wait_secs: float, lease_secs: float) -> None:
    if not lock_wait_secs > 0:
        raise ValueError(f"lock_wait_secs must be more than 0; got {lock_wait_secs!r}")
    if not lease_secs > 0:
        raise ValueError(f"lease_secs must be more than 0; got {lease_secs!r}")


def table_ddl(sql_types: Mapping[str, str], after: str = "") -> list[str]:
    """CREATE statements for every table of the schema, each column of the backend's type
    for its kind (`sql_types`), `after` closing each table's statement.

    An index whose column leads the primary key (messages: session, seq) would repeat the
    key's own index, one more entry written for every row, and is not made."""
    statements: list[str] = []
    for table in TABLES:
        columns = ", ".join(f'"{name}" {sql_types[kind]}' for name, kind in table.kinds.items())
        key = ", ".join(f'"{name}"' for name in table.key)
        statements.append(
            f'CREATE TABLE IF NOT EXISTS "{table.name}" ({columns}, PRIMARY KEY ({key})){after}'
        )
        for column in table.index:
            if table.key[0] == column:
                continue
            statements.append(
                f'CREATE INDEX IF NOT EXISTS "{table.name}_{column}" ON "{table.name}" ("{column}")'
            )
    return statements


def upsert_updates(table: Table, kept: Collection[str | None]) -> str:
    """The SET of a table's upsert: every column but those `kept` takes the row's new
    value, and the table's counter moves on by one."""
    moved = [f'"{n}" = excluded."{n}"' for n in column_names(table.row) if n not in kept]
    if table.counter is not None:
        moved.append(f'"{table.counter}" = "{table.name}"."{table.counter}" + 1')
    return ", ".join(moved)


def session_of(changes: Changes) -> str:
    """The one session a commit's rows belong to (the runtime commits one at a time)."""
    for row in changes.rows():
        return str(row.session)
    raise ValueError("an empty commit names no session")


def by_table(changes: Changes) -> list[tuple[type, list[Any]]]:
    """The changes' rows, table by table, each table's rows in the order given (so when a
    row is given twice, the later one is the one that stays, as upserts one by one do)."""
    return [
        (SessionRow, changes.sessions),
        (RunRow, changes.runs),
        (CallRow, changes.calls),
        (MessageRow, changes.messages),
    ]


def sessions_to_bump(changes: Changes) -> list[str]:
    """Every commit moves the version of each session it touches on by one; a session row
    the commit upserts has it moved by its upsert (or written, when the row is new)."""
    touched = changes.touched()
    if not changes.sessions:
        return touched
    upserted = {row.session for row in changes.sessions}
    return [s for s in touched if s not in upserted]


def runs_in_sql(states: Collection[str], mark: str) -> str:
    """The sessions with a run in one of `states` (one parameter each, marked `mark`)."""
    marks = ", ".join(mark for _ in states)
    return f'SELECT DISTINCT "session" FROM "runs" WHERE "state" IN ({marks}) ORDER BY 1'


def lock_not_had(session: str, waited: float) -> SessionBusy:
    return SessionBusy(
        f"session {session!r} is being advanced by another worker (waited {waited:g}s)"
    )


def cached_load(
    cache: SessionCache, session: str, read: Callable[[str], SessionRecord | None]
) -> SessionRecord | None:
    """The session's kept copy when it is current (by the version read with the lock),
    else what `read` reads, kept."""
    kept = cache.get(session)
    if kept is not MISS:
        return kept  # type: ignore[return-value]  # a SessionRecord or None
    record = read(session)
    cache.loaded(session, record)
    return record


@contextmanager
def taken_over(
    lock: Callable[..., AbstractContextManager[Lease]],
    lease_alone: Callable[[str, Clock], AbstractContextManager[Lease]],
    session: str,
    clock: Clock | None,
) -> Iterator[Lease]:
    """`lock`, or, when the lock is not had within the store's wait (a worker that hangs
    holds it), the session's lease alone once it may be taken (see `Store.take_over`)."""
    clock = clock or SystemClock()
    with ExitStack() as held:
        try:
            lease = held.enter_context(lock(session, clock=clock))
        except SessionBusy:
            lease = held.enter_context(lease_alone(session, clock))
        yield lease


_H = TypeVar("_H")


class Holdings(Generic[_H]):
    """The leases a store's threads hold: each thread's own stack of what it holds (a
    lease, or a lease with its connection: `lease_of` says which lease), and every lease
    held by any thread, which the heartbeat renews."""

    def __init__(
        self, lease_of: Callable[[_H], Lease], heartbeat: Heartbeat, cache: SessionCache
    ) -> None:
        self._lease_of = lease_of
        self._heartbeat = heartbeat
        self._cache = cache
        self._local = threading.local()
        self._guard = threading.Lock()
        self._leases: dict[int, Lease] = {}  # every lease held now, by id

    def stack(self) -> list[_H]:
        """What this thread holds, the innermost last."""
        stack: list[_H] | None = getattr(self._local, "stack", None)
        if stack is None:
            stack = self._local.stack = []
        return stack

    def lease(self, session: str) -> Lease | None:
        """The lease this thread holds on `session`, the innermost one, if any."""
        for held in reversed(self.stack()):
            lease = self._lease_of(held)
            if lease.session == session:
                return lease
        return None

    def taken(self) -> list[Lease]:
        """Every lease held now that a commit took (one not taken has nothing to keep)."""
        with self._guard:
            return [lease for lease in self._leases.values() if lease.taken]

    def holding(self, held: _H, version: int | None, created: Any) -> AbstractContextManager[Lease]:
        """`held` held by this thread: its commits fenced by its lease, the heartbeat
        renewing it, and the session's kept copy used at the version read with it. Gives
        the lease."""
        return _Holding(self, held, None if version is None else (version, float(created)))

    def enter(self, held: _H, stamp: tuple[int, float] | None) -> Lease:
        """Begin holding `held` on this thread (what `holding` does on entry)."""
        lease = self._lease_of(held)
        self._cache.locked(lease.session, stamp)
        self.stack().append(held)
        with self._guard:
            self._leases[id(lease)] = lease
        self._heartbeat.start()
        return lease

    def leave(self, held: _H, lease: Lease) -> None:
        """Stop holding `held` (what `holding` does on exit)."""
        self._cache.released(lease.session)
        _drop(self.stack(), held)
        with self._guard:
            self._leases.pop(id(lease), None)
        holder_ended(lease.holder)


class _Holding(Generic[_H]):
    """`Holdings.holding` while entered. A class rather than a generator under
    `contextlib.contextmanager`, as every call of the runtime enters one."""

    __slots__ = ("_holdings", "_held", "_lease", "_stamp")

    def __init__(self, holdings: Holdings[_H], held: _H, stamp: tuple[int, float] | None) -> None:
        self._holdings = holdings
        self._held = held
        self._stamp = stamp

    def __enter__(self) -> Lease:
        self._lease = self._holdings.enter(self._held, self._stamp)
        return self._lease

    def __exit__(self, *raised: object) -> None:
        self._holdings.leave(self._held, self._lease)


def _drop(stack: list[_H], held: _H) -> None:
    """Take `held` itself off the stack (not one equal to it)."""
    for at in range(len(stack) - 1, -1, -1):
        if stack[at] is held:
            del stack[at]
            return

"""The embedded record: one SQLite file in WAL mode, every commit fsync'd.

Locking a session takes an exclusive `flock` on a small file named by the session, in a
folder beside the database (`<database>.locks/`): every process that opens the database
finds the same file, whatever its temp folder (systemd's PrivateTmp, containers sharing a
volume), and the kernel releases the lock if its holder dies. A lock not had within
`lock_wait_secs` raises `SessionBusy`. An in-memory database (":memory:") lives and locks
in-process.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Callable, Collection, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import texts
from ..clock import Clock, SystemClock
from ..errors import LeaseLost, SessionBusy
from .backend import (
    Holdings,
    by_table,
    cached_load,
    check_settings,
    lock_not_had,
    runs_in_sql,
    session_of,
    sessions_to_bump,
    table_ddl,
    taken_over,
    upsert_updates,
)
from .base import Changes, SessionRecord
from .cache import SessionCache
from .lease import (
    LEASE_SECS,
    Heartbeat,
    Lease,
    Seen,
    ended,
    lease_taken_over,
    next_lease,
)
from .lock_files import LockFiles
from .operator_log import OperatorLog
from .schema import (
    ADDED_COLUMNS,
    MOVABLE,
    TABLE_OF,
    TABLES,
    CallRow,
    MessageRow,
    Row,
    RunRow,
    SessionRow,
    Table,
    as_loaded,
    column_names,
    column_values,
    from_values,
)

_SQL_TYPES = {"text": "TEXT", "int": "INTEGER", "real": "REAL", "bool": "INTEGER", "json": "TEXT"}
TABLE_OF_NAME = {table.name: table for table in TABLES}


def ddl() -> list[str]:
    """CREATE statements for every table of the schema.

    Tables are WITHOUT ROWID: a row lives in its primary key's b-tree, not in a rowid
    table beside a separate index of its key, so a commit writes fewer pages to the WAL
    (and makes fewer of them durable). An index whose column leads the primary key
    (messages: session, seq) would repeat it, and is not made (`backend.table_ddl`). A
    record made before keeps the tables it was made with; both read and write the same.
    """
    return table_ddl(_SQL_TYPES, " WITHOUT ROWID")


def upsert_sql(table: Table) -> str:
    """INSERT ... ON CONFLICT DO UPDATE of one row, its values in `column_names` order.

    The update leaves the indexed columns (`Table.index`) out: naming a column in SET
    rewrites its index entry even when the value is the same, one more page to make
    durable on every commit. `moves_sql` puts them right when one really changes.
    """
    names = column_names(table.row)
    columns = ", ".join(f'"{n}"' for n in names)
    marks = ", ".join("?" for _ in names)
    key = ", ".join(f'"{n}"' for n in table.key)
    updates = upsert_updates(table, {*table.key, *table.index, table.counter})
    return (
        f'INSERT INTO "{table.name}" ({columns}) VALUES ({marks}) '
        f"ON CONFLICT ({key}) DO UPDATE SET {updates}"
    )


@dataclass(frozen=True)
class IndexedColumn:
    """An indexed column the upsert leaves alone, and the statement that sets it on the
    rare row whose value changed: (value, *key values, value), a no-op otherwise."""

    sql: str
    at: tuple[int, ...]  # positions in `column_values` of the statement's parameters


def moves_sql(table: Table) -> list[IndexedColumn]:
    names = column_names(table.row)
    where = " AND ".join(f'"{n}" = ?' for n in table.key)
    moves: list[IndexedColumn] = []
    for column in table.index:
        if column in table.key:
            continue
        sql = f'UPDATE "{table.name}" SET "{column}" = ? WHERE {where} AND "{column}" IS NOT ?'
        at = (names.index(column), *(names.index(n) for n in table.key), names.index(column))
        moves.append(IndexedColumn(sql, at))
    return moves


def select_sql(table: Table, order: str | None) -> str:
    """SELECT of one session's rows of a table, its columns in `column_names` order."""
    columns = ", ".join(f'"{n}"' for n in column_names(table.row))
    sql = f'SELECT {columns} FROM "{table.name}" WHERE "session" = ?'
    return sql + (f' ORDER BY "{order}"' if order else "")


_UPSERTS = {table.row: upsert_sql(table) for table in TABLES}
# Every commit moves the version of each session it touches on by one; a session row the
# commit upserts has it moved by its upsert (or written, when the row is new).
_BUMP = 'UPDATE "sessions" SET "version" = "version" + 1 WHERE "session" = ?'

_MOVES = {table.row: moves_sql(table) for table in TABLES}
_SELECTS = {
    SessionRow: select_sql(TABLE_OF[SessionRow], None),
    RunRow: select_sql(TABLE_OF[RunRow], "number"),
    CallRow: select_sql(TABLE_OF[CallRow], "seq"),
    MessageRow: select_sql(TABLE_OF[MessageRow], "seq"),
}


class SQLiteStore:
    """The `Store` protocol on one SQLite file (or ":memory:")."""

    def __init__(
        self,
        path: str | Path,
        *,
        busy_timeout_ms: int = 30_000,
        lock_wait_secs: float = 30.0,
        lease_secs: float = LEASE_SECS,
    ) -> None:
        check_settings(lock_wait_secs, lease_secs)
        self.path = str(path)
        self.lock_wait_secs = lock_wait_secs
        self.lease_secs = lease_secs
        self._heartbeat = Heartbeat(lease_secs / 3, self._renew_leases)
        self.commits = 0
        self._memory = self.path == ":memory:"
        self._guard = threading.RLock()
        self._thread_locks: dict[str, threading.Lock] = {}
        self._db = sqlite3.connect(
            self.path, isolation_level=None, check_same_thread=False, timeout=busy_timeout_ms / 1000
        )
        # The statements that write, and each commit's BEGIN and COMMIT, go through one
        # cursor kept for them (`Connection.execute` makes a cursor for every statement);
        # a read keeps its own, reset once its rows are read.
        self._writes = self._db.cursor()
        if not self._memory:
            self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")
        self._cache = SessionCache()
        self._holdings: Holdings[Lease] = Holdings(
            lambda lease: lease, self._heartbeat, self._cache
        )
        self._lock_files = None if self._memory else LockFiles(lock_folder(self.path))
        with self._guard:
            self._writes.execute("BEGIN IMMEDIATE")
            for statement in ddl():
                self._db.execute(statement)
            self._add_missing_columns()
            self._writes.execute("COMMIT")

    def load(self, session: str) -> SessionRecord | None:
        return cached_load(self._cache, session, self._load)

    def _load(self, session: str) -> SessionRecord | None:
        with self._guard:
            head = self._select(SessionRow, session)
            if not head:
                return None
            record = SessionRecord(
                session=head[0],
                runs=tuple(self._select(RunRow, session)),
                calls=tuple(self._select(CallRow, session)),
                messages=tuple(self._select(MessageRow, session)),
            )
        return record

    def commit(self, changes: Changes) -> None:
        if not changes:
            return
        written: dict[int, list[Any]] = {}  # each row's column values, by the row's id
        session = session_of(changes)
        lease = self._holdings.lease(session)
        known = self._cache.kept_keys(session)  # rows already the session's: not moved
        with self._guard:
            try:
                self._writes.execute("BEGIN IMMEDIATE")
                try:
                    # The fence first: a holder whose lease ended writes nothing. The call's
                    # first commit takes the lease, from the token read with the lock; a
                    # later one moves the session's version on in the same statement.
                    bumped = sessions_to_bump(changes)
                    if lease is None:
                        ours, renewed = True, None
                    else:
                        ours, renewed, bumped = self._fence(lease, bumped)
                    if not ours:
                        assert lease is not None
                        raise LeaseLost(texts.lease_lost(session, lease.token))
                    for row_type, rows in by_table(changes):
                        if not rows:
                            continue
                        values = [column_values(row) for row in rows]
                        written.update(zip(map(id, rows), values, strict=True))
                        self._writes.executemany(_UPSERTS[row_type], values)
                        moves = _MOVES[row_type]
                        if moves:
                            moving = _may_move(row_type, rows, values, session, known)
                            for move in moves if moving else ():
                                self._writes.executemany(
                                    move.sql, [[row[i] for i in move.at] for row in moving]
                                )
                    if bumped:
                        self._writes.executemany(_BUMP, [(s,) for s in bumped])
                except BaseException:
                    self._writes.execute("ROLLBACK")
                    raise
                self._writes.execute("COMMIT")
            except BaseException:
                self._cache.failed(changes)
                raise
            self.commits += 1
            if lease is not None:
                lease.taken = True
                if renewed is not None:
                    lease.expires = renewed
        self._cache.committed(changes, lambda row: as_loaded(row, written.get(id(row))))

    def sessions_with_runs_in(self, states: Collection[str]) -> list[str]:
        wanted = list(states)
        if not wanted:
            return []
        with self._guard:
            return [row[0] for row in self._db.execute(runs_in_sql(wanted, "?"), wanted)]

    @contextmanager
    def lock(
        self, session: str, *, wait: bool = True, clock: Clock | None = None
    ) -> Iterator[Lease]:
        deadline = time.monotonic() + (self.lock_wait_secs if wait else 0.0)
        with self._guard:
            thread_lock = self._thread_locks.setdefault(session, threading.Lock())
        got = (
            thread_lock.acquire(timeout=self.lock_wait_secs) if wait else thread_lock.acquire(False)
        )
        if not got:
            raise lock_not_had(session, self.lock_wait_secs)
        try:
            if self._lock_files is None:
                with self._leased(session, clock or SystemClock(), f"memory/{id(self)}") as lease:
                    yield lease
                return
            held = self._lock_files.lock(session, deadline)
            if held is None:
                raise lock_not_had(session, self.lock_wait_secs)
            try:
                with self._leased(session, clock or SystemClock(), held.identity) as lease:
                    yield lease
            finally:
                self._lock_files.unlock(held)
        finally:
            thread_lock.release()

    def take_over(
        self, session: str, *, clock: Clock | None = None
    ) -> AbstractContextManager[Lease]:
        return taken_over(self.lock, self._lease_alone, session, clock)

    def _leased(self, session: str, clock: Clock, lock: str) -> AbstractContextManager[Lease]:
        """While the lock is held: the session's lease, to be taken by the first commit,
        and the session's version as the record has it now, read once the lock is had,
        so a copy kept here is used only if nobody changed it (`cache.py`). Read when
        called; the lease is held while the context it gives is entered."""
        with self._guard:
            found = self._db.execute(_STAMP_AND_LEASE, (session, session)).fetchone()
        version, created, token, holder, expires, locked_by = found
        seen = None if token is None else Seen(token, holder, expires, locked_by == lock)
        lease = next_lease(session, seen, clock, self.lease_secs, lock)
        if not ended(seen):
            self._take_now(lease)  # from a live holder: fenced from this moment
        # Not given back by a write: the next holder of this lock proves it ended.
        return self._holdings.holding(lease, version, created)

    @contextmanager
    def _lease_alone(self, session: str, clock: Clock) -> Iterator[Lease]:
        """The session's lease without its lock (`take_over`): taken at once, in a commit
        of its own, so the worker holding the lock is fenced from now on; given back at
        the end, since no lock of the next holder can prove it ended."""
        with self._guard:
            found = self._db.execute(_STAMP_AND_LEASE, (session, session)).fetchone()
        version, created, token, holder, expires, _ = found
        seen = None if token is None else Seen(token, holder, expires)
        lease = lease_taken_over(session, seen, clock, self.lease_secs)
        self._take_now(lease)
        try:
            with self._holdings.holding(lease, version, created):
                yield lease
        finally:
            try:
                with self._guard:
                    self._db.execute(_GIVE_BACK_SQL, (session, lease.token, lease.holder))
            except sqlite3.Error:
                pass  # not given back: the next holder waits for it to expire

    def _take_now(self, lease: Lease) -> None:
        """Take the lease in a commit of its own: its last holder lives on, or may, and
        commits nothing from now on."""
        with self._guard:
            self._writes.execute("BEGIN IMMEDIATE")
            try:
                ours, renewed, _ = self._fence(lease, [])
            except BaseException:
                self._writes.execute("ROLLBACK")
                raise
            self._writes.execute("COMMIT" if ours else "ROLLBACK")
        if not ours:  # another worker took it since this lock read it
            raise SessionBusy(texts.lease_held(lease.session, "another worker", self.lease_secs))
        lease.taken = True
        if renewed is not None:
            lease.expires = renewed

    def _fence(self, lease: Lease, bump: list[str]) -> tuple[bool, float | None, list[str]]:
        """The first statement of a commit under a lease: whether the lease is ours, the
        expiry it wrote (None for none), and the sessions whose version is still to be
        moved on, of `bump`.

        The first commit takes the lease from the token read with the lock. A later one
        renews it once a third of its time has gone (as often as the heartbeat does), and
        otherwise only reads it: the commit holds the database's write lock from its
        BEGIN IMMEDIATE, so nobody takes the lease between that read and the commit, and
        a renewal would be one more page to make durable on every commit. That read is
        the version's move when the commit moves the lease's session alone (as a call's
        commits do): the session's version moves on only while the lease is ours, and
        when it does not (a session with no row yet), the lease is read alone.
        """
        until = lease.renewed_until()
        if not lease.taken:
            taken = self._writes.execute(
                _TAKE_SQL,
                (lease.session, lease.token, lease.holder, until, lease.lock, lease.seen_token),
            )
            return taken.rowcount == 1, until, bump
        if lease.expires - until >= -lease.secs / 3:
            held = (lease.session, lease.token, lease.holder)
            moved = bump == [lease.session] and self._moved_if_held(held)
            if moved:
                return True, None, []
            return self._db.execute(_HELD_SQL, held).fetchone() is not None, None, bump
        renewed = self._writes.execute(
            _FENCE_SQL, (until, lease.session, lease.token, lease.holder)
        )
        return renewed.rowcount == 1, until, bump

    def _moved_if_held(self, held: tuple[str, int, str]) -> bool:
        """The lease's session's version moved on, if the lease (session, token, holder)
        is held and the session has a row."""
        return self._writes.execute(_BUMP_HELD_SQL, (held[0], *held)).rowcount == 1

    def _renew_leases(self) -> None:
        leases = self._holdings.taken()  # one not taken: nothing written under it to keep
        with self._guard:
            for lease in leases:
                lease.expires = lease.renewed_until()
                self._writes.execute(_RENEW_SQL, (lease.expires, lease.session, lease.token))

    def close(self) -> None:
        self._heartbeat.stop()
        if self._lock_files is not None:
            self._lock_files.close()
        with self._guard:
            self._db.close()

    def _add_missing_columns(self) -> None:
        for table, column, default in ADDED_COLUMNS:
            present = {row[1] for row in self._db.execute(f'PRAGMA table_info("{table}")')}
            if column not in present:
                kind = _SQL_TYPES[TABLE_OF_NAME[table].kinds[column]]
                given = "" if default is None else f" DEFAULT {int(default)}"
                self._db.execute(f'ALTER TABLE "{table}" ADD COLUMN "{column}" {kind}{given}')

    def _select(self, row_type: type[Row], session: str) -> list[Row]:
        found = self._db.execute(_SELECTS[row_type], (session,))
        return [from_values(row_type, values) for values in found]


# The lease's statements (record/lease.py). The take matches no row once another worker
# took the lease after this one's lock read it, and the fence none once another took it.
_STAMP_AND_LEASE = (
    'SELECT s."version", s."created", l."token", l."holder", l."expires", l."lock" '
    'FROM (SELECT 1) LEFT JOIN "sessions" s ON s."session" = ? '
    'LEFT JOIN "leases" l ON l."session" = ?'
)
_TAKE_SQL = (
    'INSERT INTO "leases" ("session", "token", "holder", "expires", "lock") '
    'VALUES (?, ?, ?, ?, ?) ON CONFLICT ("session") DO UPDATE SET '
    '"token" = excluded."token", "holder" = excluded."holder", '
    '"expires" = excluded."expires", "lock" = excluded."lock" '
    'WHERE "leases"."token" = ?'
)
_FENCE_SQL = (
    'UPDATE "leases" SET "expires" = ? WHERE "session" = ? AND "token" = ? AND "holder" = ?'
)
_RENEW_SQL = 'UPDATE "leases" SET "expires" = ? WHERE "session" = ? AND "token" = ?'
_HELD_SQL = 'SELECT 1 FROM "leases" WHERE "session" = ? AND "token" = ? AND "holder" = ?'
# The session's version moved on while its lease is held: the fence and `_BUMP` in one.
_BUMP_HELD_SQL = f"{_BUMP} AND EXISTS ({_HELD_SQL})"
# A lease taken without the lock, given back (autocommit: its own transaction).
_GIVE_BACK_SQL = (
    'UPDATE "leases" SET "holder" = \'\', "expires" = 0 '
    'WHERE "session" = ? AND "token" = ? AND "holder" = ?'
)


def _may_move(
    row_type: type,
    rows: list[Any],
    values: list[list[Any]],
    session: str,
    known: set[tuple[type, Any]] | None,
) -> list[list[Any]]:
    """The column values of the rows a move may change: all of them, but for the rows the
    record already holds in `session` (a move of those would match nothing)."""
    if known is None:
        return values
    key = MOVABLE[row_type]
    return [
        written
        for row, written in zip(rows, values, strict=True)
        if row.session != session or (row_type, key(row)) not in known
    ]


def lock_folder(database: str) -> str:
    """Where a database's session locks live: a folder beside it, named after it."""
    real = os.path.realpath(database)
    return os.path.join(os.path.dirname(real), os.path.basename(real) + ".locks")


def open_operator_log(path: str, now: Callable[[], float]) -> OperatorLog:
    """The operator's log (`operator_log.py`) in the SQLite file at `path`."""
    db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    db.execute(
        "CREATE TABLE IF NOT EXISTS operator_actions (seq INTEGER PRIMARY KEY "
        "AUTOINCREMENT, at REAL, action TEXT, session TEXT, outcome TEXT, detail TEXT)"
    )
    return OperatorLog(db, "?", now)

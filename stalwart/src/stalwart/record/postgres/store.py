"""The `Store` on PostgreSQL (see the package's docstring): loads, commits, session
locks and leases, on the connections of `connections.py`, with the SQL of `sql.py`."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Collection, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from operator import attrgetter
from typing import Any, TypeVar

import psycopg
from psycopg import errors

from ... import texts
from ...clock import Clock, SystemClock
from ...errors import LeaseLost, RecordUnavailable, SessionBusy
from ..backend import (
    Holdings,
    by_table,
    cached_load,
    check_settings,
    lock_not_had,
    runs_in_sql,
    session_of,
    sessions_to_bump,
    taken_over,
)
from ..base import Changes, SessionRecord
from ..cache import SessionCache
from ..lease import LEASE_SECS, Heartbeat, Lease, Seen, ended, lease_taken_over, next_lease
from ..schema import (
    TABLE_OF,
    CallRow,
    MessageRow,
    RunRow,
    SessionRow,
    as_loaded,
    from_values,
    to_columns,
)
from .connections import (
    Connections,
    end_failed_transaction,
    one_line,
    reachable,
    session_lock_key,
    unlock,
)
from .migrations import migrate
from .sql import (
    BUMP,
    GIVE_BACK_FUNCTION,
    LOAD_SQL,
    LOCK_AND_STAMP,
    REAL_AT,
    RENEW_SQL,
    STAMP_AND_LEASE,
    TAKE_FROM_SQL,
    TAKE_SQL,
    fence_of,
    fence_values,
    one_statement,
    upsert_sql,
)


class PostgresStore:
    """The `Store` protocol on a PostgreSQL database."""

    def __init__(
        self,
        url: str,
        *,
        lock_wait_secs: float = 30.0,
        connect_wait_secs: float = 10.0,
        lease_secs: float = LEASE_SECS,
    ) -> None:
        check_settings(lock_wait_secs, lease_secs)
        self.url = url
        self.lock_wait_secs = lock_wait_secs
        self.lease_secs = lease_secs
        self.commits = 0
        self._counter = threading.Lock()
        self._heartbeat = Heartbeat(lease_secs / 3, self._renew_leases)
        self._connections = Connections(
            url, lock_wait_secs=lock_wait_secs, connect_wait_secs=connect_wait_secs
        )
        self._cache = SessionCache()
        self._holdings: Holdings[_Held] = Holdings(
            attrgetter("lease"), self._heartbeat, self._cache
        )
        with reachable(), self._connections.borrowed() as connection:
            migrate(connection)

    def load(self, session: str) -> SessionRecord | None:
        return cached_load(self._cache, session, self._load)

    def _load(self, session: str) -> SessionRecord | None:
        def read(connection: psycopg.Connection[Any]) -> Any:
            with psycopg.Cursor(connection) as cursor:
                try:
                    cursor.execute(LOAD_SQL, {"session": session})
                    return cursor.fetchone()
                except BaseException:
                    end_failed_transaction(connection)
                    raise

        found = self._on_a_live_connection(read)
        assert found is not None  # a SELECT of scalar subqueries gives one row
        sessions, runs, calls, messages = found
        if not sessions:
            return None
        return SessionRecord(
            session=_rows(SessionRow, sessions)[0],
            runs=tuple(_rows(RunRow, runs)),
            calls=tuple(_rows(CallRow, calls)),
            messages=tuple(_rows(MessageRow, messages)),
        )

    def commit(self, changes: Changes) -> None:
        if not changes:
            return
        session = session_of(changes)
        lease = self._holdings.lease(session)
        statements: list[str] = []
        values: list[Any] = []
        written: dict[int, list[Any]] = {}  # each row's column values, by the row's id
        for row_type, rows in by_table(changes):
            latest = _latest_by_key(row_type, rows)
            if not latest:
                continue
            columns = [to_columns(row) for row in latest]
            written.update(
                (id(row), list(c.values())) for row, c in zip(latest, columns, strict=True)
            )
            statements.append(upsert_sql(row_type))
            values.append(_rows_json(columns))
        bumped = sessions_to_bump(changes)
        if bumped:
            statements.insert(0, BUMP + " AND EXISTS (SELECT FROM fence)")
            values.insert(0, bumped)
        fence = fence_of(lease)
        if lease is not None:  # the fence's values come first, as the fence does
            values[:0] = fence_values(lease)
        sql = one_statement(fence, tuple(statements))

        def write(connection: psycopg.Connection[Any]) -> int:
            with psycopg.Cursor(connection) as cursor:
                cursor.execute(sql, values)
                return cursor.rowcount

        # Every upsert reads the fence: none writes a row once another worker took the
        # lease, and the last one's count says so. Sent again on a live connection when
        # the first was lost: the same rows, the same fence, so a commit that did land
        # before its answer was lost lands the same again.
        try:
            if self._on_a_live_connection(write) == 0:
                assert lease is not None
                raise LeaseLost(texts.lease_lost(session, lease.token))
        except BaseException:
            self._cache.failed(changes)
            raise
        with self._counter:
            self.commits += 1
        if lease is not None:
            lease.taken = True
        self._cache.committed(changes, lambda row: as_loaded(row, written.get(id(row))))

    def sessions_with_runs_in(self, states: Collection[str]) -> list[str]:
        wanted = list(states)
        if not wanted:
            return []
        sql = runs_in_sql(wanted, "%s")
        with reachable(), self._connection() as connection:
            return [row[0] for row in connection.execute(sql, wanted).fetchall()]

    @contextmanager
    def lock(
        self, session: str, *, wait: bool = True, clock: Clock | None = None
    ) -> Iterator[Lease]:
        key = session_lock_key(session)
        connection, found = self._lock_statement(key, session, wait)
        try:
            lease = self._lease(connection, session, clock or SystemClock(), found)
        except psycopg.OperationalError as error:
            connection.close()
            self._connections.give_back(connection)
            raise RecordUnavailable(texts.record_unavailable(one_line(error))) from error
        except SessionBusy:
            unlock(connection, key)
            self._connections.give_back(connection)
            raise
        except BaseException:
            connection.close()
            self._connections.give_back(connection)
            raise
        held = _Held(connection, lease)
        try:
            with self._holdings.holding(held, found[0], found[1]):
                yield lease
        finally:
            unlock(held.connection, key, lease)
            self._connections.give_back(held.connection)

    def take_over(
        self, session: str, *, clock: Clock | None = None
    ) -> AbstractContextManager[Lease]:
        return taken_over(self.lock, self._lease_alone, session, clock)

    @contextmanager
    def _lease_alone(self, session: str, clock: Clock) -> Iterator[Lease]:
        """The session's lease without its lock (`take_over`), on a connection of its own
        holding no advisory lock: taken at once, so the worker holding the lock is fenced
        from now on, and given back at the end, as an unlock gives a lease back."""
        with reachable():
            connection = self._connections.take()
        try:
            with reachable():
                found = connection.execute(STAMP_AND_LEASE, (session, session)).fetchone()
                assert found is not None  # a SELECT from (SELECT 1) gives one row
                version, created, token, holder, expires, _ = found
                seen = None if token is None else Seen(int(token), holder, float(expires))
                lease = lease_taken_over(session, seen, clock, self.lease_secs)
                try:
                    taken = connection.execute(TAKE_SQL, fence_values(lease)).fetchone()
                except errors.LockNotAvailable as error:  # its row locked past lock_timeout
                    raise SessionBusy(
                        texts.lease_held(session, lease.taken_from, self.lease_secs)
                    ) from error
            if taken is None:  # another worker took it since it was read
                raise SessionBusy(texts.lease_held(session, "another worker", self.lease_secs))
            lease.taken = True
        except BaseException:
            self._connections.give_back(connection)
            raise
        try:
            with self._holdings.holding(_Held(connection, lease), version, created):
                yield lease
        finally:
            try:
                connection.execute(
                    f'SELECT "{GIVE_BACK_FUNCTION}"(%s, %s, %s)',
                    (session, lease.token, lease.holder),
                )
            except psycopg.Error:
                connection.close()  # not given back: the next holder waits for it to expire
            self._connections.give_back(connection)

    def _lock_statement(
        self, key: int, session: str, wait: bool
    ) -> tuple[psycopg.Connection[Any], tuple[Any, ...]]:
        """The lock had, on a connection of its own, and what the statement that took it
        read (`STAMP_AND_LEASE`, and this backend's name).

        The connection is not checked before the lock statement: that statement is its
        check, one round trip instead of two. A pooled connection a restart left stale
        fails it before anything is taken (its lock, if any, went with it), and the lock
        is tried once more on a connection checked first."""
        for checked in (False, True):
            connection = self._connections.take(checked=checked)
            try:
                with psycopg.Cursor(connection) as cursor:
                    cursor.execute(LOCK_AND_STAMP, (key, session, wait))
                    found = cursor.fetchone()
                assert found is not None  # the function gives one row
                got, *read = found
                if not got:
                    raise errors.LockNotAvailable("held by another worker")
                return connection, (*read, self._connections.own_backend(connection))
            except errors.LockNotAvailable as error:
                self._connections.give_back(connection)
                raise lock_not_had(session, self.lock_wait_secs) from error
            except psycopg.OperationalError as error:
                connection.close()
                self._connections.give_back(connection)
                if checked:
                    raise RecordUnavailable(texts.record_unavailable(one_line(error))) from error
            except BaseException:
                connection.close()
                self._connections.give_back(connection)
                raise
        raise AssertionError("unreachable")

    def _lease(
        self, connection: psycopg.Connection[Any], session: str, clock: Clock, found: Any
    ) -> Lease:
        """The session's lease (record/lease.py) from what the lock read: to be taken by
        the first commit when it ended, taken now from a holder that may live on, or
        SessionBusy while another's is live."""
        _, _, token, holder, expires, lock_alive, backend = found
        seen = None if token is None else Seen(int(token), holder, float(expires), lock_alive)
        lease = next_lease(session, seen, clock, self.lease_secs, str(backend))
        if not ended(seen):  # from a holder that may live on: fenced from this moment
            assert seen is not None
            taken = connection.execute(
                TAKE_FROM_SQL,
                (lease.holder, lease.expires, lease.lock, session, lease.seen_token),
            ).fetchone()
            if taken is None:
                raise SessionBusy(
                    texts.lease_held(session, seen.holder, seen.expires - clock.now())
                )
            lease.taken = True
        return lease

    def _renew_leases(self) -> None:
        leases = self._holdings.taken()
        if not leases:
            return
        with self._connections.borrowed() as connection:
            for lease in leases:
                lease.expires = lease.renewed_until()
                connection.execute(RENEW_SQL, (lease.expires, lease.session, lease.token))

    def _on_a_live_connection(
        self,
        act: Callable[[psycopg.Connection[Any]], _T],
        *,
        held: _Held | None = None,
        tries: int = 3,
    ) -> _T:
        """`act` on the held lock's connection (or a borrowed one), once more on a new
        connection when that one was lost (a dropped connection, a restarted server): the
        lease, not the connection, says who may write. RecordUnavailable when none works."""
        if held is None:
            stack = self._holdings.stack()
            held = stack[-1] if stack else None
        for attempt in range(tries):
            try:
                with reachable():
                    if held is not None and not held.connection.broken:
                        return act(held.connection)
                    with self._connections.borrowed() as connection:
                        return act(connection)
            except RecordUnavailable:
                if attempt + 1 == tries:
                    raise
        raise AssertionError("unreachable")

    def close(self) -> None:
        self._heartbeat.stop()
        self._connections.close()

    @contextmanager
    def _connection(self) -> Iterator[psycopg.Connection[Any]]:
        """The connection of the lock this thread holds, or a borrowed one."""
        stack = self._holdings.stack()
        if stack and not stack[-1].connection.broken:
            yield stack[-1].connection
            return
        with self._connections.borrowed() as connection:
            yield connection


@dataclass(eq=False)
class _Held:
    """A session lock this thread holds: its connection and the lease taken under it."""

    connection: psycopg.Connection[Any]
    lease: Lease


_T = TypeVar("_T")


# A float goes by its shortest repr, which PostgreSQL reads back to the same double;
# JSON columns are already text, and go as JSON strings.
_ROWS = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def _rows_json(rows: list[dict[str, Any]]) -> str:
    try:
        return _ROWS.encode(rows)
    except (TypeError, ValueError) as error:  # what psycopg says of a value it cannot send
        raise psycopg.ProgrammingError(f"cannot store this value: {error}") from error


def _latest_by_key(row_type: type, rows: list[Any]) -> list[Any]:
    """The rows, the later of two with one key only: one INSERT may not update a row twice,
    and upserting them one by one would leave the later."""
    key = attrgetter(*TABLE_OF[row_type].key)
    return list({key(row): row for row in rows}.values())


def _rows(row_type: type, arrays: list[list[Any]]) -> list[Any]:
    """Rows from their JSON arrays of column values (JSON columns still text)."""
    real_at = REAL_AT[row_type]
    rows: list[Any] = []
    for values in arrays:
        for at in real_at:
            if values[at] is not None:
                values[at] = float(values[at])
        rows.append(from_values(row_type, values))
    return rows

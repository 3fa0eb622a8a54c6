"""The record on PostgreSQL, for many worker processes serving one agent's sessions.

Chosen by a URL (`record: postgresql://user@host:port/db`); needs psycopg 3 (the
`postgres` extra).

Locking a session takes a session-level advisory lock (`pg_advisory_lock`) on a
connection of its own, keyed by 64 bits of the session's SHA-256. It needs no row, so a
session not yet recorded can be locked: the server releases it when the holder's
connection ends, so a worker that dies (its socket closed by the kernel, or found dead by
the server's TCP keepalives, set here to about a minute) frees the session for the next.
A lock that cannot be had within `lock_wait_secs` raises `SessionBusy` (the server's
`lock_timeout`). The lock and the read of the session's version and lease are one
statement, a call of the record's own function `stalwart_lock_and_stamp` (made with the
tables), so the server prepares it and reads after the lock is had. The lock can also
end while its holder lives on (a dropped connection, a failover, a restart): under the
lock the holder takes the session's lease
(`record/lease.py`), and every commit is fenced by it, the fence the first WITH query of
the commit's one statement, read by every upsert of it.

While a thread holds a lock, its loads and commits go through the lock's own connection;
once that is lost, through a new one (the lease, not the connection, says who may
write: `_on_a_live_connection`). Outside a lock, an operation borrows a connection from a
`psycopg_pool` pool and checks it first; a lock's own statement is its connection's check,
tried once more on a checked connection when it fails. So after a server restart no stale
connection reaches a load, a commit or a lock (a `connect_wait_secs` bound on waiting for
one). A database that cannot be reached is
`RecordUnavailable` (code `record_unavailable`), never the driver's exception; since the
in-flight record is committed before every send, nothing is sent that it does not hold.

Each load and each commit is one round trip. A load is ONE statement reading the
session's four tables, each as a JSON array of its rows, so from one snapshot; its
parameter is bound by the server, and the connection prepares it. A commit is ONE
statement, all or nothing: one INSERT per table, the first ones as data-modifying WITH
queries, each table's rows one JSON parameter bound by the server.
Its text is the same for every commit of the same tables, so psycopg converts it once and
the server prepares it. It counts once. JSON columns are stored as the same canonical
text SQLite stores, so both backends hand back equal values, key order included.
"""

from __future__ import annotations

import functools
import hashlib
import json
import threading
from collections.abc import Callable, Collection, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from operator import attrgetter
from typing import Any, TypeVar

try:
    import psycopg
    from psycopg import errors
    from psycopg.pq import TransactionStatus
    from psycopg_pool import ConnectionPool, PoolClosed, PoolTimeout
except ImportError as missing:  # psycopg comes with the extra, not with stalwart itself
    raise ImportError(
        "a postgresql:// record needs psycopg 3: pip install 'stalwart[postgres]'"
    ) from missing

from .. import texts
from ..clock import Clock, SystemClock
from ..errors import LeaseLost, RecordUnavailable, SessionBusy
from .base import Changes, SessionRecord
from .cache import MISS, SessionCache
from .lease import (
    LEASE_SECS,
    Heartbeat,
    Lease,
    Seen,
    ended,
    holder_ended,
    lease_taken_over,
    next_lease,
)
from .operator_log import OperatorLog
from .schema import (
    ADDED_COLUMNS,
    TABLE_OF,
    TABLES,
    CallRow,
    MessageRow,
    RunRow,
    SessionRow,
    as_loaded,
    column_names,
    from_values,
    to_columns,
)

_SQL_TYPES = {
    "text": "text",
    "int": "bigint",
    "real": "double precision",
    "bool": "boolean",
    "json": "text",
}
# Serializes CREATE TABLE IF NOT EXISTS across workers starting at once, which can
# otherwise both try to create the same table type and one fail.
_DDL_LOCK_KEY = 0x5354_414C_5741_5254  # "STALWART"
_LOG_DDL_LOCK_KEY = 0x5354_4F50_4C4F_4721  # "STOPLOG!": the operator's log's table
_KEEPALIVES = (
    "SET tcp_keepalives_idle = 30; SET tcp_keepalives_interval = 10; SET tcp_keepalives_count = 3"
)
_POOL_MAX = 64  # connections: one per session lock held at once, and a few to borrow


def _columns(row_type: type) -> str:
    return ", ".join(f'"{name}"' for name in column_names(row_type))


_LOAD_ORDER: tuple[tuple[type, str | None], ...] = (
    (SessionRow, None),
    (RunRow, "number"),
    (CallRow, "seq"),
    (MessageRow, "seq"),
)


def _table_rows_json(row_type: type, order: str | None) -> str:
    """A table's rows of the session as one JSON array of arrays, in column order.

    A double goes as its text (as PostgreSQL writes a double, read back exactly by
    `float`): as a JSON number, a whole value would come back as an int.
    """
    kinds = TABLE_OF[row_type].kinds
    columns = ", ".join(
        f'"{name}"::text' if kinds[name] == "real" else f'"{name}"'
        for name in column_names(row_type)
    )
    arranged = f' ORDER BY "{order}"' if order else ""
    return (
        f"(SELECT coalesce(json_agg(json_build_array({columns}){arranged}), '[]') "
        f'FROM "{TABLE_OF[row_type].name}" WHERE "session" = %(session)s)'
    )


# The four tables in ONE statement: one round trip and one snapshot (a statement reads
# one, even in READ COMMITTED), its parameter bound by the server, so psycopg prepares it
# and the server neither parses nor plans it again. Four statements in one query, bound
# on the client, were parsed and planned on every load, which cost more than the trip.
_LOAD_SQL = "SELECT " + ", ".join(
    _table_rows_json(row_type, order) for row_type, order in _LOAD_ORDER
)
# Where a table's doubles are, given as text.
_REAL_AT = {
    row_type: tuple(
        at for at, kind in enumerate(TABLE_OF[row_type].kinds.values()) if kind == "real"
    )
    for row_type, _ in _LOAD_ORDER
}


_BUMP = 'UPDATE "sessions" SET "version" = "version" + 1 WHERE "session" = ANY(%s::text[])'
# What the lock's function reads once the lock is had (`_LOCK_FUNCTION_BODY`): the
# session's version, its lease, and whether the backend the lease names as its lock
# still runs (then it let the lock go: this one has it). A backend is
# named by its pid and its start, so a pid used again is another; the one named is looked
# up by its pid alone (pg_stat_get_activity(pid)), not found among every backend's row,
# and only for a lease not given back (`lease.ended` needs no more of one given back):
# reading the server's backend status copies every backend's entry, a cost that grows with
# the workers.
_BACKEND = "format('backend/%%s/%%s', {0}.pid, extract(epoch FROM {0}.backend_start))"
_STAMP_AND_LEASE = (
    'SELECT s."version", s."created"::text, l."token", l."holder", l."expires", '
    "CASE WHEN l.\"holder\" <> '' AND l.\"lock\" ~ '^backend/[0-9]+/' THEN EXISTS (SELECT FROM "
    "pg_stat_get_activity(split_part(l.\"lock\", '/', 2)::int) a WHERE "
    + _BACKEND.format("a")
    + ' = l."lock") ELSE false END '
    'FROM (SELECT 1) one LEFT JOIN "sessions" s ON s."session" = %s '
    'LEFT JOIN "leases" l ON l."session" = %s'
)
# This backend's own name as a lease's lock, read once per connection (`_configure`).
_OWN_BACKEND = (
    "SELECT " + _BACKEND.format("me").replace("%%", "%") + " "
    "FROM pg_stat_get_activity(pg_backend_pid()) me"
)
# The lock and the read as ONE statement, a function of the record's own: a statement's
# snapshot is taken when it starts, before its lock is had, but a VOLATILE function's
# statements each take their own, so the read inside sees every commit made up to the
# lock. One statement is bound and prepared by the server (two in one query could only be
# sent with their values quoted into the text, then parsed and planned anew by the
# server on every lock, about as much of its CPU as the commits' own work), and the
# function's own query is planned once per connection. `got` is false when the lock was
# not had at once (`wait` false), and then nothing is read.
_LOCK_FUNCTION = "stalwart_lock_and_stamp"
_LOCK_FUNCTION_BODY = (
    "\n#variable_conflict use_column\n"
    "BEGIN\n"
    "  IF wanted_wait THEN\n"
    "    PERFORM pg_advisory_lock(wanted_key);\n"
    "  ELSIF NOT pg_try_advisory_lock(wanted_key) THEN\n"
    "    RETURN QUERY SELECT false, NULL::bigint, NULL::text, NULL::bigint, NULL::text,\n"
    "      NULL::double precision, false;\n"
    "    RETURN;\n"
    "  END IF;\n"
    "  RETURN QUERY SELECT true, "
    + _STAMP_AND_LEASE.removeprefix("SELECT ")
    .replace("= %s", "= wanted_session")
    .replace("%%", "%")
    + ";\n"
    "END\n"
)
_LOCK_AND_STAMP = f'SELECT * FROM "{_LOCK_FUNCTION}"(%s, %s, %s)'
# The lease given back, its commit not waited for on the server's disk (see `_unlock`);
# a function so its UPDATE is planned once per connection, not with every unlock.
_GIVE_BACK_FUNCTION = "stalwart_give_back"
_GIVE_BACK_FUNCTION_BODY = (
    "\nBEGIN\n"
    "  PERFORM set_config('synchronous_commit', 'off', true);\n"
    '  UPDATE "leases" SET "holder" = \'\', "expires" = 0\n'
    '  WHERE "session" = wanted_session AND "token" = wanted_token\n'
    '    AND "holder" = wanted_holder;\n'
    "END\n"
)
# The record's functions, by name: what CREATE OR REPLACE says before the body, and the
# body. CREATE OR REPLACE cannot change what a function returns: one that returns other
# columns must get another name.
_FUNCTIONS = {
    _LOCK_FUNCTION: (
        "(wanted_key bigint, wanted_session text, wanted_wait boolean) "
        "RETURNS TABLE (got boolean, version bigint, created text, token bigint, holder text, "
        "expires double precision, lock_ended boolean) LANGUAGE plpgsql VOLATILE",
        _LOCK_FUNCTION_BODY,
    ),
    _GIVE_BACK_FUNCTION: (
        "(wanted_session text, wanted_token bigint, wanted_holder text) "
        "RETURNS void LANGUAGE plpgsql VOLATILE",
        _GIVE_BACK_FUNCTION_BODY,
    ),
}


def ddl() -> list[str]:
    """CREATE statements for every table of the schema.

    An index whose column leads the primary key (messages: session, seq) would repeat the
    key's own index, one more entry written for every row, and is not made (one a record
    made before has is dropped: `_REPEATED_INDEXES`)."""
    statements: list[str] = []
    for table in TABLES:
        columns = ", ".join(f'"{name}" {_SQL_TYPES[kind]}' for name, kind in table.kinds.items())
        key = ", ".join(f'"{name}"' for name in table.key)
        statements.append(
            f'CREATE TABLE IF NOT EXISTS "{table.name}" ({columns}, PRIMARY KEY ({key}))'
        )
        for column in table.index:
            if table.key[0] == column:
                continue
            statements.append(
                f'CREATE INDEX IF NOT EXISTS "{table.name}_{column}" ON "{table.name}" ("{column}")'
            )
    return statements


# The indexes records made before had that repeat their table's key (see `ddl`).
_REPEATED_INDEXES = tuple(
    f"{table.name}_{column}" for table in TABLES for column in table.index if table.key[0] == column
)


def _make_functions(connection: psycopg.Connection[Any]) -> None:
    """The record's functions, each made (or replaced) only when it is not there as this
    version writes it (its body, and VOLATILE), so opening a store does not make every
    backend compile them again."""
    rows = connection.execute(
        "SELECT p.proname, p.prosrc, p.provolatile FROM pg_proc p "
        "JOIN pg_namespace n ON n.oid = p.pronamespace "
        "WHERE p.proname = ANY(%s) AND n.nspname = current_schema()",
        (list(_FUNCTIONS),),
    ).fetchall()
    found = {name: (body, volatility) for name, body, volatility in rows}
    for name, (signature, body) in _FUNCTIONS.items():
        if found.get(name) != (body, "v"):
            connection.execute(
                f'CREATE OR REPLACE FUNCTION "{name}"{signature} AS $stalwart${body}$stalwart$'
            )


def _drop_repeated_indexes(connection: psycopg.Connection[Any]) -> None:
    """Drop an index that repeats its table's key, only when there is one: a DROP locks
    the table against every worker."""
    found = connection.execute(
        "SELECT indexname FROM pg_indexes "
        "WHERE schemaname = current_schema() AND indexname = ANY(%s)",
        (list(_REPEATED_INDEXES),),
    ).fetchall()
    for (name,) in found:
        connection.execute(f'DROP INDEX IF EXISTS "{name}"')


def added_column_ddl(table: str, column: str, default: int | None) -> str:
    """ALTER statement giving a record made before `column` was added that column."""
    kind = next(t for t in TABLES if t.name == table).kinds[column]
    text = f'ALTER TABLE "{table}" ADD COLUMN IF NOT EXISTS "{column}" {_SQL_TYPES[kind]}'
    if default is None:
        return text
    literal = ("true" if default else "false") if kind == "bool" else str(int(default))
    return f"{text} DEFAULT {literal}"


def session_lock_key(session: str) -> int:
    """The advisory lock key of a session: a signed 64-bit slice of its SHA-256."""
    digest = hashlib.sha256(session.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


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
        if lock_wait_secs <= 0:
            raise ValueError(f"lock_wait_secs must be more than 0; got {lock_wait_secs!r}")
        if not lease_secs > 0:
            raise ValueError(f"lease_secs must be more than 0; got {lease_secs!r}")
        self.url = url
        self.lock_wait_secs = lock_wait_secs
        self.lease_secs = lease_secs
        self.commits = 0
        self._counter = threading.Lock()
        self._held = threading.local()
        self._leases: dict[int, Lease] = {}  # every lease held now, by id, for the heartbeat
        self._backends: dict[int, str] = {}  # each connection's backend name, by its pid
        self._heartbeat = Heartbeat(lease_secs / 3, self._renew_leases)
        # Connections are checked as they are taken (`_take`), or by the lock's own
        # statement (`_lock_statement`), so after a server restart a stale one is
        # replaced, never used by a load, a commit or a lock.
        self._pool: ConnectionPool[psycopg.Connection[Any]] = ConnectionPool(
            url,
            min_size=1,
            max_size=_POOL_MAX,
            kwargs={"autocommit": True, "cursor_factory": psycopg.ClientCursor},
            configure=self._configure,
            timeout=connect_wait_secs,
            name="stalwart-record",
            open=False,
        )
        self._pool.open(wait=False)
        self._cache = SessionCache()
        with _reachable(), self._borrowed() as connection, connection.transaction():
            connection.execute("SELECT pg_advisory_xact_lock(%s)", (_DDL_LOCK_KEY,))
            for statement in ddl():
                connection.execute(statement)
            _make_functions(connection)
            _drop_repeated_indexes(connection)
            present = set(
                connection.execute(
                    "SELECT table_name, column_name FROM information_schema.columns "
                    "WHERE table_schema = current_schema()"
                ).fetchall()
            )
            for table, column, default in ADDED_COLUMNS:
                # Only when missing: ALTER TABLE locks the table against every worker.
                if (table, column) not in present:
                    connection.execute(added_column_ddl(table, column, default))

    def load(self, session: str) -> SessionRecord | None:
        kept = self._cache.get(session)  # current, by the version read with the lock
        if kept is not MISS:
            return kept  # type: ignore[return-value]  # a SessionRecord or None
        record = self._load(session)
        self._cache.loaded(session, record)
        return record

    def _load(self, session: str) -> SessionRecord | None:
        def read(connection: psycopg.Connection[Any]) -> Any:
            with psycopg.Cursor(connection) as cursor:
                try:
                    cursor.execute(_LOAD_SQL, {"session": session})
                    return cursor.fetchone()
                except BaseException:
                    _end_failed_transaction(connection)
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
        session = _session_of(changes)
        lease = self._lease_held(session)
        statements: list[str] = []
        values: list[Any] = []
        written: dict[int, list[Any]] = {}  # each row's column values, by the row's id
        for row_type, rows in _by_table(changes):
            latest = _latest_by_key(row_type, rows)
            if not latest:
                continue
            columns = [to_columns(row) for row in latest]
            written.update(
                (id(row), list(c.values())) for row, c in zip(latest, columns, strict=True)
            )
            statements.append(_upsert_sql(row_type))
            values.append(_rows_json(columns))
        # Every commit moves on the version of each session it touches; a session row it
        # upserts has its version moved by the upsert itself (or written, if it is new).
        upserted = {row.session for row in changes.sessions}
        bumped = [s for s in dict.fromkeys(r.session for r in changes.rows()) if s not in upserted]
        if bumped:
            statements.insert(0, _BUMP + " AND EXISTS (SELECT FROM fence)")
            values.insert(0, bumped)
        fence = _fence_of(lease)
        if lease is not None:  # the fence's values come first, as the fence does
            values[:0] = _fence_values(lease)
        sql = _one_statement(fence, tuple(statements))

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
        marks = ", ".join("%s" for _ in wanted)
        sql = f'SELECT DISTINCT "session" FROM "runs" WHERE "state" IN ({marks}) ORDER BY 1'
        with _reachable(), self._connection() as connection:
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
            self._give_back(connection)
            raise RecordUnavailable(texts.record_unavailable(_one_line(error))) from error
        except SessionBusy:
            _unlock(connection, key)
            self._give_back(connection)
            raise
        except BaseException:
            connection.close()
            self._give_back(connection)
            raise
        held = _Held(connection, lease)
        try:
            with self._holding(held, found[0], found[1]):
                yield lease
        finally:
            _unlock(held.connection, key, lease)
            self._give_back(held.connection)

    @contextmanager
    def take_over(self, session: str, *, clock: Clock | None = None) -> Iterator[Lease]:
        """`lock`, or, when the lock is not had within `lock_wait_secs` (a worker that
        hangs holds it), the session's lease alone once it may be taken (see `Store`)."""
        clock = clock or SystemClock()
        with ExitStack() as held:
            try:
                lease = held.enter_context(self.lock(session, clock=clock))
            except SessionBusy:
                lease = held.enter_context(self._lease_alone(session, clock))
            yield lease

    @contextmanager
    def _lease_alone(self, session: str, clock: Clock) -> Iterator[Lease]:
        """The session's lease without its lock (`take_over`), on a connection of its own
        holding no advisory lock: taken at once, so the worker holding the lock is fenced
        from now on, and given back at the end, as an unlock gives a lease back."""
        with _reachable():
            connection = self._take()
        try:
            with _reachable():
                found = connection.execute(_STAMP_AND_LEASE, (session, session)).fetchone()
                assert found is not None  # a SELECT from (SELECT 1) gives one row
                version, created, token, holder, expires, _ = found
                seen = None if token is None else Seen(int(token), holder, float(expires))
                lease = lease_taken_over(session, seen, clock, self.lease_secs)
                try:
                    taken = connection.execute(_TAKE_SQL, _fence_values(lease)).fetchone()
                except errors.LockNotAvailable as error:  # its row locked past lock_timeout
                    raise SessionBusy(
                        texts.lease_held(session, lease.taken_from, self.lease_secs)
                    ) from error
            if taken is None:  # another worker took it since it was read
                raise SessionBusy(texts.lease_held(session, "another worker", self.lease_secs))
            lease.taken = True
        except BaseException:
            self._give_back(connection)
            raise
        try:
            with self._holding(_Held(connection, lease), version, created):
                yield lease
        finally:
            try:
                connection.execute(
                    f'SELECT "{_GIVE_BACK_FUNCTION}"(%s, %s, %s)',
                    (session, lease.token, lease.holder),
                )
            except psycopg.Error:
                connection.close()  # not given back: the next holder waits for it to expire
            self._give_back(connection)

    @contextmanager
    def _holding(self, held: _Held, version: int | None, created: Any) -> Iterator[None]:
        """`held`'s lease held by this thread: its commits fenced by it, on its connection,
        the heartbeat renewing it, and the session's kept copy used at the version read
        with it."""
        session, lease = held.lease.session, held.lease
        stack = self._held_stack()
        stack.append(held)
        with self._counter:
            self._leases[id(lease)] = lease
        self._heartbeat.start()
        self._cache.locked(session, None if version is None else (version, float(created)))
        try:
            yield
        finally:
            self._cache.released(session)
            stack.remove(held)
            with self._counter:
                self._leases.pop(id(lease), None)
            holder_ended(lease.holder)

    def _lock_statement(
        self, key: int, session: str, wait: bool
    ) -> tuple[psycopg.Connection[Any], tuple[Any, ...]]:
        """The lock had, on a connection of its own, and what the statement that took it
        read (`_STAMP_AND_LEASE`, and this backend's name).

        The connection is not checked before the lock statement: that statement is its
        check, one round trip instead of two. A pooled connection a restart left stale
        fails it before anything is taken (its lock, if any, went with it), and the lock
        is tried once more on a connection checked first."""
        for checked in (False, True):
            connection = self._take(checked=checked)
            try:
                with psycopg.Cursor(connection) as cursor:
                    cursor.execute(_LOCK_AND_STAMP, (key, session, wait))
                    found = cursor.fetchone()
                assert found is not None  # the function gives one row
                got, *read = found
                if not got:
                    raise errors.LockNotAvailable("held by another worker")
                return connection, (*read, self._own_backend(connection))
            except errors.LockNotAvailable as error:
                self._give_back(connection)
                raise SessionBusy(
                    f"session {session!r} is being advanced by another worker "
                    f"(waited {self.lock_wait_secs:g}s)"
                ) from error
            except psycopg.OperationalError as error:
                connection.close()
                self._give_back(connection)
                if checked:
                    raise RecordUnavailable(texts.record_unavailable(_one_line(error))) from error
            except BaseException:
                connection.close()
                self._give_back(connection)
                raise
        raise AssertionError("unreachable")

    def _own_backend(self, connection: psycopg.Connection[Any]) -> str:
        name = self._backends.get(connection.info.backend_pid)
        if name is None:  # a connection made before this store configured it
            name = self._read_own_backend(connection)
        return name

    def _read_own_backend(self, connection: psycopg.Connection[Any]) -> str:
        found = connection.execute(_OWN_BACKEND).fetchone()
        assert found is not None  # every backend sees itself
        name = str(found[0])
        with self._counter:
            self._backends[connection.info.backend_pid] = name
        return name

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
                _TAKE_FROM_SQL,
                (lease.holder, lease.expires, lease.lock, session, lease.seen_token),
            ).fetchone()
            if taken is None:
                raise SessionBusy(
                    texts.lease_held(session, seen.holder, seen.expires - clock.now())
                )
            lease.taken = True
        return lease

    def _renew_leases(self) -> None:
        with self._counter:
            leases = [lease for lease in self._leases.values() if lease.taken]
        if not leases:
            return
        with self._borrowed() as connection:
            for lease in leases:
                lease.expires = lease.renewed_until()
                connection.execute(_RENEW_SQL, (lease.expires, lease.session, lease.token))

    def _lease_held(self, session: str) -> Lease | None:
        for held in reversed(self._held_stack()):
            if held.lease.session == session:
                return held.lease
        return None

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
            stack = self._held_stack()
            held = stack[-1] if stack else None
        for attempt in range(tries):
            try:
                with _reachable():
                    if held is not None and not held.connection.broken:
                        return act(held.connection)
                    with self._borrowed() as connection:
                        return act(connection)
            except RecordUnavailable:
                if attempt + 1 == tries:
                    raise
        raise AssertionError("unreachable")

    def close(self) -> None:
        self._heartbeat.stop()
        self._pool.close()

    def _configure(self, connection: psycopg.Connection[Any]) -> None:
        connection.execute(f"{_KEEPALIVES}; SET lock_timeout = {int(self.lock_wait_secs * 1000)}")
        # A pid the server gives again is another backend: its name is read anew here.
        self._read_own_backend(connection)

    @contextmanager
    def _connection(self) -> Iterator[psycopg.Connection[Any]]:
        """The connection of the lock this thread holds, or a borrowed one."""
        stack = self._held_stack()
        if stack and not stack[-1].connection.broken:
            yield stack[-1].connection
            return
        with self._borrowed() as connection:
            yield connection

    @contextmanager
    def _borrowed(self) -> Iterator[psycopg.Connection[Any]]:
        connection = self._take()
        try:
            yield connection
        finally:
            self._give_back(connection)

    def _take(self, *, checked: bool = True) -> psycopg.Connection[Any]:
        """A connection from the pool; `checked`, one that answered an empty query first,
        so after a server restart no stale one reaches a load or a commit (a stale one is
        dropped and another taken, while the pool has any to give)."""
        for _ in range(_POOL_MAX + 1):
            try:
                connection = self._pool.getconn()
            except PoolClosed:
                raise RuntimeError("this PostgresStore is closed") from None
            except PoolTimeout as error:
                raise RecordUnavailable(texts.record_unavailable(_one_line(error))) from error
            if not checked:
                return connection
            try:
                ConnectionPool.check_connection(connection)
            except Exception:
                connection.close()
                self._give_back(connection)
                continue
            except BaseException:
                self._give_back(connection)
                raise
            return connection
        raise RecordUnavailable(texts.record_unavailable("no connection of the pool answered"))

    def _give_back(self, connection: psycopg.Connection[Any]) -> None:
        # The pool discards a closed or broken connection and rolls back one left in a
        # transaction.
        self._pool.putconn(connection)

    def _held_stack(self) -> list[_Held]:
        stack: list[_Held] | None = getattr(self._held, "stack", None)
        if stack is None:
            stack = self._held.stack = []
        return stack


@functools.cache  # one text per table: made once, not on every commit
def _upsert_sql(row_type: type) -> str:
    """One INSERT of a table's rows, given as one JSON array of objects by column name,
    each row updating the row its key names.

    One parameter per table, whatever the number of rows: the statement's text is the
    same for every commit of the same tables, so psycopg converts it once (it converts a
    statement of more than 50 parameters anew every time) and the server prepares it.
    The rows go as json, not jsonb: the server reads each value's text straight into its
    column, where jsonb would first build its own binary form (every number a numeric).
    """
    table = TABLE_OF[row_type]
    names = column_names(row_type)
    columns = ", ".join(f'"{n}"' for n in names)
    key = ", ".join(f'"{n}"' for n in table.key)
    moved = [f'"{n}" = excluded."{n}"' for n in names if n not in (*table.key, table.counter)]
    if table.counter is not None:
        moved.append(f'"{table.counter}" = "{table.name}"."{table.counter}" + 1')
    updates = ", ".join(moved)
    return (
        f'INSERT INTO "{table.name}" ({columns}) SELECT {columns} '
        f'FROM json_populate_recordset(NULL::"{table.name}", %s::json) '
        "WHERE EXISTS (SELECT FROM fence) "
        f"ON CONFLICT ({key}) DO UPDATE SET {updates}"
    )


# A float goes by its shortest repr, which PostgreSQL reads back to the same double;
# JSON columns are already text, and go as JSON strings.
_ROWS = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def _rows_json(rows: list[dict[str, Any]]) -> str:
    try:
        return _ROWS.encode(rows)
    except (TypeError, ValueError) as error:  # what psycopg says of a value it cannot send
        raise psycopg.ProgrammingError(f"cannot store this value: {error}") from error


def _fence_of(lease: Lease | None) -> str:
    """The fence a commit's statement opens with: none outside a lease, the take of the
    lease by the first commit under it, then its renewal."""
    if lease is None:
        return _NO_FENCE
    return _FENCE_SQL if lease.taken else _TAKE_SQL


def _fence_values(lease: Lease) -> list[Any]:
    until = lease.renewed_until()
    if lease.taken:
        return [until, lease.session, lease.token, lease.holder]
    return [
        *(lease.session, lease.token, lease.holder, until, lease.lock),
        *(lease.seen_token, lease.token, lease.holder),
    ]


@functools.lru_cache(maxsize=128)
def _one_statement(fence: str, upserts: tuple[str, ...]) -> str:
    """The fence and the upserts as ONE statement, all but the last as data-modifying
    WITH queries.

    One statement is one transaction and one round trip, all or nothing, and its values
    are bound by the server: so the statement's text is the same for every commit of the
    same shape, and the connection prepares it after a few (the server then neither
    parses nor plans it again), where several statements in one query could only be
    sent with their values quoted into the text, parsed anew every time. The fence comes
    first and every upsert reads it (`_upsert_sql`): its row is the lease's, renewed and
    counted, or none when the lease is another's, and then nothing is written. Its row
    lock orders the commit after a take-over in progress.
    """
    *first, last = upserts
    queries = [f"fence AS ({fence})"]
    queries += [f"u{n} AS ({sql})" for n, sql in enumerate(first)]
    return "WITH " + ", ".join(queries) + " " + last


def _by_table(changes: Changes) -> list[tuple[type, list[Any]]]:
    return [
        (SessionRow, changes.sessions),
        (RunRow, changes.runs),
        (CallRow, changes.calls),
        (MessageRow, changes.messages),
    ]


def _latest_by_key(row_type: type, rows: list[Any]) -> list[Any]:
    """The rows, the later of two with one key only: one INSERT may not update a row twice,
    and upserting them one by one would leave the later."""
    key = attrgetter(*TABLE_OF[row_type].key)
    return list({key(row): row for row in rows}.values())


@dataclass(eq=False)
class _Held:
    """A session lock this thread holds: its connection and the lease taken under it."""

    connection: psycopg.Connection[Any]
    lease: Lease


_T = TypeVar("_T")

# The lease's statements (record/lease.py). The first commit under a lease takes it from
# the token its lock read (or finds it its own: the same commit, sent again after its
# answer was lost); later ones renew it while it is theirs. Each matches no row once
# another worker took the lease, and then the commit writes nothing.
_TAKE_SQL = (
    'INSERT INTO "leases" ("session", "token", "holder", "expires", "lock") '
    "VALUES (%s, %s, %s, %s, %s) "
    'ON CONFLICT ("session") DO UPDATE SET "token" = excluded."token", '
    '"holder" = excluded."holder", "expires" = excluded."expires", "lock" = excluded."lock" '
    'WHERE "leases"."token" = %s OR ("leases"."token" = %s AND "leases"."holder" = %s) '
    'RETURNING "token"'
)
_TAKE_FROM_SQL = (
    'UPDATE "leases" SET "token" = "token" + 1, "holder" = %s, "expires" = %s, "lock" = %s '
    'WHERE "session" = %s AND "token" = %s RETURNING "token"'
)
_FENCE_SQL = (
    'UPDATE "leases" SET "expires" = %s '
    'WHERE "session" = %s AND "token" = %s AND "holder" = %s RETURNING "token"'
)
# A commit outside any lease (a test, a tool of the record's own): not fenced.
_NO_FENCE = "SELECT 1"
_RENEW_SQL = 'UPDATE "leases" SET "expires" = %s WHERE "session" = %s AND "token" = %s'
# Its transaction committed before the unlock: the next holder of the lock finds the
# lease given back.
_GIVE_BACK_AND_UNLOCK = (
    f'BEGIN; SELECT "{_GIVE_BACK_FUNCTION}"(%s, %s, %s); COMMIT; SELECT pg_advisory_unlock(%s)'
)


def _session_of(changes: Changes) -> str:
    """The one session a commit's rows belong to (the runtime commits one at a time)."""
    for row in changes.rows():
        return str(row.session)
    raise ValueError("an empty commit names no session")


def _unlock(connection: psycopg.Connection[Any], key: int, lease: Lease | None = None) -> None:
    """Let the session's lock go, giving its lease back in the same round trip.

    The lease goes back first, so the next holder of the lock finds it free; its commit
    is not waited for on the server's disk (`synchronous_commit` off for it alone): it is
    no row of the record, and one lost in a server crash only leaves the next holder to
    prove the lease ended (its backend still runs) or wait for it to (record/lease.py).
    """
    try:
        if lease is not None and lease.taken:
            connection.execute(
                _GIVE_BACK_AND_UNLOCK, (lease.session, lease.token, lease.holder, key)
            )
        else:
            connection.execute("SELECT pg_advisory_unlock(%s)", (key,))
    except psycopg.Error:
        connection.close()  # the lock went with the connection


def _one_line(error: BaseException) -> str:
    return " ".join(str(error).split()) or type(error).__name__


@contextmanager
def _reachable() -> Iterator[None]:
    """A lost database as stalwart's error with a code, never the driver's."""
    try:
        yield
    except psycopg.OperationalError as error:
        raise RecordUnavailable(texts.record_unavailable(_one_line(error))) from error


def _end_failed_transaction(connection: psycopg.Connection[Any]) -> None:
    """Leave a connection idle after a failed load, or closed if it cannot be."""
    if connection.closed or connection.info.transaction_status == TransactionStatus.IDLE:
        return
    try:
        connection.execute("ROLLBACK")
    except psycopg.Error:
        connection.close()


def _rows(row_type: type, arrays: list[list[Any]]) -> list[Any]:
    """Rows from their JSON arrays of column values (JSON columns still text)."""
    real_at = _REAL_AT[row_type]
    rows: list[Any] = []
    for values in arrays:
        for at in real_at:
            if values[at] is not None:
                values[at] = float(values[at])
        rows.append(from_values(row_type, values))
    return rows


def open_operator_log(url: str, now: Callable[[], float]) -> OperatorLog:
    """The operator's log (`operator_log.py`) in the PostgreSQL database at `url`."""
    db = psycopg.connect(url, autocommit=True)
    with db.transaction():
        # Workers starting at once would race to create the table's type.
        db.execute("SELECT pg_advisory_xact_lock(%s)", (_LOG_DDL_LOCK_KEY,))
        db.execute(
            "CREATE TABLE IF NOT EXISTS operator_actions (seq bigserial PRIMARY KEY, "
            "at double precision, action text, session text, outcome text, detail text)"
        )
    return OperatorLog(db, "%s", now)

"""The record's connections to PostgreSQL: the pool a store borrows from, each one
configured (TCP keepalives, the lock wait) and checked as it is taken; the advisory lock's
key and its release; a lost database as stalwart's error; the operator's log's own
connection.

After a server restart no stale connection reaches a load, a commit or a lock: one taken
is checked first (`Connections.take`), or its first statement is its check (the lock's:
`PostgresStore._lock_statement`), and a stale one is dropped and another taken. A
database that cannot be reached is `RecordUnavailable` (code `record_unavailable`),
never the driver's exception.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
from psycopg.pq import TransactionStatus
from psycopg_pool import ConnectionPool, PoolClosed, PoolTimeout

from ... import texts
from ...errors import RecordUnavailable
from ..lease import Lease
from ..operator_log import OperatorLog
from .migrations import make_operator_log_table
from .sql import GIVE_BACK_AND_UNLOCK, KEEPALIVES, OWN_BACKEND

POOL_MAX = 64  # connections: one per session lock held at once, and a few to borrow


class Connections:
    """A store's pool of autocommit connections to one database, and the name of each
    connection's server backend (as a lease names its lock), read once per connection."""

    def __init__(self, url: str, *, lock_wait_secs: float, connect_wait_secs: float) -> None:
        self.lock_wait_secs = lock_wait_secs
        self._guard = threading.Lock()
        self._backends: dict[int, str] = {}  # each connection's backend name, by its pid
        # Connections are checked as they are taken (`take`), or by the lock's own
        # statement (`PostgresStore._lock_statement`), so after a server restart a stale
        # one is replaced, never used by a load, a commit or a lock.
        self.pool: ConnectionPool[psycopg.Connection[Any]] = ConnectionPool(
            url,
            min_size=1,
            max_size=POOL_MAX,
            kwargs={"autocommit": True, "cursor_factory": psycopg.ClientCursor},
            configure=self._configure,
            timeout=connect_wait_secs,
            name="stalwart-record",
            open=False,
        )
        self.pool.open(wait=False)

    def own_backend(self, connection: psycopg.Connection[Any]) -> str:
        name = self._backends.get(connection.info.backend_pid)
        if name is None:  # a connection made before this store configured it
            name = self._read_own_backend(connection)
        return name

    def _read_own_backend(self, connection: psycopg.Connection[Any]) -> str:
        found = connection.execute(OWN_BACKEND).fetchone()
        assert found is not None  # every backend sees itself
        name = str(found[0])
        with self._guard:
            self._backends[connection.info.backend_pid] = name
        return name

    def _configure(self, connection: psycopg.Connection[Any]) -> None:
        connection.execute(f"{KEEPALIVES}; SET lock_timeout = {int(self.lock_wait_secs * 1000)}")
        # A pid the server gives again is another backend: its name is read anew here.
        self._read_own_backend(connection)

    @contextmanager
    def borrowed(self) -> Iterator[psycopg.Connection[Any]]:
        connection = self.take()
        try:
            yield connection
        finally:
            self.give_back(connection)

    def take(self, *, checked: bool = True) -> psycopg.Connection[Any]:
        """A connection from the pool; `checked`, one that answered an empty query first,
        so after a server restart no stale one reaches a load or a commit (a stale one is
        dropped and another taken, while the pool has any to give)."""
        for _ in range(POOL_MAX + 1):
            try:
                connection = self.pool.getconn()
            except PoolClosed:
                raise RuntimeError("this PostgresStore is closed") from None
            except PoolTimeout as error:
                raise RecordUnavailable(texts.record_unavailable(one_line(error))) from error
            if not checked:
                return connection
            try:
                ConnectionPool.check_connection(connection)
            except Exception:
                connection.close()
                self.give_back(connection)
                continue
            except BaseException:
                self.give_back(connection)
                raise
            return connection
        raise RecordUnavailable(texts.record_unavailable("no connection of the pool answered"))

    def give_back(self, connection: psycopg.Connection[Any]) -> None:
        # The pool discards a closed or broken connection and rolls back one left in a
        # transaction.
        self.pool.putconn(connection)

    def close(self) -> None:
        self.pool.close()


def session_lock_key(session: str) -> int:
    """The advisory lock key of a session: a signed 64-bit slice of its SHA-256."""
    digest = hashlib.sha256(session.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


def unlock(connection: psycopg.Connection[Any], key: int, lease: Lease | None = None) -> None:
    """Let the session's lock go, giving its lease back in the same round trip.

    The lease goes back first, so the next holder of the lock finds it free; its commit
    is not waited for on the server's disk (`synchronous_commit` off for it alone): it is
    no row of the record, and one lost in a server crash only leaves the next holder to
    prove the lease ended (its backend still runs) or wait for it to (record/lease.py).
    """
    try:
        if lease is not None and lease.taken:
            connection.execute(
                GIVE_BACK_AND_UNLOCK, (lease.session, lease.token, lease.holder, key)
            )
        else:
            connection.execute("SELECT pg_advisory_unlock(%s)", (key,))
    except psycopg.Error:
        connection.close()  # the lock went with the connection


def one_line(error: BaseException) -> str:
    return " ".join(str(error).split()) or type(error).__name__


@contextmanager
def reachable() -> Iterator[None]:
    """A lost database as stalwart's error with a code, never the driver's."""
    try:
        yield
    except psycopg.OperationalError as error:
        raise RecordUnavailable(texts.record_unavailable(one_line(error))) from error


def end_failed_transaction(connection: psycopg.Connection[Any]) -> None:
    """Leave a connection idle after a failed load, or closed if it cannot be."""
    if connection.closed or connection.info.transaction_status == TransactionStatus.IDLE:
        return
    try:
        connection.execute("ROLLBACK")
    except psycopg.Error:
        connection.close()


def open_operator_log(url: str, now: Callable[[], float]) -> OperatorLog:
    """The operator's log (record/operator_log.py) in the PostgreSQL database at `url`,
    on a connection of its own."""
    db = psycopg.connect(url, autocommit=True)
    make_operator_log_table(db)
    return OperatorLog(db, "%s", now)

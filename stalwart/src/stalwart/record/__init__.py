"""The record: every session, run, call and message, behind the small `Store` protocol."""

from __future__ import annotations

import time
from collections.abc import Callable

from ..errors import SessionBusy
from .base import Changes, SessionRecord, Store
from .operator_log import OperatorLog
from .schema import CallRow, MessageRow, RunRow, SessionRow


def serves_many_workers(location: str) -> bool:
    """Whether the record a location names is PostgreSQL (many workers), not SQLite."""
    return location.startswith(("postgresql://", "postgres://"))


def open_store(location: str, *, lock_wait_secs: float = 30.0) -> Store:
    """The store a record location names: a SQLite path, ":memory:", or postgresql://...;
    `lock_wait_secs`, how long a lock waits before SessionBusy."""
    if serves_many_workers(location):
        from .postgres import PostgresStore  # only imported when asked for: psycopg is an extra

        return PostgresStore(location, lock_wait_secs=lock_wait_secs)
    from .sqlite import SQLiteStore

    return SQLiteStore(location, lock_wait_secs=lock_wait_secs)


def open_operator_log(location: str, now: Callable[[], float] = time.time) -> OperatorLog:
    """The operator's log beside the record `location` names (`operator_log.py`); each
    action's time is read from `now` (the service's clock)."""
    if serves_many_workers(location):
        from .postgres import open_operator_log as on_postgres

        return on_postgres(location, now)
    from .sqlite import open_operator_log as on_sqlite

    return on_sqlite(location, now)


__all__ = [
    "CallRow",
    "Changes",
    "MessageRow",
    "OperatorLog",
    "RunRow",
    "SessionBusy",
    "SessionRecord",
    "SessionRow",
    "Store",
    "open_operator_log",
    "open_store",
    "serves_many_workers",
]

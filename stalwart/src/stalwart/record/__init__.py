"""The record: every session, run, call and message, behind the small `Store` protocol."""

from __future__ import annotations

from ..errors import SessionBusy
from .base import Changes, SessionRecord, Store
from .schema import CallRow, MessageRow, RunRow, SessionRow


def open_store(location: str) -> Store:
    """The store a record location names: a SQLite path, ":memory:", or postgresql://..."""
    if location.startswith(("postgresql://", "postgres://")):
        from .postgres import PostgresStore  # only imported when asked for: psycopg is an extra

        return PostgresStore(location)
    from .sqlite import SQLiteStore

    return SQLiteStore(location)


__all__ = [
    "CallRow",
    "Changes",
    "MessageRow",
    "RunRow",
    "SessionBusy",
    "SessionRecord",
    "SessionRow",
    "Store",
    "open_store",
]

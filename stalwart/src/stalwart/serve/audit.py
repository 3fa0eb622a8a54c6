"""The operator's actions, kept in the record's own database beside the sessions.

Every operator action (signing in or being refused, listing the sessions, opening a
record, an undo and its outcome) is one row of `operator_actions`: when, what, which
session, the outcome (`ok` or the error's code) and a detail. The undo itself is also
in the session's record, as every undo is. Rows are only ever added.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

_COLUMNS = "at, action, session, outcome, detail"
_DDL_LOCK_KEY = 0x5354_4F50_4C4F_4721  # "STOPLOG!"


@dataclass(frozen=True)
class Action:
    at: float
    action: str
    session: str | None
    outcome: str
    detail: str


class OperatorLog(Protocol):
    def add(self, action: str, session: str | None, outcome: str, detail: str = "") -> None: ...

    def entries(self, limit: int = 200) -> list[Action]: ...

    def close(self) -> None: ...


def open_log(location: str, now: Callable[[], float] = time.time) -> OperatorLog:
    """The log beside the record `location` names (a SQLite path, :memory: or a URL); each
    action's time is read from `now` (the service's clock)."""
    if location.startswith(("postgresql://", "postgres://")):
        return _PostgresLog(location, now)
    return _SQLiteLog(location, now)


class _SQLiteLog:
    def __init__(self, path: str, now: Callable[[], float] = time.time) -> None:
        self._now = now
        self._guard = threading.Lock()
        self._db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS operator_actions (seq INTEGER PRIMARY KEY "
            "AUTOINCREMENT, at REAL, action TEXT, session TEXT, outcome TEXT, detail TEXT)"
        )

    def add(self, action: str, session: str | None, outcome: str, detail: str = "") -> None:
        with self._guard:
            self._db.execute(
                f"INSERT INTO operator_actions ({_COLUMNS}) VALUES (?, ?, ?, ?, ?)",
                (self._now(), action, session, outcome, detail),
            )

    def entries(self, limit: int = 200) -> list[Action]:
        with self._guard:
            rows = self._db.execute(
                f"SELECT {_COLUMNS} FROM operator_actions ORDER BY seq DESC LIMIT ?", (limit,)
            ).fetchall()
        return [Action(*row) for row in rows]

    def close(self) -> None:
        with self._guard:
            self._db.close()


class _PostgresLog:
    def __init__(self, url: str, now: Callable[[], float] = time.time) -> None:
        import psycopg

        self._now = now
        self._guard = threading.Lock()
        self._db: Any = psycopg.connect(url, autocommit=True)
        with self._db.transaction():
            # Workers starting at once would race to create the table's type.
            self._db.execute("SELECT pg_advisory_xact_lock(%s)", (_DDL_LOCK_KEY,))
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS operator_actions (seq bigserial PRIMARY KEY, "
                "at double precision, action text, session text, outcome text, detail text)"
            )

    def add(self, action: str, session: str | None, outcome: str, detail: str = "") -> None:
        with self._guard:
            self._db.execute(
                f"INSERT INTO operator_actions ({_COLUMNS}) VALUES (%s, %s, %s, %s, %s)",
                (self._now(), action, session, outcome, detail),
            )

    def entries(self, limit: int = 200) -> list[Action]:
        with self._guard:
            rows = self._db.execute(
                f"SELECT {_COLUMNS} FROM operator_actions ORDER BY seq DESC LIMIT %s", (limit,)
            ).fetchall()
        return [Action(*row) for row in rows]

    def close(self) -> None:
        with self._guard:
            self._db.close()

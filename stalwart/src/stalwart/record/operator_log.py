"""The operator's actions, kept in the record's own database beside the sessions.

Every operator action (signing in or being refused, listing the sessions, opening a
record, an undo and its outcome) is one row of `operator_actions`: when, what, which
session, the outcome (`ok` or the error's code) and a detail. The undo itself is also
in the session's record, as every undo is. Rows are only ever added.

Each backend makes the table its own way and hands its connection here
(`sqlite.open_operator_log`, `postgres.open_operator_log`); `record.open_operator_log`
picks the backend as `open_store` does.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

_COLUMNS = "at, action, session, outcome, detail"


@dataclass(frozen=True)
class Action:
    at: float
    action: str
    session: str | None
    outcome: str
    detail: str


class OperatorLog:
    """The `operator_actions` table on one connection of the record's database (a
    sqlite3 or a psycopg connection in autocommit), its parameters marked with `mark`."""

    def __init__(self, db: Any, mark: str, now: Callable[[], float]) -> None:
        self._db = db
        self._now = now
        self._guard = threading.Lock()
        marks = ", ".join(mark for _ in _COLUMNS.split(", "))
        self._insert = f"INSERT INTO operator_actions ({_COLUMNS}) VALUES ({marks})"
        self._select = f"SELECT {_COLUMNS} FROM operator_actions ORDER BY seq DESC LIMIT {mark}"

    def add(self, action: str, session: str | None, outcome: str, detail: str = "") -> None:
        with self._guard:
            self._db.execute(self._insert, (self._now(), action, session, outcome, detail))

    def entries(self, limit: int = 200) -> list[Action]:
        with self._guard:
            rows = self._db.execute(self._select, (limit,)).fetchall()
        return [Action(*row) for row in rows]

    def close(self) -> None:
        with self._guard:
            self._db.close()

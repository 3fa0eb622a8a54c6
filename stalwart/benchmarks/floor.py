"""The floor: what a number of durable commits costs with no runtime around them.

Each commit is one small row in its own transaction, made durable the way the record
makes it: raw sqlite3 in WAL mode with synchronous=FULL (every commit fsync'd), or raw
psycopg in autocommit against the same PostgreSQL server the record uses.

The benchmark makes the floor's commits right after each run, as many as that run made,
so a disk that is slow for a while is slow for both.
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import Any, Protocol

PAYLOAD = "x" * 64


class Floor(Protocol):
    label: str  # a few words
    name: str  # what exactly is measured

    def commit(self, commits: int) -> float:
        """Make `commits` durable commits; return the seconds they took."""
        ...

    def close(self) -> None: ...


class SQLiteFloor:
    label = "raw sqlite3"
    name = "raw sqlite3, WAL, synchronous=FULL, one row per fsync'd commit, same folder"

    def __init__(self, folder: Path) -> None:
        self._database = sqlite3.connect(folder / "floor.sqlite", isolation_level=None)
        self._database.execute("PRAGMA journal_mode=WAL")
        self._database.execute("PRAGMA synchronous=FULL")
        self._database.execute("CREATE TABLE IF NOT EXISTS floor (n INTEGER PRIMARY KEY, p TEXT)")
        self._next = 0

    def commit(self, commits: int) -> float:
        began = time.perf_counter()
        for _ in range(commits):
            self._database.execute("BEGIN IMMEDIATE")
            self._database.execute("INSERT INTO floor VALUES (?, ?)", (self._next, PAYLOAD))
            self._database.execute("COMMIT")
            self._next += 1
        return time.perf_counter() - began

    def close(self) -> None:
        self._database.close()


class PostgresFloor:
    label = "raw psycopg"
    name = "raw psycopg, one INSERT per durable autocommit, same PostgreSQL server"

    def __init__(self, url: str) -> None:
        import psycopg

        self._connection: Any = psycopg.connect(url, autocommit=True)
        self._connection.execute("CREATE TABLE IF NOT EXISTS floor (n bigint PRIMARY KEY, p text)")
        self._next = 0

    def commit(self, commits: int) -> float:
        began = time.perf_counter()
        for _ in range(commits):
            self._connection.execute("INSERT INTO floor VALUES (%s, %s)", (self._next, PAYLOAD))
            self._next += 1
        return time.perf_counter() - began

    def close(self) -> None:
        self._connection.close()

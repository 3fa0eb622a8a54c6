"""The floor: what a number of durable commits costs with no runtime around them.

Each commit is one small row in its own transaction, made durable the way the record
makes it: raw sqlite3 in WAL mode with synchronous=FULL (every commit fsync'd), or raw
psycopg in autocommit against the same PostgreSQL server the record uses.

The benchmark makes the floor's commits right after each run, as many as that run made,
so a disk that is slow for a while is slow for both.
"""

from __future__ import annotations

import os
import sqlite3
import statistics
import time
from dataclasses import dataclass
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


@dataclass(frozen=True)
class Fsync:
    """What making 4 KiB durable costs on this machine's disk, measured alone."""

    seconds: tuple[float, ...]

    @property
    def median_ms(self) -> float:
        return statistics.median(self.seconds) * 1000

    @property
    def p95_ms(self) -> float:
        ordered = sorted(self.seconds)
        return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))] * 1000


def fsync_latency(folder: Path, times: int = 200) -> Fsync:
    """Write 4 KiB and fsync it, `times` times, in `folder` (where the records are made)."""
    block = b"x" * 4096
    seconds: list[float] = []
    descriptor = os.open(folder / "fsync.probe", os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        for number in range(times):
            os.pwrite(descriptor, block, (number % 16) * 4096)
            began = time.perf_counter()
            os.fsync(descriptor)
            seconds.append(time.perf_counter() - began)
    finally:
        os.close(descriptor)
    return Fsync(tuple(seconds))

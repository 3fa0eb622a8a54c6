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
from collections.abc import Collection
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from stalwart.clock import Clock
from stalwart.record import Store, open_store
from stalwart.record.base import Changes, SessionRecord
from stalwart.record.lease import Lease

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


class CommitsSeen:
    """A store that keeps every commit it is given, then makes it on the store it wraps:
    the commits of one run, to be made again by `RecordAlone`."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._seen: list[Changes] = []

    @property
    def commits(self) -> int:
        return self.store.commits

    def load(self, session: str) -> SessionRecord | None:
        return self.store.load(session)

    def commit(self, changes: Changes) -> None:
        self.store.commit(changes)
        self._seen.append(changes)  # made: a commit that raised is not made again

    def lock(
        self, session: str, *, wait: bool = True, clock: Clock | None = None
    ) -> AbstractContextManager[Lease]:
        return self.store.lock(session, wait=wait, clock=clock)

    def take_over(
        self, session: str, *, clock: Clock | None = None
    ) -> AbstractContextManager[Lease]:
        return self.store.take_over(session, clock=clock)

    def sessions_with_runs_in(self, states: Collection[str]) -> list[str]:
        return self.store.sessions_with_runs_in(states)

    def close(self) -> None:
        self.store.close()

    def take(self) -> list[Changes]:
        """The commits made since the last take, in order."""
        seen, self._seen = self._seen, []
        return seen


class RecordAlone:
    """The record with no engine around it: a run's commits, the rows exactly as the run
    gave them, made again in order on a fresh record of the same kind (its own file in the
    same folder, or its own database on the same server), with no turn read, no check and
    no tool. They are made under the session's lock, taken once for the run's commits (the
    run takes it once per call), so they are fenced by a lease and go through the lock's
    own connection, as the run's do.

    What is left over this floor is the engine's. What this costs over the raw floor is
    what the record writes: rows of several tables per commit, not one small row."""

    label = "the record alone"

    def __init__(self, location: str) -> None:
        self._store = open_store(location)

    def commit(self, commits: list[Changes]) -> float:
        by_session: dict[str, list[Changes]] = {}
        for changes in commits:
            session = changes.rows()[0].session
            by_session.setdefault(session, []).append(changes)
        began = time.perf_counter()
        for session, made in by_session.items():
            with self._store.lock(session):
                for changes in made:
                    self._store.commit(changes)
        return time.perf_counter() - began

    def close(self) -> None:
        self._store.close()


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

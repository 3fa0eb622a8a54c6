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
write: `PostgresStore._on_a_live_connection`). Outside a lock, an operation borrows a
connection from a `psycopg_pool` pool and checks it first; a lock's own statement is its
connection's check, tried once more on a checked connection when it fails. So after a
server restart no stale connection reaches a load, a commit or a lock (a
`connect_wait_secs` bound on waiting for one). A database that cannot be reached is
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

In parts: `store.py` (the `Store`: loads, commits, locks, leases), `sql.py` (its SQL, in
one place), `connections.py` (the pool, the lock's key and release, a lost database as
stalwart's error), `migrations.py` (the tables made or brought up to this version).
"""

from __future__ import annotations

try:
    import psycopg  # noqa: F401  # checked here, before any part of the backend is imported
    import psycopg_pool  # noqa: F401
except ImportError as missing:  # psycopg comes with the extra, not with stalwart itself
    raise ImportError(
        "a postgresql:// record needs psycopg 3: pip install 'stalwart[postgres]'"
    ) from missing

from .connections import open_operator_log, session_lock_key
from .migrations import added_column_ddl, ddl
from .store import PostgresStore

__all__ = ["PostgresStore", "added_column_ddl", "ddl", "open_operator_log", "session_lock_key"]

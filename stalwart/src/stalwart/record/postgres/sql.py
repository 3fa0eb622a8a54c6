"""The record's SQL on PostgreSQL, in one place: its column types, the load, the commit's
upserts and fence, the lease's statements, the lock's and the give-back's functions, and
the operator's log's table.

Every text here is made once, when the module is loaded (or once per table or commit
shape, cached), so the statements psycopg sends are the same text every time and the
server prepares them.
"""

from __future__ import annotations

import functools
from typing import Any

from ..backend import upsert_updates
from ..lease import Lease
from ..schema import TABLE_OF, CallRow, MessageRow, RunRow, SessionRow, column_names

SQL_TYPES = {
    "text": "text",
    "int": "bigint",
    "real": "double precision",
    "bool": "boolean",
    "json": "text",
}
# Serializes CREATE TABLE IF NOT EXISTS across workers starting at once, which can
# otherwise both try to create the same table type and one fail.
DDL_LOCK_KEY = 0x5354_414C_5741_5254  # "STALWART"
KEEPALIVES = (
    "SET tcp_keepalives_idle = 30; SET tcp_keepalives_interval = 10; SET tcp_keepalives_count = 3"
)


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
LOAD_SQL = "SELECT " + ", ".join(
    _table_rows_json(row_type, order) for row_type, order in _LOAD_ORDER
)
# Where a table's doubles are, given as text.
REAL_AT = {
    row_type: tuple(
        at for at, kind in enumerate(TABLE_OF[row_type].kinds.values()) if kind == "real"
    )
    for row_type, _ in _LOAD_ORDER
}


BUMP = 'UPDATE "sessions" SET "version" = "version" + 1 WHERE "session" = ANY(%s::text[])'
# What the lock's function reads once the lock is had (`_LOCK_FUNCTION_BODY`): the
# session's version, its lease, and whether the backend the lease names as its lock
# still runs (then it let the lock go: this one has it). A backend is
# named by its pid and its start, so a pid used again is another; the one named is looked
# up by its pid alone (pg_stat_get_activity(pid)), not found among every backend's row,
# and only for a lease not given back (`lease.ended` needs no more of one given back):
# reading the server's backend status copies every backend's entry, a cost that grows with
# the workers.
_BACKEND = "format('backend/%%s/%%s', {0}.pid, extract(epoch FROM {0}.backend_start))"
STAMP_AND_LEASE = (
    'SELECT s."version", s."created"::text, l."token", l."holder", l."expires", '
    "CASE WHEN l.\"holder\" <> '' AND l.\"lock\" ~ '^backend/[0-9]+/' THEN EXISTS (SELECT FROM "
    "pg_stat_get_activity(split_part(l.\"lock\", '/', 2)::int) a WHERE "
    + _BACKEND.format("a")
    + ' = l."lock") ELSE false END '
    'FROM (SELECT 1) one LEFT JOIN "sessions" s ON s."session" = %s '
    'LEFT JOIN "leases" l ON l."session" = %s'
)
# This backend's own name as a lease's lock, read once per connection (`Connections._configure`).
OWN_BACKEND = (
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
    + STAMP_AND_LEASE.removeprefix("SELECT ").replace("= %s", "= wanted_session").replace("%%", "%")
    + ";\n"
    "END\n"
)
LOCK_AND_STAMP = f'SELECT * FROM "{_LOCK_FUNCTION}"(%s, %s, %s)'
# The lease given back, its commit not waited for on the server's disk (see `connections.unlock`);
# a function so its UPDATE is planned once per connection, not with every unlock.
GIVE_BACK_FUNCTION = "stalwart_give_back"
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
FUNCTIONS = {
    _LOCK_FUNCTION: (
        "(wanted_key bigint, wanted_session text, wanted_wait boolean) "
        "RETURNS TABLE (got boolean, version bigint, created text, token bigint, holder text, "
        "expires double precision, lock_ended boolean) LANGUAGE plpgsql VOLATILE",
        _LOCK_FUNCTION_BODY,
    ),
    GIVE_BACK_FUNCTION: (
        "(wanted_session text, wanted_token bigint, wanted_holder text) "
        "RETURNS void LANGUAGE plpgsql VOLATILE",
        _GIVE_BACK_FUNCTION_BODY,
    ),
}


@functools.cache  # one text per table: made once, not on every commit
def upsert_sql(row_type: type) -> str:
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
    updates = upsert_updates(table, (*table.key, table.counter))
    return (
        f'INSERT INTO "{table.name}" ({columns}) SELECT {columns} '
        f'FROM json_populate_recordset(NULL::"{table.name}", %s::json) '
        "WHERE EXISTS (SELECT FROM fence) "
        f"ON CONFLICT ({key}) DO UPDATE SET {updates}"
    )


def fence_of(lease: Lease | None) -> str:
    """The fence a commit's statement opens with: none outside a lease, the take of the
    lease by the first commit under it, then its renewal."""
    if lease is None:
        return NO_FENCE
    return FENCE_SQL if lease.taken else TAKE_SQL


def fence_values(lease: Lease) -> list[Any]:
    until = lease.renewed_until()
    if lease.taken:
        return [until, lease.session, lease.token, lease.holder]
    return [
        *(lease.session, lease.token, lease.holder, until, lease.lock),
        *(lease.seen_token, lease.token, lease.holder),
    ]


@functools.lru_cache(maxsize=128)
def one_statement(fence: str, upserts: tuple[str, ...]) -> str:
    """The fence and the upserts as ONE statement, all but the last as data-modifying
    WITH queries.

    One statement is one transaction and one round trip, all or nothing, and its values
    are bound by the server: so the statement's text is the same for every commit of the
    same shape, and the connection prepares it after a few (the server then neither
    parses nor plans it again), where several statements in one query could only be
    sent with their values quoted into the text, parsed anew every time. The fence comes
    first and every upsert reads it (`upsert_sql`): its row is the lease's, renewed and
    counted, or none when the lease is another's, and then nothing is written. Its row
    lock orders the commit after a take-over in progress.
    """
    *first, last = upserts
    queries = [f"fence AS ({fence})"]
    queries += [f"u{n} AS ({sql})" for n, sql in enumerate(first)]
    return "WITH " + ", ".join(queries) + " " + last


# The lease's statements (record/lease.py). The first commit under a lease takes it from
# the token its lock read (or finds it its own: the same commit, sent again after its
# answer was lost); later ones renew it while it is theirs. Each matches no row once
# another worker took the lease, and then the commit writes nothing.
TAKE_SQL = (
    'INSERT INTO "leases" ("session", "token", "holder", "expires", "lock") '
    "VALUES (%s, %s, %s, %s, %s) "
    'ON CONFLICT ("session") DO UPDATE SET "token" = excluded."token", '
    '"holder" = excluded."holder", "expires" = excluded."expires", "lock" = excluded."lock" '
    'WHERE "leases"."token" = %s OR ("leases"."token" = %s AND "leases"."holder" = %s) '
    'RETURNING "token"'
)
TAKE_FROM_SQL = (
    'UPDATE "leases" SET "token" = "token" + 1, "holder" = %s, "expires" = %s, "lock" = %s '
    'WHERE "session" = %s AND "token" = %s RETURNING "token"'
)
FENCE_SQL = (
    'UPDATE "leases" SET "expires" = %s '
    'WHERE "session" = %s AND "token" = %s AND "holder" = %s RETURNING "token"'
)
# A commit outside any lease (a test, a tool of the record's own): not fenced.
NO_FENCE = "SELECT 1"
RENEW_SQL = 'UPDATE "leases" SET "expires" = %s WHERE "session" = %s AND "token" = %s'
# Its transaction committed before the unlock: the next holder of the lock finds the
# lease given back.
GIVE_BACK_AND_UNLOCK = (
    f'BEGIN; SELECT "{GIVE_BACK_FUNCTION}"(%s, %s, %s); COMMIT; SELECT pg_advisory_unlock(%s)'
)


# The operator's log (record/operator_log.py): its table, made under a lock of its own,
# since workers starting at once would race to create the table's type.
LOG_DDL_LOCK_KEY = 0x5354_4F50_4C4F_4721  # "STOPLOG!"
LOG_TABLE_DDL = (
    "CREATE TABLE IF NOT EXISTS operator_actions (seq bigserial PRIMARY KEY, "
    "at double precision, action text, session text, outcome text, detail text)"
)

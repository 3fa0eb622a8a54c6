"""The record's tables on PostgreSQL made, or brought up to this version's schema.

Every store that opens a database runs `migrate` once, in one transaction under an
advisory lock, so workers starting at once do not race: the tables and indexes made if
missing, the record's functions made or replaced when they are not as this version
writes them, an index that repeats its table's key dropped, and each column added since
a record was made (`schema.ADDED_COLUMNS`) added. Each step changes something only when
it is missing: ALTER TABLE and DROP INDEX lock the table against every worker.
"""

from __future__ import annotations

from typing import Any

import psycopg

from ..backend import table_ddl
from ..schema import ADDED_COLUMNS, TABLES
from .sql import DDL_LOCK_KEY, FUNCTIONS, LOG_DDL_LOCK_KEY, LOG_TABLE_DDL, SQL_TYPES


def migrate(connection: psycopg.Connection[Any]) -> None:
    """The record's tables, functions and columns as this version has them."""
    with connection.transaction():
        connection.execute("SELECT pg_advisory_xact_lock(%s)", (DDL_LOCK_KEY,))
        for statement in ddl():
            connection.execute(statement)
        _make_functions(connection)
        _drop_repeated_indexes(connection)
        present = set(
            connection.execute(
                "SELECT table_name, column_name FROM information_schema.columns "
                "WHERE table_schema = current_schema()"
            ).fetchall()
        )
        for table, column, default in ADDED_COLUMNS:
            # Only when missing: ALTER TABLE locks the table against every worker.
            if (table, column) not in present:
                connection.execute(added_column_ddl(table, column, default))


def make_operator_log_table(connection: psycopg.Connection[Any]) -> None:
    """The operator's log's table (record/operator_log.py), made if missing."""
    with connection.transaction():
        connection.execute("SELECT pg_advisory_xact_lock(%s)", (LOG_DDL_LOCK_KEY,))
        connection.execute(LOG_TABLE_DDL)


def ddl() -> list[str]:
    """CREATE statements for every table of the schema.

    An index whose column leads the primary key (messages: session, seq) would repeat the
    key's own index, one more entry written for every row, and is not made
    (`backend.table_ddl`; one a record made before has is dropped: `_REPEATED_INDEXES`)."""
    return table_ddl(SQL_TYPES)


# The indexes records made before had that repeat their table's key (see `ddl`).
_REPEATED_INDEXES = tuple(
    f"{table.name}_{column}" for table in TABLES for column in table.index if table.key[0] == column
)


def _make_functions(connection: psycopg.Connection[Any]) -> None:
    """The record's functions, each made (or replaced) only when it is not there as this
    version writes it (its body, and VOLATILE), so opening a store does not make every
    backend compile them again."""
    rows = connection.execute(
        "SELECT p.proname, p.prosrc, p.provolatile FROM pg_proc p "
        "JOIN pg_namespace n ON n.oid = p.pronamespace "
        "WHERE p.proname = ANY(%s) AND n.nspname = current_schema()",
        (list(FUNCTIONS),),
    ).fetchall()
    found = {name: (body, volatility) for name, body, volatility in rows}
    for name, (signature, body) in FUNCTIONS.items():
        if found.get(name) != (body, "v"):
            connection.execute(
                f'CREATE OR REPLACE FUNCTION "{name}"{signature} AS $stalwart${body}$stalwart$'
            )


def _drop_repeated_indexes(connection: psycopg.Connection[Any]) -> None:
    """Drop an index that repeats its table's key, only when there is one: a DROP locks
    the table against every worker."""
    found = connection.execute(
        "SELECT indexname FROM pg_indexes "
        "WHERE schemaname = current_schema() AND indexname = ANY(%s)",
        (list(_REPEATED_INDEXES),),
    ).fetchall()
    for (name,) in found:
        connection.execute(f'DROP INDEX IF EXISTS "{name}"')


def added_column_ddl(table: str, column: str, default: int | None) -> str:
    """ALTER statement giving a record made before `column` was added that column."""
    kind = next(t for t in TABLES if t.name == table).kinds[column]
    text = f'ALTER TABLE "{table}" ADD COLUMN IF NOT EXISTS "{column}" {SQL_TYPES[kind]}'
    if default is None:
        return text
    literal = ("true" if default else "false") if kind == "bool" else str(int(default))
    return f"{text} DEFAULT {literal}"

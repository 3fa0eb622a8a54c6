"""What makes a commit cheap must not change what the record keeps.

The SQLite tables are WITHOUT ROWID, and an update leaves the session index alone (it
writes an indexed column only when its value changes): these tests hold that to the
Store contract on both backends, count the pages an update makes durable, and open a
record made with the earlier layout.
"""

from __future__ import annotations

import sqlite3
from contextlib import closing
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from stalwart.errors import NotRecordable
from stalwart.record import (
    CallRow,
    Changes,
    MessageRow,
    RunRow,
    SessionRow,
    Store,
    open_store,
    schema,
)
from stalwart.record.schema import (
    TABLES,
    column_names,
    column_values,
    from_columns,
    from_values,
    to_columns,
)

pytestmark = pytest.mark.unit

WAL_FRAME = 24 + 4096  # a frame header and one page


def _session(name: str) -> SessionRow:
    return SessionRow(session=name, user="u-17", agent="desk", created=1.25)


def _run(session: str, run_id: str = "r#1", state: str = "waiting") -> RunRow:
    return RunRow(
        run_id=run_id,
        session=session,
        number=1,
        turn="charge order 4411 40.00",
        state=state,
        steps=[{"tool": "charge_card", "args": {"order": 4411, "amount": 40.0}, "clause": "c"}],
        cursor=0,
        question={"kind": "confirm", "text": "Run charge_card(order=4411, amount=40.0)?"},
        failure=None,
        reply=None,
        turn_seq=0,
        created=1.5,
        updated=2.5,
    )


def _call(session: str, status: str = "in_flight", result: Any = None) -> CallRow:
    return CallRow(
        call_id="r#1:1",
        run_id="r#1",
        session=session,
        agent="desk",
        seq=1,
        step=1,
        kind="write",
        tool="charge_card",
        args={"order": 4411, "amount": 40.0},
        key="k" * 64,
        status=status,
        allowed="allowed",
        result=result,
        error=None,
        undoes=None,
        undone_by=None,
        bindings=None,
        created=3.0,
        finished=None,
        tries=1,
    )


def test_a_row_given_another_session_moves_to_it(store: Store) -> None:
    """An upsert replaces the row whole, its session too, though the SQLite update leaves
    the session column out of its SET."""
    store.commit(Changes(sessions=[_session("s1"), _session("s2")]))
    store.commit(Changes(runs=[_run("s1")], calls=[_call("s1")]))
    store.commit(Changes(runs=[_run("s2", state="done")], calls=[_call("s2", "ran", {"a": 1})]))
    first, second = store.load("s1"), store.load("s2")
    assert first is not None and second is not None
    assert first.runs == () and first.calls == ()
    assert second.runs == (_run("s2", state="done"),)
    assert second.calls == (_call("s2", "ran", {"a": 1}),)
    assert store.sessions_with_runs_in(["done"]) == ["s2"]


def test_an_update_in_one_session_changes_only_its_row(store: Store) -> None:
    store.commit(Changes(sessions=[_session("s1")], runs=[_run("s1")], calls=[_call("s1")]))
    store.commit(Changes(runs=[_run("s1", state="rolling_back")], calls=[_call("s1", "ran")]))
    loaded = store.load("s1")
    assert loaded is not None
    assert [run.state for run in loaded.runs] == ["rolling_back"]
    assert [call.status for call in loaded.calls] == ["ran"]


def test_an_update_makes_one_page_durable_per_table_it_touches(tmp_path: Path) -> None:
    """Naming the indexed session column in the update would rewrite its index page too:
    two pages for one changed run row instead of one (and the session's own page)."""
    path = tmp_path / "record.sqlite"
    store = open_store(str(path))
    try:
        store.commit(Changes(sessions=[_session("s1")], runs=[_run("s1")], calls=[_call("s1")]))
        wal = Path(f"{path}-wal")
        before = wal.stat().st_size
        # Every commit also moves the session's version on (record/cache.py): one page of
        # the sessions table besides the pages of the rows it changes.
        store.commit(Changes(runs=[_run("s1", state="running")]))
        assert wal.stat().st_size - before == 2 * WAL_FRAME
        before = wal.stat().st_size
        store.commit(Changes(runs=[_run("s1", state="done")], calls=[_call("s1", "ran")]))
        assert wal.stat().st_size - before == 3 * WAL_FRAME
    finally:
        store.close()


def test_new_tables_are_without_rowid_and_repeat_no_key_in_an_index(tmp_path: Path) -> None:
    path = tmp_path / "record.sqlite"
    open_store(str(path)).close()
    with closing(sqlite3.connect(path)) as database, database:
        tables = dict(database.execute("SELECT name, sql FROM sqlite_master WHERE type='table'"))
        indexes = {row[0] for row in database.execute("SELECT name FROM sqlite_master")}
    assert all(sql.endswith("WITHOUT ROWID") for sql in tables.values()), tables
    assert {"runs_session", "calls_session"} <= indexes
    assert "messages_session" not in indexes  # (session, seq) is the key: it leads it


def test_a_record_made_with_rowid_tables_still_reads_and_writes(tmp_path: Path) -> None:
    path = tmp_path / "record.sqlite"
    # the layout records were made with before
    with closing(sqlite3.connect(path)) as database, database:
        for table in TABLES:
            columns = ", ".join(f'"{name}"' for name in table.kinds)
            key = ", ".join(f'"{name}"' for name in table.key)
            database.execute(f'CREATE TABLE "{table.name}" ({columns}, PRIMARY KEY ({key}))')
            for column in table.index:
                database.execute(
                    f'CREATE INDEX "{table.name}_{column}" ON "{table.name}" ("{column}")'
                )
    store = open_store(str(path))
    try:
        message = MessageRow("s1", 0, "user", "charge order 4411", "r#1", rewound=False)
        store.commit(
            Changes(
                sessions=[_session("s1")],
                runs=[_run("s1")],
                calls=[_call("s1")],
                messages=[message],
            )
        )
        store.commit(
            Changes(runs=[_run("s1", state="done")], messages=[replace(message, rewound=True)])
        )
        loaded = store.load("s1")
        assert loaded is not None
        assert loaded.runs == (_run("s1", state="done"),)
        assert loaded.calls == (_call("s1"),)
        assert loaded.messages == (replace(message, rewound=True),)
    finally:
        store.close()
    with closing(sqlite3.connect(path)) as database, database:
        sql = database.execute("SELECT sql FROM sqlite_master WHERE name='runs'").fetchone()[0]
    assert "WITHOUT ROWID" not in sql  # opened, not rebuilt


@pytest.mark.parametrize(
    "row",
    [
        _session("s1"),
        _run("s1"),
        _call("s1", "ran", {"order": 4411, "nested": {"b": [1, 2.5, None], "a": "é"}}),
        MessageRow("s1", 3, "tool", '{"order":4411}', None, rewound=True),
    ],
)
def test_columns_in_order_and_by_name_give_the_same_row(row: Any) -> None:
    values = column_values(row)
    assert list(to_columns(row)) == list(column_names(type(row)))
    assert list(to_columns(row).values()) == values
    assert from_values(type(row), values) == row
    assert from_columns(type(row), to_columns(row)) == row


def test_json_columns_are_canonical_text_without_copying_first() -> None:
    call = _call("s1", "ran", {"z": 1, "a": {"y": (1, 2), "b": [3]}})
    columns = to_columns(call)
    assert columns["result"] == '{"a":{"b":[3],"y":[1,2]},"z":1}'
    assert columns["args"] == '{"amount":40.0,"order":4411}'
    assert columns["bindings"] is None
    # A set has no order the record can keep (it differs between processes): refused.
    with pytest.raises(NotRecordable, match="set has no order"):
        to_columns(_call("s1", "ran", {"b": {3}}))


def test_a_row_given_twice_in_one_commit_keeps_the_later(store: Store) -> None:
    """Rows are upserted one by one in effect: PostgreSQL's one INSERT per table keeps
    the later of two rows with one key, as SQLite's statement per row does."""
    first = MessageRow("s1", 0, "user", "first", "r#1", rewound=False)
    second = MessageRow("s1", 0, "user", "second", "r#1", rewound=True)
    other = MessageRow("s1", 1, "tool", "other", "r#1", rewound=False)
    store.commit(
        Changes(
            sessions=[_session("s1")],
            runs=[_run("s1"), _run("s1", state="done")],
            calls=[_call("s1"), _call("s1", "ran")],
            messages=[first, other, second],
        )
    )
    loaded = store.load("s1")
    assert loaded is not None
    assert loaded.messages == (second, other)
    assert loaded.runs == (_run("s1", state="done"),)
    assert [call.status for call in loaded.calls] == ["ran"]
    assert store.commits == 1


def test_values_come_back_exactly(store: Store) -> None:
    """A commit is one statement of many rows, its values bound by the server: floats,
    big integers, quotes, newlines and non-ASCII text come back as they went."""
    awkward = {"big": 2**62 + 1, "tiny": 1e-300, "sum": 0.1 + 0.2, "text": 'é "q" \n \\ ✓'}
    call = replace(
        _call("s1", "ran", awkward),
        created=0.1 + 0.2,
        finished=1_796_024_799.123456,
        error='it said "no"\nand stopped',
    )
    session = replace(_session("s1"), user="ünï", created=-0.0)
    store.commit(Changes(sessions=[session], runs=[_run("s1")], calls=[call]))
    loaded = store.load("s1")
    assert loaded is not None
    assert loaded.session == session
    assert loaded.calls == (call,)
    assert loaded.calls[0].result == awkward


def test_a_value_given_to_commits_is_rendered_once_and_never_given_back(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A call's arguments committed in flight and again with its outcome are rendered to
    JSON once, and the session kept in memory holds its own copy of them, so a change the
    committer makes later to what it holds is never what a load gives."""
    with store.lock("s1"):
        store.commit(Changes(sessions=[_session("s1")]))
    rendered: list[Any] = []
    encode = schema._encode

    def counted(value: Any) -> str:
        rendered.append(value)
        return encode(value)

    monkeypatch.setattr(schema, "_encode", counted)
    items: list[dict[str, Any]] = [{"sku": "a-1", "qty": 2}]
    args: dict[str, Any] = {"order": 4411, "items": items}
    call = replace(_call("s1"), args=args)
    with store.lock("s1"):
        store.commit(Changes(calls=[call]))
        store.commit(Changes(calls=[replace(call, status="ran", result={"id": "ch_1"})]))
        loaded = store.load("s1")
    assert [value for value in rendered if value is args] == [args]
    assert loaded is not None
    kept = loaded.calls[0].args
    assert kept == args and kept is not args and kept["items"] is not items
    items.append({"sku": "b-2", "qty": 1})
    with store.lock("s1"):
        again = store.load("s1")
    assert again is not None
    assert again.calls[0].args == {"order": 4411, "items": [{"sku": "a-1", "qty": 2}]}

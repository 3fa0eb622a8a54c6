"""What resuming needs of the record: finding unfinished runs, and older records' columns."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from stalwart.record import CallRow, Changes, RunRow, SessionRow, Store
from stalwart.record.sqlite import SQLiteStore

pytestmark = pytest.mark.unit


def _run(session: str, state: str) -> RunRow:
    return RunRow(
        run_id=f"{session}#1",
        session=session,
        number=1,
        turn="book a slot for order 1",
        state=state,
        steps=[],
        cursor=0,
        question=None,
        failure=None,
        reply=None,
        turn_seq=0,
        created=1.0,
        updated=1.0,
    )


def test_sessions_with_runs_in_names_each_session_once_sorted(store: Store) -> None:
    states = {"b": "running", "a": "rolling_back", "c": "done", "d": "running"}
    store.commit(
        Changes(
            sessions=[SessionRow(s, "u", "desk", 1.0) for s in states],
            runs=[_run(s, state) for s, state in states.items()],
        )
    )
    assert store.sessions_with_runs_in(["running", "rolling_back"]) == ["a", "b", "d"]
    assert store.sessions_with_runs_in(["stuck"]) == []
    assert store.sessions_with_runs_in([]) == []


def test_a_call_keeps_its_tries(store: Store) -> None:
    call = CallRow(
        call_id="s#1:1",
        run_id="s#1",
        session="s",
        agent="desk",
        seq=1,
        step=1,
        kind="write",
        tool="book_slot",
        args={"order": 1},
        key="k",
        status="in_flight",
        allowed=None,
        result=None,
        error="TimeoutError: lost",
        undoes=None,
        undone_by=None,
        bindings=None,
        created=1.0,
        finished=None,
        tries=3,
    )
    store.commit(Changes(sessions=[SessionRow("s", "u", "desk", 1.0)], runs=[_run("s", "running")]))
    store.commit(Changes(calls=[call]))
    record = store.load("s")
    assert record is not None and record.calls == (call,)


def test_a_record_made_before_tries_is_given_the_column(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    old = sqlite3.connect(path)
    old.execute(
        'CREATE TABLE "calls" ("call_id" TEXT, "run_id" TEXT, "session" TEXT, "agent" TEXT, '
        '"seq" INTEGER, "step" INTEGER, "kind" TEXT, "tool" TEXT, "args" TEXT, "key" TEXT, '
        '"status" TEXT, "allowed" TEXT, "result" TEXT, "error" TEXT, "undoes" TEXT, '
        '"undone_by" TEXT, "bindings" TEXT, "created" REAL, "finished" REAL, '
        'PRIMARY KEY ("call_id"))'
    )
    old.execute(
        "INSERT INTO calls VALUES ('s#1:1', 's#1', 's', 'desk', 1, 1, 'write', 'book_slot', "
        "'{}', 'k', 'ran', NULL, NULL, NULL, NULL, NULL, NULL, 1.0, 2.0)"
    )
    old.execute('CREATE TABLE "sessions" ("session" TEXT, "user" TEXT, "agent" TEXT, '
                '"created" REAL, PRIMARY KEY ("session"))')  # fmt: skip
    old.execute("INSERT INTO sessions VALUES ('s', 'u', 'desk', 1.0)")
    old.commit()
    old.close()
    store = SQLiteStore(path)
    try:
        record = store.load("s")
        assert record is not None
        [call] = record.calls
        assert (call.status, call.tries) == ("ran", 0)
    finally:
        store.close()

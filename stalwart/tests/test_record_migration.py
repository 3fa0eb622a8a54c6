"""A record made by the previous schema version, opened by today's code on both backends.

`records/before_answers.*.sql` hold a record as stalwart made it before `runs.answers`
and `sessions.title` were added (commit d540138; the DDL and the rows as that version
wrote them). Today's store adds what is missing when it opens the record, reads the rows
it holds as they were, and writes new rows with the columns added since.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import closing
from dataclasses import replace
from pathlib import Path

import psycopg
import pytest
from pg_fixtures import BACKENDS

from stalwart.record import Changes, Store, open_store
from stalwart.record.schema import TABLES, CallRow, MessageRow, RunRow, SessionRow

RECORDS = Path(__file__).parent / "records"
ADDED_SINCE = {("runs", "answers"), ("sessions", "title")}
TODAY = {(table.name, column) for table in TABLES for column in table.kinds}


def _columns(location: str) -> set[tuple[str, str]]:
    if location.startswith("postgresql://"):
        with psycopg.connect(location) as db:
            found = db.execute(
                "SELECT table_name, column_name FROM information_schema.columns "
                "WHERE table_schema = current_schema()"
            ).fetchall()
        return {(str(table), str(column)) for table, column in found}
    with closing(sqlite3.connect(location)) as db:
        tables = [
            row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        ]
        return {
            (table, row[1])
            for table in tables
            for row in db.execute(f'PRAGMA table_info("{table}")')
        }


@pytest.fixture(params=BACKENDS)
def previous(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A location holding the previous version's record, made from its fixture."""
    if request.param == "postgres":
        location = str(request.getfixturevalue("pg_url"))
        with psycopg.connect(location, autocommit=True) as db:
            db.execute((RECORDS / "before_answers.postgres.sql").read_text(encoding="utf-8"))
        return location
    location = str(tmp_path / "record.sqlite")
    with closing(sqlite3.connect(location)) as db:
        db.executescript((RECORDS / "before_answers.sqlite.sql").read_text(encoding="utf-8"))
    return location


@pytest.fixture
def opened(previous: str) -> Iterator[list[Store]]:
    stores: list[Store] = []
    yield stores
    for store in stores:
        store.close()


SESSION = SessionRow("s1", "u-17", "desk", 1_800_000_000.25, version=3, identity="id-4f1c")
RUN = RunRow(
    run_id="s1#1",
    session="s1",
    number=1,
    turn="charge order 4411 40.00",
    state="waiting",
    steps=[
        {
            "tool": "charge_card",
            "args": {"order": 4411, "amount": 40.0},
            "clause": "charge order 4411 40.00",
        }
    ],
    cursor=0,
    question={"kind": "confirm", "tool": "charge_card", "step": 0},
    failure=None,
    reply=None,
    turn_seq=0,
    created=1_800_000_000.5,
    updated=1_800_000_001.75,
)
CALL = CallRow(
    call_id="c1",
    run_id="s1#1",
    session="s1",
    agent="desk",
    seq=1,
    step=0,
    kind="tool",
    tool="charge_card",
    args={"order": 4411, "amount": 40.0},
    key="k-1",
    status="ran",
    allowed="confirmed",
    result={"charged": "40.00"},
    error=None,
    undoes=None,
    undone_by=None,
    bindings=None,
    created=1_800_000_001.0,
    finished=1_800_000_001.5,
    tries=1,
)
MESSAGES = (
    MessageRow("s1", 0, "user", "charge order 4411 40.00", "s1#1", False),
    MessageRow("s1", 1, "assistant", "Charge order 4411 40.00?", "s1#1", True),
)


def test_the_fixture_is_the_previous_version(previous: str) -> None:
    assert _columns(previous) == TODAY - ADDED_SINCE


def test_a_record_of_the_previous_version_reads_its_rows_and_takes_new_writes(
    previous: str, opened: list[Store]
) -> None:
    store = open_store(previous)
    opened.append(store)
    assert _columns(previous) == TODAY  # what was missing, added as the store opened it

    record = store.load("s1")
    assert record is not None
    assert record.session == SESSION  # title: None, as for any session never named
    assert record.runs == (RUN,)  # answers: None, as for a run recorded before them
    assert record.calls == (CALL,)
    assert record.messages == MESSAGES

    answer = {"question": "q1", "answer": "approve", "by": "u-17", "at": 1_800_000_002.0}
    with store.lock("s1") as lease:
        assert lease.token == 2  # taken on from the lease the previous version gave back
        store.commit(
            Changes(
                sessions=[replace(SESSION, title="Order 4411")],
                runs=[replace(RUN, state="done", question=None, answers=[answer])],
                messages=[MessageRow("s1", 2, "assistant", "Charged.", "s1#1", False)],
            )
        )

    again = open_store(previous)  # another worker, opening the record now
    opened.append(again)
    record = again.load("s1")
    assert record is not None
    assert record.session == replace(SESSION, title="Order 4411", version=4)
    assert record.runs == (replace(RUN, state="done", question=None, answers=[answer]),)
    assert record.calls == (CALL,)
    assert record.messages == (
        *MESSAGES,
        MessageRow("s1", 2, "assistant", "Charged.", "s1#1", False),
    )

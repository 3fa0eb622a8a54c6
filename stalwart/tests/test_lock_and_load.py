"""The lock taken with the load (`Store.lock_and_load`), on both backends, and the rows'
cheap copies (`replace_row`, `from_values`) against what dataclasses make."""

from __future__ import annotations

import dataclasses
import threading
import time

import psycopg
import pytest

from stalwart.record import Changes, MessageRow, SessionBusy, SessionRow, Store, open_store
from stalwart.record.postgres import PostgresStore
from stalwart.record.schema import (
    CallRow,
    RunRow,
    column_names,
    column_values,
    from_values,
    replace_row,
)


def _record(store: Store, session: str, seq: int, content: str) -> None:
    store.commit(Changes(messages=[MessageRow(session, seq, "user", content, None, False)]))


def test_a_new_session_loads_as_none_under_its_lock(store: Store) -> None:
    with store.lock_and_load("s1") as record:
        assert record is None
        store.commit(Changes(sessions=[SessionRow("s1", "u", "desk", 1.0)]))
    with store.lock_and_load("s1") as record:
        assert record is not None
        assert record.session == SessionRow("s1", "u", "desk", 1.0)


def test_the_load_sees_what_the_holder_before_committed_while_it_waited(store: Store) -> None:
    with store.lock("s1"):
        store.commit(Changes(sessions=[SessionRow("s1", "u", "desk", 1.0)]))
    holding, seen = threading.Event(), []

    def holder() -> None:
        with store.lock("s1"):
            holding.set()
            time.sleep(0.3)  # the waiter is waiting for the lock by now
            _record(store, "s1", 0, "written by the holder before it let go")

    thread = threading.Thread(target=holder)
    thread.start()
    holding.wait()
    with store.lock_and_load("s1") as record:
        assert record is not None
        seen = [message.content for message in record.messages]
    thread.join()
    assert seen == ["written by the holder before it let go"]


@pytest.mark.postgres
def test_a_busy_session_raises_and_leaves_no_lock_behind(pg_url: str) -> None:
    holder = PostgresStore(pg_url, lock_wait_secs=10)
    impatient = PostgresStore(pg_url, lock_wait_secs=0.2)
    try:
        with (
            holder.lock("s1"),
            pytest.raises(SessionBusy, match="another worker"),
            impatient.lock_and_load("s1"),
        ):
            pass  # pragma: no cover - never entered
        with holder.lock_and_load("s1") as record:  # free again for anyone
            assert record is None
            holder.commit(Changes(sessions=[SessionRow("s1", "u", "desk", 1.0)]))
        with impatient.lock_and_load("s1") as record:
            assert record is not None
    finally:
        holder.close()
        impatient.close()


@pytest.mark.postgres
def test_the_lock_is_released_when_the_load_fails(pg_url: str) -> None:
    store = PostgresStore(pg_url, lock_wait_secs=10)
    other = PostgresStore(pg_url, lock_wait_secs=0.5)
    try:
        with psycopg.connect(pg_url, autocommit=True) as admin:
            admin.execute('ALTER TABLE "messages" RENAME TO "messages_away"')
            try:
                with pytest.raises(psycopg.errors.UndefinedTable), store.lock_and_load("s1"):
                    pass  # pragma: no cover - never entered
            finally:
                admin.execute('ALTER TABLE "messages_away" RENAME TO "messages"')
        with other.lock_and_load("s1") as record:
            assert record is None
    finally:
        store.close()
        other.close()


def test_a_sqlite_lock_and_load_is_the_lock_then_the_load(tmp_path: object) -> None:
    store = open_store(":memory:")
    try:
        store.commit(Changes(sessions=[SessionRow("s1", "u", "desk", 1.0)]))
        _record(store, "s1", 0, "hi")
        with store.lock_and_load("s1") as record:
            assert record == store.load("s1")
    finally:
        store.close()


CALL = CallRow(
    "c1", "r1", "s1", "desk", 1, 1, "write", "charge", {"amount": 4.0}, "k", "ran",
    "allowed", {"ok": True}, None, None, None, None, 1.0, 2.0, 1,
)  # fmt: skip
RUN = RunRow("r1", "s1", 1, "turn", "running", [{"tool": "t"}], 0, None, None, None, 0, 1.0, 1.0)


@pytest.mark.parametrize("row", [CALL, RUN, MessageRow("s1", 0, "user", "hi", None, False)])
def test_replace_row_makes_what_dataclasses_replace_makes(row: object) -> None:
    name = dataclasses.fields(row)[1].name  # type: ignore[arg-type]
    changed = replace_row(row, **{name: "other"})
    assert changed == dataclasses.replace(row, **{name: "other"})  # type: ignore[type-var]
    assert changed is not row and getattr(row, name) != "other"
    with pytest.raises(dataclasses.FrozenInstanceError):
        changed.session = "x"  # type: ignore[attr-defined]


def test_replace_row_refuses_a_field_the_row_does_not_have() -> None:
    with pytest.raises(TypeError, match="CallRow has no field colour"):
        replace_row(CALL, colour="green")


def test_a_row_from_its_values_equals_the_row() -> None:
    for row in (CALL, RUN):
        again = from_values(type(row), column_values(row))
        assert again == row
        assert tuple(vars(again)) == column_names(type(row))

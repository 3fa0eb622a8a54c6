"""What a load gives back, on both backends: what the holder before committed, the same
values (doubles too), load after load; and the rows' cheap copies (`replace_row`,
`from_values`) against what dataclasses make."""

from __future__ import annotations

import dataclasses
import threading
import time
from typing import Any

import pytest

from stalwart.record import Changes, MessageRow, SessionRecord, SessionRow, Store
from stalwart.record.schema import (
    TABLE_OF,
    CallRow,
    RunRow,
    as_loaded,
    column_names,
    column_values,
    from_values,
    replace_row,
)

pytestmark = pytest.mark.unit


def _record(store: Store, session: str, seq: int, content: str) -> None:
    store.commit(Changes(messages=[MessageRow(session, seq, "user", content, None, False)]))


def test_a_session_never_recorded_loads_as_none(store: Store) -> None:
    assert store.load("s1") is None
    store.commit(Changes(sessions=[SessionRow("s1", "u", "desk", 1.0)]))
    assert store.load("s1") == SessionRecord(session=SessionRow("s1", "u", "desk", 1.0))


def test_the_load_sees_what_the_holder_before_committed_while_it_waited(store: Store) -> None:
    with store.lock("s1"):
        store.commit(Changes(sessions=[SessionRow("s1", "u", "desk", 1.0)]))
    holding = threading.Event()

    def holder() -> None:
        with store.lock("s1"):
            holding.set()
            time.sleep(0.3)  # the main thread is waiting for the lock by now
            _record(store, "s1", 0, "written by the holder before it let go")

    thread = threading.Thread(target=holder)
    thread.start()
    holding.wait()
    with store.lock("s1"):
        record = store.load("s1")
    thread.join()
    assert record is not None
    assert [message.content for message in record.messages] == [
        "written by the holder before it let go"
    ]


DOUBLES = (0.0, 1.0, -2.0, 0.1, 1e16, 1.5e-300, 2.0**53 + 2, 1764489600.123456)


def test_doubles_come_back_as_the_same_floats_every_load(store: Store) -> None:
    """Whole, tiny and huge: the same float, of type float, load after load
    (a connection prepares the load after a few)."""
    sessions = [SessionRow(f"s{n}", "u", "desk", value) for n, value in enumerate(DOUBLES)]
    store.commit(Changes(sessions=sessions))
    for _ in range(8):
        for row in sessions:
            record = store.load(row.session)
            assert record is not None
            created = record.session.created
            assert type(created) is float
            assert created == row.created


def test_a_loaded_record_equals_what_was_committed(store: Store) -> None:
    run = dataclasses.replace(RUN, question={"text": "Run x?", "n": 1.0}, reply="done \u00e9")
    store.commit(
        Changes(
            sessions=[SessionRow("s1", "u", "desk", 1.0)],
            runs=[run],
            calls=[CALL, dataclasses.replace(CALL, call_id="c2", seq=2, finished=None)],
            messages=[MessageRow("s1", 0, "user", 'say "hi"\n', None, True)],
        )
    )
    for _ in range(7):
        record = store.load("s1")
        assert record is not None
        assert record.runs == (run,)
        assert record.calls == (CALL, dataclasses.replace(CALL, call_id="c2", seq=2, finished=None))
        assert record.messages == (MessageRow("s1", 0, "user", 'say "hi"\n', None, True),)
        assert type(record.runs[0].question["n"]) is float  # type: ignore[index]


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


def test_a_json_value_a_load_gave_is_written_as_the_text_it_was_read_from() -> None:
    loaded = from_values(RunRow, column_values(RUN))
    changed = replace_row(loaded, state="done")  # the steps are the same object
    at = column_names(RunRow).index("steps")
    first, again = column_values(loaded)[at], column_values(changed)[at]
    assert again is first  # not rendered anew
    assert as_loaded(changed).steps is loaded.steps  # nor parsed anew


def test_a_json_value_replaced_is_written_as_its_own_text() -> None:
    loaded = from_values(RunRow, column_values(RUN))
    changed = replace_row(loaded, steps=[{"tool": "other"}])
    at = column_names(RunRow).index("steps")
    assert column_values(changed)[at] == '[{"tool":"other"}]'
    assert as_loaded(changed).steps == [{"tool": "other"}]
    # An equal value that is another object is rendered, to the same text.
    copied = replace_row(loaded, steps=[dict(step) for step in loaded.steps])
    assert column_values(copied)[at] == column_values(loaded)[at]


@pytest.mark.parametrize(
    "row",
    [
        CALL,
        RUN,
        # What a commit may be given: ints in double and bool columns, JSON beyond JSON's
        # own types (a tuple, a key that is an int), None in JSON and double columns.
        replace_row(
            CALL,
            args={"order": (1, 2), "nested": {"b": 1.5, "a": None}},
            result={3: ["x", (True, None)]},
            created=1,
            finished=None,
            doubted=0,
            bindings=None,
        ),
        replace_row(RUN, created=3, updated=4, question={"id": "q"}, answers=[]),
        MessageRow("s1", 0, "user", "hi", None, 1),  # type: ignore[arg-type]
        SessionRow("s1", "u", "desk", 5, version=2, identity="i"),
    ],
)
def test_a_row_as_loaded_is_the_row_its_written_values_load_as(row: object) -> None:
    before = dict(vars(row))
    values = column_values(row)
    expected = from_values(type(row), _doubles(row, values))
    loaded = as_loaded(row, values)
    assert loaded == expected and loaded is not row
    assert tuple(vars(loaded)) == column_names(type(row))
    for name in column_names(type(row)):
        got, want = getattr(loaded, name), getattr(expected, name)
        assert type(got) is type(want), name
        if isinstance(want, (dict, list)):  # parsed anew: never an object the caller holds
            assert got is not getattr(row, name), name
    assert as_loaded(row) == expected  # its values made when not given
    assert vars(row) == before  # the row given is left as it was


def _doubles(row: object, values: list[Any]) -> list[Any]:
    """The values, a double column's as a double, as a load gives them."""
    kinds = TABLE_OF[type(row)].kinds
    return [
        float(value) if kinds[name] == "real" and value is not None else value
        for name, value in zip(column_names(type(row)), values, strict=True)
    ]

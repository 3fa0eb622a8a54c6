"""The record's schema, in one place: its rows, and its tables as data.

A backend turns `TABLES` into its own DDL (`sqlite.py`, `postgres.py`) and moves
rows in and out with `to_columns` / `from_columns`. Column kinds are abstract:
"text", "int", "real", "bool" and "json" (any JSON value, stored as canonical text).
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, TypeVar


class CallStatus(StrEnum):
    """Where a call stands; every status a call row can hold."""

    IN_FLIGHT = "in_flight"  # recorded, being sent (or its process stopped mid-send)
    RAN = "ran"  # it answered
    FAILED = "failed"  # it raised, and its effect is not in doubt (or it was an undo)
    IN_DOUBT = "in_doubt"  # a write whose effect nobody knows; a person is asked
    HAPPENED = "happened"  # a person said the write in doubt took effect (result unknown)
    DID_NOT_HAPPEN = "did_not_happen"  # a person said the write in doubt took no effect
    DECLINED = "declined"  # a person skipped it; never sent
    REFUSED = "refused"  # the check refused it, or its undo could not be bound; never sent
    BY_HAND = "by_hand"  # an undo a person says was done outside the agent; never sent


# A write in one of these states changed the world, and is undone if its run fails.
TOOK_EFFECT = frozenset({CallStatus.RAN, CallStatus.HAPPENED})


@dataclass(frozen=True)
class SessionRow:
    """A conversation; it belongs to the user who started it."""

    session: str
    user: str
    agent: str
    created: float


@dataclass(frozen=True)
class RunRow:
    """One run: the steps a person's turn was read into, and where the run stands.

    `steps` is a list of {"tool", "args", "clause"}; `cursor` the index of the next
    step; `question` what a person is asked now (None when nothing waits); `failure`
    why the run is failing ({"cause", "tool", "error", "reason"}); `reply` the text the
    person got when the run ended; `turn_seq` the memory position of the turn that
    started it (the rewind keeps it and hides everything after).
    """

    run_id: str
    session: str
    number: int
    turn: str
    state: str
    steps: list[dict[str, Any]]
    cursor: int
    question: dict[str, Any] | None
    failure: dict[str, Any] | None
    reply: str | None
    turn_seq: int
    created: float
    updated: float


@dataclass(frozen=True)
class CallRow:
    """One call of a tool, recorded before it is sent and finished after.

    `kind` is "read", "write" or "undo". `status` is a `CallStatus`: it moves
    in_flight -> ran | failed | in_doubt, in_doubt -> happened | did_not_happen (a
    person's answer), or is "declined" (skipped by a person), "refused" (the check
    refused it; never sent) or, on an undo, "by_hand". `tries` counts the sends, each
    recorded before it is made (a retry, a resumed call, a re-sent undo). `allowed` is
    what the check allowed, written in the same commit as in_flight, so it is durable
    before the send. `undoes` (on an undo) and
    `undone_by` (on a write) link a write to the undo that undid it; `bindings`
    says where each argument of an undo came from ({"booking": "$result.booking"}).
    """

    call_id: str
    run_id: str
    session: str
    agent: str
    seq: int
    step: int
    kind: str
    tool: str
    args: dict[str, Any]
    key: str | None
    status: str
    allowed: str | None
    result: Any
    error: str | None
    undoes: str | None
    undone_by: str | None
    bindings: dict[str, str] | None
    created: float
    finished: float | None
    tries: int = 0


@dataclass(frozen=True)
class MessageRow:
    """One message of what the model reads next; a rewind hides, never deletes."""

    session: str
    seq: int
    role: str
    content: str
    run_id: str | None
    rewound: bool


@dataclass(frozen=True)
class Table:
    name: str
    row: type
    key: tuple[str, ...]
    kinds: dict[str, str]
    index: tuple[str, ...] = field(default=())


TABLES: tuple[Table, ...] = (
    Table(
        "sessions",
        SessionRow,
        ("session",),
        {"session": "text", "user": "text", "agent": "text", "created": "real"},
    ),
    Table(
        "runs",
        RunRow,
        ("run_id",),
        {
            "run_id": "text",
            "session": "text",
            "number": "int",
            "turn": "text",
            "state": "text",
            "steps": "json",
            "cursor": "int",
            "question": "json",
            "failure": "json",
            "reply": "text",
            "turn_seq": "int",
            "created": "real",
            "updated": "real",
        },
        ("session",),
    ),
    Table(
        "calls",
        CallRow,
        ("call_id",),
        {
            "call_id": "text",
            "run_id": "text",
            "session": "text",
            "agent": "text",
            "seq": "int",
            "step": "int",
            "kind": "text",
            "tool": "text",
            "args": "json",
            "key": "text",
            "status": "text",
            "allowed": "text",
            "result": "json",
            "error": "text",
            "undoes": "text",
            "undone_by": "text",
            "bindings": "json",
            "created": "real",
            "finished": "real",
            "tries": "int",
        },
        ("session",),
    ),
    Table(
        "messages",
        MessageRow,
        ("session", "seq"),
        {
            "session": "text",
            "seq": "int",
            "role": "text",
            "content": "text",
            "run_id": "text",
            "rewound": "bool",
        },
        ("session",),
    ),
)

TABLE_OF: dict[type, Table] = {table.row: table for table in TABLES}

# Columns added after a table was first released: a backend adds them to a record made
# before, each with this default for the rows already there.
ADDED_COLUMNS: tuple[tuple[str, str, int], ...] = (("calls", "tries", 0),)

Row = TypeVar("Row")


def to_columns(row: Any) -> dict[str, Any]:
    """A row's column values, JSON columns rendered as text."""
    table = TABLE_OF[type(row)]
    values = dataclasses.asdict(row)
    return {
        name: _dump(values[name]) if kind == "json" else values[name]
        for name, kind in table.kinds.items()
    }


def from_columns(row_type: type[Row], values: dict[str, Any]) -> Row:
    """A row from column values, JSON columns parsed and bools made bools."""
    table = TABLE_OF[row_type]
    parsed: dict[str, Any] = {}
    for name, kind in table.kinds.items():
        value = values[name]
        if kind == "json":
            value = _load(value)
        elif kind == "bool":
            value = bool(value)
        parsed[name] = value
    return row_type(**parsed)


def as_recorded(value: Any) -> Any:
    """A value as the record gives it back (JSON-shaped), whichever backend keeps it."""
    dumped = _dump(value)
    return None if dumped is None else json.loads(dumped)


def _dump(value: Any) -> str | None:
    if value is None:
        return None
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=_jsonable)


def _load(value: Any) -> Any:
    if value is None or not isinstance(value, str):
        return value  # a backend with a native JSON type hands back parsed values
    return json.loads(value)


def _jsonable(value: Any) -> Any:
    # Tool results may hold Decimals, sets or dataclasses; keep what a person can read.
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if isinstance(value, set | frozenset | tuple):
        return list(value)
    return str(value)

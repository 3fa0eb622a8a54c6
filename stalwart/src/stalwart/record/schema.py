"""The record's schema, in one place: its rows, and its tables as data.

A backend turns `TABLES` into its own DDL (`sqlite.py`, `postgres/`) and moves
rows in and out with `to_columns` / `from_columns`. Column kinds are abstract:
"text", "int", "real", "bool" and "json" (any JSON value, stored as canonical text).
"""

from __future__ import annotations

import dataclasses
import json
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from operator import attrgetter
from typing import Any, TypeVar

from .. import codec, texts
from ..errors import NotRecordable, Unencodable


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
    # Moved on by one by every commit that touches the session (the backend does it, in
    # the commit's transaction, whatever the row given says): what a copy of the session
    # kept in process memory is checked against (`record/cache.py`).
    version: int = 0
    # Random, made when the session is first recorded: the session's part of every
    # idempotency key, so no other session, record or agent file ever makes the same key.
    # None on a session recorded before it existed (one is made at its next commit).
    identity: str | None = None
    # The name its person gave it (`Agent.name_session`); None: it is called by its first turn.
    title: str | None = None


@dataclass(frozen=True)
class RunRow:
    """One run: the steps a person's turn was read into, and where the run stands.

    `steps` is a list of planned steps in their recorded form ({"tool", "args", "clause",
    ...}: `stalwart.steps.PlannedStep`); `cursor` the index of the next step; `question`
    what a person is asked now (None when nothing waits); `failure` why the run is failing,
    in its recorded form ({"cause", "tool", "error", ...}: `_engine/failures.py`'s
    `RunFailure`); `reply` the text the person got when the run ended; `turn_seq` the
    memory position of the turn that started it (the rewind keeps it and hides everything
    after).

    `framework`, on a run a foreign agent loop drives through a guarded run
    (`stalwart.guarded`): {"name": the framework, "kept": its own checkpoint (JSON), or
    None}. None on a run of stalwart's own selector or model loop.
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
    # Every answer a person gave to the run's questions, in order: {"question": its id,
    # "kind", "tool", "step", "call", "text": the question, "answer", "by": who answered,
    # "at": when, "asked": when it was asked, "reason": why (skip, cancel all) or None}.
    # None on a run recorded before it existed, or never asked anything.
    answers: list[dict[str, Any]] | None = None
    framework: dict[str, Any] | None = None


# A call's kind for an ask of a model (the others are "read", "write" and "undo").
MODEL_KIND = "model"


@dataclass(frozen=True)
class CallRow:
    """One call of a tool, recorded before it is sent and finished after.

    `kind` is "read", "write", "undo", "probe" (a write's probe: `_engine/probe.py`) or
    `MODEL_KIND`. `status` is a `CallStatus`: it moves
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
    # A try of this call may have taken effect with no answer: it failed in doubt, or was
    # in flight when its process stopped. A later plain failure does not clear it.
    doubted: bool = False
    # On a write: its undo as declared when it ran ({"tool": ..., "args": bindings or
    # None}), {} when it declared none; the rollback uses this, not today's agent.yaml.
    # None on a write recorded before it existed (today's declaration is used).
    undo: dict[str, Any] | None = None


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
class LeaseRow:
    """Who may write a session's record now, until when, and the fencing token that
    proves it (`record/lease.py`)."""

    session: str
    token: int
    holder: str
    expires: float
    lock: str | None = None  # the lock it was taken under (`record/lease.py`)


@dataclass(frozen=True)
class Table:
    name: str
    row: type
    key: tuple[str, ...]
    kinds: dict[str, str]
    index: tuple[str, ...] = field(default=())
    # A column every commit moves on by one, for each of the table's rows it touches; an
    # upsert's own value for it is used only when the row is new.
    counter: str | None = None


TABLES: tuple[Table, ...] = (
    Table(
        "sessions",
        SessionRow,
        ("session",),
        {
            "session": "text",
            "user": "text",
            "agent": "text",
            "created": "real",
            "version": "int",
            "identity": "text",
            "title": "text",
        },
        counter="version",
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
            "answers": "json",
            "framework": "json",
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
            "doubted": "bool",
            "undo": "json",
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
    # Written only by the stores' own statements (taking and renewing a lease,
    # and every commit's fence), never as a row of `Changes`.
    Table(
        "leases",
        LeaseRow,
        ("session",),
        {
            "session": "text",
            "token": "int",
            "holder": "text",
            "expires": "real",
            "lock": "text",
        },
    ),
)

TABLE_OF: dict[type, Table] = {table.row: table for table in TABLES}

# The tables with an indexed column besides their key, whose rows a commit may move to
# another session (a backend sets that column only when it changes): each row's key.
MOVABLE: dict[type, Callable[[Any], Any]] = {
    table.row: attrgetter(*table.key)
    for table in TABLES
    if any(column not in table.key for column in table.index)
}

# Columns added after a table was first released: a backend adds them to a record made
# before, each with this default for the rows already there.
# A default of None adds the column with no default: NULL for the rows already there.
ADDED_COLUMNS: tuple[tuple[str, str, int | None], ...] = (
    ("calls", "tries", 0),
    ("sessions", "version", 0),
    ("calls", "doubted", 0),
    ("sessions", "identity", None),
    ("calls", "undo", None),
    ("leases", "lock", None),
    ("runs", "answers", None),
    ("sessions", "title", None),
    ("runs", "framework", None),
)

Row = TypeVar("Row")


@dataclass(frozen=True)
class _Layout:
    """How one row type maps to its table's columns, worked out once per table."""

    names: tuple[str, ...]
    read: Callable[[Any], tuple[Any, ...]]  # the row's attribute values, in column order
    json_at: tuple[int, ...]  # positions of the JSON columns
    bool_at: tuple[int, ...]  # positions of the bool columns
    real_at: tuple[int, ...]  # positions of the double columns


def _layout(table: Table) -> _Layout:
    names = tuple(table.kinds)
    kinds = tuple(table.kinds.values())
    return _Layout(
        names=names,
        # attrgetter returns a bare value for one name; every table has several columns.
        read=attrgetter(*names),
        json_at=tuple(i for i, kind in enumerate(kinds) if kind == "json"),
        bool_at=tuple(i for i, kind in enumerate(kinds) if kind == "bool"),
        real_at=tuple(i for i, kind in enumerate(kinds) if kind == "real"),
    )


_LAYOUTS: dict[type, _Layout] = {table.row: _layout(table) for table in TABLES}


def column_names(row_type: type) -> tuple[str, ...]:
    """The table's columns, in the order `column_values` gives them."""
    return _LAYOUTS[row_type].names


class _RecordedTexts:
    """The text each JSON value a load gave was parsed from, by the value's identity, and
    the value parsed from each such text, by the text's identity.

    A row a commit writes is mostly the row a load gave with a column or two replaced
    (`replace_row`): its other JSON values are the very objects parsed from the record, so
    they are written as the text they were read from, and read back (`as_loaded`) as those
    objects, instead of being rendered and parsed anew on every commit. A value a load gave
    is never changed in place (the kept copy of a session, `cache.py`, relies on that too),
    so the same object always has the same text. A value a commit was given (a call's
    arguments, its undo, a run's answers) is rendered once too: it is committed in flight
    and again with its outcome, and the engine never changes a row's value in place
    either; its text is kept one way only (`written`), so a load parses its own copy. Each
    entry holds its value and its text, so neither identity is used again by another
    object while the entry lives; past `max_chars` of text everything is forgotten at
    once, and rendering starts over.
    """

    def __init__(self, max_chars: int) -> None:
        self._max_chars = max_chars
        self._chars = 0
        self._text_of: dict[int, tuple[Any, str]] = {}
        self._value_of: dict[int, tuple[str, Any]] = {}

    def remember(self, value: Any, text: str) -> None:
        if self._written(value, text):
            self._value_of[id(text)] = (text, value)

    def written(self, value: Any, text: str) -> None:
        """`text` rendered from a value a commit was given: the value's text from now on,
        but not the other way: a load of the text parses its own copy, so what the record
        gives back is never an object its caller holds too."""
        self._written(value, text)

    def _written(self, value: Any, text: str) -> bool:
        if not isinstance(value, (dict, list)):
            return False  # a scalar renders about as fast as it is looked up
        if self._chars + len(text) > self._max_chars:
            self._text_of.clear()
            self._value_of.clear()
            self._chars = 0
        self._chars += len(text)
        self._text_of[id(value)] = (value, text)
        return True

    def text(self, value: Any) -> str | None:
        kept = self._text_of.get(id(value))
        return kept[1] if kept is not None and kept[0] is value else None

    def value(self, text: str) -> Any:
        kept = self._value_of.get(id(text))
        if kept is not None and kept[0] is text:
            return kept[1]
        value = json.loads(text)
        self.remember(value, text)
        return value


_RECORDED = _RecordedTexts(max_chars=16 * 1024 * 1024)


def column_values(row: Any) -> list[Any]:
    """A row's column values in `column_names` order, JSON columns rendered as text.

    Reads the row's attributes directly: JSON columns are rendered straight from the
    values the row holds, with no deep copy first (`dataclasses.asdict` copied every
    nested value only for the copy to be thrown away once rendered), and a value a load
    gave, or one rendered for an earlier commit, is written as that text (`_RecordedTexts`).
    """
    layout = _LAYOUTS[type(row)]
    values = list(layout.read(row))
    for index in layout.json_at:
        value = values[index]
        if value is None:
            continue
        text = _RECORDED.text(value)
        if text is None:
            text = _encode(value)
            _RECORDED.written(value, text)
        values[index] = text
    return values


def to_columns(row: Any) -> dict[str, Any]:
    """A row's column values by name, JSON columns rendered as text."""
    return dict(zip(_LAYOUTS[type(row)].names, column_values(row), strict=True))


def from_values(row_type: type[Row], values: Sequence[Any]) -> Row:
    """A row from its column values in `column_names` order, JSON parsed, bools made bools.

    A JSON text written from a value a load gave is given that value (`_RecordedTexts`)."""
    layout = _LAYOUTS[row_type]
    parsed = list(values)
    for index in layout.json_at:
        text = parsed[index]
        # None, or a backend's own parsed value, is as it came.
        parsed[index] = _RECORDED.value(text) if isinstance(text, str) else _load(text)
    for index in layout.bool_at:
        parsed[index] = bool(parsed[index])
    # Built as `replace_row` copies: a load makes every row of a session, and the frozen
    # `__init__` sets each of its fields through `object.__setattr__`.
    row = object.__new__(row_type)
    row.__dict__.update(zip(layout.names, parsed, strict=True))
    return row


def as_loaded(row: Row, values: Sequence[Any] | None = None) -> Row:
    """The row as a load gives it back, from its `column_values` (given, or made): JSON
    columns parsed from the text written, doubles as doubles, bools as bools.

    Its other columns are the row's own values (`column_values` reads them as they are),
    so the row's attributes are copied at once and only those columns set, instead of
    every column set from the values one by one (`from_values`)."""
    layout = _LAYOUTS[type(row)]
    written = column_values(row) if values is None else values
    names = layout.names
    copy = object.__new__(type(row))
    attributes = copy.__dict__
    attributes.update(row.__dict__)
    for index in layout.json_at:
        text = written[index]
        # None, or a backend's own parsed value, is as it came.
        attributes[names[index]] = _RECORDED.value(text) if isinstance(text, str) else _load(text)
    for index in layout.real_at:
        if written[index] is not None:
            attributes[names[index]] = float(written[index])
    for index in layout.bool_at:
        attributes[names[index]] = bool(written[index])
    return copy


def from_columns(row_type: type[Row], values: Mapping[str, Any]) -> Row:
    """A row from column values by name, JSON columns parsed and bools made bools."""
    return from_values(row_type, [values[name] for name in _LAYOUTS[row_type].names])


_FIELDS: dict[type, frozenset[str]] = {
    table.row: frozenset(f.name for f in dataclasses.fields(table.row)) for table in TABLES
}


def replace_row(row: Row, **changes: Any) -> Row:
    """A copy of a record row with `changes`, as `dataclasses.replace` makes it.

    Copies the row's attributes instead of calling its frozen `__init__` (which sets each
    field through `object.__setattr__`): a run replaces some forty rows, and the rows have
    no `__post_init__` to skip. An unknown field is refused, as `replace` refuses it.
    """
    fields = _FIELDS[type(row)]
    if not fields.issuperset(changes):
        unknown = changes.keys() - fields
        raise TypeError(f"{type(row).__name__} has no field {', '.join(sorted(unknown))}")
    copy = object.__new__(type(row))
    attributes = copy.__dict__
    attributes.update(row.__dict__)
    attributes.update(changes)
    return copy


def as_recorded(value: Any) -> Any:
    """A value as the record gives it back (JSON-shaped), whichever backend keeps it.

    `NotRecordable` for a value the record cannot hold exactly (see `json_default`). The
    value given back is written as the text it was parsed from (`_RecordedTexts`), not
    rendered again."""
    if value is None:
        return None
    return _RECORDED.value(_encode(value))


def recorded_text(value: Any) -> str:
    """The canonical JSON text the record keeps for a value (`NotRecordable` as above)."""
    return _encode(value)


def readable_text(text: str) -> str:
    """A text every backend keeps as given: a lone surrogate (no character at all) or a
    NUL (which PostgreSQL's text cannot hold) becomes U+FFFD."""
    if text.isascii() and "\x00" not in text:
        return text
    return "".join(
        "\ufffd" if character == "\x00" or "\ud800" <= character <= "\udfff" else character
        for character in text
    )


def _encode(value: Any) -> str:
    """`NotRecordable` for whatever keeps a value from being written, so a result beyond
    JSON (keys that are tuples, a structure that holds itself, an int longer than Python
    prints, an object whose own methods raise) fails its step as a recorded outcome
    instead of escaping after the send, again at every later access of the session."""
    made = _THREAD_ENCODER.made
    try:
        if made is None or isinstance(value, str):
            return _ENCODER.encode(value)
        return "".join(made(value, 0))
    except NotRecordable:
        _THREAD_ENCODER.renew()
        raise
    except Exception as error:  # whatever the value's own methods raised
        _THREAD_ENCODER.renew()
        raise NotRecordable(texts.not_encodable(_error_text(error))) from None


def _error_text(error: BaseException) -> str:
    try:
        message = readable_text(str(error))
    except Exception:
        message = ""
    return f"{type(error).__name__}: {message}" if message else type(error).__name__


def _load(value: Any) -> Any:
    if value is None or not isinstance(value, str):
        return value  # a backend with a native JSON type hands back parsed values
    return json.loads(value)


def json_default(value: Any) -> Any:
    """The JSON form of a value JSON has no type for, one level down (`codec.json_form`);
    the encoder renders what it returns. `NotRecordable` for a value that has none."""
    try:
        return codec.json_form(value)
    except Unencodable:
        raise NotRecordable(texts.not_recordable(value)) from None


# The canonical text of a JSON column: sorted keys, no spaces. One encoder, made once
# (`json.dumps` with options builds a new one on every call); it keeps no state.
_ENCODER = json.JSONEncoder(sort_keys=True, separators=(",", ":"), default=json_default)


class _ThreadEncoder(threading.local):
    """`_ENCODER`'s own C encoder, made once per thread instead of on every `encode`
    (which also builds a closure the C encoder never calls): the same text, as
    `JSONEncoder.encode` makes it. Per thread, because it keeps the containers it is
    inside of (to refuse a structure that holds itself), and made again after a failure,
    which may leave some there. None where json has no C encoder: `_ENCODER` itself."""

    def __init__(self) -> None:
        self.made: Callable[[Any, int], list[str]] | None = None
        self.renew()

    def renew(self) -> None:
        make = getattr(json.encoder, "c_make_encoder", None)
        if make is None:
            return
        self.made = make(
            {},  # the containers being rendered: empty again once one is rendered
            _ENCODER.default,
            json.encoder.encode_basestring_ascii,
            None,
            _ENCODER.key_separator,
            _ENCODER.item_separator,
            _ENCODER.sort_keys,
            _ENCODER.skipkeys,
            _ENCODER.allow_nan,
        )


_THREAD_ENCODER = _ThreadEncoder()

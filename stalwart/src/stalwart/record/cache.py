"""A session's record kept in process memory between calls, used only while it is current.

Every call of the runtime locks a session, loads it and commits. Loading and parsing the
whole session on every call cost more than anything else a call does besides its commits,
and grew with the session's history. So a store keeps the sessions it loaded, as a load
gives them, and a call uses the kept copy only when the record says it is current:

- every commit bumps the session row's `version` (the backend does it, in the commit's
  own transaction, for every session the commit touches, whoever commits);
- `lock` reads the session's `version` (and `created`) right after the lock is had, in
  the same round trip on PostgreSQL; that is the stamp this call is validated with;
- `load` under the lock gives the kept copy only if it was kept at that very stamp, and
  otherwise loads from the record (and keeps what it loaded);
- a commit under the lock applies its rows (as a load would give them back) to the kept
  copy and moves its stamp on by one, as the record's; a commit that fails, touches
  several sessions or is made outside the session's lock drops what is kept of them.

So a second process (or a second store object in this one) that changed the session has
moved its version on, and its change always wins: the copy kept here no longer matches
and is not used. Nothing is used without a lock, and nothing outlives a mismatch.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Final

from .base import Changes, SessionRecord
from .schema import MOVABLE, CallRow, MessageRow, RunRow, SessionRow, replace_row

# What validates a kept copy: the session row's (version, created), or None when the
# record has no row for the session.
Stamp = tuple[int, float] | None


class _Unknown:
    """A stamp nothing matches: what a call holds once it cannot tell the version."""


UNKNOWN: Final = _Unknown()
MISS: Final = object()  # `get` found nothing current: load from the record

SESSIONS_KEPT = 512


def stamp_of(session: SessionRow) -> Stamp:
    return (session.version, session.created)


class SessionCache:
    """The kept copies of one store, and the stamps of the locks this process holds."""

    def __init__(self, size: int = SESSIONS_KEPT) -> None:
        self._size = size
        self._kept: OrderedDict[str, _Kept] = OrderedDict()
        self._guard = threading.Lock()
        self._held = threading.local()
        self.hits = 0  # loads answered from a kept copy (tests and benchmarks read them)
        self.misses = 0  # loads under a lock that went to the record

    # --- the lock ---

    def locked(self, session: str, stamp: Stamp) -> None:
        """This thread now holds the session's lock; the record says `stamp`."""
        self._holds()[session] = stamp

    def released(self, session: str) -> None:
        self._holds().pop(session, None)

    # --- loads ---

    def get(self, session: str) -> SessionRecord | None | object:
        """The session as the record has it now, if that is known here; else `MISS`."""
        holds = self._holds()
        if session not in holds:
            return MISS  # no lock, no stamp to validate with
        stamp = holds[session]
        if stamp is None:
            return None  # the record has no row for it: a load would give None
        with self._guard:
            kept = self._kept.get(session)
            if kept is not None and kept.stamp == stamp:
                self._kept.move_to_end(session)
                self.hits += 1
                return kept.current()
            self.misses += 1
        return MISS

    def loaded(self, session: str, record: SessionRecord | None) -> None:
        """A load under the lock read `record` from the record: keep it at its stamp."""
        holds = self._holds()
        if session not in holds or record is None:
            return
        stamp = stamp_of(record.session)
        if holds[session] != stamp:  # changed between the lock and the load: not ours
            holds[session] = UNKNOWN
            self._drop([session])
            return
        self._keep(session, stamp, record)

    def kept_keys(self, session: str) -> set[tuple[type, Any]] | None:
        """The keys of the session's rows the record holds now, of the tables whose rows
        a commit may move between sessions (`schema.MOVABLE`), as (row type, key): known
        while this thread holds the session's lock and a copy is kept at its stamp, else
        None. A row whose key is here is already the session's: a commit need not move it."""
        holds = self._holds()
        if session not in holds:
            return None
        with self._guard:
            kept = self._kept.get(session)
            if kept is None or kept.stamp != holds[session]:
                return None
            return kept.keys

    # --- commits ---

    def failed(self, changes: Changes) -> None:
        """A commit that raised: whatever it did or did not write, nothing kept is sure."""
        touched = changes.touched()
        holds = self._holds()
        for session in touched:
            if session in holds:
                holds[session] = UNKNOWN
        self._drop(touched)

    def committed(self, changes: Changes, as_loaded: Callable[[Any], Any]) -> None:
        """A commit succeeded: each row of `changes` is in the record, and each session
        it touched has its version moved on by one (a new session row is written with
        its own). `as_loaded(row)` is the row as a load would give it back."""
        touched = changes.touched()
        holds = self._holds()
        if len(touched) != 1 or touched[0] not in holds:
            self._drop(touched)
            for session in touched:
                if session in holds:
                    holds[session] = UNKNOWN
            return
        session = touched[0]
        before = holds[session]
        given = [row for row in changes.sessions if row.session == session]
        if before is None and given:
            # A new session: the record held no row of it when its lock was had, and its
            # rows are the ones every later load reads (the runtime's first commit of a
            # session writes its row), so what the commit wrote is the whole of it, kept
            # at the stamp it wrote.
            stamp = stamp_of(given[-1])
            holds[session] = stamp
            new = _Kept(stamp, SessionRecord(session=given[-1]))
            new.pending.append((changes, as_loaded))
            new.keys.update(_movable_keys(changes.rows()))
            self._put(session, new)
            return
        if before is None or isinstance(before, _Unknown):
            # A version not known here (or rows with no session row): nothing is kept.
            holds[session] = UNKNOWN
            self._drop([session])
            return
        version, created = before
        after: Stamp = (version + 1, given[-1].created if given else created)
        holds[session] = after
        with self._guard:
            kept = self._kept.get(session)
            if kept is None or kept.stamp != before:
                self._kept.pop(session, None)
                return
            # Applied when the copy is next used: a row committed again before then (in
            # flight, then its outcome) is read back once, as its latest.
            kept.stamp = after
            kept.pending.append((changes, as_loaded))
            kept.keys.update(_movable_keys(changes.rows()))

    # --- inside ---

    def _holds(self) -> dict[str, Stamp | _Unknown]:
        holds: dict[str, Stamp | _Unknown] | None = getattr(self._held, "holds", None)
        if holds is None:
            holds = self._held.holds = {}
        return holds

    def _keep(self, session: str, stamp: Stamp, record: SessionRecord) -> None:
        self._put(session, _Kept(stamp, record))

    def _put(self, session: str, kept: _Kept) -> None:
        with self._guard:
            self._kept[session] = kept
            self._kept.move_to_end(session)
            while len(self._kept) > self._size:
                self._kept.popitem(last=False)

    def _drop(self, sessions: Iterable[str]) -> None:
        with self._guard:
            for session in sessions:
                self._kept.pop(session, None)


class _Kept:
    """A session's copy at `stamp`: `record` with the commits made since applied to it."""

    def __init__(self, stamp: Stamp, record: SessionRecord) -> None:
        self.stamp = stamp
        self.record = record
        self.pending: list[tuple[Changes, Callable[[Any], Any]]] = []
        self.keys: set[tuple[type, Any]] = set(_movable_keys([*record.runs, *record.calls]))

    def current(self) -> SessionRecord:
        if self.pending:
            self.record = _applied(self.record, self.pending, self.stamp)
            self.pending = []
        return self.record


def _movable_keys(rows: Iterable[Any]) -> Iterator[tuple[type, Any]]:
    for row in rows:
        key = MOVABLE.get(type(row))
        if key is not None:
            yield type(row), key(row)


def _applied(
    record: SessionRecord, commits: list[tuple[Changes, Callable[[Any], Any]]], stamp: Stamp
) -> SessionRecord:
    """The record with the commits' rows upserted by key, each table in load order, each
    row as a load gives it back (`as_loaded`), read back only in its latest form."""
    assert stamp is not None
    session = record.session
    runs: dict[str, tuple[Any, Callable[[Any], Any]]] = {}
    calls: dict[str, tuple[Any, Callable[[Any], Any]]] = {}
    messages: dict[int, tuple[Any, Callable[[Any], Any]]] = {}
    for changes, as_loaded in commits:
        if changes.sessions:
            session = as_loaded(changes.sessions[-1])
        for run in changes.runs:
            runs[run.run_id] = (run, as_loaded)
        for call in changes.calls:
            calls[call.call_id] = (call, as_loaded)
        for message in changes.messages:
            messages[message.seq] = (message, as_loaded)
    return SessionRecord(
        session=replace_row(session, version=stamp[0]),
        runs=_upserted(record.runs, runs, _run_key, _run_order),
        calls=_upserted(record.calls, calls, _call_key, _seq),
        messages=_upserted(record.messages, messages, _message_key, _seq),
    )


def _upserted(
    rows: tuple[Any, ...],
    changed: dict[Any, tuple[Any, Callable[[Any], Any]]],
    key: Callable[[Any], Any],
    order: Callable[[Any], Any],
) -> tuple[Any, ...]:
    if not changed:
        return rows
    by_key = {key(row): row for row in rows}
    for at, (row, as_loaded) in changed.items():
        by_key[at] = as_loaded(row)
    # A load orders by these columns; sorting rows already in order costs one pass.
    return tuple(sorted(by_key.values(), key=order))


def _run_key(run: RunRow) -> str:
    return run.run_id


def _run_order(run: RunRow) -> int:
    return run.number


def _call_key(call: CallRow) -> str:
    return call.call_id


def _message_key(message: MessageRow) -> int:
    return message.seq


def _seq(row: CallRow | MessageRow) -> int:
    return row.seq

"""One session's record, loaded under its lock, with the changes not yet committed.

The run driver reads and changes rows here; `commit()` writes every change in one
durable transaction. Nothing in a Ledger outlives the call that opened it.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

from ..clock import Clock
from . import Changes, SessionRecord, Store
from .history import PastCall
from .lease import Lease
from .schema import (
    TOOK_EFFECT,
    CallRow,
    CallStatus,
    MessageRow,
    RunRow,
    SessionRow,
    replace_row,
)

# Every call that was sent, whatever came of it. A declined, refused or did-not-happen call
# never reached anyone, and an undo done by hand was not sent by the agent.
_SEEN_BY_RULES = frozenset(
    {
        CallStatus.RAN,
        CallStatus.FAILED,
        CallStatus.IN_FLIGHT,
        CallStatus.IN_DOUBT,
        CallStatus.HAPPENED,
    }
)


class Ledger:
    def __init__(
        self,
        store: Store,
        clock: Clock,
        record: SessionRecord,
        *,
        new: bool,
        lease: Lease | None = None,
    ) -> None:
        self.store = store
        self.lease = lease
        self.clock = clock
        self.session = record.session
        self.runs: list[RunRow] = list(record.runs)
        self.calls: list[CallRow] = list(record.calls)
        self.messages: list[MessageRow] = list(record.messages)
        # Where each row sits in its list, by key, so a changed row replaces its old
        # self without a scan; a run puts some forty rows.
        self._run_at = {run.run_id: at for at, run in enumerate(self.runs)}
        self._call_at = {call.call_id: at for at, call in enumerate(self.calls)}
        self._message_at = {message.seq: at for at, message in enumerate(self.messages)}
        # A record's calls and messages are in `seq` order (`Store.load`): the last is the
        # latest.
        self._last_call_seq = self.calls[-1].seq if self.calls else 0
        self._last_message_seq = self.messages[-1].seq if self.messages else -1
        self._new_session = new
        self._pending: _Pending = _Pending()

    @classmethod
    def open(
        cls,
        store: Store,
        clock: Clock,
        session: str,
        user: str,
        agent: str,
        lease: Lease | None = None,
    ) -> Ledger:
        """The session as recorded, or a new one (recorded with the first commit)."""
        record = store.load(session)
        if record is not None:
            return cls(store, clock, record, new=False, lease=lease)
        row = SessionRow(
            session=session, user=user, agent=agent, created=clock.now(), identity=new_identity()
        )
        return cls(store, clock, SessionRecord(session=row), new=True, lease=lease)

    # --- reading ---

    @property
    def lease_token(self) -> int | None:
        """The fencing token of the lease this ledger was opened under (`current_call`)."""
        return self.lease.token if self.lease is not None else None

    @property
    def identity(self) -> str:
        """The session's random identity, the session's part of every key it makes; one
        recorded before identities existed gets one now, kept with the next commit."""
        if self.session.identity is None:
            self.session = replace_row(self.session, identity=new_identity())
            self._new_session = True  # the row goes with the next commit
        assert self.session.identity is not None
        return self.session.identity

    def put_session(self, session: SessionRow) -> SessionRow:
        """The session's row changed (its title): written with the next commit."""
        self.session = session
        self._new_session = True
        return session

    def latest_run(self) -> RunRow | None:
        return self.runs[-1] if self.runs else None

    def run_calls(self, run_id: str) -> list[CallRow]:
        return [call for call in self.calls if call.run_id == run_id]

    def call(self, call_id: str) -> CallRow | None:
        at = self._call_at.get(call_id)
        return self.calls[at] if at is not None else None

    def history(self) -> list[PastCall]:
        """Every call the session made, as the rulebook reads it; never rewound. A write's
        probe (evidence for a person, asked by stalwart itself) is not among them."""
        return [
            PastCall(
                tool=call.tool,
                args=call.args,
                ran=call.status in TOOK_EFFECT,
                undone=call.undone_by is not None,
            )
            for call in self.calls
            if call.status in _SEEN_BY_RULES and call.kind not in ("model", "probe")
        ]

    # --- changing ---

    def put_run(self, run: RunRow) -> RunRow:
        run = replace_row(run, updated=self.clock.now())
        _put(self.runs, self._run_at, run.run_id, run)
        _pend(self._pending.runs, run.run_id, run)
        return run

    def put_call(self, call: CallRow) -> CallRow:
        _put(self.calls, self._call_at, call.call_id, call)
        self._last_call_seq = max(self._last_call_seq, call.seq)
        _pend(self._pending.calls, call.call_id, call)
        return call

    def next_call_seq(self) -> int:
        return self._last_call_seq + 1

    def add_message(self, role: str, content: str, run_id: str | None) -> MessageRow:
        seq = self._last_message_seq + 1
        message = MessageRow(self.session.session, seq, role, content, run_id, rewound=False)
        self._last_message_seq = seq
        _put(self.messages, self._message_at, seq, message)
        _pend(self._pending.messages, seq, message)
        return message

    def hide_message(self, message: MessageRow) -> None:
        hidden = replace_row(message, rewound=True)
        _put(self.messages, self._message_at, hidden.seq, hidden)
        _pend(self._pending.messages, hidden.seq, hidden)

    def commit(self) -> None:
        """Write every change since the last commit in one durable transaction."""
        pending, self._pending = self._pending, _Pending()
        sessions = [self.session] if self._new_session else []
        changes = Changes(
            sessions=sessions,
            runs=list(pending.runs.values()),
            calls=list(pending.calls.values()),
            messages=list(pending.messages.values()),
        )
        self._new_session = False
        self.store.commit(changes)


def new_identity() -> str:
    """A session's identity: 128 random bits, as hex."""
    return uuid.uuid4().hex


@dataclass
class _Pending:
    """The rows changed since the last commit, by key, each in the order it last changed."""

    runs: dict[str, RunRow] = field(default_factory=dict)
    calls: dict[str, CallRow] = field(default_factory=dict)
    messages: dict[int, MessageRow] = field(default_factory=dict)


def _put(rows: list[Any], at: dict[Any, int], key: Any, row: Any) -> None:
    """Replace the row of `key` where it is, or add it last."""
    index = at.get(key)
    if index is None:
        at[key] = len(rows)
        rows.append(row)
    else:
        rows[index] = row


def _pend(pending: dict[Any, Any], key: Any, row: Any) -> None:
    # A row changed again goes after the rows changed since: the order it was put in.
    pending.pop(key, None)
    pending[key] = row

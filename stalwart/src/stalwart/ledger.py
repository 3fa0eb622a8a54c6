"""One session's record, loaded under its lock, with the changes not yet committed.

The run driver reads and changes rows here; `commit()` writes every change in one
durable transaction. Nothing in a Ledger outlives the call that opened it.
"""

from __future__ import annotations

from typing import Any

from .clock import Clock
from .record import Changes, SessionRecord, Store
from .record.schema import (
    TOOK_EFFECT,
    CallRow,
    CallStatus,
    MessageRow,
    RunRow,
    SessionRow,
    replace_row,
)
from .rulebook import PastCall

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
    def __init__(self, store: Store, clock: Clock, record: SessionRecord, *, new: bool) -> None:
        self.store = store
        self.clock = clock
        self.session = record.session
        self.runs: list[RunRow] = list(record.runs)
        self.calls: list[CallRow] = list(record.calls)
        self.messages: list[MessageRow] = list(record.messages)
        self._changes = Changes(sessions=[record.session] if new else [])

    @classmethod
    def open(
        cls,
        store: Store,
        clock: Clock,
        session: str,
        user: str,
        agent: str,
        record: SessionRecord | None,
    ) -> Ledger:
        """The session as `record` holds it (the store's load), or a new one (recorded with
        the first commit) when it was never recorded."""
        if record is not None:
            return cls(store, clock, record, new=False)
        row = SessionRow(session=session, user=user, agent=agent, created=clock.now())
        return cls(store, clock, SessionRecord(session=row), new=True)

    # --- reading ---

    def latest_run(self) -> RunRow | None:
        return self.runs[-1] if self.runs else None

    def run_calls(self, run_id: str) -> list[CallRow]:
        return [call for call in self.calls if call.run_id == run_id]

    def call(self, call_id: str) -> CallRow | None:
        return next((call for call in self.calls if call.call_id == call_id), None)

    def history(self) -> list[PastCall]:
        """Every call the session made, as the rulebook reads it; never rewound."""
        return [
            PastCall(
                tool=call.tool,
                args=call.args,
                ran=call.status in TOOK_EFFECT,
                undone=call.undone_by is not None,
            )
            for call in self.calls
            if call.status in _SEEN_BY_RULES and call.kind != "model"
        ]

    # --- changing ---

    def put_run(self, run: RunRow) -> RunRow:
        run = replace_row(run, updated=self.clock.now())
        self._replace(self.runs, "run_id", run)
        self._changes.runs = [r for r in self._changes.runs if r.run_id != run.run_id] + [run]
        return run

    def put_call(self, call: CallRow) -> CallRow:
        self._replace(self.calls, "call_id", call)
        self._changes.calls = [c for c in self._changes.calls if c.call_id != call.call_id]
        self._changes.calls.append(call)
        return call

    def next_call_seq(self) -> int:
        return max((call.seq for call in self.calls), default=0) + 1

    def add_message(self, role: str, content: str, run_id: str | None) -> MessageRow:
        seq = max((m.seq for m in self.messages), default=-1) + 1
        message = MessageRow(self.session.session, seq, role, content, run_id, rewound=False)
        self.messages.append(message)
        self._changes.messages.append(message)
        return message

    def hide_message(self, message: MessageRow) -> None:
        hidden = replace_row(message, rewound=True)
        self._replace(self.messages, "seq", hidden)
        self._changes.messages = [m for m in self._changes.messages if m.seq != hidden.seq]
        self._changes.messages.append(hidden)

    def commit(self) -> None:
        """Write every change since the last commit in one durable transaction."""
        changes, self._changes = self._changes, Changes()
        self.store.commit(changes)

    @staticmethod
    def _replace(rows: list[Any], key: str, row: Any) -> None:
        for index, existing in enumerate(rows):
            if getattr(existing, key) == getattr(row, key):
                rows[index] = row
                return
        rows.append(row)

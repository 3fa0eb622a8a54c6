"""What the model reads next: the session's messages, less what a rewind took out.

The memory is rewound; the record is not. A rewind hides every message a run added
after the person's turn that started it and adds one summary reply; the calls in the
record stay as they were.
"""

from __future__ import annotations

from dataclasses import dataclass

from .ledger import Ledger
from .schema import MessageRow, RunRow


@dataclass(frozen=True)
class Message:
    """One message the model reads: role "user", "assistant" or "tool"."""

    role: str
    content: str


def read_next(messages: list[MessageRow]) -> list[Message]:
    return [Message(m.role, m.content) for m in messages if not m.rewound]


def rewind(ledger: Ledger, run: RunRow, summary: str) -> bool:
    """Take the run's own messages out of memory and add its summary; False if done already."""
    own = [
        m
        for m in ledger.messages
        if m.run_id == run.run_id and m.seq > run.turn_seq and not m.rewound
    ]
    if not own:
        return False
    for message in own:
        ledger.hide_message(message)
    ledger.add_message("assistant", summary, None)
    return True

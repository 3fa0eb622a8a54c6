"""The shape memo: a clause of a shape read before takes the same tool and the same tokens
as its arguments, without reading again (one memo per tool set, kept with its vocabulary).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from .tokens import Kind, Token

# What a clause's reading depends on: each token's kind, each word as lower-case text, and
# which tokens have the same text (a value said twice is one value). Each value's own text
# is only converted at the end, so clauses of one shape read as one tool with their values
# taken from the same positions ("charge order 4411 40.00" as "charge order 17 5.00").
Shape = tuple[tuple[Kind, str | None, int], ...]
MemoEntry = tuple[str, tuple[tuple[str, int, Any], ...]]  # tool, (param, position, type)


def shape_of(tokens: Sequence[Token]) -> Shape | None:
    if len(tokens) > _MEMO_MAX_TOKENS:
        return None  # a long clause is rarely said twice: not kept
    first: dict[str, int] = {}
    seen = first.setdefault
    word = Kind.WORD
    # A list made first: tuple() of a generator is the slower way to the same tuple.
    return tuple(
        [
            (kind, lower if kind is word else None, seen(text, position))
            for position, (kind, text, _, lower) in enumerate(tokens)
        ]
    )


_MEMO_MAX_TOKENS = 32
_MEMO_SIZE = 2048


class ShapeMemo:
    """The readings of clause shapes read before over one tool set, the oldest forgotten
    first; only clauses that were read (a reason names the clause's own values)."""

    def __init__(self, size: int = _MEMO_SIZE) -> None:
        self._size = size
        self._entries: dict[Shape, MemoEntry] = {}
        self._guard = threading.Lock()

    def get(self, shape: Shape) -> MemoEntry | None:
        return self._entries.get(shape)

    def put(self, shape: Shape, entry: MemoEntry) -> None:
        with self._guard:
            if len(self._entries) >= self._size:
                del self._entries[next(iter(self._entries))]
            self._entries[shape] = entry

    def clear(self) -> None:
        with self._guard:
            self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)

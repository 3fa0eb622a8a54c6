"""The session's calls as the rulebook reads them, made only when a rule reads them.

Every step is checked before it is asked about and again before it is sent, and every
undo before it is sent, each against the session's history (`Ledger.history`: a
`PastCall` of each call). Most rules never read it (a cap on one argument of one call,
and every step of a tool with no rule); an order's steps are checked some eight times.
`PastCalls` stands for that history and builds it the first time a rule reads it, once
per check: what the rule reads is the ledger's history at that moment, as before.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import overload

from ..policy.rulebook import PastCall
from ..record.ledger import Ledger


class PastCalls(Sequence[PastCall]):
    """`ledger.history()`, read on first use."""

    __slots__ = ("_calls", "_ledger")

    def __init__(self, ledger: Ledger) -> None:
        self._ledger = ledger
        self._calls: list[PastCall] | None = None

    def _read(self) -> list[PastCall]:
        if self._calls is None:
            self._calls = self._ledger.history()
        return self._calls

    @overload
    def __getitem__(self, index: int) -> PastCall: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[PastCall]: ...

    def __getitem__(self, index: int | slice) -> PastCall | Sequence[PastCall]:
        return self._read()[index]

    def __len__(self) -> int:
        return len(self._read())

    def __iter__(self) -> Iterator[PastCall]:
        return iter(self._read())

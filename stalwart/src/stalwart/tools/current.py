"""The call being sent now, as the tool it calls can read it: `stalwart.current_call()`.

The run driver sets it around each send (every try of a call, every try of an undo) and
resets it after, so a tool, or anything the tool calls, can read the call's idempotency
key, session, step and try number without declaring an `idempotency_key` parameter.
"""

from __future__ import annotations

from contextvars import ContextVar, Token
from dataclasses import dataclass


@dataclass(frozen=True)
class CurrentCall:
    """One send of one call.

    `key` is the idempotency key (the same on every try, and after a resume); `step` the
    step's number in its run (for an undo, the step of the write it undoes); `try_number`
    counts from 1 across retries and resumes; `kind` is "read", "write" or "undo".
    `lease` is the fencing token of the worker's lease on the session (record/lease.py):
    greater for every later holder, so a service that keeps the greatest it has seen
    can refuse a call from a worker whose lease ended. None outside a lease.
    """

    key: str
    session: str
    run: str
    step: int
    tool: str
    kind: str
    try_number: int
    lease: int | None = None


_CURRENT: ContextVar[CurrentCall | None] = ContextVar("stalwart_current_call", default=None)


def current_call() -> CurrentCall | None:
    """The call being sent now, or None outside a send."""
    return _CURRENT.get()


def sending(call: CurrentCall) -> _Sending:
    """Make `call` the current call for the duration of one send (`with sending(call):`)."""
    return _Sending(call)


class _Sending:
    """`sending`'s context: a class, not a generator under `contextlib.contextmanager`,
    whose entering and leaving cost some fifty bytecodes more, on every try sent."""

    __slots__ = ("_call", "_token")

    def __init__(self, call: CurrentCall) -> None:
        self._call = call
        self._token: Token[CurrentCall | None] | None = None

    def __enter__(self) -> CurrentCall:
        self._token = _CURRENT.set(self._call)
        return self._call

    def __exit__(self, *_: object) -> None:
        if self._token is not None:
            _CURRENT.reset(self._token)
            self._token = None

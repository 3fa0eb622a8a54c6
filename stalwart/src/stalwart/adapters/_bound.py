"""What the three adapters share: a guarded run open on a thread of its own, a driver's own
event loop for its `*_sync` methods, and the history as stalwart's memory rewinds it.

A `GuardedRun` holds the session's lock and lease on the thread that opened it, so every
call of the run goes to that one thread (`Bound.call`, `Bound.call_sync`), whichever
thread or event loop the framework runs its tools on. The framework is imported by the
adapters only: nothing here knows one.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Self, TypeVar

from .. import texts
from ..errors import RunStateError
from ..guarded import Guard, GuardedRun
from ..replies import Reply, Waiting

_R = TypeVar("_R")
_M = TypeVar("_M")

# A run in these states failed and nothing of it remains to undo: its memory is rewound.
REWOUND_STATES = frozenset({"rolled_back", "abandoned", "ended_by_operator"})

_THREAD_PREFIX = "stalwart-guard"


@dataclass
class Bound:
    """A guarded run, open on a thread of its own (its lease is that thread's): `kept` is
    what the record keeps beside the run (the adapter's checkpoint)."""

    run: GuardedRun
    executor: ThreadPoolExecutor
    kept: dict[str, Any] = field(default_factory=dict)

    def call_sync(self, work: Callable[..., _R], *args: Any) -> _R:
        """`work(run, *args)`, on the run's thread, from a thread that is not an event loop's."""
        return self.executor.submit(work, self.run, *args).result()

    async def call(self, work: Callable[..., _R], *args: Any) -> _R:
        """`work(run, *args)`, on the run's thread, awaited."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self.executor, functools.partial(work, self.run, *args))


_B = TypeVar("_B", bound=Bound)


@asynccontextmanager
async def opened(
    guard: Guard,
    user: str,
    session: str | None,
    make: Callable[[GuardedRun, ThreadPoolExecutor], _B],
) -> AsyncIterator[_B]:
    """The session's run opened on a thread of its own (`make` builds the adapter's
    `Bound`, its `kept` read from the record), and closed on that thread at the end."""
    executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix=_THREAD_PREFIX)
    loop = asyncio.get_running_loop()
    try:
        run = await loop.run_in_executor(executor, lambda: guard.open(user, session=session))
        try:
            bound = make(run, executor)
            bound.kept = await loop.run_in_executor(executor, _kept, run)
            yield bound
        finally:
            await loop.run_in_executor(executor, run.close)
    finally:
        executor.shutdown(wait=True)


@contextmanager
def opened_sync(
    guard: Guard,
    user: str,
    session: str | None,
    make: Callable[[GuardedRun, ThreadPoolExecutor], _B],
) -> Iterator[_B]:
    """`opened`, for a caller that is not on an event loop."""
    executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix=_THREAD_PREFIX)
    try:
        run = executor.submit(lambda: guard.open(user, session=session)).result()
        try:
            bound = make(run, executor)
            bound.kept = executor.submit(_kept, run).result()
            yield bound
        finally:
            executor.submit(run.close).result()
    finally:
        executor.shutdown(wait=True)


def _kept(run: GuardedRun) -> dict[str, Any]:
    kept = run.kept
    return dict(kept) if isinstance(kept, Mapping) else {}


class Replied:
    """A guarded result's `text`, `waiting` and `state`: its stalwart `reply`'s."""

    reply: Reply

    @property
    def text(self) -> str:
        return self.reply.text

    @property
    def waiting(self) -> list[Waiting]:
        return self.reply.waiting

    @property
    def state(self) -> str:
        return self.reply.state


class Closing:
    """A driver used in `with`: `close` at the end."""

    def close(self) -> None:
        """Nothing to close here: the record (and a checkpointer) are the app's."""

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()


class OwnLoop(Closing):
    """A driver's own event loop, for its `*_sync` methods: made at the first, closed by
    `close` (or by leaving `with`). A `*_sync` method called on a running event loop is
    refused (`RunStateError`): await the method without `_sync` there."""

    _loop: asyncio.AbstractEventLoop | None = None

    def _sync(self, work: Coroutine[Any, Any, _R]) -> _R:
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            pass
        else:
            work.close()
            raise RunStateError(texts.DRIVER_SYNC_IN_LOOP)
        if self._loop is None or self._loop.is_closed():
            self._loop = asyncio.new_event_loop()
        return self._loop.run_until_complete(work)

    async def _blocking(self, work: Callable[[], _R]) -> _R:
        """A call that takes the session's lock itself, off the event loop."""
        return await asyncio.get_running_loop().run_in_executor(None, work)

    def close(self) -> None:
        """Close the driver's own event loop (the `*_sync` methods'), if it made one."""
        loop, self._loop = self._loop, None
        if loop is not None and not loop.is_closed():
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()

    def __del__(self) -> None:
        loop = self._loop
        if loop is not None and not loop.is_running() and not loop.is_closed():
            loop.close()


def rewound(reply: Reply) -> bool:
    """Whether the run's memory was rewound (it failed and nothing remains to undo)."""
    return reply.state in REWOUND_STATES


def rewind(
    messages: Sequence[_M],
    kept: Mapping[str, Any],
    reply: Reply,
    turn: Callable[[str], _M],
    said: Callable[[str], _M],
) -> list[_M]:
    """The history as stalwart's memory is rewound: the history before the failed run's
    turn (`kept["before"]`, a count), the turn, and the run's one reply (`turn` and `said`
    build the framework's messages)."""
    before = int(kept.get("before", 0))
    return [*messages[:before], turn(str(kept.get("turn", ""))), said(reply.text)]

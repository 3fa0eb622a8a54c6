"""Where a run advances: a pool of run threads, never the thread that serves a request.

A turn or an answer is a request; the run it moves may then send a slow tool, retry it,
or wait out an undo's backoff, all under the session's lock (the library is synchronous
and holds the lock across the send). If that happened in the server's own request
threads (or, worse, its event loop), a few slow sessions would take every thread and
freeze every other page. So a request hands the work to this pool and, if it asked to
wait, awaits it without holding a thread; pages, event streams and other sessions'
answers are served by the event loop and its own small thread pool, which no run ever
occupies. The run also goes on if the browser goes away: it belongs to the record, not
to the request. The pool is sized by `--run-threads`; past that, turns queue, pages don't.

Two jobs for one session are serialised by the session's lock in the record (across
processes too); the pool only counts what this process is advancing, so the background
resumer does not queue behind a live run.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

from .progress import Board

T = TypeVar("T")

DEFAULT_RUN_THREADS = 64


class Runner:
    def __init__(self, board: Board, threads: int = DEFAULT_RUN_THREADS) -> None:
        self.board = board
        self._pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="stalwart-run")
        self._guard = threading.Lock()
        self._busy: Counter[str] = Counter()

    def busy(self, session: str) -> bool:
        with self._guard:
            return self._busy[session] > 0

    def busy_sessions(self) -> list[str]:
        """The sessions this process is advancing (or has queued) now, sorted."""
        with self._guard:
            return sorted(self._busy)

    def submit(self, session: str, work: Callable[[], T]) -> Future[T]:
        with self._guard:
            self._busy[session] += 1
        self.board.changed()

        def job() -> T:
            try:
                return work()
            finally:
                with self._guard:
                    self._busy[session] -= 1
                    if self._busy[session] <= 0:
                        del self._busy[session]
                self.board.set_line(session, None)

        return self._pool.submit(job)

    def shutdown(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=False)

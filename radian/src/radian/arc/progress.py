"""Live progress of `radian arc run` on a terminal: what each worker is doing, refreshed in
place (Rich), with the loop's lines printed above it as before.

Used only when stdout is a terminal; elsewhere (a pipe, a file, --json) `run` prints the
same lines as it always has. Rich honours NO_COLOR itself (no colours, the view stays).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from radian.arc import texts

if TYPE_CHECKING:  # Rich is loaded only when a live view is shown
    from rich.console import Console
    from rich.table import Table


@dataclass(frozen=True)
class WorkerRow:
    task: str
    attempt_id: str
    started: float  # time.monotonic() at the claim
    log: Path  # the attempt's worker.log: its last line and its age are the last activity
    cost_usd: float = 0.0  # the task's cost so far (every ended attempt and review)


class Watched(Protocol):
    def progress_rows(self) -> list[WorkerRow]: ...

    def next_wake(self) -> str | None: ...


def last_activity(log: Path, now: float) -> str:
    """The worker's last line of output and how long ago it came."""
    try:
        stat = log.stat()
        with log.open("rb") as stream:
            stream.seek(max(0, stat.st_size - 4096))
            tail = stream.read().decode(errors="replace").strip().splitlines()
    except OSError:
        return "-"
    if not tail:
        return "-"
    age = max(0.0, time.time() - stat.st_mtime)
    return f"{tail[-1][:60]} ({age:.0f}s ago)"


def table(watched: Watched, now: float | None = None) -> Table:
    from rich.table import Table

    moment = time.monotonic() if now is None else now
    view = Table(title=texts.progress_title(watched.next_wake()), expand=False)
    for column in texts.PROGRESS_COLUMNS:
        view.add_column(column)
    for row in watched.progress_rows():
        elapsed = f"{moment - row.started:.0f}s"
        view.add_row(row.task, row.attempt_id, elapsed, texts.cost_so_far(row.cost_usd),
                     last_activity(row.log, moment))  # fmt: skip
    return view


class LiveView:
    """Rich's Live display over a loop; `echo` prints a line above it."""

    def __init__(self, watched: Watched, console: Console | None = None) -> None:
        from rich.console import Console
        from rich.live import Live

        self.console = console or Console()
        self.live = Live(
            get_renderable=lambda: table(watched),
            console=self.console,
            refresh_per_second=2,
            transient=True,
        )

    def __enter__(self) -> LiveView:
        self.live.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.live.__exit__(None, None, None)

    def echo(self, line: str) -> None:
        self.console.print(line, markup=False, highlight=False)

"""The live view of `radian arc run` on a terminal (Rich): each worker's task, attempt,
elapsed time and last activity, and the next wake-up; plain lines everywhere else."""

from __future__ import annotations

import io
import time
from pathlib import Path

import pytest
from rich.console import Console

from radian.arc.progress import LiveView, WorkerRow, table

pytestmark = pytest.mark.unit


class Watched:
    def __init__(self, rows: list[WorkerRow], wake: str | None) -> None:
        self.rows, self.wake = rows, wake

    def progress_rows(self) -> list[WorkerRow]:
        return self.rows

    def next_wake(self) -> str | None:
        return self.wake


def render(watched: Watched) -> str:
    console = Console(file=io.StringIO(), width=120, force_terminal=False, color_system=None)
    console.print(table(watched, now=100.0))
    output = console.file.getvalue()  # type: ignore[attr-defined]
    assert isinstance(output, str)
    return output


def test_the_view_shows_each_worker_and_the_next_wake_up(tmp_path: Path) -> None:
    log = tmp_path / "worker.log"
    log.write_text("starting\nediting src/calc/ops.py\n")
    watched = Watched([WorkerRow("t", "002", 58.0, log)], "2026-11-30T07:05:00Z")
    text = render(watched)
    assert "radian arc run: workers; next wake-up 2026-11-30T07:05:00Z" in text
    assert "t" in text and "002" in text and "42s" in text
    assert "editing src/calc/ops.py" in text


def test_lines_print_above_the_view_on_a_terminal() -> None:
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=100, color_system=None)
    with LiveView(Watched([], None), console=console) as view:
        view.echo("t todo.ready -> doing.working (attempt 001)")
        time.sleep(0.1)
    assert "t todo.ready -> doing.working (attempt 001)" in out.getvalue()

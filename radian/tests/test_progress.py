"""The live view of `radian arc run` on a terminal (Rich): each worker's task, attempt,
elapsed time and last activity, and the next wake-up; plain lines everywhere else."""

from __future__ import annotations

import io
import sys
import threading
import time
from pathlib import Path

import pytest
from rich.console import Console

from radian.arc import commands
from radian.arc.clock import FakeClock
from radian.arc.config import ArcConfig, WorkerConfig
from radian.arc.loop import Loop
from radian.arc.progress import LiveView, WorkerRow, table
from radian.arc.store import ArcStore

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


def test_the_view_shows_each_workers_cost_so_far(tmp_path: Path) -> None:
    log = tmp_path / "worker.log"
    log.write_text("working\n")
    text = render(Watched([WorkerRow("t", "003", 90.0, log, 1.25)], None))
    assert "cost so far" in text
    assert "$1.25" in text


def test_a_claimed_tasks_row_carries_what_the_task_has_cost_so_far(tmp_path: Path) -> None:
    clock = FakeClock()
    store = ArcStore(tmp_path)
    commands.add_plan(store, "p")
    commands.add_task(store, clock, "p", "t", "Do t.\n")
    config = ArcConfig(worker=WorkerConfig(exec_args=[sys.executable, "{brief_file}"]))
    commands.confirm(store, config, "p")
    spent = store.load_task("t")
    spent.cost_usd, spent.total_cost_usd = 0.5, 0.75
    store.save_task(spent)
    release = threading.Event()
    loop = Loop(store, config, clock, echo=lambda line: None,
                run_attempt=lambda spec, clock: release.wait(5))  # fmt: skip
    try:
        loop._pass()  # noqa: SLF001 - one pass claims the task; its attempt waits on `release`
        [row] = loop.progress_rows()
        assert (row.task, row.attempt_id, row.cost_usd) == ("t", "001", 0.75)
    finally:
        release.set()
        loop._pool.shutdown(wait=True)  # noqa: SLF001


def test_lines_print_above_the_view_on_a_terminal() -> None:
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=100, color_system=None)
    with LiveView(Watched([], None), console=console) as view:
        view.echo("t todo.ready -> doing.working (attempt 001)")
        time.sleep(0.1)
    assert "t todo.ready -> doing.working (attempt 001)" in out.getvalue()

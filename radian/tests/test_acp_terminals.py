"""The ACP client's terminals with real processes (terminal/* on an agent's behalf)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from radian.arc.worker.acp.terminals import Terminals, tree_cpu_secs


def test_a_terminal_runs_in_the_folder_and_reports_its_exit(tmp_path: Path) -> None:
    notes: list[str] = []

    async def run() -> tuple[str, int | None]:
        terminals = Terminals(notes.append)
        terminal_id = await terminals.create("sh", ["-c", "pwd; exit 3"], {}, tmp_path, None)
        status = await terminals.wait(terminal_id)
        text = terminals.get(terminal_id).text()
        await terminals.release(terminal_id)
        return text, status.exit_code

    text, code = asyncio.run(run())
    assert (text.strip(), code) == (str(tmp_path), 3)


def test_tree_cpu_counts_the_process_and_its_children() -> None:
    assert tree_cpu_secs(os.getpid()) > 0

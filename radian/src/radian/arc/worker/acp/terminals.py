"""terminal/* for an ACP agent: commands run by arc on the agent's behalf, in the worktree.

Each terminal is a subprocess in the client's process group, so the wrapper's stop reaches
it. Output is kept up to the request's byte limit (truncated from the start, at a character
boundary, as the protocol asks). While a command runs, its CPU time is sampled: a command
that works without printing (a long build) is reported as activity in the log, so the
wrapper does not take the attempt for a stall; one that sleeps or hangs is not.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import signal
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from radian.arc.worker.acp import texts

DEFAULT_OUTPUT_LIMIT = 1_000_000
BUSY_SAMPLE_SECS = 5.0
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


@dataclass
class Terminal:
    terminal_id: str
    process: asyncio.subprocess.Process
    limit: int
    output: bytearray = field(default_factory=bytearray)
    truncated: bool = False
    reader: asyncio.Task[None] | None = None

    def append(self, data: bytes) -> None:
        self.output.extend(data)
        if len(self.output) > self.limit:
            cut = len(self.output) - self.limit
            # never cut inside a UTF-8 sequence: skip continuation bytes
            while cut < len(self.output) and (self.output[cut] & 0xC0) == 0x80:
                cut += 1
            del self.output[:cut]
            self.truncated = True

    def text(self) -> str:
        return self.output.decode("utf-8", errors="replace")


@dataclass(frozen=True)
class ExitStatus:
    exit_code: int | None
    signal: str | None


class Terminals:
    """The terminals of one client, by id."""

    def __init__(self, note: Callable[[str], None]) -> None:
        self._terminals: dict[str, Terminal] = {}
        self._ids = itertools.count(1)
        self._note = note

    async def create(
        self,
        command: str,
        args: Sequence[str],
        env: Mapping[str, str],
        cwd: Path,
        output_byte_limit: int | None,
    ) -> str:
        terminal_id = f"term-{next(self._ids)}"
        process = await asyncio.create_subprocess_exec(
            command,
            *args,
            cwd=cwd,
            env={**os.environ, **env},
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )
        terminal = Terminal(terminal_id, process, output_byte_limit or DEFAULT_OUTPUT_LIMIT)
        terminal.reader = asyncio.create_task(self._read(terminal))
        self._terminals[terminal_id] = terminal
        return terminal_id

    def get(self, terminal_id: str) -> Terminal:
        try:
            return self._terminals[terminal_id]
        except KeyError:
            raise LookupError(terminal_id) from None

    def exit_status(self, terminal_id: str) -> ExitStatus | None:
        code = self.get(terminal_id).process.returncode
        if code is None:
            return None
        if code < 0:
            return ExitStatus(None, signal.Signals(-code).name)
        return ExitStatus(code, None)

    async def wait(self, terminal_id: str) -> ExitStatus:
        terminal = self.get(terminal_id)
        await terminal.process.wait()
        if terminal.reader is not None:
            await terminal.reader
        status = self.exit_status(terminal_id)
        assert status is not None
        return status

    def kill(self, terminal_id: str) -> None:
        process = self.get(terminal_id).process
        if process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                process.kill()

    async def release(self, terminal_id: str) -> None:
        self.kill(terminal_id)
        terminal = self._terminals.pop(terminal_id)
        await terminal.process.wait()
        if terminal.reader is not None:
            await terminal.reader

    async def close(self) -> None:
        for terminal_id in list(self._terminals):
            await self.release(terminal_id)

    async def _read(self, terminal: Terminal) -> None:
        assert terminal.process.stdout is not None
        last_cpu = 0.0
        while True:
            try:
                data = await asyncio.wait_for(terminal.process.stdout.read(65536), BUSY_SAMPLE_SECS)
            except TimeoutError:
                cpu = tree_cpu_secs(terminal.process.pid)
                if cpu > last_cpu:
                    self._note(
                        texts.LOG_TERMINAL_BUSY.format(terminal_id=terminal.terminal_id, cpu=cpu)
                    )
                    last_cpu = cpu
                continue
            if not data:
                return
            terminal.append(data)
            self._note(
                texts.LOG_TERMINAL_OUTPUT.format(terminal_id=terminal.terminal_id, size=len(data))
            )


def tree_cpu_secs(root: int) -> float:
    """CPU time (user + system) used so far by a process and every process below it, from
    /proc (0 where there is no /proc): a shell running a build counts the build's time."""
    parents: dict[int, int] = {}
    cpu: dict[int, float] = {}
    for entry in Path("/proc").iterdir() if Path("/proc").is_dir() else ():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rpartition(")")[2].split()
        except OSError:
            continue
        # after the command: state, ppid, ... utime and stime are the 12th and 13th
        parents[int(entry.name)] = int(fields[1])
        cpu[int(entry.name)] = (int(fields[11]) + int(fields[12])) / CLOCK_TICKS
    total, below = 0.0, {root}
    changed = True
    while changed:
        changed = False
        for pid, parent in parents.items():
            if parent in below and pid not in below:
                below.add(pid)
                changed = True
    for pid in below:
        total += cpu.get(pid, 0.0)
    return total

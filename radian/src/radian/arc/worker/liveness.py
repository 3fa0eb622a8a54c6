"""Is a silent worker working? Its process tree's CPU time, read from /proc.

A worker can be busy and print nothing: Claude Code prints nothing while a Bash call runs
(up to 10 minutes), between content blocks without --include-partial-messages, and while it
retries a 429 or 529 itself. The wrapper's stall clock therefore restarts on output (any byte
on stdout or stderr, so stream-json events and partial messages count) and on work: the worker
and every process under it (Claude Code runs each Bash call in a process group of its own)
together used at least ACTIVE_CPU_SHARE of one core over a sample of SAMPLE_SECS. A worker
waiting on a hung connection or a sleeping child uses next to nothing (Claude Code 2.1.332 idle:
under 0.1 of a core) and is still stopped at stall_secs.

Writes in the worktree are not watched: a scan of a large tree on every poll costs more than it
tells, and a process that writes uses CPU. Without /proc (not Linux) only output counts.

The tree's process groups are remembered as they are seen, so the wrapper can stop a Bash call
that outlived the worker (re-parented to init, it is no longer under it).
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Callable
from pathlib import Path

ACTIVE_CPU_SHARE = 0.2
SAMPLE_SECS = 1.0
PROC = Path("/proc")


def _stat_fields(pid: int) -> list[str] | None:
    try:
        text = (PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    # The command name is parenthesized and may hold spaces: the fields follow its last ")".
    return text.rpartition(")")[2].split()


def process_tree(root: int) -> dict[int, list[str]]:
    """root and every process under it: pid -> its /proc stat fields after the name."""
    table: dict[int, list[str]] = {}
    try:
        entries = [int(name) for name in os.listdir(PROC) if name.isdigit()]
    except OSError:
        return table
    children: dict[int, list[int]] = {}
    for pid in entries:
        fields = _stat_fields(pid)
        if fields is None or len(fields) < 15:
            continue
        table[pid] = fields
        children.setdefault(int(fields[1]), []).append(pid)
    tree: dict[int, list[str]] = {}
    todo = [root]
    while todo:
        pid = todo.pop()
        if pid in tree or pid not in table:
            continue
        tree[pid] = table[pid]
        todo.extend(children.get(pid, []))
    return tree


def cpu_ticks(fields: list[str]) -> int:
    """utime + stime + cutime + cstime: its own time and its reaped children's."""
    return sum(int(value) for value in fields[11:15])


class CpuWatch:
    """Samples the worker's tree; `busy(now)` is True when the last sample shows work."""

    def __init__(self, root: int, monotonic: Callable[[], float]) -> None:
        self.root = root
        self.groups: set[int] = set()
        self._ticks_per_sec = float(os.sysconf("SC_CLK_TCK")) if hasattr(os, "sysconf") else 100
        self._monotonic = monotonic
        self._last_at = monotonic()
        self._last_ticks = self._sample()

    def _sample(self) -> int:
        tree = process_tree(self.root)
        self.groups.update(int(fields[2]) for fields in tree.values())
        return sum(cpu_ticks(fields) for fields in tree.values())

    def busy(self) -> bool:
        now = self._monotonic()
        elapsed = now - self._last_at
        if elapsed < SAMPLE_SECS:
            return False
        ticks = self._sample()
        used = max(0, ticks - self._last_ticks) / self._ticks_per_sec
        self._last_at, self._last_ticks = now, ticks
        return used >= ACTIVE_CPU_SHARE * elapsed

    def signal_all(self, signum: int) -> None:
        """Signals every process group the tree was seen in, and what is under it now."""
        self._sample()
        own = os.getpgrp()
        for group in self.groups - {own}:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(group, signum)


def kill_groups(groups: set[int], signum: int = signal.SIGKILL) -> None:
    own = os.getpgrp()
    for group in groups - {own}:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(group, signum)

"""`radian arc stop`: ask this clone's `radian arc run` to stop, as its SIGTERM does.

A run writes its process id beside its run lock while it holds the lock, and removes it as
it lets go. `stop` reads it, checks that the lock is still held (a file a SIGKILLed run left
behind names no run), sends SIGTERM, and waits for the run to let go of its lock: the run
stops its workers and records their attempts as `interrupted` (our row of the table: no
retry used, what they spent counted, their sessions resumed by the next run), exactly as
for Ctrl-C or a service manager's stop.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

from filelock import Timeout

from radian.arc import texts
from radian.arc.errors import ArcError
from radian.arc.results import RunStopped
from radian.arc.store import lock_path
from radian.arc.store_protocol import Store


def run_pid_path(repo_root: Path) -> Path:
    return lock_path(repo_root, "arc", "run").with_suffix(".pid")


def note_run(repo_root: Path) -> Path:
    """Called by a run that holds its lock: its process id, for `stop`."""
    path = run_pid_path(repo_root)
    path.write_text(f"{os.getpid()}\n", encoding="utf-8")
    return path


def stop_run(store: Store, *, wait_secs: float) -> RunStopped:
    """SIGTERM to the run holding this clone's run lock, then its lock waited for up to
    `wait_secs` (0: not waited for). `ArcError` when no run is going on."""
    lock = store.run_lock()
    try:
        lock.acquire(timeout=0)
    except Timeout:
        pass  # held: a run is going on
    else:
        lock.release()
        raise ArcError(texts.no_run_to_stop())
    pid = _noted_pid(run_pid_path(store.repo_root))
    if pid is None:
        raise ArcError(texts.run_not_named())
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        raise ArcError(texts.no_run_to_stop()) from None
    if wait_secs <= 0:
        return RunStopped(pid=pid, stopped=False, waited_secs=0.0)
    try:
        lock.acquire(timeout=wait_secs)
    except Timeout:
        return RunStopped(pid=pid, stopped=False, waited_secs=wait_secs)
    lock.release()
    return RunStopped(pid=pid, stopped=True, waited_secs=wait_secs)


def _noted_pid(path: Path) -> int | None:
    try:
        text = path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        return None
    return int(text) if text.isdigit() else None

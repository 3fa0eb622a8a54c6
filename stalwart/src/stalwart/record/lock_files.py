"""The SQLite store's session lock files: an exclusive `flock` on a small file per session,
in a folder beside the database (`sqlite.py` says why there).

A call locks its session, does its work and unlocks; the next call of the same session
(an order's confirms follow its turn) locks it again. The file is opened once and its
descriptor kept while no lock is held on it, instead of opened, created if need be, and
closed on every call: up to `KEPT_IDLE` of them per store, the least recently unlocked
closed first, all closed with the store (or when it is collected, or in a child process
after a fork, which must not share a lock with its parent). Holding and waiting are as
before: the lock is the kernel's `flock` on the file the path names, released by
`LOCK_UN` (or by the kernel if its holder dies).

A kept descriptor may name a file no longer at its path: the folder swept away (an
operator, a test's fault) and a file made anew by another worker. So a kept one, once
locked, is checked against the path (same device and inode); if the path names another
file, or none, it is closed and the path opened again, as a first call does.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import threading
import time
import weakref
from collections import OrderedDict
from dataclasses import dataclass

KEPT_IDLE = 16  # descriptors kept open per store while their session is not locked

_CREATE = os.O_RDWR | os.O_CREAT


@dataclass(frozen=True)
class HeldLock:
    """A session's lock file, flocked: its descriptor, and the file's identity as a lease
    names its lock (`lock_identity`)."""

    session: str
    descriptor: int
    path: str
    identity: str


class LockFiles:
    """One store's lock files under `folder`: `lock` a session's file, `unlock` it."""

    def __init__(self, folder: str, kept_idle: int = KEPT_IDLE) -> None:
        self._folder = folder
        self._kept_idle = kept_idle
        self._guard = threading.Lock()
        # Descriptors not locked now, by session (with their path), least recent first.
        self._idle: OrderedDict[str, tuple[int, str]] = OrderedDict()
        self._closed = False
        os.makedirs(folder, exist_ok=True)
        weakref.finalize(self, _close_all, self._idle)
        _OPEN.add(self)

    def lock(self, session: str, deadline: float) -> HeldLock | None:
        """The session's file, flocked; None when it is not had by `deadline` (a
        `time.monotonic()` time; the first try costs nothing when the lock is free)."""
        with self._guard:
            kept = self._idle.pop(session, None)
        descriptor, path = kept if kept is not None else self._open(session)
        try:
            while True:
                got = _flocked(descriptor, deadline)
                stat = os.fstat(descriptor)
                if kept is None or _names(path, stat):
                    if got:
                        return HeldLock(session, descriptor, path, lock_identity(stat))
                    os.close(descriptor)
                    return None
                # A kept file the path no longer names (held by whoever else kept it, or
                # by nobody): open the path as a first call does.
                if got:
                    fcntl.flock(descriptor, fcntl.LOCK_UN)
                os.close(descriptor)
                kept = None
                descriptor, path = self._open(session)
        except BaseException:
            os.close(descriptor)
            raise

    def unlock(self, held: HeldLock) -> None:
        """Release the lock; the descriptor is kept for the session's next lock."""
        try:
            fcntl.flock(held.descriptor, fcntl.LOCK_UN)
        except BaseException:
            os.close(held.descriptor)
            raise
        closing: list[int] = []
        with self._guard:
            if self._closed:
                closing.append(held.descriptor)
            else:
                self._idle[held.session] = (held.descriptor, held.path)
                while len(self._idle) > self._kept_idle:
                    closing.append(self._idle.popitem(last=False)[1][0])
        for descriptor in closing:
            os.close(descriptor)

    def close(self) -> None:
        """Close every kept descriptor; a lock held now is closed when unlocked."""
        with self._guard:
            self._closed = True
            _close_all(self._idle)

    def kept(self) -> int:
        """How many descriptors are kept open while not locked (tests read it)."""
        with self._guard:
            return len(self._idle)

    def _open(self, session: str) -> tuple[int, str]:
        # The folder is made once per store, and again only if it went.
        path = os.path.join(self._folder, hashlib.sha256(session.encode()).hexdigest()[:32])
        try:
            return os.open(path, _CREATE, 0o666), path
        except FileNotFoundError:
            os.makedirs(self._folder, exist_ok=True)
            return os.open(path, _CREATE, 0o666), path

    def _forget_in_child(self) -> None:
        """After a fork, in the child: the kept descriptors share their open files (and so
        their locks) with the parent's; the child closes its copies and opens its own."""
        self._guard = threading.Lock()
        _close_all(self._idle)


def lock_identity(stat: os.stat_result) -> str:
    """The identity of a flocked lock file, as a lease names its lock: a file made anew
    (the folder swept away) is another lock, even on a reused inode."""
    return f"file/{stat.st_dev}/{stat.st_ino}/{stat.st_ctime_ns}"


def _flocked(descriptor: int, deadline: float) -> bool:
    """Take the flock, waiting at most until `deadline` (the kernel has no timed flock,
    so a busy lock is polled)."""
    pause = 0.001
    while True:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() >= deadline:
                return False
            time.sleep(min(pause, max(0.0, deadline - time.monotonic())))
            pause = min(pause * 2, 0.05)


def _names(path: str, stat: os.stat_result) -> bool:
    """Whether `path` names the file `stat` is of."""
    try:
        now = os.stat(path)
    except FileNotFoundError:
        return False
    return (now.st_dev, now.st_ino) == (stat.st_dev, stat.st_ino)


def _close_all(idle: OrderedDict[str, tuple[int, str]]) -> None:
    while idle:
        os.close(idle.popitem()[1][0])


_OPEN: weakref.WeakSet[LockFiles] = weakref.WeakSet()


def _after_fork_in_child() -> None:
    for files in list(_OPEN):
        files._forget_in_child()


os.register_at_fork(after_in_child=_after_fork_in_child)

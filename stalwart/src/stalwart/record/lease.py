"""Leases: who may write a session's record now, until when, and the token that proves it.

A session's lock says who waits; its lease says who may write. A lock can end while its
holder lives on (PostgreSQL's advisory lock goes with its connection: a restart, a
failover, a dropped connection), so the lock alone would let a second worker advance a
run the first is still inside. Every holder of a session's lock therefore also holds a
lease, a row of the `leases` table:

- `token`, the fencing token: one more every time a holder takes the lease, so a later
  holder's token is always greater. Every commit of the holder names it in the one
  statement it already makes (`UPDATE leases ... WHERE session = ? AND token = ?`), and a
  commit whose token is no longer the lease's writes nothing and raises `LeaseLost`. A
  tool reads the token through `current_call().lease` to fence its own service.
- `holder`, who holds it (`holder_identity()`), and `expires`, when it ends unless
  renewed: every commit renews it, and so does the store's heartbeat while a tool is
  inside a long call. Time is the injected Clock's.
- `version`, one more with every commit of the session, so a cache of its state can
  tell whether it is still current.

A worker that has the lock takes the lease when it is free (released by its last holder),
expired, or held by a holder that is gone: a process on this machine (the same boot, the
same process namespace) whose pid no longer runs the process that took it, or a holder in
this very process whose lock has ended (its lease could not be given back: the database
was gone at that moment). A dead process can
send and commit nothing, so taking its lease at once is as safe as waiting for it to
expire, and a run left by a killed worker is resumed without a wait. Any other live lease
is `SessionBusy`: `stalwart resume` and `resume_all` skip the session and go on.

Time is compared on the clocks of the workers: their clocks must agree to well within a
lease (`lease_secs`, 30 seconds by default), as NTP keeps them.
"""

from __future__ import annotations

import functools
import os
import secrets
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from ..clock import Clock, SystemClock

LEASE_SECS = 30.0  # how long a lease lasts unless renewed
RELEASED = ""  # the holder of a lease its last holder gave back


@dataclass
class Lease:
    """A lease this process holds on one session (see the module)."""

    session: str
    token: int
    holder: str
    expires: float
    clock: Clock = field(default_factory=SystemClock)
    secs: float = LEASE_SECS

    def renewed_until(self) -> float:
        """The expiry a renewal made now gives."""
        return self.clock.now() + self.secs


@dataclass(frozen=True)
class Seen:
    """A session's lease as a worker found it in the record."""

    token: int
    holder: str
    expires: float


def may_take(seen: Seen | None, now: float) -> bool:
    """Whether a worker that has the session's lock may take its lease now."""
    if seen is None or seen.holder == RELEASED:
        return True
    return seen.expires <= now or holder_is_gone(seen.holder)


# --- who holds a lease ---


def holder_identity() -> str:
    """A new holder in this process, as a lease names it: host, boot, process namespace,
    pid, the pid's start time (so a pid the kernel gave to another process later is not
    it) and a random part, so two holders in one process (two threads, two stores) are
    two holders. Live until `holder_ended`."""
    holder = f"{_identity(os.getpid())}/{secrets.token_hex(4)}"
    with _LIVE_GUARD:
        _LIVE.add(holder)
    return holder


def holder_ended(holder: str) -> None:
    """This process's holder let its lock go (its lease given back, or not if the record
    could not be reached): none of its commits can come any more."""
    with _LIVE_GUARD:
        _LIVE.discard(holder)


# The holders of this process whose locks are held now.
_LIVE: set[str] = set()
_LIVE_GUARD = threading.Lock()


@functools.cache
def _identity(pid: int) -> str:
    # Cached per pid: a forked child computes its own.
    host = socket.gethostname().replace("/", "_")
    return f"{host}/{_boot_id()}/{_pid_namespace()}/{pid}/{_started(pid)}"


def holder_is_gone(holder: str) -> bool:
    """True only when `holder` is provably no longer running: a process of this machine's
    boot and process namespace whose pid is gone or runs another process now. A holder on
    another machine, or one this process cannot judge, is never gone: its lease expires."""
    parts = holder.split("/")
    if len(parts) != 6:
        return False
    host, boot, namespace, pid_text, started, _ = parts
    mine = _identity(os.getpid()).split("/")
    if [host, boot, namespace] != mine[:3] or not boot or not namespace:
        return False
    if [pid_text, started] == mine[3:5]:  # this very process: gone once its lock ended
        with _LIVE_GUARD:
            return holder not in _LIVE
    try:
        pid = int(pid_text)
    except ValueError:
        return False
    now_started = _started(pid)
    return now_started == "" or now_started != started


def _boot_id() -> str:
    try:
        with open("/proc/sys/kernel/random/boot_id", encoding="ascii") as file:
            return file.read().strip()
    except OSError:
        return ""


def _pid_namespace() -> str:
    try:
        return str(os.stat("/proc/self/ns/pid").st_ino)
    except OSError:
        return ""


def _started(pid: int) -> str:
    """The pid's start time in clock ticks since boot, or "" when no such process runs
    (a zombie, killed and not yet reaped by its parent, runs nothing)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as file:
            stat = file.read()
    except OSError:
        return ""
    # The command name (field 2) may hold spaces and parentheses: count from its end.
    fields = stat[stat.rfind(")") + 2 :].split()
    if len(fields) <= 19 or fields[0] in ("Z", "X"):
        return ""
    return fields[19]


# --- the heartbeat ---


class Heartbeat:
    """One daemon thread per store that renews every lease the store holds, every third
    of a lease, while a tool is inside a long call. `renew` is the store's: it renews the
    leases held now and returns. Started with the first lease, stopped with the store."""

    def __init__(self, interval: float, renew: Callable[[], None]) -> None:
        self._interval = interval
        self._renew = renew
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._guard = threading.Lock()

    def start(self) -> None:
        with self._guard:
            if self._thread is not None or self._stop.is_set():
                return
            self._thread = threading.Thread(
                target=self._beat, name="stalwart-lease-heartbeat", daemon=True
            )
            self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        with self._guard:
            thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=5)

    def _beat(self) -> None:
        while not self._stop.wait(self._interval):
            try:
                self._renew()
            except Exception:  # noqa: BLE001 - a lost database: the next beat tries again
                continue

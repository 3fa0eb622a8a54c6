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

A worker that has the lock may take the lease when it is free, expired, ended, or held by
a holder that is gone:

- ended: its holder's lock has ended, and this worker's lock proves it. Each lease names the
  lock it was taken under (`lock`): on SQLite the lock file's identity (device, inode and
  change time), on PostgreSQL the server's backend that holds the advisory lock (its pid
  and start). A worker holding the very lock file the lease names holds what its holder
  held; a backend that still runs but no longer holds the advisory lock (this worker does)
  let it go. A holder lets its lock go only once its call is over, so the next holder's
  lock is the proof, and a call makes no more durable commits than its record needs. On
  PostgreSQL, where closing a connection ends its backend (and the proof with it), the
  lease is also given back with the unlock, in the same round trip, its commit not waited
  for on the server's disk: it is no row of the record, and one lost in a crash only
  makes the next holder wait for the lease to expire.
- gone: a process on this machine (the same boot, the same process namespace) whose pid
  no longer runs the process that took it, or a holder in this very process whose lock has
  ended. A dead process can send and commit nothing, so taking its lease at once is as safe
  as waiting for it to expire, and a run left by a killed worker is resumed without a wait.

Any other live lease (its lock lost while its holder may still be inside a call: a lock
folder swept away, a backend ended by a restart or a failover) is `SessionBusy`:
`stalwart resume` and `resume_all` skip the session and go on.

A holder that hangs (stopped, or stuck with its heartbeat) keeps the lock, and no worker
can have it: an operator ending its run takes the session without the lock
(`Store.take_over`), once the lease has expired (or its holder is gone). The lease is
taken at once, in a commit of its own, naming no lock (`NO_LOCK`), so the hung holder is
fenced from that moment, and it is given back when the operator is done, so the next
holder of the lock need not wait for it to expire.

The lease is read with the lock, in the same round trip. An ended lease is taken by the
call's first commit, in the commit's one statement (the fence takes it from the token read,
and writes nothing if another worker took it since); a call that commits nothing (a look,
a refusal) writes no lease, and a tool is sent only after a commit, so by then its token is
recorded. A lease taken from a holder that may live on (expired, or gone) is taken at once,
in a commit of its own, so that holder is fenced from that moment.

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

from .. import texts
from ..clock import Clock, SystemClock
from ..errors import SessionBusy

LEASE_SECS = 30.0  # how long a lease lasts unless renewed
RELEASED = ""  # the holder of a lease given back
NO_LOCK = "none"  # the lock a lease taken without one names (`take_over`): it proves nothing


@dataclass
class Lease:
    """A lease this process holds on one session (see the module)."""

    session: str
    token: int
    holder: str
    expires: float
    clock: Clock = field(default_factory=SystemClock)
    secs: float = LEASE_SECS
    lock: str = ""  # the lock it is held under (see the module)
    # The token the record had when the lock was had: the first commit takes the lease
    # from it (`taken` then), or writes nothing when another worker has since.
    seen_token: int = 0
    taken: bool = False
    # Taken without the session's lock, which another worker still holds (`take_over`):
    # that worker is fenced. `taken_from` is the holder the lease was taken from ("" for
    # none: the worker holding the lock had written nothing under it yet).
    taken_over: bool = False
    taken_from: str = ""

    def renewed_until(self) -> float:
        """The expiry a renewal made now gives."""
        return self.clock.now() + self.secs


@dataclass(frozen=True)
class Seen:
    """A session's lease as a worker found it in the record."""

    token: int
    holder: str
    expires: float
    lock_ended: bool = False  # its lock is provably over (see the module)


def ended(seen: Seen | None) -> bool:
    """Whether nobody can commit under the lease `seen` any more: none, given back, or
    its lock over. Then the next holder takes it with its first commit; any other lease
    it takes at once, fencing its last holder, who may live on."""
    return seen is None or seen.holder == RELEASED or seen.lock_ended


def may_take(seen: Seen | None, now: float) -> bool:
    """Whether a worker that has the session's lock may take its lease now."""
    if ended(seen):
        return True
    assert seen is not None
    return seen.expires <= now or holder_is_gone(seen.holder)


def next_lease(session: str, seen: Seen | None, clock: Clock, secs: float, lock: str) -> Lease:
    """The lease a worker that just had the session's lock `lock` holds, from the lease it
    read with it: `SessionBusy` while another's is live. Not yet taken (see the module)."""
    now = clock.now()
    if not may_take(seen, now):
        assert seen is not None
        raise SessionBusy(texts.lease_held(session, seen.holder, seen.expires - now))
    held = 0 if seen is None else seen.token
    return Lease(
        session, held + 1, holder_identity(), now + secs, clock, secs, lock=lock, seen_token=held
    )


def lease_taken_over(session: str, seen: Seen | None, clock: Clock, secs: float) -> Lease:
    """The lease an operator takes without the session's lock, which another worker holds
    (`Store.take_over`), from the lease read just now: when it ended, expired or its
    holder is gone (the lock proves nothing here), else `SessionBusy`. Not yet taken."""
    if seen is not None:
        seen = Seen(seen.token, seen.holder, seen.expires)  # no lock to prove it ended
    lease = next_lease(session, seen, clock, secs, NO_LOCK)
    lease.taken_over = True
    lease.taken_from = seen.holder if seen is not None else RELEASED
    return lease


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

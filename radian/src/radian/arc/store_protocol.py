"""The `Store` protocol: what the loop, the commands, status, report, hooks and serve ask of
arc's state, whichever backend keeps it.

Two backends implement it: the files under `.radian/arc/` (radian.arc.store.Store, the
embedded default, one host) and PostgreSQL (many hosts on one plan). The contract suite
(tests/test_store_contract.py) runs against every backend.

What a backend keeps (the records): plans, tasks, briefs, each attempt's intent (who runs
it, written at the claim) and result (written by the host's loop from the wrapper's file),
a plan's running cost, and the locks a record is changed under (`task_lock`, `plan_lock`,
`registry_lock`; lock order: registry, then a task, then a plan).

What stays on the host that ran the attempt, whichever backend (the local artefacts): the
worktrees, each attempt's folder with the wrapper's `worker.log`, its result file and its
status files (`attempt_dir`), the gate's verdict files (`task_dir`), and the locks that
guard a host's own work: `run_lock` (one loop per clone) and `gate_lock` (one gate per task,
held from the gate's start until its verdict is applied; PostgreSQL's is an advisory lock,
one gate per task across hosts). `integration_lock(target_branch)` is held for a whole
integration (merge, key commands, push): the files store's is this clone's lock,
PostgreSQL's an advisory lock on a key made from the target branch, so hosts sharing the
store never race a push.
`repo_root` is the clone, `root` its `.radian/arc/` folder.

Contract
--------
- `load_plan`/`load_task` raise NotFoundError for a name the store does not know and
  DamagedFile for a record that is not one; `try_load_task` notes the damage in `damaged`
  and returns None; `plan_if_there` is None for a plan gone, damaged or still loading.
- `save_plan`/`save_task` replace the record whole, atomically and durably; the caller holds
  the record's lock.
- `write_loaded_plan` writes a new plan and its tasks all or nothing;
  `discard_unfinished_loads` undoes whatever an interrupted load left.
- A plan's running cost: `plan_cost` reads it (counting the tasks once when none is kept),
  `add_plan_cost` adds under the plan's lock, `reconcile_plan_cost` sets it to the count;
  `spend` adds an attempt's or a review's cost and gives the total this addition left, both
  under the plan's lock (PostgreSQL: also the plan's row lock, `SELECT ... FROM arc_plans
  WHERE name = ... FOR UPDATE`, in one transaction): the budget check reads that total, so
  of two hosts spending at once only the one whose cost reached the budget finds it used up.
- `task_records(plan)` gives each task of a plan as a plain record (None when it cannot be
  read) in one pass, `all_task_records()` every task that has been written for; both are
  what status and serve read, 10,000 tasks at a time.
- Leases (a shared store): writing an attempt's intent takes its lease for this host, with
  a new fencing token; `heartbeat` renews this host's leases of the attempts it runs;
  `foreign_lease` says which other host holds an attempt and whether its lease expired;
  `take_over` makes an expired lease this host's (a new token); `check_lease` raises
  LeaseLost when another host holds the lease or the token this process had is no longer
  the lease's (settle asks it first, under the task's lock, as take_over is made). The
  files store has no other host: no lease is foreign, every check passes.
- `claim_next(names, allowed, build)` claims the first task of `names` (in their order)
  whose state is in `allowed` and that no other claimer holds, without waiting for one that
  another holds (PostgreSQL: `SELECT ... FOR UPDATE SKIP LOCKED` and the task's advisory lock
  tried, not waited for; the files: each under its task lock): `build(task)` moves the task
  and gives the attempt's id and intent, and the intent (with its lease and a new fencing
  token on a shared store) and the moved task are written together (PostgreSQL: one
  transaction). A task whose attempt another host leases is passed over. With `wait` (one
  task named, `radian arc start`) a task another holds is waited for and read again, not
  passed over. Returns the claimed task, or None when none of `names` could be claimed.
- `change_mark()` is a value that changes whenever a record changes (serve's page waits on
  it). Every save is noted in order: `start_changes()` gives the position a loop's full scan
  starts from, `changes_since(position)` the (kind, name) of each save after it ("task" or
  "plan") with the new position, or None when the loop must scan again (the loop's
  due-index, radian.arc.due, reads them; the files store keeps them in
  radian.arc.store_journal, PostgreSQL in its arc_changes table).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Hashable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

from filelock import FileLock

from radian.arc.attempt_result import AttemptResult
from radian.arc.loaded import NewTask
from radian.arc.records import Plan, Task
from radian.arc.states import State


class StateLookup(Protocol):
    """Which tasks are in some states, in plan order: the store's query, or a running loop's
    due-index (radian.arc.due), which answers without reading the records again."""

    def names_in(self, *states: State) -> list[str]: ...


class HostLock(Protocol):
    """A lock held for as long as a gate runs (filelock's API: `acquire(timeout=0)` raises
    filelock.Timeout when another holds it)."""

    def acquire(self, timeout: float | None = None) -> Any: ...
    def release(self) -> None: ...


# What a fenced lock's holder learns when it asks again (FencedLock.recheck).
LockCheck = Literal["held", "taken_again", "lost"]


@runtime_checkable
class FencedLock(Protocol):
    """A HostLock its holder can lose without knowing (PostgreSQL's advisory locks go with
    their connection: a server restart, a connection cut). Before the write it guards, the
    holder asks `recheck()`: "held", "taken_again" (lost and taken back: another may have
    held it meanwhile, read again what was read under it) or "lost" (another holds it now).
    `held()` asks without waiting or taking it back: is it still the holder's? A clone's own
    file lock cannot be lost so and has neither."""

    def recheck(self) -> LockCheck: ...
    def held(self) -> bool: ...


@dataclass(frozen=True)
class ForeignLease:
    """An attempt another host holds in a shared store: its name, and whether its lease has
    expired (no heartbeat for the lease's length, by the store's own clock)."""

    host: str
    expired: bool
    lease_secs: float


# A claim's change to the task it was given (moved to doing.working): the new attempt's id
# and its intent (attempt.json), written with the task (Store.claim_next).
ClaimBuild = Callable[[Task], tuple[str, dict[str, Any]]]


class Store(Protocol):
    """arc's records, behind one backend (files or PostgreSQL)."""

    repo_root: Path
    root: Path
    damaged: dict[str, str]
    # True when other hosts work on the same records (PostgreSQL): attempts then hold leases.
    shared: bool

    # -- locks on the records -------------------------------------------------------------
    def task_lock(self, task: str) -> AbstractContextManager[None]: ...
    def plan_lock(self, plan: str) -> AbstractContextManager[None]: ...
    def registry_lock(self) -> AbstractContextManager[None]: ...

    # -- this host's own locks and folders --------------------------------------------------
    def run_lock(self) -> FileLock: ...
    def gate_lock(self, task: str) -> HostLock: ...
    def integration_lock(self, target_branch: str) -> HostLock: ...
    def task_dir(self, task: str) -> Path: ...
    def attempt_dir(self, task: str, attempt_id: str) -> Path: ...

    # -- plans ----------------------------------------------------------------------------
    def plan_exists(self, plan: str) -> bool: ...
    def load_plan(self, plan: str) -> Plan: ...
    def save_plan(self, plan: Plan) -> None: ...
    def plan_if_there(self, name: str) -> Plan | None: ...
    def plan_names(self) -> list[str]: ...
    def plans(self) -> list[Plan]: ...
    def write_loaded_plan(self, plan: Plan, template: Task, tasks: list[NewTask]) -> None: ...
    def discard_unfinished_loads(self) -> list[str]: ...

    # -- tasks ----------------------------------------------------------------------------
    def task_exists(self, task: str) -> bool: ...
    def existing_tasks(self, names: list[str]) -> list[str]: ...
    def load_task(self, task: str) -> Task: ...
    def try_load_task(self, task: str) -> Task | None: ...
    def save_task(self, task: Task) -> None: ...
    def task_names(self) -> list[str]: ...
    def claim_next(
        self,
        names: Sequence[str],
        allowed: Collection[State],
        build: ClaimBuild,
        *,
        wait: bool = False,
    ) -> Task | None: ...
    def names_in(self, *states: State) -> list[str]: ...
    def task_records(self, plan: Plan) -> list[tuple[str, dict[str, Any] | None]]: ...
    def all_task_records(self) -> list[tuple[str, dict[str, Any] | None]]: ...
    def change_mark(self) -> Hashable: ...
    def start_changes(self) -> int: ...
    def changes_since(self, position: int) -> tuple[int, list[tuple[str, str]]] | None: ...
    def read_brief(self, task: str) -> str: ...
    def write_brief(self, task: str, text: str) -> None: ...

    # -- a plan's running cost --------------------------------------------------------------
    def plan_cost(self, plan: str) -> float: ...
    def add_plan_cost(self, plan: str, delta_usd: float) -> None: ...
    def spend(self, plan: str, delta_usd: float) -> float: ...
    def count_plan_cost(self, plan: str) -> float: ...
    def set_plan_cost(self, plan: str, total_usd: float) -> None: ...
    def reconcile_plan_cost(self, plan: str) -> tuple[float | None, float]: ...
    def kept_plan_cost(self, plan: str) -> float | None: ...

    # -- attempts -------------------------------------------------------------------------
    def write_attempt_result(self, task: str, attempt_id: str, result: AttemptResult) -> None: ...
    def read_attempt_result(self, task: str, attempt_id: str) -> AttemptResult | None: ...
    def write_attempt_intent(self, task: str, attempt_id: str, data: dict[str, Any]) -> None: ...
    def read_attempt_intent(self, task: str, attempt_id: str) -> dict[str, Any] | None: ...

    # -- leases: a shared store's attempts ------------------------------------------------------
    def heartbeat(self, attempts: Collection[tuple[str, str]]) -> None: ...
    def foreign_lease(self, task: str, attempt_id: str) -> ForeignLease | None: ...
    def take_over(self, task: str, attempt_id: str) -> None: ...
    def check_lease(self, task: str, attempt_id: str) -> None: ...

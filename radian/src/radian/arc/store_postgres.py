"""arc's records in PostgreSQL (`[store] url = "postgresql://…"` or RADIAN_ARC_STORE): the
Store protocol (radian.arc.store_protocol) over one database that many clones can share.

Tables (SCHEMA, version SCHEMA_VERSION): `arc_plans` (a plan's record), `arc_tasks` (a task's
record, its plan and place in it, its state, its brief: a loaded plan's tasks are rows from
the load on), `arc_attempts` (an attempt's intent and result), `arc_costs` (a plan's running
cost) and `arc_changes` (every save, in order: the due-index and serve read what changed
since they last looked). Each save is one transaction; a plan load is one transaction.

Locks (`task_lock`, `plan_lock`, `registry_lock`) are PostgreSQL advisory locks, each held by
a connection of its own for as long as the holder holds it: a holder that dies loses its
lock with its connection. They are re-entrant within a thread, as the files store's are.
A host's own lock (`run_lock`) and folders (worktrees, attempt folders, worker.log, the
gate's verdicts) stay files on the host (radian.arc.store_protocol); a gate's and an
integration's locks (`gate_lock`, `integration_lock`) are advisory locks across hosts
(AdvisoryLock).

Connections: one per thread for the records, in autocommit, opened again after the server
was restarted (a statement that meets a closed connection is run again once on a new one;
every write is a whole transaction, so none is applied twice).
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Collection, Hashable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import psycopg
from filelock import FileLock, Timeout
from psycopg.types.json import Jsonb
from pydantic import BaseModel, ValidationError

from radian.arc.attempt_result import AttemptResult
from radian.arc.config import describe_validation_error
from radian.arc.errors import DamagedFile, LeaseLost, NotFoundError
from radian.arc.loaded import NewTask, loaded_document
from radian.arc.records import FORMAT_VERSION, Plan, Task, branch_for
from radian.arc.states import State
from radian.arc.store import ArcStore
from radian.arc.store_protocol import ClaimBuild, ForeignLease, LockCheck
from radian.arc.texts import (
    damaged_file,
    lease_lost,
    newer_format,
    no_such_plan,
    no_such_task,
    wrong_fields,
)

SCHEMA_VERSION = 1
SCHEMA = """
CREATE TABLE IF NOT EXISTS arc_schema (version integer NOT NULL);
CREATE TABLE IF NOT EXISTS arc_plans (
    name text PRIMARY KEY,
    record jsonb NOT NULL,
    loading boolean NOT NULL DEFAULT false
);
CREATE TABLE IF NOT EXISTS arc_tasks (
    name text PRIMARY KEY,
    plan text NOT NULL,
    position integer NOT NULL,
    state text NOT NULL,
    record jsonb NOT NULL,
    brief text NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS arc_tasks_by_state ON arc_tasks (state);
CREATE INDEX IF NOT EXISTS arc_tasks_by_plan ON arc_tasks (plan, position);
CREATE TABLE IF NOT EXISTS arc_attempts (
    task text NOT NULL,
    attempt_id text NOT NULL,
    intent jsonb,
    result jsonb,
    PRIMARY KEY (task, attempt_id)
);
CREATE TABLE IF NOT EXISTS arc_costs (plan text PRIMARY KEY, cost_usd double precision NOT NULL);
CREATE TABLE IF NOT EXISTS arc_leases (
    task text NOT NULL,
    attempt_id text NOT NULL,
    host text NOT NULL,
    fence bigint NOT NULL,
    expires_at timestamptz NOT NULL,
    PRIMARY KEY (task, attempt_id)
);
CREATE SEQUENCE IF NOT EXISTS arc_fences;
CREATE TABLE IF NOT EXISTS arc_changes (
    id bigserial PRIMARY KEY,
    kind text NOT NULL,
    name text NOT NULL
);
"""
# Taken while the schema is made, so two hosts starting at once do not race on it.
_SCHEMA_LOCK = 0x7261646961 << 8
DEFAULT_LEASE_SECS = 60.0
# How far back (in journal ids) each look at the change journal reads again.
_JOURNAL_LOOKBACK = 500
_CONNECTION_RETRIES = 30  # a restarted server: tried again for about this many seconds
# How long a lock holder whose connection ended tries to take its lock again (the server
# restarting) before it gives it up as lost.
_RETAKE_SECS = 30.0

T = TypeVar("T")
ModelT = TypeVar("ModelT", bound=BaseModel)


def is_postgres_url(url: str) -> bool:
    return url.startswith(("postgresql://", "postgres://"))


class PostgresStore:
    """arc's records in one PostgreSQL database; this host's own files under `repo_root`."""

    def __init__(
        self,
        repo_root: Path,
        url: str,
        *,
        host: str | None = None,
        lease_secs: float = DEFAULT_LEASE_SECS,
        sleep: Callable[[float], None] | None = None,
    ):
        self.repo_root = Path(repo_root).resolve()
        self.url = url
        self.shared = True
        self._given: set[int] = set()  # journal ids given lately (changes_since)
        # This host in the leases: [hosts] name, default <hostname>:<repository path>.
        self.host = host or f"{socket.gethostname()}:{self.repo_root}"
        self.lease_secs = lease_secs
        self._fences: dict[tuple[str, str], int] = {}  # the token of each lease this process took
        self._host = ArcStore(self.repo_root)  # this host's folders and its own locks
        self.root = self._host.root
        self.damaged: dict[str, str] = {}
        self._sleep = sleep or time.sleep
        self._local = threading.local()
        self._connections: list[psycopg.Connection[Any]] = []
        self._guard = threading.Lock()
        self._with_connection(_make_schema, retries=0)  # a wrong URL fails at once

    # -- connections ------------------------------------------------------------------------
    def _connection(self) -> psycopg.Connection[Any]:
        found: psycopg.Connection[Any] | None = getattr(self._local, "connection", None)
        if found is None or found.closed:
            found = psycopg.connect(self.url, autocommit=True)
            self._local.connection = found
            with self._guard:
                self._connections.append(found)
        return found

    def _with_connection(
        self, work: Callable[[psycopg.Connection[Any]], T], retries: int = _CONNECTION_RETRIES
    ) -> T:
        """`work` on this thread's connection, in one transaction; run again on a new
        connection when the server went away before it committed."""
        for tried in range(retries + 1):
            try:
                connection = self._connection()
                with connection.transaction():
                    return work(connection)
            except psycopg.OperationalError:
                if tried == retries:
                    raise
                self._drop_connection()
                self._sleep(1.0)
        raise AssertionError("unreachable")

    def _drop_connection(self) -> None:
        found: psycopg.Connection[Any] | None = getattr(self._local, "connection", None)
        self._local.connection = None
        if found is not None:
            found.close()

    def close(self) -> None:
        with self._guard:
            for connection in self._connections:
                connection.close()
            self._connections.clear()

    # -- locks on the records ---------------------------------------------------------------
    @contextmanager
    def _advisory(self, kind: str, name: str) -> Iterator[None]:
        held: dict[tuple[str, str], tuple[psycopg.Connection[Any], int]]
        held = self._local.__dict__.setdefault("held", {})
        key = (kind, name)
        if key in held:
            connection, depth = held[key]
            held[key] = (connection, depth + 1)
            try:
                yield
            finally:
                connection, depth = held[key]
                held[key] = (connection, depth - 1)
            return
        connection = self._locked(f"{kind}:{name}")
        try:
            held[key] = (connection, 1)
            try:
                yield
            finally:
                del held[key]
        finally:
            connection.close()  # the lock goes with its connection

    def _locked(self, key: str) -> psycopg.Connection[Any]:
        """A new connection holding the advisory lock of `key` (waiting for it); tried again
        while the server restarts."""
        for tried in range(_CONNECTION_RETRIES + 1):
            try:
                connection = psycopg.connect(self.url, autocommit=True)
            except psycopg.OperationalError:
                if tried == _CONNECTION_RETRIES:
                    raise
                self._sleep(1.0)
                continue
            try:
                connection.execute("SELECT pg_advisory_lock(hashtextextended(%s, 0))", (key,))
            except psycopg.OperationalError:
                connection.close()
                if tried == _CONNECTION_RETRIES:
                    raise
                self._sleep(1.0)
                continue
            return connection
        raise AssertionError("unreachable")

    @contextmanager
    def task_lock(self, task: str) -> Iterator[None]:
        with self._advisory("task", task):
            yield

    @contextmanager
    def plan_lock(self, plan: str) -> Iterator[None]:
        with self._advisory("plan", plan):
            yield

    @contextmanager
    def registry_lock(self) -> Iterator[None]:
        with self._advisory("arc", "registry"):
            yield

    # -- this host's own locks and folders ----------------------------------------------------
    def run_lock(self) -> FileLock:
        return self._host.run_lock()

    def gate_lock(self, task: str) -> AdvisoryLock:
        """Held by whichever host runs the task's gate, until its verdict is applied: no
        other host starts a gate of the task meanwhile, and a host that dies mid-gate (or
        before applying) lets it go with its connection."""
        return AdvisoryLock(self, f"gate:{task}")

    def integration_lock(self, target_branch: str) -> AdvisoryLock:
        """Held for a whole integration into `target_branch` by whichever host integrates:
        the hosts sharing this store merge and push one at a time, never racing a push."""
        return AdvisoryLock(self, f"integration:{target_branch}")

    def task_dir(self, task: str) -> Path:
        return self._host.task_dir(task)

    def attempt_dir(self, task: str, attempt_id: str) -> Path:
        return self._host.attempt_dir(task, attempt_id)

    # -- plans ------------------------------------------------------------------------------
    def plan_exists(self, plan: str) -> bool:
        return self._one("SELECT 1 FROM arc_plans WHERE name = %s", (plan,)) is not None

    def load_plan(self, plan: str) -> Plan:
        row = self._one("SELECT record FROM arc_plans WHERE name = %s", (plan,))
        if row is None:
            raise NotFoundError(no_such_plan(plan))
        return _validated(Plan, row[0], f"plan {plan}")

    def save_plan(self, plan: Plan) -> None:
        plan.format_version = FORMAT_VERSION
        record = plan.model_dump(mode="json")

        def write(connection: psycopg.Connection[Any]) -> None:
            connection.execute(
                "INSERT INTO arc_plans (name, record, loading) VALUES (%s, %s, %s) "
                "ON CONFLICT (name) DO UPDATE SET record = excluded.record, "
                "loading = excluded.loading",
                (plan.name, Jsonb(record), plan.loading),
            )
            _note(connection, "plan", plan.name)

        self._with_connection(write)

    def plan_if_there(self, name: str) -> Plan | None:
        try:
            plan = self.load_plan(name)
        except (DamagedFile, NotFoundError):
            return None
        return None if plan.loading else plan

    def plan_names(self) -> list[str]:
        return [row[0] for row in self._all("SELECT name FROM arc_plans ORDER BY name", ())]

    def plans(self) -> list[Plan]:
        found: list[Plan] = []
        for name, record in self._all("SELECT name, record FROM arc_plans ORDER BY name", ()):
            try:
                plan = _validated(Plan, record, f"plan {name}")
            except DamagedFile as error:
                self.damaged[f"plan {name}"] = str(error)
                continue
            if not plan.loading:
                found.append(plan)
        return found

    def write_loaded_plan(self, plan: Plan, template: Task, tasks: list[NewTask]) -> None:
        """The plan and every task, in one transaction."""
        plan.tasks = [task.name for task in tasks]
        plan.loading = False
        plan.format_version = FORMAT_VERSION
        document = loaded_document(plan.name, template, tasks)
        shared: dict[str, Any] = {"state": str(State.READY), **document["task"]}
        rows = []
        for position, (name, entry) in enumerate(document["tasks"].items()):
            fields = {key: value for key, value in entry.items() if key != "brief"}
            record = {**shared, **fields, "name": name, "branch": branch_for(name)}
            task = _validated(Task, record, f"task {name}")
            task.format_version = FORMAT_VERSION
            dumped = task.model_dump(mode="json")
            rows.append((name, plan.name, position, str(task.state), Jsonb(dumped), entry["brief"]))

        def write(connection: psycopg.Connection[Any]) -> None:
            with connection.cursor() as cursor:
                cursor.executemany(
                    "INSERT INTO arc_tasks (name, plan, position, state, record, brief) "
                    "VALUES (%s, %s, %s, %s, %s, %s)",
                    rows,
                )
            connection.execute(
                "INSERT INTO arc_plans (name, record, loading) VALUES (%s, %s, false) "
                "ON CONFLICT (name) DO UPDATE SET record = excluded.record, loading = false",
                (plan.name, Jsonb(plan.model_dump(mode="json"))),
            )
            _note(connection, "plan", plan.name)

        self._with_connection(write)

    def discard_unfinished_loads(self) -> list[str]:
        """A load is one transaction here: only a plan left `loading` by a save is undone,
        with the tasks made for it."""

        def discard(connection: psycopg.Connection[Any]) -> list[str]:
            names = [
                row[0]
                for row in connection.execute(
                    "DELETE FROM arc_plans WHERE loading RETURNING name"
                ).fetchall()
            ]
            for name in names:
                connection.execute("DELETE FROM arc_tasks WHERE plan = %s", (name,))
                _note(connection, "plan", name)
            return sorted(names)

        return self._with_connection(discard)

    # -- tasks ------------------------------------------------------------------------------
    def task_exists(self, task: str) -> bool:
        return self._one("SELECT 1 FROM arc_tasks WHERE name = %s", (task,)) is not None

    def existing_tasks(self, names: list[str]) -> list[str]:
        rows = self._all("SELECT name FROM arc_tasks WHERE name = ANY(%s)", (names,))
        found = {row[0] for row in rows}
        return [name for name in names if name in found]

    def load_task(self, task: str) -> Task:
        row = self._one("SELECT record FROM arc_tasks WHERE name = %s", (task,))
        if row is None:
            raise NotFoundError(no_such_task(task))
        return _validated(Task, row[0], f"task {task}")

    def try_load_task(self, task: str) -> Task | None:
        try:
            loaded = self.load_task(task)
        except NotFoundError as error:
            self.damaged[task] = str(error)
            return None
        except DamagedFile as error:
            self.damaged[task] = str(error)
            return None
        self.damaged.pop(task, None)
        return loaded

    def save_task(self, task: Task) -> None:
        task.format_version = FORMAT_VERSION
        record = task.model_dump(mode="json")

        def write(connection: psycopg.Connection[Any]) -> None:
            _task_written(connection, task, record)

        self._with_connection(write)

    def claim_next(
        self,
        names: Sequence[str],
        allowed: Collection[State],
        build: ClaimBuild,
        *,
        wait: bool = False,
    ) -> Task | None:
        """One transaction: the first of `names` in a state of `allowed` whose row no other
        host has locked (`FOR UPDATE SKIP LOCKED`) and whose task lock is free (tried, not
        waited for: a holder of `task_lock` is changing it); `build` moves it; the intent,
        its lease with a new fencing token and the task are written before the commit. A
        task whose attempt another host leases is passed over. With `wait` the row lock and
        the task lock are waited for (`FOR UPDATE`, `pg_advisory_xact_lock`), not skipped."""
        states = [str(state) for state in allowed]

        def candidates(connection: psycopg.Connection[Any]) -> Iterator[tuple[str, Any]]:
            """Each task that may be claimed now, its row and its task lock held."""
            if wait:
                # The task lock first, then the row: a holder of the task lock saving the
                # task never waits on a row lock this transaction holds.
                for name in names:
                    connection.execute(
                        "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (f"task:{name}",)
                    )
                    row = connection.execute(
                        "SELECT record FROM arc_tasks WHERE name = %s AND state = ANY(%s) "
                        "FOR UPDATE",
                        (name, states),
                    ).fetchone()
                    if row is not None:
                        yield name, row[0]
                return
            left = list(names)
            while left:
                found = connection.execute(
                    "SELECT name, record FROM arc_tasks WHERE name = ANY(%s) "
                    "AND state = ANY(%s) ORDER BY array_position(%s::text[], name) "
                    "LIMIT 1 FOR UPDATE SKIP LOCKED",
                    (left, states, left),
                ).fetchone()
                if found is None:
                    return
                name = str(found[0])
                left.remove(name)
                free = connection.execute(
                    "SELECT pg_try_advisory_xact_lock(hashtextextended(%s, 0))",
                    (f"task:{name}",),
                ).fetchone()
                if free is not None and free[0]:
                    yield name, found[1]

        def pick(connection: psycopg.Connection[Any]) -> tuple[Task, str, int | None] | None:
            spendable: dict[str, bool] = {}
            for name, record in candidates(connection):
                plan = str(record.get("plan", "")) if isinstance(record, dict) else ""
                if not wait and plan:
                    if plan not in spendable:
                        spendable[plan] = _plan_may_spend(connection, plan)
                    if not spendable[plan]:
                        continue  # its plan's budget is used up, or being added to now
                try:
                    task = _validated(Task, record, f"task {name}")
                except DamagedFile as error:
                    self.damaged[name] = str(error)
                    continue
                attempt_id, intent = build(task)
                try:
                    fence = self._attempt_written(connection, name, attempt_id, "intent",
                                                  {**intent, "owner_host": self.host},
                                                  lease=True)  # fmt: skip
                except LeaseLost:
                    continue  # another host's claim of this attempt, not expired
                task.format_version = FORMAT_VERSION
                _task_written(connection, task, task.model_dump(mode="json"))
                return task, attempt_id, fence
            return None

        picked = self._with_connection(pick)
        if picked is None:
            return None
        task, attempt_id, fence = picked
        if fence is not None:
            self._fences[(task.name, attempt_id)] = fence
        return task

    def task_names(self) -> list[str]:
        names: list[str] = []
        for plan in self.plans():
            names.extend(plan.tasks)
        return names

    def names_in(self, *states: State) -> list[str]:
        rows = self._all(
            "SELECT t.name FROM arc_tasks t JOIN arc_plans p ON p.name = t.plan "
            "WHERE t.state = ANY(%s) AND NOT p.loading ORDER BY p.name, t.position",
            ([str(state) for state in states],),
        )
        return [row[0] for row in rows]

    def task_records(self, plan: Plan) -> list[tuple[str, dict[str, Any] | None]]:
        rows = self._all("SELECT name, record FROM arc_tasks WHERE plan = %s", (plan.name,))
        found = {name: record if isinstance(record, dict) else None for name, record in rows}
        return [(name, found.get(name)) for name in plan.tasks]

    def all_task_records(self) -> list[tuple[str, dict[str, Any] | None]]:
        rows = self._all("SELECT name, record FROM arc_tasks ORDER BY name", ())
        return [(name, record if isinstance(record, dict) else None) for name, record in rows]

    def change_mark(self) -> Hashable:
        row = self._one("SELECT max(id) FROM arc_changes", ())
        return None if row is None else row[0]

    def start_changes(self) -> int:
        row = self._one("SELECT coalesce(max(id), 0) FROM arc_changes", ())
        position = 0 if row is None else int(row[0])
        # What the scan after this reads holds every change committed up to here; one
        # committed later is given by changes_since's look back.
        since = max(0, position - _JOURNAL_LOOKBACK)
        rows = self._all("SELECT id FROM arc_changes WHERE id > %s", (since,))
        self._given = {int(found[0]) for found in rows}
        return position

    def changes_since(self, position: int) -> tuple[int, list[tuple[str, str]]] | None:
        # A journal id is taken when a change's transaction writes it, not when it commits:
        # a transaction that took id 100 may commit after one that took 101 was read, and
        # `id > 101` would never see it (a host's index then waited for good on a task it
        # still took for working). So each look reads the last ids before the position
        # again and gives the changes among them not given yet.
        since = max(0, position - _JOURNAL_LOOKBACK)
        rows = self._all(
            "SELECT id, kind, name FROM arc_changes WHERE id > %s ORDER BY id", (since,)
        )
        fresh = [(int(id_), kind, name) for id_, kind, name in rows if id_ not in self._given]
        last = max([position, *(id_ for id_, _, _ in fresh)])
        self._given = {id_ for id_ in self._given if id_ > last - _JOURNAL_LOOKBACK}
        self._given.update(id_ for id_, _, _ in fresh if id_ > last - _JOURNAL_LOOKBACK)
        return last, [(kind, name) for _, kind, name in fresh]

    def read_brief(self, task: str) -> str:
        row = self._one("SELECT brief FROM arc_tasks WHERE name = %s", (task,))
        return "" if row is None else str(row[0])

    def write_brief(self, task: str, text: str) -> None:
        def write(connection: psycopg.Connection[Any]) -> None:
            connection.execute("UPDATE arc_tasks SET brief = %s WHERE name = %s", (text, task))

        self._with_connection(write)

    # -- a plan's running cost ----------------------------------------------------------------
    def plan_cost(self, plan: str) -> float:
        with self.plan_lock(plan):
            return self._kept_plan_cost(plan)

    def add_plan_cost(self, plan: str, delta_usd: float) -> None:
        with self.plan_lock(plan):
            self._write_cost(plan, round(self._kept_plan_cost(plan) + delta_usd, 10))

    def spend(self, plan: str, delta_usd: float) -> float:
        """Under the plan's lock, one transaction: the plan's row locked (`FOR UPDATE`), its
        running total read and the cost added; the total this addition left."""
        with self.plan_lock(plan):
            kept = self._kept_plan_cost(plan)  # made from the tasks when none is kept yet

            def add(connection: psycopg.Connection[Any]) -> float:
                connection.execute("SELECT 1 FROM arc_plans WHERE name = %s FOR UPDATE", (plan,))
                row = connection.execute(
                    "SELECT cost_usd FROM arc_costs WHERE plan = %s FOR UPDATE", (plan,)
                ).fetchone()
                total = round((kept if row is None else float(row[0])) + delta_usd, 10)
                connection.execute(
                    "INSERT INTO arc_costs (plan, cost_usd) VALUES (%s, %s) "
                    "ON CONFLICT (plan) DO UPDATE SET cost_usd = excluded.cost_usd",
                    (plan, total),
                )
                return total

            return self._with_connection(add)

    def count_plan_cost(self, plan: str) -> float:
        row = self._one(
            "SELECT coalesce(sum((record->>'cost_usd')::double precision), 0) "
            "FROM arc_tasks WHERE plan = %s",
            (plan,),
        )
        return round(float(row[0]) if row is not None else 0.0, 10)

    def set_plan_cost(self, plan: str, total_usd: float) -> None:
        with self.plan_lock(plan):
            self._write_cost(plan, round(total_usd, 10))

    def reconcile_plan_cost(self, plan: str) -> tuple[float | None, float]:
        with self.plan_lock(plan):
            kept, counted = self.kept_plan_cost(plan), self.count_plan_cost(plan)
            if kept is None or abs(kept - counted) > 1e-9:
                self._write_cost(plan, counted)
            return kept, counted

    def kept_plan_cost(self, plan: str) -> float | None:
        row = self._one("SELECT cost_usd FROM arc_costs WHERE plan = %s", (plan,))
        return None if row is None else float(row[0])

    def _kept_plan_cost(self, plan: str) -> float:
        kept = self.kept_plan_cost(plan)
        if kept is not None:
            return kept
        counted = self.count_plan_cost(plan)
        self._write_cost(plan, counted)
        return counted

    def _write_cost(self, plan: str, total: float) -> None:
        def write(connection: psycopg.Connection[Any]) -> None:
            connection.execute(
                "INSERT INTO arc_costs (plan, cost_usd) VALUES (%s, %s) "
                "ON CONFLICT (plan) DO UPDATE SET cost_usd = excluded.cost_usd",
                (plan, total),
            )

        self._with_connection(write)

    # -- attempts ---------------------------------------------------------------------------
    def write_attempt_result(self, task: str, attempt_id: str, result: AttemptResult) -> None:
        """Not fenced here: an attempt's end is written by `settle`, which checks the lease
        first under the task's lock (as `take_over` is made), and a gate's summary by the
        host holding the task's gate lock, whichever host ran the attempt."""
        self._write_attempt(task, attempt_id, "result", result.document())

    def read_attempt_result(self, task: str, attempt_id: str) -> AttemptResult | None:
        return AttemptResult.read(self._read_attempt(task, attempt_id, "result"))

    def write_attempt_intent(self, task: str, attempt_id: str, data: dict[str, Any]) -> None:
        """The claim (or an adoption): the intent, stamped with this host, and the attempt's
        lease for this host with a new fencing token, in one transaction; LeaseLost when
        another host holds a lease of it that has not expired."""
        self._write_attempt(task, attempt_id, "intent", {**data, "owner_host": self.host},
                            lease=True)  # fmt: skip

    def read_attempt_intent(self, task: str, attempt_id: str) -> dict[str, Any] | None:
        return self._read_attempt(task, attempt_id, "intent")

    def _write_attempt(
        self,
        task: str,
        attempt_id: str,
        column: str,
        data: dict[str, Any],
        *,
        lease: bool = False,
    ) -> None:
        key = (task, attempt_id)

        def write(connection: psycopg.Connection[Any]) -> int | None:
            return self._attempt_written(connection, task, attempt_id, column, data, lease=lease)

        fence = self._with_connection(write)
        if fence is not None:
            self._fences[key] = fence

    def _attempt_written(
        self,
        connection: psycopg.Connection[Any],
        task: str,
        attempt_id: str,
        column: str,
        data: dict[str, Any],
        *,
        lease: bool,
    ) -> int | None:
        """Write the attempt's `column` in the caller's transaction; with `lease`, take its
        lease for this host first (LeaseLost when another host holds one not expired) and
        give the new fencing token."""
        statement = (
            f"INSERT INTO arc_attempts (task, attempt_id, {column}) VALUES (%s, %s, %s) "
            f"ON CONFLICT (task, attempt_id) DO UPDATE SET {column} = excluded.{column}"
        )
        key = (task, attempt_id)
        if lease:
            held = connection.execute(
                "SELECT host, expires_at <= now() FROM arc_leases "
                "WHERE task = %s AND attempt_id = %s FOR UPDATE",
                key,
            ).fetchone()
            if held is not None and held[0] != self.host and not held[1]:
                raise LeaseLost(lease_lost(task, attempt_id, str(held[0])))
        connection.execute(statement.encode(), (task, attempt_id, Jsonb(data)))
        if not lease:
            return None
        row = connection.execute(
            "INSERT INTO arc_leases (task, attempt_id, host, fence, expires_at) "
            "VALUES (%s, %s, %s, nextval('arc_fences'), now() + make_interval(secs => %s)) "
            "ON CONFLICT (task, attempt_id) DO UPDATE SET host = excluded.host, "
            "fence = excluded.fence, expires_at = excluded.expires_at RETURNING fence",
            (task, attempt_id, self.host, self.lease_secs),
        ).fetchone()
        return None if row is None else int(row[0])

    def _holds(self, key: tuple[str, str], host: str, fence: int) -> bool:
        """Is the lease this process's? Its token when this process took it, else its host."""
        mine = self._fences.get(key)
        return fence == mine if mine is not None else host == self.host

    # -- leases -----------------------------------------------------------------------------
    def heartbeat(self, attempts: Collection[tuple[str, str]]) -> None:
        """Renew this host's leases of `attempts` (the loop's running ones, every pass)."""
        pairs = list(attempts)
        if not pairs:
            return

        def renew(connection: psycopg.Connection[Any]) -> None:
            with connection.cursor() as cursor:
                cursor.executemany(
                    "UPDATE arc_leases SET expires_at = now() + make_interval(secs => %s) "
                    "WHERE task = %s AND attempt_id = %s AND host = %s",
                    [(self.lease_secs, task, attempt_id, self.host) for task, attempt_id in pairs],
                )

        self._with_connection(renew)

    def foreign_lease(self, task: str, attempt_id: str) -> ForeignLease | None:
        row = self._one(
            "SELECT host, expires_at <= now() FROM arc_leases WHERE task = %s AND attempt_id = %s",
            (task, attempt_id),
        )
        if row is None or row[0] == self.host:
            return None
        return ForeignLease(str(row[0]), bool(row[1]), self.lease_secs)

    def take_over(self, task: str, attempt_id: str) -> None:
        """The lease becomes this host's, with a new token: the host that held it is fenced."""
        row = self._one(
            "UPDATE arc_leases SET host = %s, fence = nextval('arc_fences'), "
            "expires_at = now() + make_interval(secs => %s) "
            "WHERE task = %s AND attempt_id = %s RETURNING fence",
            (self.host, self.lease_secs, task, attempt_id),
        )
        if row is not None:
            self._fences[(task, attempt_id)] = int(row[0])

    def check_lease(self, task: str, attempt_id: str) -> None:
        row = self._one(
            "SELECT host, fence FROM arc_leases WHERE task = %s AND attempt_id = %s",
            (task, attempt_id),
        )
        if row is not None and not self._holds((task, attempt_id), str(row[0]), int(row[1])):
            raise LeaseLost(lease_lost(task, attempt_id, str(row[0])))

    def _read_attempt(self, task: str, attempt_id: str, column: str) -> dict[str, Any] | None:
        statement = f"SELECT {column} FROM arc_attempts WHERE task = %s AND attempt_id = %s"
        row = self._one(statement, (task, attempt_id))
        value = row[0] if row is not None else None
        return value if isinstance(value, dict) else None

    # -- migration (radian.arc.store_migrate) ------------------------------------------------
    def import_records(self, records: Imported) -> None:
        """Plans, tasks with their briefs, attempts and running costs, in one transaction:
        all of them or, on any error, none."""

        def write(connection: psycopg.Connection[Any]) -> None:
            with connection.cursor() as cursor:
                cursor.executemany(
                    "INSERT INTO arc_plans (name, record, loading) VALUES (%s, %s, false)",
                    [(plan.name, Jsonb(_dumped(plan))) for plan in records.plans],
                )
                cursor.executemany(
                    "INSERT INTO arc_tasks (name, plan, position, state, record, brief) "
                    "VALUES (%s, %s, %s, %s, %s, %s)",
                    [
                        (
                            task.name,
                            task.plan,
                            position,
                            str(task.state),
                            Jsonb(_dumped(task)),
                            brief,
                        )  # fmt: skip
                        for position, task, brief in records.tasks
                    ],
                )
                cursor.executemany(
                    "INSERT INTO arc_attempts (task, attempt_id, intent, result) "
                    "VALUES (%s, %s, %s, %s)",
                    [
                        (task, attempt_id, _json_or_none(intent), _json_or_none(result))
                        for task, attempt_id, intent, result in records.attempts
                    ],
                )
                cursor.executemany(
                    "INSERT INTO arc_costs (plan, cost_usd) VALUES (%s, %s)",
                    list(records.costs.items()),
                )
            for plan in records.plans:
                _note(connection, "plan", plan.name)

        self._with_connection(write)

    # -- reading ----------------------------------------------------------------------------
    def _one(self, statement: str, params: tuple[Any, ...]) -> tuple[Any, ...] | None:
        def read(connection: psycopg.Connection[Any]) -> tuple[Any, ...] | None:
            row: tuple[Any, ...] | None = connection.execute(statement.encode(), params).fetchone()
            return row

        return self._with_connection(read)

    def _all(self, statement: str, params: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        def read(connection: psycopg.Connection[Any]) -> list[tuple[Any, ...]]:
            return list(connection.execute(statement.encode(), params).fetchall())

        return self._with_connection(read)


class AdvisoryLock:
    """A gate's or an integration's lock across hosts, with filelock's API:
    `acquire(timeout=0)` raises filelock.Timeout when another holds it; held on a connection
    of its own. A server restarting meanwhile (its connections ended, new ones refused for a
    while) is a lock not had yet: a wait with a timeout goes on through it.

    The lock goes with its connection: a restart of the server, or the connection cut
    (pg_terminate_backend), lets go of it without its holder knowing, and another host may
    take it. So a holder asks `recheck()` before the write the lock guards (the integration's
    push): "held" (its connection answers: still its own), "taken_again" (the connection had
    ended and the lock was free: its own again, but another may have held it meanwhile, so
    what was read under it must be read again) or "lost" (another holds it now: act no
    further on it)."""

    def __init__(self, store: PostgresStore, key: str) -> None:
        self._store = store
        self._key = key
        self._connection: psycopg.Connection[Any] | None = None

    def acquire(self, timeout: float | None = None) -> AdvisoryLock:
        if self._connection is not None:
            return self
        if timeout is None or timeout < 0:
            self._connection = self._store._locked(self._key)
            return self
        deadline = time.monotonic() + timeout
        connection: psycopg.Connection[Any] | None = None
        while True:
            row = None
            try:
                if connection is None:
                    connection = psycopg.connect(self._store.url, autocommit=True)
                row = connection.execute(
                    "SELECT pg_try_advisory_lock(hashtextextended(%s, 0))", (self._key,)
                ).fetchone()
            except psycopg.OperationalError:
                if connection is not None:
                    connection.close()
                connection = None
            if connection is not None and row is not None and row[0]:
                self._connection = connection
                return self
            if time.monotonic() >= deadline:
                if connection is not None:
                    connection.close()
                raise Timeout(self._key)
            time.sleep(0.05)

    def recheck(self) -> LockCheck:
        if self._connection is not None:
            try:
                self._connection.execute("SELECT 1")
                return "held"
            except psycopg.OperationalError:
                self._connection.close()
                self._connection = None
        try:
            self.acquire(timeout=_RETAKE_SECS)
        except Timeout:
            return "lost"
        return "taken_again"

    def held(self) -> bool:
        """Does its connection still answer (no wait, no retake)? A lock lost with its
        connection is not held, even when no other host has taken it yet."""
        if self._connection is None:
            return False
        try:
            self._connection.execute("SELECT 1")
        except psycopg.OperationalError:
            return False
        return True

    def release(self) -> None:
        if self._connection is not None:
            self._connection.close()  # the lock goes with its connection
            self._connection = None


@dataclass
class Imported:
    """What `radian arc store migrate` moves in (radian.arc.store_migrate)."""

    plans: list[Plan] = field(default_factory=list)
    tasks: list[tuple[int, Task, str]] = field(default_factory=list)  # (place, task, brief)
    # (task, attempt id, intent, result)
    attempts: list[tuple[str, str, dict[str, Any] | None, dict[str, Any] | None]] = field(
        default_factory=list
    )
    costs: dict[str, float] = field(default_factory=dict)


def _dumped(record: Plan | Task) -> dict[str, Any]:
    record.format_version = FORMAT_VERSION
    return record.model_dump(mode="json")


def _json_or_none(value: dict[str, Any] | None) -> Jsonb | None:
    return None if value is None else Jsonb(value)


def _make_schema(connection: psycopg.Connection[Any]) -> None:
    connection.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK,))
    connection.execute(SCHEMA.encode())
    if connection.execute("SELECT 1 FROM arc_schema").fetchone() is None:
        connection.execute("INSERT INTO arc_schema (version) VALUES (%s)", (SCHEMA_VERSION,))


def _task_written(connection: psycopg.Connection[Any], task: Task, record: dict[str, Any]) -> None:
    connection.execute(
        "INSERT INTO arc_tasks (name, plan, position, state, record) "
        "VALUES (%s, %s, 0, %s, %s) ON CONFLICT (name) DO UPDATE SET "
        "plan = excluded.plan, state = excluded.state, record = excluded.record",
        (task.name, task.plan, str(task.state), Jsonb(record)),
    )
    _note(connection, "task", task.name)


def _note(connection: psycopg.Connection[Any], kind: str, name: str) -> None:
    connection.execute("INSERT INTO arc_changes (kind, name) VALUES (%s, %s)", (kind, name))


def _validated(model: type[ModelT], data: Any, label: str) -> ModelT:
    version = data.get("format_version", 0) if isinstance(data, dict) else 0
    if isinstance(version, int) and version > FORMAT_VERSION:
        raise DamagedFile(damaged_file(label, newer_format(version, FORMAT_VERSION)))
    try:
        return model.model_validate(data)
    except ValidationError as error:
        problems = describe_validation_error(error, label).replace(f"{label}: ", "")
        raise DamagedFile(damaged_file(label, wrong_fields(problems))) from None


def _plan_may_spend(connection: psycopg.Connection[Any], plan: str) -> bool:
    """May a host claim a task of `plan` now: its budget is not used up by the running total
    as committed. The plan's row is read `FOR SHARE SKIP LOCKED`: while another host's
    `spend` holds it (adding a cost that may use the budget up, before that host pauses the
    plan), the plan's tasks are passed over this time, not waited for."""
    row = connection.execute(
        "SELECT (p.record->>'max_cost_usd')::double precision, "
        "coalesce((SELECT c.cost_usd FROM arc_costs c WHERE c.plan = p.name), "
        "(SELECT coalesce(sum((t.record->>'cost_usd')::double precision), 0) "
        "FROM arc_tasks t WHERE t.plan = p.name)) "
        "FROM arc_plans p WHERE p.name = %s FOR SHARE OF p SKIP LOCKED",
        (plan,),
    ).fetchone()
    if row is None:
        return False  # being written by another transaction (or gone): not this time
    limit, spent = row
    return limit is None or float(spent) < float(limit)

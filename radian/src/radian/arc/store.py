"""arc's state on disk: atomic JSON files under `<repo>/.radian/arc/`, each write under a lock.

Every write is atomic (radian.arc.atomic): a reader, or a process killed at any moment, sees
the old file or the new one, never a torn one. Locks are files under `.radian/arc/locks/`, so a
`radian arc cancel` in another terminal waits for `run`'s write and the other way round.
Lock order, to never deadlock: registry, then a task, then a plan.

Each kind of lock has a folder of its own (`locks/task/<task>.lock`, `locks/plan/<plan>.lock`,
`locks/gate/<task>.lock`; arc's own in `locks/arc/`): a name cannot hold "/", so no task or
plan name can ever share a lock file with another kind, or with arc's own.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Collection, Hashable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from filelock import FileLock
from pydantic import BaseModel, ValidationError

from radian.arc.atomic import fsync_dir, read_json, write_json_atomic, write_text_atomic
from radian.arc.attempt_result import AttemptResult
from radian.arc.config import describe_validation_error
from radian.arc.errors import DamagedFile, NotFoundError
from radian.arc.layout import ARC_DIR, PLANS_DIR, RUNS_DIR, TASK_FILE, plan_path
from radian.arc.loaded import (
    LOADED_DIR,
    LoadedPlans,
    LoadedTask,
    NewTask,
    loaded_path,
    write_loaded,
)
from radian.arc.records import FORMAT_VERSION, Plan, Task
from radian.arc.states import State
from radian.arc.store_journal import changes_since, journal_path, note_change, start_changes
from radian.arc.store_plain import all_task_records, plan_names, task_records
from radian.arc.store_protocol import ClaimBuild, ForeignLease
from radian.arc.texts import (
    REWORK_PREFIX,
    damaged_file,
    missing_file,
    newer_format,
    no_such_plan,
    no_such_task,
    not_json,
    too_deep,
    unreadable,
    wrong_fields,
    wrong_name,
)

LOCKS_DIR = ARC_DIR / "locks"
BRIEF_FILE = "brief.md"


def lock_path(repo_root: Path, kind: str, name: str) -> Path:
    """The lock file of `name` among the locks of `kind` (task, plan, gate, or arc's own)."""
    return Path(repo_root) / LOCKS_DIR / kind / f"{name}.lock"


def arc_lock(repo_root: Path, name: str, *, thread_local: bool = True) -> FileLock:
    """One of arc's own locks (run, registry, gate-integration, gate-remote)."""
    path = lock_path(repo_root, "arc", name)
    path.parent.mkdir(parents=True, exist_ok=True)
    return FileLock(str(path), thread_local=thread_local)


class ArcStore:
    """The files of one repository's arc: plans, tasks, briefs and attempts."""

    def __init__(self, repo_root: Path) -> None:
        self.repo_root = Path(repo_root).resolve()
        self.root = self.repo_root / ARC_DIR
        # What the last scans found damaged: task (or "plan <name>") -> what is wrong.
        self.damaged: dict[str, str] = {}
        # The tasks of loaded plans that have no folder of their own yet (radian.arc.loaded).
        self.loaded = LoadedPlans(self.root)
        self.shared = False  # one host: no leases

    def names_in(self, *states: State) -> list[str]:
        """The tasks in `states`, by a scan (a loop asks its own due-index instead)."""
        wanted = set(states)
        return [
            name
            for name in self.task_names()
            if (task := self.try_load_task(name)) is not None and task.state in wanted
        ]

    # -- locks --------------------------------------------------------------------------
    def _lock(self, kind: str, name: str, *, thread_local: bool = True) -> FileLock:
        path = lock_path(self.repo_root, kind, name)
        path.parent.mkdir(parents=True, exist_ok=True)
        return FileLock(str(path), thread_local=thread_local)

    @contextmanager
    def task_lock(self, task: str) -> Iterator[None]:
        with self._lock("task", task):
            yield

    @contextmanager
    def plan_lock(self, plan: str) -> Iterator[None]:
        with self._lock("plan", plan):
            yield

    @contextmanager
    def registry_lock(self) -> Iterator[None]:
        """Held while plans and tasks are created, so names stay unique across plans."""
        with self._lock("arc", "registry"):
            yield

    def integration_lock(self, target_branch: str) -> FileLock:
        """One integration at a time on this clone (one host: the target is this clone's)."""
        return arc_lock(self.repo_root, "gate-integration")

    def run_lock(self) -> FileLock:
        """Held by `radian arc run` for its whole life: one scheduling loop per repository."""
        return self._lock("arc", "run")

    def gate_lock(self, task: str) -> FileLock:
        """Held for as long as a gate runs for `task`, in whichever process runs it."""
        return self._lock("gate", task, thread_local=False)

    # -- paths --------------------------------------------------------------------------
    def plan_path(self, plan: str) -> Path:
        return plan_path(self.root, plan)

    def task_dir(self, task: str) -> Path:
        return self.root / RUNS_DIR / task

    def task_path(self, task: str) -> Path:
        return self.task_dir(task) / TASK_FILE

    def brief_path(self, task: str) -> Path:
        return self.task_dir(task) / BRIEF_FILE

    def attempt_dir(self, task: str, attempt_id: str) -> Path:
        return self.task_dir(task) / "attempts" / attempt_id

    def attempt_result_path(self, task: str, attempt_id: str) -> Path:
        return self.attempt_dir(task, attempt_id) / "attempt_result.json"

    def attempt_intent_path(self, task: str, attempt_id: str) -> Path:
        """Written at the claim, before the worker starts: who runs the attempt."""
        return self.attempt_dir(task, attempt_id) / "attempt.json"

    # -- plans --------------------------------------------------------------------------
    def plan_exists(self, plan: str) -> bool:
        return self.plan_path(plan).is_file()

    def load_plan(self, plan: str) -> Plan:
        path = self.plan_path(plan)
        if not path.is_file():
            raise NotFoundError(no_such_plan(plan))
        loaded = _validated(Plan, self._read_record(path), path, self.repo_root)
        if loaded.name != plan:
            raise DamagedFile(damaged_file(self._label(path), wrong_name("plan", loaded.name)))
        return loaded

    def save_plan(self, plan: Plan) -> None:
        plan.format_version = FORMAT_VERSION
        write_json_atomic(self.plan_path(plan.name), plan.model_dump(mode="json"))
        note_change(self.root, "plan", plan.name)

    def plan_if_there(self, name: str) -> Plan | None:
        """The plan, or None when it is gone, damaged or still loading."""
        try:
            plan = self.load_plan(name)
        except (DamagedFile, NotFoundError):
            return None
        return None if plan.loading else plan

    def plan_names(self) -> list[str]:
        return plan_names(self.root)

    # -- tasks --------------------------------------------------------------------------
    def task_exists(self, task: str) -> bool:
        return self.task_path(task).is_file() or self._as_loaded(task) is not None

    def existing_tasks(self, names: list[str]) -> list[str]:
        """Those of `names` that are tasks already (task_exists of each, in one look at the
        folders and the loaded files: a plan load asks it of 10,000 names)."""
        runs = self.root / RUNS_DIR
        folders = set(os.listdir(runs)) if runs.is_dir() else set()
        loaded = self.loaded.names()
        return [
            name
            for name in names
            if (self.task_path(name).is_file() if name in folders else name in loaded)
        ]

    def load_task(self, task: str) -> Task:
        """The task's record; NotFoundError when it has none, DamagedFile when it is not one.
        A task of a loaded plan that nothing has written for yet is read from the plan's
        loaded file (radian.arc.loaded)."""
        path = self.task_path(task)
        if not path.is_file():
            if self.task_dir(task).is_dir():  # the task was made; its record is gone
                raise DamagedFile(damaged_file(self._label(path), missing_file()))
            as_loaded = self._as_loaded(task)
            if as_loaded is None:
                raise NotFoundError(no_such_task(task))
            return _validated(Task, as_loaded.record, as_loaded.path, self.repo_root)
        loaded = _validated(Task, self._read_record(path), path, self.repo_root)
        if loaded.name != task:
            raise DamagedFile(damaged_file(self._label(path), wrong_name("task", loaded.name)))
        return loaded

    def _as_loaded(self, task: str) -> LoadedTask | None:
        """The task as its plan was loaded, when its folder is not made yet. DamagedFile when
        a loaded file that cannot be read belongs to a plan listing the task."""
        if self.task_dir(task).is_dir():
            return None
        found = self.loaded.find(task)
        if found is None and self.loaded.problems:
            for plan, problem in list(self.loaded.problems.items()):
                owner = self.plan_if_there(plan)
                if owner is not None and task in owner.tasks:
                    label = self._label(loaded_path(self.root, plan))
                    raise DamagedFile(damaged_file(label, problem))
        return found

    def _make_folder(self, task: Task) -> bool:
        """Make the folder of a task that has none yet (a loaded plan's, first written for
        now) with its task.json and, for a loaded task, the brief it was loaded with, all in
        one rename: a kill leaves no folder without a record (that would read as a deleted
        task.json), and none whose brief is left behind in the loaded file, whichever write
        makes the folder (a claim, a save, a rework). False when the folder exists. The
        caller holds the task's lock (or the registry's, for a new task)."""
        folder = self.task_dir(task.name)
        if folder.is_dir():
            return False
        loaded = self.loaded.find(task.name)
        folder.parent.mkdir(parents=True, exist_ok=True)
        # Staged under one name ("~" is in no name, so no other task's), what a kill left of
        # an earlier try removed first: one path looked at, not a listing of every task's
        # folder (a glob over runs/ cost each claim more the more tasks had been run).
        staging = folder.parent / f".{task.name}~.tmp"
        shutil.rmtree(staging, ignore_errors=True)
        staging.mkdir(mode=0o700)
        try:
            task.format_version = FORMAT_VERSION
            write_json_atomic(staging / TASK_FILE, task.model_dump(mode="json"))
            if loaded is not None and loaded.brief:
                write_text_atomic(staging / BRIEF_FILE, loaded.brief)
            os.rename(staging, folder)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        fsync_dir(folder.parent)
        return True

    def _made(self, task: str) -> None:
        """Before a file is written into the folder of a loaded task: make the folder, with
        the task's record as loaded."""
        if self.task_dir(task).is_dir():
            return
        found = self._as_loaded(task)
        if found is not None:
            self._make_folder(_validated(Task, found.record, found.path, self.repo_root))

    def try_load_task(self, task: str) -> Task | None:
        """The task, or None when its file is damaged or gone (noted in `self.damaged`), so a
        scan over every task goes on past one bad file."""
        try:
            loaded = self.load_task(task)
        except NotFoundError:
            self.damaged[task] = damaged_file(self._label(self.task_path(task)), missing_file())
            return None
        except DamagedFile as error:
            self.damaged[task] = str(error)
            return None
        self.damaged.pop(task, None)
        return loaded

    def _read_record(self, path: Path) -> Any:
        try:
            return read_json(path)
        except (OSError, UnicodeDecodeError) as error:
            raise DamagedFile(damaged_file(self._label(path), unreadable(str(error)))) from None
        except RecursionError:
            raise DamagedFile(damaged_file(self._label(path), too_deep())) from None
        except ValueError as error:
            raise DamagedFile(damaged_file(self._label(path), not_json(str(error)))) from None

    def _label(self, path: Path) -> str:
        return str(path.relative_to(self.repo_root))

    def save_task(self, task: Task) -> None:
        if not self._make_folder(task):  # a folder of its own from the first write on
            task.format_version = FORMAT_VERSION
            write_json_atomic(self.task_path(task.name), task.model_dump(mode="json"))
        note_change(self.root, "task", task.name)

    def claim_next(
        self,
        names: Sequence[str],
        allowed: Collection[State],
        build: ClaimBuild,
        *,
        wait: bool = False,
    ) -> Task | None:
        """One host: each of `names` in turn under its task lock (read again there; waited
        for, `wait` or not); the first in a state of `allowed` is moved by `build`, its
        intent written, then the task."""
        for name in names:
            with self.task_lock(name):
                task = self.try_load_task(name)
                if task is None or task.state not in allowed:
                    continue
                attempt_id, intent = build(task)
                self.write_attempt_intent(name, attempt_id, intent)
                self.save_task(task)
                return task
        return None

    def task_names(self) -> list[str]:
        """Every task, in the order of its plan and the plans by name (a damaged plan's
        tasks are left out, and the plan noted in `self.damaged`)."""
        names: list[str] = []
        for plan in self.plans():
            names.extend(plan.tasks)
        return names

    def plans(self) -> list[Plan]:
        """Every plan that loads, by name; a damaged plan file is noted in `self.damaged`.
        A plan still loading (or left so by an interrupted `plan load`) is not there yet."""
        found: list[Plan] = []
        for name in self.plan_names():
            try:
                plan = self.load_plan(name)
            except (DamagedFile, NotFoundError) as error:
                self.damaged[f"plan {name}"] = str(error)
                continue
            if not plan.loading:
                found.append(plan)
        return found

    def discard_unfinished_loads(self) -> list[str]:
        """Undo every `plan load` that did not finish: a loaded file whose plan file was never
        written; a plan an earlier build left `loading`, its tasks' folders, then its plan
        file; and folders a kill left half made. The caller holds the registry lock. Returns
        the plans undone."""
        undone: list[str] = []
        for name in self.loaded.plans():
            if not self.plan_path(name).is_file():
                loaded_path(self.root, name).unlink(missing_ok=True)
                self.loaded.forget(name)
                undone.append(name)
        # Only plan loads write here, under the registry lock: a temporary file is a kill's.
        for temporary in (self.root / LOADED_DIR).glob(".*.tmp"):
            temporary.unlink(missing_ok=True)
        for name in self.plan_names():
            try:
                plan = self.load_plan(name)
            except (DamagedFile, NotFoundError):
                continue
            if not plan.loading:
                continue
            for task in plan.tasks:
                if self._made_by_load(task, plan.name):
                    shutil.rmtree(self.task_dir(task), ignore_errors=True)
            self.plan_path(name).unlink(missing_ok=True)
            note_change(self.root, "plan", name)
            undone.append(name)
        return undone

    def _made_by_load(self, task: str, plan: str) -> bool:
        """Did the load of `plan` make this task's folder (and no other plan)?"""
        if not self.task_dir(task).is_dir():
            return False
        try:
            return self.load_task(task).plan == plan
        except DamagedFile:
            return True  # a half-written file of the interrupted load itself
        except NotFoundError:
            return False

    def write_loaded_plan(self, plan: Plan, template: Task, tasks: list[NewTask]) -> None:
        """A new plan and its new tasks (each `template` with its own fields and brief), all
        or nothing: the loaded file first, then the plan file, each written atomically. A
        kill between leaves a loaded file no plan file names: nobody reads it, and the next
        command that creates plans or tasks removes it (discard_unfinished_loads)."""
        plan.tasks = [task.name for task in tasks]
        plan.loading = False
        self.loaded.forget(plan.name)
        write_loaded(self.root, plan.name, template, tasks)
        self.save_plan(plan)

    # -- a plan's running cost ------------------------------------------------------------
    def plan_cost_path(self, plan: str) -> Path:
        return self.root / "costs" / f"{plan}.json"

    def plan_cost(self, plan: str) -> float:
        """cost_usd over every task of `plan`, kept as a running total (radian.arc.budget):
        read in constant time; counted once, by a scan, when the total is missing."""
        with self.plan_lock(plan):
            return self._kept_plan_cost(plan)

    def add_plan_cost(self, plan: str, delta_usd: float) -> None:
        """Add to the plan's running total (a task's new cost; less at a reset-budget)."""
        with self.plan_lock(plan):
            total = round(self._kept_plan_cost(plan) + delta_usd, 10)
            write_json_atomic(self.plan_cost_path(plan), {"cost_usd": total})

    def spend(self, plan: str, delta_usd: float) -> float:
        """Add a task's new cost to the plan's running total; the total it left."""
        with self.plan_lock(plan):
            total = round(self._kept_plan_cost(plan) + delta_usd, 10)
            write_json_atomic(self.plan_cost_path(plan), {"cost_usd": total})
            return total

    def count_plan_cost(self, plan: str) -> float:
        """cost_usd over every task of `plan` as their files say (a scan: `radian arc doctor`
        reconciles the running total with it)."""
        found = self.plan_if_there(plan)
        names = found.tasks if found is not None else []
        tasks = (self.try_load_task(name) for name in names)
        return round(sum(task.cost_usd for task in tasks if task is not None), 10)

    def set_plan_cost(self, plan: str, total_usd: float) -> None:
        with self.plan_lock(plan):
            write_json_atomic(self.plan_cost_path(plan), {"cost_usd": round(total_usd, 10)})

    def reconcile_plan_cost(self, plan: str) -> tuple[float | None, float]:
        """Set the plan's running total to the count of its tasks' files, under its lock;
        (the total as it was kept, None when none was; the count)."""
        with self.plan_lock(plan):
            kept, counted = self.kept_plan_cost(plan), self.count_plan_cost(plan)
            if kept is None or abs(kept - counted) > 1e-9:
                write_json_atomic(self.plan_cost_path(plan), {"cost_usd": counted})
            return kept, counted

    def kept_plan_cost(self, plan: str) -> float | None:
        """The running total as kept, or None when there is none (or it is damaged)."""
        data = _read_object(self.plan_cost_path(plan))
        value = data.get("cost_usd") if data is not None else None
        return float(value) if isinstance(value, int | float) else None

    def _kept_plan_cost(self, plan: str) -> float:
        kept = self.kept_plan_cost(plan)
        if kept is not None:
            return kept
        counted = self.count_plan_cost(plan)
        write_json_atomic(self.plan_cost_path(plan), {"cost_usd": counted})
        return counted

    # -- what status and serve read ---------------------------------------------------------
    def task_records(self, plan: Plan) -> list[tuple[str, dict[str, Any] | None]]:
        """Each task of `plan` as a plain record: a task with a folder from its task.json, a
        loaded task that has none yet from its plan's loaded file (read once); None when the
        record cannot be read (radian.arc.store_plain: status reads them so without this
        store)."""
        return task_records(self.root, plan.tasks, self.loaded.records(plan.name))

    def all_task_records(self) -> list[tuple[str, dict[str, Any] | None]]:
        """Every task with a folder of its own (one written for since its load), by name,
        as a plain record (None when its task.json cannot be read)."""
        return all_task_records(self.root)

    def change_mark(self) -> Hashable:
        """A few `stat` calls: the journal every save appends to, the plans, the task
        folders and the loaded files."""
        return (_stat(journal_path(self.root)), _stat(self.root / PLANS_DIR),
                _stat(self.root / RUNS_DIR), _stat(self.root / LOADED_DIR))  # fmt: skip

    def start_changes(self) -> int:
        return start_changes(self.root)

    def changes_since(self, position: int) -> tuple[int, list[tuple[str, str]]] | None:
        return changes_since(self.root, position)

    def read_brief(self, task: str) -> str:
        """The task's brief: its brief.md, else the brief it was loaded with; "" when the
        task has neither.

        A folder made by an earlier build may lack the loaded brief (its first write did not
        copy it), and a rework written there holds only its "## Rework <n>" sections: the
        loaded brief is read back in front of them, as the worker must get it."""
        path = self.brief_path(task)
        if not path.is_file():
            found = self._as_loaded(task) or self.loaded.find(task)
            return found.brief if found is not None else ""
        text = path.read_text(encoding="utf-8")
        if text.startswith(REWORK_PREFIX):
            found = self.loaded.find(task)
            if found is not None and found.brief.strip():
                return found.brief.rstrip("\n") + "\n\n" + text
        return text

    def write_brief(self, task: str, text: str) -> None:
        self._made(task)
        write_text_atomic(self.brief_path(task), text)

    # -- attempts -----------------------------------------------------------------------
    def write_attempt_result(self, task: str, attempt_id: str, result: AttemptResult) -> None:
        """Every attempt_result.json is written here (AttemptResult.document)."""
        write_json_atomic(self.attempt_result_path(task, attempt_id), result.document())

    def read_attempt_result(self, task: str, attempt_id: str) -> AttemptResult | None:
        """The attempt's result; None when there is none or it is no attempt result."""
        return AttemptResult.read(_read_object(self.attempt_result_path(task, attempt_id)))

    def write_attempt_intent(self, task: str, attempt_id: str, data: dict[str, Any]) -> None:
        self._made(task)  # a claim's first write: a loaded task gets its folder here
        write_json_atomic(self.attempt_intent_path(task, attempt_id), data)

    def read_attempt_intent(self, task: str, attempt_id: str) -> dict[str, Any] | None:
        """The attempt's claim; None when there is none or it is not a JSON object."""
        return _read_object(self.attempt_intent_path(task, attempt_id))

    # -- leases: none on one host ---------------------------------------------------------------
    def heartbeat(self, attempts: Collection[tuple[str, str]]) -> None:
        return None

    def foreign_lease(self, task: str, attempt_id: str) -> ForeignLease | None:
        return None

    def take_over(self, task: str, attempt_id: str) -> None:
        return None

    def check_lease(self, task: str, attempt_id: str) -> None:
        return None


ModelT = TypeVar("ModelT", bound=BaseModel)


def _validated(model: type[ModelT], data: Any, path: Path, repo_root: Path) -> ModelT:
    label = str(path.relative_to(repo_root))
    version = data.get("format_version", 0) if isinstance(data, dict) else 0
    if isinstance(version, int) and version > FORMAT_VERSION:
        raise DamagedFile(damaged_file(label, newer_format(version, FORMAT_VERSION)))
    try:
        return model.model_validate(data)
    except ValidationError as error:
        problems = describe_validation_error(error, label).replace(f"{label}: ", "")
        raise DamagedFile(damaged_file(label, wrong_fields(problems))) from None


def _read_object(path: Path) -> dict[str, Any] | None:
    """A JSON object from `path`; None when the file is missing, unreadable or not one (an
    attempt's files are read for what they say; a damaged one says nothing)."""
    try:
        data = read_json(path)
    except (OSError, ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) else None


def _stat(path: Path) -> tuple[int, int, int] | None:
    try:
        found = path.stat()
    except OSError:
        return None
    return found.st_ino, found.st_size, found.st_mtime_ns

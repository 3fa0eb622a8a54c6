"""arc's state on disk: atomic JSON files under `<repo>/.radian/arc/`, each write under a lock.

Every write is atomic (radian.arc.atomic): a reader, or a process killed at any moment, sees
the old file or the new one, never a torn one. Locks are files under `.radian/arc/locks/`, so a
`radian arc cancel` in another terminal waits for `run`'s write and the other way round.
Lock order, to never deadlock: registry, then a task, then a plan.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from filelock import FileLock

from radian.arc.atomic import read_json, write_json_atomic, write_text_atomic
from radian.arc.errors import NotFoundError
from radian.arc.records import Plan, Task
from radian.arc.texts import no_such_plan, no_such_task

ARC_DIR = Path(".radian") / "arc"


class ArcStore:
    """The files of one repository's arc: plans, tasks, briefs and attempts."""

    def __init__(self, repo_root: Path) -> None:
        self.repo_root = Path(repo_root).resolve()
        self.root = self.repo_root / ARC_DIR
        self.locks_dir = self.root / "locks"

    # -- locks --------------------------------------------------------------------------
    def _lock(self, name: str) -> FileLock:
        self.locks_dir.mkdir(parents=True, exist_ok=True)
        return FileLock(str(self.locks_dir / f"{name}.lock"))

    @contextmanager
    def task_lock(self, task: str) -> Iterator[None]:
        with self._lock(f"task-{task}"):
            yield

    @contextmanager
    def plan_lock(self, plan: str) -> Iterator[None]:
        with self._lock(f"plan-{plan}"):
            yield

    @contextmanager
    def registry_lock(self) -> Iterator[None]:
        """Held while plans and tasks are created, so names stay unique across plans."""
        with self._lock("registry"):
            yield

    def run_lock(self) -> FileLock:
        """Held by `radian arc run` for its whole life: one scheduling loop per repository."""
        return self._lock("run")

    # -- paths --------------------------------------------------------------------------
    def plan_path(self, plan: str) -> Path:
        return self.root / "plans" / f"{plan}.json"

    def task_dir(self, task: str) -> Path:
        return self.root / "runs" / task

    def task_path(self, task: str) -> Path:
        return self.task_dir(task) / "task.json"

    def brief_path(self, task: str) -> Path:
        return self.task_dir(task) / "brief.md"

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
        return Plan.model_validate(read_json(path))

    def save_plan(self, plan: Plan) -> None:
        write_json_atomic(self.plan_path(plan.name), plan.model_dump(mode="json"))

    def plan_names(self) -> list[str]:
        folder = self.root / "plans"
        if not folder.is_dir():
            return []
        return sorted(path.stem for path in folder.glob("*.json"))

    # -- tasks --------------------------------------------------------------------------
    def task_exists(self, task: str) -> bool:
        return self.task_path(task).is_file()

    def load_task(self, task: str) -> Task:
        path = self.task_path(task)
        if not path.is_file():
            raise NotFoundError(no_such_task(task))
        return Task.model_validate(read_json(path))

    def save_task(self, task: Task) -> None:
        write_json_atomic(self.task_path(task.name), task.model_dump(mode="json"))

    def task_names(self) -> list[str]:
        """Every task, in the order of its plan and the plans by name."""
        names: list[str] = []
        for plan in self.plan_names():
            names.extend(self.load_plan(plan).tasks)
        return names

    def read_brief(self, task: str) -> str:
        return self.brief_path(task).read_text(encoding="utf-8")

    def write_brief(self, task: str, text: str) -> None:
        write_text_atomic(self.brief_path(task), text)

    # -- attempts -----------------------------------------------------------------------
    def write_attempt_result(self, task: str, attempt_id: str, data: dict[str, Any]) -> None:
        write_json_atomic(self.attempt_result_path(task, attempt_id), data)

    def read_attempt_result(self, task: str, attempt_id: str) -> dict[str, Any] | None:
        path = self.attempt_result_path(task, attempt_id)
        return read_json(path) if path.is_file() else None

    def write_attempt_intent(self, task: str, attempt_id: str, data: dict[str, Any]) -> None:
        write_json_atomic(self.attempt_intent_path(task, attempt_id), data)

    def read_attempt_intent(self, task: str, attempt_id: str) -> dict[str, Any] | None:
        path = self.attempt_intent_path(task, attempt_id)
        return read_json(path) if path.is_file() else None

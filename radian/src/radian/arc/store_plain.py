"""The files store (radian.arc.store) read as plain JSON, without the typed records: what
`radian arc status` reads of every plan and task, in a process that never loads pydantic.

The store lists its plans and reads its tasks' plain records through the functions here, so
both read one layout (radian.arc.layout) the same way. A plan file is read through
radian.arc.record_format's shape of it; one not written as arc writes it (edited by hand,
damaged, from another build) is read by the typed store instead, which says what it is.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from radian.arc.errors import DamagedFile, NotFoundError
from radian.arc.layout import ARC_DIR, PLANS_DIR, RUNS_DIR, TASK_FILE, plan_path
from radian.arc.loaded import LoadedPlans
from radian.arc.record_format import PlainPlan, plain_plan

if TYPE_CHECKING:
    from radian.arc.records import Plan

Record = tuple[str, dict[str, Any] | None]


def plan_names(root: Path) -> list[str]:
    """The plans whose files are in the store's folder `root`, by name."""
    folder = root / PLANS_DIR
    if not folder.is_dir():
        return []
    return sorted(path.stem for path in folder.glob("*.json"))


def read_plain(path: str) -> dict[str, Any] | None:
    """A JSON object from `path`; None when the file is missing, unreadable or not one."""
    try:
        data = json.loads(_read_bytes(path))
    except (OSError, ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) else None


_CHUNK = 1 << 16


def _read_bytes(path: str) -> bytes:
    """The file's bytes through the system calls themselves: a quarter less time than a file
    object's open, read and close for the 5,000 small files status reads at 10,000 tasks."""
    descriptor = os.open(path, os.O_RDONLY)
    try:
        chunks = [os.read(descriptor, _CHUNK)]
        while chunks[-1]:
            chunks.append(os.read(descriptor, _CHUNK))
    finally:
        os.close(descriptor)
    return chunks[0] if len(chunks) == 2 else b"".join(chunks)


def task_records(
    root: Path, tasks: Sequence[str], loaded: Mapping[str, dict[str, Any]]
) -> list[Record]:
    """Each of `tasks` as a plain record: a task with a folder from its task.json, a loaded
    task that has none yet from `loaded` (its plan's loaded file, radian.arc.loaded); None
    when the record cannot be read."""
    runs = os.fspath(root / RUNS_DIR)
    folders = set(os.listdir(runs)) if os.path.isdir(runs) else set()
    found: list[Record] = []
    # plain strings: pathlib's joins, and os.path.join's, cost more than the read itself at
    # 10,000 tasks (a name is one path segment, radian.arc.records.check_name)
    head, tail = runs + os.sep, os.sep + TASK_FILE
    for name in tasks:
        if name in folders:
            found.append((name, read_plain(head + name + tail)))
        else:
            found.append((name, loaded.get(name)))
    return found


def all_task_records(root: Path) -> list[Record]:
    """Every task with a folder of its own, by name, as a plain record."""
    runs = os.fspath(root / RUNS_DIR)
    names = sorted(os.listdir(runs)) if os.path.isdir(runs) else []
    return [(name, read_plain(os.path.join(runs, name, TASK_FILE))) for name in names]


class TypedPlans(Protocol):
    def load_plan(self, plan: str) -> Plan: ...


class PlainFiles:
    """The plans and task records of a repository's files store, read plainly; `typed` opens
    the typed store (radian.arc.store) for a plan file that is not as arc writes it."""

    def __init__(self, repo_root: Path, typed: Callable[[], TypedPlans]) -> None:
        self.repo_root = Path(repo_root).resolve()
        self.root = self.repo_root / ARC_DIR
        self.loaded = LoadedPlans(self.root)
        self._open_typed = typed
        self._typed: TypedPlans | None = None

    def plans(self) -> list[PlainPlan]:
        """Every plan that loads, by name, as ArcStore.plans() gives them: a damaged plan
        file is left out, and so is a plan still loading."""
        found: list[PlainPlan] = []
        for name in plan_names(self.root):
            try:
                plan = self.load_plan(name)
            except (DamagedFile, NotFoundError):
                continue
            if not plan.loading:
                found.append(plan)
        return found

    def load_plan(self, plan: str) -> PlainPlan:
        """The plan; the typed store's NotFoundError or DamagedFile when it is not one."""
        data = read_plain(os.fspath(plan_path(self.root, plan)))
        plain = plain_plan(data) if data is not None else None
        if plain is not None and plain.name == plan:
            return plain
        if self._typed is None:
            self._typed = self._open_typed()
        typed = self._typed.load_plan(plan)
        return PlainPlan(typed.name, typed.auto, typed.confirmed, typed.max_cost_usd,
                         tuple(typed.tasks), typed.loading)  # fmt: skip

    def task_records(self, plan: PlainPlan) -> list[Record]:
        return task_records(self.root, plan.tasks, self.loaded.records(plan.name))

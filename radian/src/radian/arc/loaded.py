"""A loaded plan's tasks in one file, until each task first changes.

`radian arc plan load` of 10,000 tasks cannot create 10,000 folders and 20,000 files in the
2 s the issue sets (each creation costs a file system's journal write). So a plan load
writes one file, `.radian/arc/loaded/<plan>.json`, holding every task's record as loaded and
its brief, atomically (radian.arc.atomic), and then the plan file. A task's own folder
(`runs/<task>/task.json`) is made the first time anything writes for it (a claim, a cancel,
a rework): from then on that file is the task's record and the loaded one is never read for
it again. The loaded file itself never changes.

The file keeps what every task shares once ("task") and what is each task's own under its
name ("tasks"), so 10,000 tasks take a few hundred kilobytes:

    {"format_version": 1, "plan": "big",
     "task": {"plan": "big", "created_at": "...", "updated_at": "...", ...},
     "tasks": {"t00001": {"brief": "Do 1.", "max_attempts": 3}, ...}}

A loaded file whose plan file does not exist is the leftover of an interrupted load: it is
read by no one and removed by the next command that creates plans or tasks.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from radian.arc import texts
from radian.arc.atomic import read_json, write_json_atomic
from radian.arc.layout import plan_path
from radian.arc.record_format import FORMAT_VERSION
from radian.arc.states import State

if TYPE_CHECKING:  # the typed record is not loaded to read the file (radian.arc.store_plain)
    from radian.arc.records import Task

LOADED_DIR = "loaded"
# The keys that name a task: never in the shared part, never overridden (a task's branch
# is always arc/<name>).
_OWN_KEYS = ("name", "branch")


def loaded_path(root: Path, plan: str) -> Path:
    return root / LOADED_DIR / f"{plan}.json"


@dataclass(frozen=True)
class NewTask:
    """One task of a plan load: its name, its own fields (those that differ from the plan's
    template task: max_attempts, max_cost_usd, fix_level) and its brief."""

    name: str
    own: dict[str, Any]
    brief: str


def loaded_document(plan: str, template: Task, tasks: list[NewTask]) -> dict[str, Any]:
    """The file's content: what every task shares (`template`, checked once), then each
    task's own fields and brief, in plan order."""
    template.format_version = FORMAT_VERSION
    shared = template.model_dump(mode="json", exclude_defaults=True)
    for key in _OWN_KEYS:
        shared.pop(key, None)
    own = {task.name: {**{key: value for key, value in task.own.items()
                          if value is not None and key not in _OWN_KEYS}, "brief": task.brief}
           for task in tasks}  # fmt: skip
    return {"format_version": FORMAT_VERSION, "plan": plan, "task": shared, "tasks": own}


def write_loaded(root: Path, plan: str, template: Task, tasks: list[NewTask]) -> None:
    # Compact: the C encoder (an indented dump is pure Python, 10 times slower here).
    write_json_atomic(loaded_path(root, plan), loaded_document(plan, template, tasks),
                      compact=True)  # fmt: skip


@dataclass(frozen=True)
class LoadedTask:
    record: dict[str, Any]  # the task's record as loaded, for Task.model_validate
    brief: str
    path: Path  # the loaded file, for messages about it


@dataclass
class _Parsed:
    stamp: tuple[int, int, int]  # inode, size, mtime: a file written again is read again
    shared: dict[str, Any]
    tasks: dict[str, Any]


class LoadedPlans:
    """The loaded files of one repository, each read once per process (they never change
    once written; one written again, after its plan was undone and loaded anew, is read
    again). Only files whose plan file exists count."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._parsed: dict[str, _Parsed] = {}
        # plan -> what is wrong with its loaded file (radian.arc.store turns it into a
        # DamagedFile for the plan's tasks)
        self.problems: dict[str, str] = {}

    def plans(self) -> list[str]:
        folder = self.root / LOADED_DIR
        try:
            names = os.listdir(folder)
        except FileNotFoundError:
            return []
        return sorted(name[: -len(".json")] for name in names if name.endswith(".json")
                      and not name.startswith("."))  # fmt: skip

    def _current(self) -> list[tuple[str, _Parsed]]:
        """The loaded files that count (their plan file exists; a file without one is an
        interrupted load's leftover), read."""
        found = []
        for plan in self.plans():
            if plan_path(self.root, plan).is_file():
                parsed = self._read(plan)
                if parsed is not None:
                    found.append((plan, parsed))
        return found

    def names(self) -> set[str]:
        """Every task name the loaded files hold."""
        return {name for _, parsed in self._current() for name in parsed.tasks}

    def find(self, name: str) -> LoadedTask | None:
        from radian.arc.records import branch_for  # loaded with the typed record it is for

        for plan, parsed in self._current():
            entry = parsed.tasks.get(name)
            if isinstance(entry, dict):
                record = {**parsed.shared, **entry, "name": name}
                brief = record.pop("brief", "")
                record.setdefault("branch", branch_for(name))
                return LoadedTask(record, brief if isinstance(brief, str) else "",
                                  loaded_path(self.root, plan))  # fmt: skip
        return None

    def records(self, plan: str) -> dict[str, dict[str, Any]]:
        """Every task of `plan`'s loaded file as a plain record (the shared part, then the
        task's own; the state a loaded task starts in, which the file leaves out as the
        default), unchecked: for a summary over many tasks (radian.arc.status). Empty when
        the plan has no loaded file that counts."""
        if not plan_path(self.root, plan).is_file():
            return {}
        parsed = self._read(plan)
        if parsed is None:
            return {}
        start = {"state": str(State.READY), **parsed.shared}
        return {name: {**start, **entry, "name": name}
                for name, entry in parsed.tasks.items() if isinstance(entry, dict)}  # fmt: skip

    def _read(self, plan: str) -> _Parsed | None:
        path = loaded_path(self.root, plan)
        try:
            info = path.stat()
        except FileNotFoundError:
            self._parsed.pop(plan, None)
            return None
        stamp = (info.st_ino, info.st_size, info.st_mtime_ns)
        cached = self._parsed.get(plan)
        if cached is not None and cached.stamp == stamp:
            return cached
        problem = _parse(path)
        if isinstance(problem, str):
            self.problems[plan] = problem
            self._parsed.pop(plan, None)
            return None
        self.problems.pop(plan, None)
        parsed = _Parsed(stamp, *problem)
        self._parsed[plan] = parsed
        return parsed

    def forget(self, plan: str) -> None:
        self._parsed.pop(plan, None)
        self.problems.pop(plan, None)


def _parse(path: Path) -> str | tuple[dict[str, Any], dict[str, Any]]:
    """The file's shared part and its tasks; or, when it cannot be used, what is wrong."""
    try:
        data = read_json(path)
    except (OSError, UnicodeDecodeError) as error:
        return texts.unreadable(str(error))
    except RecursionError:
        return texts.too_deep()
    except ValueError as error:
        return texts.not_json(str(error))
    if not isinstance(data, dict):
        return texts.wrong_fields(texts.loaded_not_object())
    version = data.get("format_version", 0)
    if isinstance(version, int) and version > FORMAT_VERSION:
        return texts.newer_format(version, FORMAT_VERSION)
    shared, tasks = data.get("task"), data.get("tasks")
    if not isinstance(shared, dict) or not isinstance(tasks, dict):
        return texts.wrong_fields(texts.loaded_not_object())
    return shared, tasks

"""The due-index: which tasks a pass of the loop must look at, kept without rescanning.

Every save of a task or plan appends one line to `.radian/arc/changes.log` (the journal:
"task <name>" or "plan <name>", one small O_APPEND write, so lines from many processes never
interleave). The loop builds its index once by a full scan, then each pass reads only the
journal's new lines and reloads the tasks and plans they name. A pass then costs what
changed and what is due, not the number of tasks: 10,000 idle tasks are not read again.

The journal is emptied when a loop starts (under the run lock, before its full scan), so it
grows only with the changes of one run.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from radian.arc.clock import parse_utc
from radian.arc.records import Plan, Task
from radian.arc.states import State

if TYPE_CHECKING:
    from radian.arc.store_protocol import Store

JOURNAL = "changes.log"


def journal_path(root: Path) -> Path:
    return root / JOURNAL


def note_change(root: Path, kind: str, name: str) -> None:
    """Append "<kind> <name>" to the journal (kind: task or plan)."""
    root.mkdir(parents=True, exist_ok=True)
    descriptor = os.open(journal_path(root), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(descriptor, f"{kind} {name}\n".encode())
    finally:
        os.close(descriptor)


@dataclass(frozen=True)
class Entry:
    state: State
    retry_at: datetime | None
    last_attempt_id: str | None


class DueIndex:
    """The states of every task and the plans, as of the journal's last line read. Tasks are
    kept by state, so a pass looks only at the tasks in the states it acts on."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.tasks: dict[str, Entry] = {}
        self.plans: dict[str, Plan] = {}
        self._by_state: dict[State, set[str]] = {state: set() for state in State}
        self._position: dict[str, tuple[str, int]] = {}  # task -> (plan, index in the plan)
        self._offset = 0

    def rebuild(self) -> None:
        """Empty the journal, then scan everything (a change made meanwhile is in the scan or
        in the journal after it)."""
        self._offset = self.store.start_changes()
        self.plans = {}
        self.tasks = {}
        self._by_state = {state: set() for state in State}
        self._position = {}
        for plan in self.store.plans():
            self._set_plan(plan)
            for name in plan.tasks:
                self._reload_task(name)

    def refresh(self) -> None:
        """Read the changes since the last look and reload what they name."""
        found = self.store.changes_since(self._offset)
        if found is None:  # the journal was emptied by another loop's start: scan again
            self.rebuild()
            return
        self._offset, changes = found
        tasks: set[str] = set()
        plans: set[str] = set()
        for kind, name in changes:
            (plans if kind == "plan" else tasks).add(name)
        for plan_name in plans:
            self._reload_plan(plan_name, tasks)
        for name in tasks:
            self._reload_task(name)

    def _set_plan(self, plan: Plan) -> None:
        self.plans[plan.name] = plan
        for index, name in enumerate(plan.tasks):
            self._position[name] = (plan.name, index)

    def _reload_plan(self, name: str, tasks: set[str]) -> None:
        plan = self.store.plan_if_there(name)
        known = self.plans.pop(name, None)
        if plan is None:
            for task in known.tasks if known is not None else []:
                self._forget(task)
            return
        self._set_plan(plan)
        if known is None or known.tasks != plan.tasks:
            tasks.update(plan.tasks)

    def _forget(self, name: str) -> None:
        entry = self.tasks.pop(name, None)
        if entry is not None:
            self._by_state[entry.state].discard(name)

    def _reload_task(self, name: str) -> None:
        self._forget(name)
        if name not in self._position:
            return
        task: Task | None = self.store.try_load_task(name)
        if task is None:
            return
        retry_at = parse_utc(task.retry_at) if task.retry_at else None
        self.tasks[name] = Entry(task.state, retry_at, task.last_attempt_id)
        self._by_state[task.state].add(name)

    # -- what a pass asks -----------------------------------------------------------------
    def _ordered(self, names: set[str]) -> list[str]:
        ranks = {plan: rank for rank, plan in enumerate(sorted(self.plans))}
        return sorted(names, key=lambda name: (ranks[self._position[name][0]],
                                               self._position[name][1]))  # fmt: skip

    def _claiming(self, name: str) -> bool:
        plan = self.plans.get(self._position[name][0])
        return plan is not None and plan.confirmed and plan.auto != "off"

    def in_states(self, *states: State) -> list[str]:
        """Tasks in any of `states`, in plan order."""
        found: set[str] = set()
        for state in states:
            found |= self._by_state[state]
        return self._ordered(found)

    def claimable(self) -> list[str]:
        """todo.ready tasks of confirmed plans whose auto is on, in plan order."""
        return self._ordered({n for n in self._by_state[State.READY] if self._claiming(n)})

    def due_retries(self, now: datetime) -> list[str]:
        return self._ordered({
            name for name in self._by_state[State.RETRY_WAIT]
            if (due := self.tasks[name].retry_at) is None or due <= now
        })  # fmt: skip

    def next_retry_at(self, gates_after: datetime | None = None) -> datetime | None:
        """The earliest retry_at of a waiting task of a plan the loop would claim from; with
        `gates_after`, also of a review.verifying task whose gate waits on an unreachable
        remote until after that moment (one already due is the verifier's to take up)."""
        times = [
            due
            for name in self._by_state[State.RETRY_WAIT]
            if (due := self.tasks[name].retry_at) is not None and self._claiming(name)
        ]
        if gates_after is not None:
            times += [
                due
                for name in self._by_state[State.VERIFYING]
                if (due := self.tasks[name].retry_at) is not None and due > gates_after
            ]
        return min(times, default=None)

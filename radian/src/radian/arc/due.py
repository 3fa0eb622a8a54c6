"""The due-index: which tasks a pass of the loop must look at, kept without rescanning.

The loop owns it: built once by a full scan when the loop starts, then each pass reads only
the saves made since (the store's change journal: `start_changes`, `changes_since`) and
reloads the tasks and plans they name. A pass then costs what changed and what is due, not
the number of tasks: 10,000 idle tasks are not read again.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from radian.arc.clock import parse_utc
from radian.arc.records import Plan, Task
from radian.arc.states import State

if TYPE_CHECKING:
    from radian.arc.store_protocol import Store


@dataclass(frozen=True)
class Entry:
    state: State
    retry_at: datetime | None
    last_attempt_id: str | None


@dataclass
class _Watch:
    states: frozenset[State]
    entered: set[str] = field(default_factory=set)


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
        self.built = False
        self._watches: list[_Watch] = []

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
        self.built = True

    def refresh(self) -> None:
        """Read the changes since the last look and reload what they name (the first look
        is the full scan)."""
        found = self.store.changes_since(self._offset) if self.built else None
        if found is None:  # not built yet, or the journal was emptied by another loop's start
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
        before = self.tasks.get(name)
        self._forget(name)
        if name not in self._position:
            return
        task: Task | None = self.store.try_load_task(name)
        if task is None:
            return
        retry_at = parse_utc(task.retry_at) if task.retry_at else None
        self.tasks[name] = Entry(task.state, retry_at, task.last_attempt_id)
        self._by_state[task.state].add(name)
        if before is None or before.state is not task.state:
            for watch in self._watches:
                if task.state in watch.states:
                    watch.entered.add(name)

    def watch(self, *states: State) -> Callable[[], list[str]]:
        """Follow the tasks that enter any of `states` (at a rebuild, every task in them):
        the function returned gives, in plan order, those that entered since it was last
        called and are in one of `states` still. A caller that acts once on each task
        reaching a state (the loop's clean-up of done tasks) then pays for what moved, not
        for every task ever done (names_in sorted them all at every pass)."""
        watch = _Watch(frozenset(states))
        if self.built:
            watch.entered.update(name for state in states for name in self._by_state[state])
        self._watches.append(watch)

        def entered() -> list[str]:
            found = {name for name in watch.entered
                     if (entry := self.tasks.get(name)) is not None
                     and entry.state in watch.states}  # fmt: skip
            watch.entered = set()
            return self._ordered(found)

        return entered

    # -- what a pass asks -----------------------------------------------------------------
    def _ordered(self, names: set[str]) -> list[str]:
        ranks = {plan: rank for rank, plan in enumerate(sorted(self.plans))}
        return sorted(names, key=lambda name: (ranks[self._position[name][0]],
                                               self._position[name][1]))  # fmt: skip

    def _claiming(self, name: str) -> bool:
        plan = self.plans.get(self._position[name][0])
        return plan is not None and plan.confirmed and plan.auto != "off"

    def names_in(self, *states: State) -> list[str]:
        """Tasks in any of `states`, in plan order (what the store's `names_in` gives, as of
        the last look)."""
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

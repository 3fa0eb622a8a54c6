"""Cost per attempt, and the task and plan budgets.

A command worker's format states its cost scope (radian.arc.worker.formats.CostScope): a
per-process figure is the attempt's cost as it stands; of a session total, the attempt's
cost is the growth of that total since the previous attempt of the same session (resume), or
the whole total on a session of its own (fresh); a total lower than the last one is a counter
reset, and the attempt's cost is then the total as reported.

A budget is used up when the spent amount has reached its limit:
- the task's: its cost_usd against its max_cost_usd, else [limits] max_cost_usd;
- the plan's: the cost_usd of every task of the plan, summed, against the plan's
  max_cost_usd. cost_usd (not total_cost_usd) so that reset-budget frees the plan's budget
  too: total_cost_usd keeps counting everything ever spent. The sum is a running total kept
  beside the plan (`.radian/arc/costs/<plan>.json`), changed with each task's cost_usd, so
  the check costs the same at 10 tasks and at 10,000; `radian arc doctor` reconciles it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from radian.arc.clock import Clock
from radian.arc.config import ArcConfig
from radian.arc.events import Event
from radian.arc.records import Plan, Task, transition
from radian.arc.states import State
from radian.arc.store_protocol import Store
from radian.arc.texts import plan_auto_off


@dataclass(frozen=True)
class BudgetVerdict:
    used_up: bool
    scope: Literal["task", "plan"] | None  # which budget is used up; None when neither
    spent: float
    limit: float | None


WITHIN = BudgetVerdict(False, None, 0.0, None)


def attempt_cost(
    session_cost_usd: float | None,
    *,
    resumed: bool,
    previous_session_cost_usd: float | None,
    per_process: bool = False,
) -> float:
    """The cost of one attempt from the cost its Result reported: a session total, or with
    `per_process` what the worker's process spent (taken as it stands, never differenced)."""
    if session_cost_usd is None:
        return 0.0
    if per_process:
        return session_cost_usd
    grew = previous_session_cost_usd is not None and session_cost_usd >= previous_session_cost_usd
    if resumed and grew:
        return session_cost_usd - previous_session_cost_usd  # type: ignore[operator]
    return session_cost_usd


def add_cost(store: Store, task: Task, cost_usd: float) -> None:
    """Add an attempt's or a review's cost to the task (saved by the caller) and to its
    plan's running total (at once: a crash before the task is saved counts the cost in the
    plan and not the task, the side that pauses early; `radian arc doctor` reconciles)."""
    task.cost_usd = round(task.cost_usd + cost_usd, 10)
    task.total_cost_usd = round(task.total_cost_usd + cost_usd, 10)
    if cost_usd:
        # The plan's total as this addition left it: the check that follows reads it, so of
        # two hosts adding at once only the one whose cost reached the budget finds it used
        # up (Store.spend: the addition under the plan's row lock).
        task._plan_spent_usd = store.spend(task.plan, cost_usd)


def task_limit(task: Task, config: ArcConfig) -> float | None:
    return task.max_cost_usd if task.max_cost_usd is not None else config.limits.max_cost_usd


def plan_spent(store: Store, plan: Plan) -> float:
    """cost_usd over every task of the plan: its running total, read in constant time (a
    plan of 10,000 tasks is not read again at every retry and every review verdict)."""
    return store.plan_cost(plan.name)


def check_after_cost(store: Store, task: Task, plan: Plan, config: ArcConfig) -> BudgetVerdict:
    """Is a budget used up, now that `task` carries its latest cost? The task's first; the
    plan's as the addition of that cost left it (read again when it added nothing)."""
    limit = task_limit(task, config)
    if limit is not None and task.cost_usd >= limit:
        return BudgetVerdict(True, "task", task.cost_usd, limit)
    if plan.max_cost_usd is not None:
        added = task._plan_spent_usd
        spent = added if added is not None else plan_spent(store, plan)
        if spent >= plan.max_cost_usd:
            return BudgetVerdict(True, "plan", spent, plan.max_cost_usd)
    return WITHIN


def pause_for_budget(
    store: Store, task: Task, verdict: BudgetVerdict, clock: Clock, **fields: object
) -> list[Event]:
    """Move `task` to todo.paused_budget; a plan budget also turns the plan's auto off.

    The caller holds the task's lock and saves the task; the plan is saved here, under its
    own lock. Returns what happened to the plan.
    """
    transition(task, State.PAUSED_BUDGET, clock, retry_at=None, **fields)
    if verdict.scope != "plan":
        return []
    with store.plan_lock(task.plan):
        plan = store.load_plan(task.plan)
        if plan.auto == "off":
            return []
        plan.auto = "off"
        store.save_plan(plan)
    return [Event("plan_auto_off", plan_auto_off(plan.name), plan=plan.name)]

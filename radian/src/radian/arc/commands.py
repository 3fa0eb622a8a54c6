"""The library behind the CLI: every `radian arc` command that changes files, as a function.

Each returns a typed result (radian.arc.results: what it did, and the lines it prints) and
raises an ArcError (changing nothing) when it refuses.
"""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path
from typing import Any

from radian.arc import results, texts
from radian.arc import worker as worker_api
from radian.arc.atomic import write_text_atomic
from radian.arc.attempt_result import AttemptResult
from radian.arc.brief import append_rework
from radian.arc.claims import check_exec_args
from radian.arc.classify import ROWS
from radian.arc.clock import Clock, format_utc
from radian.arc.config import CONFIG_PATH, DEFAULT_CONFIG, ArcConfig
from radian.arc.errors import ArcError, ConfigError, UsageError
from radian.arc.loaded import NewTask
from radian.arc.plan_file import brief_text, read_plan_file
from radian.arc.records import (
    Plan,
    Switch,
    Task,
    branch_for,
    check_fix_level,
    check_name,
    transition,
)
from radian.arc.states import REWORKABLE_STATES, State
from radian.arc.store_protocol import Store
from radian.arc.worker.presets import config_with_worker


def init(repo_root: Path, worker: str | None = None) -> results.ConfigInit:
    """Write a commented default .radian/arc.toml, unless one exists; `worker` (claude-code,
    codex) writes that worker's [worker] section (radian.arc.worker.presets)."""
    path = Path(repo_root) / CONFIG_PATH
    if path.exists():
        return results.ConfigInit(str(CONFIG_PATH), written=False)
    text = DEFAULT_CONFIG if worker is None else config_with_worker(DEFAULT_CONFIG, worker)
    write_text_atomic(path, text)
    return results.ConfigInit(str(CONFIG_PATH), written=True)


# -- plans and tasks -------------------------------------------------------------------------
def add_plan(
    store: Store,
    name: str,
    *,
    auto: Switch = "on",
    max_cost_usd: float | None = None,
    merge_main: bool = True,
    auto_rework: int = 1,
    fix_level: str | None = None,
) -> results.PlanAdded:
    plan = _new_plan(name, auto, max_cost_usd, merge_main, auto_rework, fix_level)
    with store.registry_lock():
        store.discard_unfinished_loads()
        if store.plan_exists(name):
            raise ArcError(texts.plan_exists(name))
        store.save_plan(plan)
    return results.PlanAdded(name)


def _new_plan(
    name: str,
    auto: Switch,
    max_cost_usd: float | None,
    merge_main: bool,
    auto_rework: int,
    fix_level: str | None,
) -> Plan:
    check_name("plan", name)
    check_fix_level(fix_level)
    if max_cost_usd is not None and not (math.isfinite(max_cost_usd) and max_cost_usd >= 0):
        raise UsageError(texts.negative_option("--max-cost-usd"))
    if auto_rework < 0:
        raise UsageError(texts.negative_option("--auto-rework"))
    return Plan(
        name=name,
        auto=auto,
        max_cost_usd=max_cost_usd,
        merge_main=merge_main,
        auto_rework=auto_rework,
        fix_level=fix_level,
    )


def add_task(
    store: Store,
    clock: Clock,
    plan_name: str,
    name: str,
    brief_text: str,
    *,
    max_attempts: int | None = None,
    max_cost_usd: float | None = None,
    fix_level: str | None = None,
) -> results.TaskAdded:
    task = _new_task(clock, plan_name, name, brief_text, max_attempts, max_cost_usd, fix_level)
    with store.registry_lock():
        store.discard_unfinished_loads()
        _check_new_task(store, name)
        with store.plan_lock(plan_name):
            plan = store.load_plan(plan_name)
            store.write_brief(name, brief_text)
            store.save_task(task)
            plan.tasks = [*plan.tasks, name]
            store.save_plan(plan)
    return results.TaskAdded(name, plan_name, str(task.state))


def _new_task(
    clock: Clock,
    plan_name: str,
    name: str,
    brief_text: str,
    max_attempts: int | None,
    max_cost_usd: float | None,
    fix_level: str | None,
) -> Task:
    _check_task_options(name, brief_text, max_attempts, max_cost_usd, fix_level)
    now = format_utc(clock.now())
    return Task(
        name=name,
        plan=plan_name,
        branch=branch_for(name),
        max_attempts=max_attempts,
        max_cost_usd=max_cost_usd,
        fix_level=fix_level,
        created_at=now,
        updated_at=now,
    )


def _check_task_options(
    name: str,
    brief_text: str,
    max_attempts: int | None,
    max_cost_usd: float | None,
    fix_level: str | None,
) -> None:
    check_name("task", name)
    check_fix_level(fix_level)
    if not brief_text.strip():
        raise UsageError(texts.empty_brief(name))
    if max_attempts is not None and max_attempts < 0:
        raise UsageError(texts.negative_option("--max-attempts"))
    if max_cost_usd is not None and not (math.isfinite(max_cost_usd) and max_cost_usd >= 0):
        raise UsageError(texts.negative_option("--max-cost-usd"))


def _check_new_task(store: Store, name: str) -> None:
    _check_new_tasks(store, [name])


def _check_new_tasks(store: Store, names: list[str]) -> None:
    taken = store.existing_tasks(names)
    if taken:
        raise ArcError(texts.task_exists(taken[0], store.load_task(taken[0]).plan))


def confirm(store: Store, config: ArcConfig, plan_name: str) -> results.PlanConfirmed:
    check_exec_args(store, config)
    with store.plan_lock(plan_name):
        plan = store.load_plan(plan_name)
        plan.confirmed = True
        store.save_plan(plan)
    return results.PlanConfirmed(plan_name)


# -- a plan from one TOML file ---------------------------------------------------------------
def load_plan_file(store: Store, clock: Clock, path: Path) -> results.PlanLoaded:
    """Add a plan and its tasks from one TOML file; all checked before anything is written."""
    label = str(path)
    parsed = read_plan_file(path)
    entry = parsed.plan
    plan = _new_plan(
        entry.name, entry.auto, entry.max_cost_usd, entry.merge_main, entry.auto_rework,
        entry.fix_level,
    )  # fmt: skip
    tasks: list[NewTask] = []
    # Every task is this one with its own options: 10,000 tasks need no 10,000 validations
    # of what they share (each task's own options are checked here).
    template = _new_task(clock, plan.name, "template", "template", None, None, None)
    for index, item in enumerate(parsed.tasks):
        brief = brief_text(path, index, item)
        _check_task_options(item.name, brief, item.max_attempts, item.max_cost_usd,
                            item.fix_level)  # fmt: skip
        own = {"max_attempts": item.max_attempts, "max_cost_usd": item.max_cost_usd,
               "fix_level": item.fix_level}  # fmt: skip
        tasks.append(NewTask(item.name, own, brief))
    names = [task.name for task in tasks]
    duplicates = sorted(name for name, count in Counter(names).items() if count > 1)
    if duplicates:
        raise ConfigError(texts.duplicate_task_names(label, duplicates))
    with store.registry_lock():
        store.discard_unfinished_loads()
        if store.plan_exists(plan.name):
            raise ArcError(texts.plan_exists(plan.name))
        _check_new_tasks(store, names)
        _write_all_or_nothing(store, plan, template, tasks)
    return results.PlanLoaded(plan.name, len(tasks))


def _write_all_or_nothing(store: Store, plan: Plan, template: Task, tasks: list[NewTask]) -> None:
    """The tasks in one loaded file, then the plan file (radian.arc.loaded): no command sees
    the plan until both are written. An interrupted load (Ctrl-C, a kill) is undone at once,
    or by the next command that creates plans or tasks."""
    try:
        store.write_loaded_plan(plan, template, tasks)
    except BaseException:
        store.discard_unfinished_loads()
        raise


# -- changing a task by hand -----------------------------------------------------------------
def cancel(store: Store, clock: Clock, name: str) -> results.TaskCancelled:
    """failed.cancelled; a live worker is stopped after the state is written."""
    with store.task_lock(name):
        task = store.load_task(name)
        from_state = task.state
        if from_state is State.INTEGRATED or from_state.value.startswith("failed."):
            raise ArcError(texts.cannot_cancel(name, str(from_state)))
        attempt_id = task.last_attempt_id
        if from_state is State.WORKING and attempt_id is not None:
            row = ROWS["cancel"]
            store.write_attempt_result(
                name,
                attempt_id,
                AttemptResult(
                    task=name,
                    attempt_id=attempt_id,
                    failure_class=row.failure_class,
                    row=row.result,
                    ended_at=format_utc(clock.now()),
                    next_state=str(State.CANCELLED),
                ),
            )
        # The cancelled attempt did not end in a model wait: the run of waits is over.
        streak = 0 if from_state is State.WORKING else task.model_wait_streak
        transition(task, State.CANCELLED, clock, retry_at=None, model_wait_streak=streak)
        store.save_task(task)
    if from_state is State.WORKING and attempt_id is not None:
        worker_api.stop_attempt(store.attempt_dir(name, attempt_id))
    return results.TaskCancelled(name, str(from_state), str(State.CANCELLED))


def rework(store: Store, clock: Clock, name: str, text: str) -> results.TaskReworked:
    """The lead's rework: a "## Rework <n>" section, retry_count back to 0, todo.ready."""
    if not text.strip():
        raise UsageError(texts.empty_rework_brief())
    with store.task_lock(name):
        task = store.load_task(name)
        if task.state not in REWORKABLE_STATES:
            raise ArcError(texts.cannot_rework(name, str(task.state)))
        number = append_rework(store, task, text)
        fields: dict[str, Any] = {
            "retry_count": 0,
            "conflict_rework_run": 0,
            "rework_reason": None,
            "retry_at": None,
            "merge_pending": False,
        }
        if task.state is State.READY:
            for key, value in fields.items():
                setattr(task, key, value)
            task.updated_at = format_utc(clock.now())
        else:
            transition(task, State.READY, clock, **fields)
        store.save_task(task)
    return results.TaskReworked(name, number, str(State.READY))


def reset_budget(store: Store, clock: Clock, name: str) -> results.BudgetReset:
    """The only way out of todo.paused_budget: cost_usd to 0 (total_cost_usd stays)."""
    with store.task_lock(name):
        task = store.load_task(name)
        if task.state is not State.PAUSED_BUDGET:
            raise ArcError(texts.cannot_reset_budget(name, str(task.state)))
        freed = task.cost_usd
        transition(task, State.READY, clock, cost_usd=0.0, retry_at=None)
        store.save_task(task)
        store.add_plan_cost(task.plan, -freed)
    return results.BudgetReset(name, str(State.READY))


def set_plan_auto(store: Store, plan_name: str, auto: Switch) -> results.PlanAuto:
    """Turn a plan's auto on or off (a plan budget turns it off; this turns it back on)."""
    with store.plan_lock(plan_name):
        plan = store.load_plan(plan_name)
        plan.auto = auto
        store.save_plan(plan)
    return results.PlanAuto(plan_name, auto)

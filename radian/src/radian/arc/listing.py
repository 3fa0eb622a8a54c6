"""`radian arc show --plan P --state S --limit N --page K`: the listing narrowed and paged.

Tasks are taken in the order `show` lists them (plan by plan, each plan's tasks in order);
the filters come first, then the page: `--limit` tasks a page, `--page` counted from 1. Only
the tasks of the page get their full document (attempts read from their files), so a page of
a 10,000-task plan costs a page, not the plan. Without any of these options `show` prints what
it always printed (radian.arc.show.overview_document).

Pure over what it is given (the plans, a task loader, the document of a task), so it needs no
store of its own.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from radian.arc.records import Plan, Task

DAMAGED = "damaged"  # as radian.arc.show names a task whose file cannot be read


@dataclass(frozen=True)
class Selection:
    plan: str | None = None
    state: str | None = None
    limit: int | None = None  # tasks a page; None: every matching task
    page: int = 1

    @property
    def narrowed(self) -> bool:
        return self.plan is not None or self.state is not None or self.limit is not None


def selected_document(
    plans: Iterable[Plan],
    load: Callable[[str], Task | None],
    document: Callable[[Task], dict[str, Any]],
    damaged: Mapping[str, str],
    selection: Selection,
) -> dict[str, Any]:
    """show's overview document, narrowed to `selection`, with a "page" object: the limit,
    the page, how many pages and how many tasks matched. A damaged task (no state) matches
    no --state; with --limit, a plan without a task on the page is left out."""
    matched: list[tuple[Plan, str, Task | None]] = []
    chosen = [plan for plan in plans if selection.plan is None or plan.name == selection.plan]
    for plan in chosen:
        for name in plan.tasks:
            task = load(name)
            if selection.state is not None and (task is None or task.state != selection.state):
                continue
            matched.append((plan, name, task))
    limit = selection.limit
    pages = 1 if limit is None else max(1, -(-len(matched) // limit))
    start = 0 if limit is None else (selection.page - 1) * limit
    on_page = matched[start:] if limit is None else matched[start : start + limit]
    tasks_of: dict[str, list[dict[str, Any]]] = {plan.name: [] for plan in chosen}
    for plan, name, task in on_page:
        if task is None:
            entry = {"name": name, "state": DAMAGED, "problem": damaged.get(name, "")}
        else:
            entry = document(task)
        tasks_of[plan.name].append(entry)
    listed = [
        {
            "name": plan.name,
            "auto": plan.auto,
            "confirmed": plan.confirmed,
            "max_cost_usd": plan.max_cost_usd,
            "tasks": tasks_of[plan.name],
        }
        for plan in chosen
        if limit is None or tasks_of[plan.name]
    ]
    damaged_plans = {
        name.removeprefix("plan "): problem
        for name, problem in damaged.items()
        if name.startswith("plan ") and selection.plan in (None, name.removeprefix("plan "))
    }
    page = {"limit": limit, "page": selection.page, "pages": pages, "matching": len(matched)}
    return {"plans": listed, "damaged_plans": damaged_plans, "page": page}

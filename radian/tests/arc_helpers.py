"""Helpers for arc's tests: a repository with a confirmed plan, and a loop over it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from radian.arc import commands
from radian.arc.clock import FakeClock
from radian.arc.config import load_config
from radian.arc.loop import Loop
from radian.arc.records import Task
from radian.arc.store import ArcStore


def make_plan(
    repo: Path,
    clock: FakeClock,
    tasks: dict[str, dict[str, Any]] | list[str],
    plan: str = "p",
    confirm: bool = True,
    **plan_options: Any,
) -> ArcStore:
    store = ArcStore(repo)
    commands.add_plan(store, plan, **plan_options)
    items = tasks if isinstance(tasks, dict) else {name: {} for name in tasks}
    for name, options in items.items():
        commands.add_task(store, clock, plan, name, f"# {name}\n\nDo {name}.\n", **options)
    if confirm:
        commands.confirm(store, load_config(repo), plan)
    return store


def run_once(repo: Path, clock: FakeClock, **loop_options: Any) -> list[str]:
    store = ArcStore(repo)
    loop = Loop(store, load_config(repo), clock, echo=lambda line: None, **loop_options)
    return loop.run(once=True).lines


def task(repo: Path, name: str) -> Task:
    return ArcStore(repo).load_task(name)


def attempt_result(repo: Path, name: str, attempt_id: str) -> dict[str, Any]:
    """The attempt's result as its file holds it (the chapter's key "class")."""
    record = ArcStore(repo).read_attempt_result(name, attempt_id)
    assert record is not None
    return record.document()

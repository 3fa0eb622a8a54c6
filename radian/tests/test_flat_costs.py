"""Costs flat as history grows (issue 33): what the loop and the store do per pass and per
task does not grow with the tasks done. Counted (names sorted, folders listed), not timed."""

from __future__ import annotations

import os
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from arc_helpers import make_plan
from conftest import write_config

from radian.arc import loop as loop_module
from radian.arc.clock import FakeClock, format_utc
from radian.arc.config import load_config
from radian.arc.due import DueIndex
from radian.arc.loaded import NewTask
from radian.arc.loop import Loop
from radian.arc.records import Plan, Task
from radian.arc.states import State
from radian.arc.store import ArcStore

pytestmark = pytest.mark.unit


def finish(store: ArcStore, name: str, state: State) -> None:
    task = store.load_task(name)
    task.state = state
    store.save_task(task)


def noting(cleaned: list[list[str]]) -> Any:
    """clean_tasks noting the names it is given (what the clean-up looks at)."""

    def clean_tasks(store: ArcStore, names: list[str], *rest: Any) -> list[str]:
        cleaned.append(list(names))
        return []

    return clean_tasks


def test_a_pass_sorts_only_the_tasks_done_since_the_last(
    git_repo: Path, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The clean-up looks at each task once it is done: a pass after it sorts none of the
    tasks done before (it sorted every done task at every pass: 1.3 ms at 1,000 done)."""
    write_config(git_repo, ["true"], limits={"parallel": 1})
    done = [f"d{n:02d}" for n in range(20)]
    store = make_plan(git_repo, clock, [*done, "last", "failing"])
    for name in done:
        finish(store, name, State.INTEGRATED)
    loop = Loop(store, load_config(git_repo), clock, echo=lambda line: None, claims=None)
    cleaned: list[list[str]] = []
    monkeypatch.setattr(loop_module, "clean_tasks", noting(cleaned))
    sorted_sizes: list[int] = []
    original = DueIndex._ordered  # noqa: SLF001 - what is counted

    def counted(index: DueIndex, names: set[str]) -> list[str]:
        sorted_sizes.append(len(names))
        return original(index, names)

    monkeypatch.setattr(DueIndex, "_ordered", counted)
    busy: Any = {object(): SimpleNamespace(task="elsewhere", attempt_id="001")}
    loop._running = busy  # noqa: SLF001 - the slot taken: nothing is claimed
    loop.index.rebuild()
    loop._pass()  # noqa: SLF001 - the first pass: every done task, in plan order
    assert cleaned == [done]

    sorted_sizes.clear()
    loop._pass()  # noqa: SLF001
    loop._pass()  # noqa: SLF001
    assert cleaned == [done]
    assert sorted_sizes and max(sorted_sizes) == 0, sorted_sizes

    finish(store, "last", State.INTEGRATED)
    finish(store, "failing", State.EXHAUSTED)
    sorted_sizes.clear()
    loop._pass()  # noqa: SLF001 - the two newly done, and no other
    assert cleaned == [done, ["last", "failing"]]
    assert max(sorted_sizes) == 2, sorted_sizes
    loop._pool.shutdown()  # noqa: SLF001


def test_a_task_done_again_is_not_cleaned_again(
    git_repo: Path, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each task is looked at once per run, as before: a failed task reworked and failed
    again is not cleaned a second time; one that left a done state before the pass is not
    taken for done."""
    write_config(git_repo, ["true"], limits={"parallel": 1})
    store = make_plan(git_repo, clock, ["a", "b"])
    loop = Loop(store, load_config(git_repo), clock, echo=lambda line: None, claims=None)
    cleaned: list[list[str]] = []
    monkeypatch.setattr(loop_module, "clean_tasks", noting(cleaned))
    busy: Any = {object(): SimpleNamespace(task="elsewhere", attempt_id="001")}
    loop._running = busy  # noqa: SLF001
    loop.index.rebuild()
    finish(store, "a", State.EXHAUSTED)
    loop._pass()  # noqa: SLF001
    finish(store, "a", State.REWORK_PENDING)
    finish(store, "a", State.EXHAUSTED)
    finish(store, "b", State.EXHAUSTED)
    loop.index.refresh()
    finish(store, "b", State.REWORK_PENDING)  # left its done state before the pass
    loop._pass()  # noqa: SLF001
    assert cleaned == [["a"]]
    loop._pool.shutdown()  # noqa: SLF001


def loaded_plan(repo: Path, clock: FakeClock, names: list[str]) -> ArcStore:
    store = ArcStore(repo)
    now = format_utc(clock.now())
    template = Task(name="template", plan="big", branch="arc/template", created_at=now,
                    updated_at=now)  # fmt: skip
    tasks = [NewTask(name, {}, f"Do {name}.\n") for name in names]
    store.write_loaded_plan(Plan(name="big", confirmed=True), template, tasks)
    return store


def test_a_task_folder_is_made_without_listing_every_task_folder(
    tmp_path: Path, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A loaded task's first write makes its folder with no look at the other tasks' folders
    (a glob over runs/ for a kill's leftovers listed every task ever run, at each claim)."""
    names = [f"t{n:03d}" for n in range(40)]
    store = loaded_plan(tmp_path, clock, names)
    for name in names[:30]:
        store.save_task(store.load_task(name))
    runs = os.fspath(store.root / "runs")
    listed: list[str] = []
    scandir, listdir = os.scandir, os.listdir

    def counted_scandir(path: Any = ".") -> Any:
        listed.append(os.fspath(path))
        return scandir(path)

    def counted_listdir(path: Any = ".") -> list[str]:
        listed.append(os.fspath(path))
        return listdir(path)

    monkeypatch.setattr(os, "scandir", counted_scandir)
    monkeypatch.setattr(os, "listdir", counted_listdir)
    task = store.load_task("t035")
    task.state = State.CANCELLED
    store.save_task(task)
    assert runs not in listed, listed
    monkeypatch.undo()
    assert store.load_task("t035").state is State.CANCELLED
    assert (store.task_dir("t035") / "brief.md").read_text() == "Do t035.\n"
    assert sorted(os.listdir(runs)) == sorted([*names[:30], "t035"])


def test_what_a_kill_left_of_a_folder_being_made_is_removed(
    tmp_path: Path, clock: FakeClock
) -> None:
    store = loaded_plan(tmp_path, clock, ["a", "b"])
    left = store.root / "runs" / ".a~.tmp"
    left.mkdir(parents=True)
    (left / "task.json").write_text("{")  # half written when the kill came
    store.save_task(store.load_task("a"))
    assert not left.exists()
    assert store.load_task("a").name == "a"
    assert (store.task_dir("a") / "brief.md").read_text() == "Do a.\n"
    assert sorted(os.listdir(store.root / "runs")) == ["a"]
    assert os.stat(store.task_dir("a")).st_mode & 0o777 == 0o700  # as mkdtemp made it

"""A plan load is all or nothing (issue 14, bug 6), and a loaded plan's tasks live in one file
until each first changes (issue 14, "Scale": plan load of 10,000 tasks within 2 s)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import run_env

from radian.arc import commands, show
from radian.arc.clock import FakeClock
from radian.arc.config import ArcConfig
from radian.arc.errors import ArcError
from radian.arc.loaded import loaded_path
from radian.arc.states import State
from radian.arc.store import ArcStore

pytestmark = pytest.mark.acceptance

RADIAN = str(Path(sys.executable).parent / "radian")
TASKS = 1000


def big_plan(folder: Path, tasks: int = TASKS) -> Path:
    path = folder / "big.toml"
    lines = ['[plan]\nname = "big"\n']
    for number in range(tasks):
        extra = "max_attempts = 2\n" if number % 2 else ""
        lines.append(f'[[task]]\nname = "t{number:05d}"\nbrief = "Do {number}."\n{extra}')
    path.write_text("\n".join(lines))
    return path


def radian(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([RADIAN, "arc", *args], cwd=repo, env=run_env(),
                          capture_output=True, text=True, timeout=120)  # fmt: skip


def interrupted_load(repo: Path, plan_file: Path, signum: int) -> int:
    """`plan load`, sent `signum` as soon as it starts writing (its loaded file's folder
    appears), or when it has ended by then."""
    folder = repo / ".radian" / "arc" / "loaded"
    load = subprocess.Popen(
        [RADIAN, "arc", "plan", "load", str(plan_file)],
        cwd=repo,
        env=run_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 60
        while not folder.is_dir() and load.poll() is None:
            assert time.monotonic() < deadline
            time.sleep(0.0005)
        load.send_signal(signum)
        load.communicate(timeout=60)
    finally:
        load.kill()
        load.wait()
    return load.returncode


def arc_files(repo: Path) -> list[str]:
    root = repo / ".radian" / "arc"
    return sorted(str(path.relative_to(root)) for path in root.rglob("*")
                  if path.is_file() and "locks" not in path.parts)  # fmt: skip


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGKILL])
def test_an_interrupted_plan_load_leaves_all_or_nothing_and_loads_again(
    tmp_path: Path, signum: int
) -> None:
    plan_file = big_plan(tmp_path)
    for attempt in range(1):  # at whatever moment the signal lands
        repo = tmp_path / f"repo{attempt}"
        repo.mkdir()
        code = interrupted_load(repo, plan_file, signum)
        stopped = 130 if signum == signal.SIGINT else -signal.SIGKILL
        assert code in (0, stopped)

        shown = radian(repo, "show").stdout
        complete = shown != "no plans\n"
        if complete:  # the load had finished: every task is there
            assert len(shown.splitlines()) == TASKS + 1
        elif signum == signal.SIGINT:  # undone at once
            assert [f for f in arc_files(repo) if f.startswith(("loaded/", "plans/"))] == []
        again = radian(repo, "plan", "load", str(plan_file))
        if complete:
            assert (again.returncode, again.stderr) == (1, "a plan named 'big' already exists\n")
        else:
            assert again.returncode == 0, again.stderr
            assert again.stdout == f"plan big loaded with {TASKS} task(s) (not confirmed)\n"
        lines = radian(repo, "show").stdout.splitlines()
        assert lines[0] == "plan big (auto on, not confirmed)" and len(lines) == TASKS + 1
        # One loaded file, the plan, the journal: no leftover of the interrupted load.
        assert arc_files(repo) == ["changes.log", "loaded/big.json", "plans/big.json"]


def test_a_kill_between_the_loaded_file_and_the_plan_leaves_no_plan(tmp_path: Path) -> None:
    """The loaded file is written first: a kill before the plan file leaves a file nobody
    reads, removed by the next load."""
    store = ArcStore(tmp_path)
    clock = FakeClock()
    plan_file = big_plan(tmp_path, 5)
    commands.load_plan_file(store, clock, plan_file)
    orphan = loaded_path(store.root, "big").read_bytes()
    # What a kill after the first write leaves: the loaded file alone.
    store.plan_path("big").unlink()
    assert loaded_path(store.root, "big").read_bytes() == orphan
    fresh = ArcStore(tmp_path)
    assert show.overview_text(show.overview_document(fresh, ArcConfig())) == ["no plans"]
    assert not fresh.task_exists("t00001")

    commands.load_plan_file(fresh, clock, plan_file)

    assert fresh.load_plan("big").tasks == [f"t{n:05d}" for n in range(5)]
    assert fresh.load_task("t00003").max_attempts == 2


def test_a_ctrl_c_while_the_plan_file_is_written_undoes_the_load(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = ArcStore(tmp_path)

    def interrupted(plan: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(store, "save_plan", interrupted)
    with pytest.raises(KeyboardInterrupt):
        commands.load_plan_file(store, FakeClock(), big_plan(tmp_path, 5))

    assert not loaded_path(store.root, "big").exists()
    assert ArcStore(tmp_path).plans() == []


def test_loaded_tasks_get_a_folder_of_their_own_when_they_first_change(tmp_path: Path) -> None:
    store = ArcStore(tmp_path)
    clock = FakeClock()
    commands.load_plan_file(store, clock, big_plan(tmp_path, 4))
    runs = store.root / "runs"
    assert not runs.exists()  # one loaded file, no folder per task
    assert store.load_task("t00001").state is State.READY
    assert store.read_brief("t00001") == "Do 1."

    commands.cancel(store, clock, "t00001")
    commands.rework(store, clock, "t00002", "Also this.\n")

    assert sorted(os.listdir(runs)) == ["t00001", "t00002"]
    cancelled = json.loads(store.task_path("t00001").read_text())
    assert cancelled["state"] == "failed.cancelled" and cancelled["branch"] == "arc/t00001"
    assert store.read_brief("t00002") == "Do 2.\n\n## Rework 1\n\nAlso this.\n"
    assert ArcStore(tmp_path).load_task("t00002").state is State.READY
    assert ArcStore(tmp_path).load_task("t00003").max_attempts == 2
    # A task that has its own folder is never read from the loaded file again: its record
    # deleted is a damaged task, not the task as loaded.
    store.task_path("t00001").unlink()
    document = show.one_task_document(ArcStore(tmp_path), ArcConfig(), "t00001")
    assert document["state"] == "damaged"
    assert "runs/t00001/task.json: the file is missing" in document["problem"]
    # Names stay unique across plans, loaded or not.
    with pytest.raises(ArcError, match="a task named 't00000' already exists"):
        commands.add_plan(store, "other")
        commands.add_task(store, clock, "other", "t00000", "Again.\n")


def test_a_damaged_loaded_file_quarantines_its_tasks_with_its_name(tmp_path: Path) -> None:
    store = ArcStore(tmp_path)
    commands.load_plan_file(store, FakeClock(), big_plan(tmp_path, 3))
    loaded_path(store.root, "big").write_text('{"format_version": 1, "plan": ')

    document = show.one_task_document(ArcStore(tmp_path), ArcConfig(), "t00001")

    assert document["state"] == "damaged"
    assert document["problem"].startswith(".radian/arc/loaded/big.json: not valid JSON")


def test_a_load_an_earlier_build_left_unfinished_is_undone(tmp_path: Path) -> None:
    """The build before loaded files wrote each task's folder, with the plan `loading` until
    the last: what its interrupted load left is undone by the next load, as it was."""
    store = ArcStore(tmp_path)
    plans = store.root / "plans"
    plans.mkdir(parents=True)
    (plans / "big.json").write_text(json.dumps(
        {"name": "big", "tasks": ["t00000", "t00001"], "loading": True}))  # fmt: skip
    folder = store.root / "runs" / "t00000"
    folder.mkdir(parents=True)
    (folder / "task.json").write_text(json.dumps({
        "name": "t00000", "plan": "big", "branch": "arc/t00000",
        "created_at": "2026-11-30T07:00:00Z", "updated_at": "2026-11-30T07:00:00Z"}))  # fmt: skip
    assert store.plans() == []

    commands.load_plan_file(store, FakeClock(), big_plan(tmp_path, 2))

    assert not folder.exists()
    assert store.load_plan("big").tasks == ["t00000", "t00001"]
    assert store.load_task("t00000").state is State.READY

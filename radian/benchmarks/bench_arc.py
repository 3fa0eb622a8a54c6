"""radian arc at scale: the figures issue 14 sets, measured (not a test: timings vary).

    .venv/bin/python radian/benchmarks/bench_arc.py [--tasks 10000]    (or: make bench-radian)

- `plan load` of N tasks (the library call the CLI makes), target <= 2 s;
- one pass of the loop over N tasks with nothing due (every task waiting on a retry an hour
  away), once the due-index is built, target <= 50 ms;
- `show` of one task among N (the library's document and text), target <= 50 ms; and the
  same through the installed `radian` command, whose Python start-up is most of it;
- `status` over N tasks, half of them with a folder of their own, target <= 300 ms (and
  through the command).
Each figure is the median of several runs, printed with its target.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from radian.arc import commands, show, status
from radian.arc.budget import plan_spent
from radian.arc.clock import FakeClock, format_utc
from radian.arc.config import ArcConfig
from radian.arc.due import DueIndex
from radian.arc.loaded import NewTask
from radian.arc.loop import Loop
from radian.arc.records import Plan, Task
from radian.arc.states import State
from radian.arc.store import ArcStore

RADIAN = Path(sys.executable).parent / "radian"


def median_secs(action: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def plan_file(folder: Path, tasks: int) -> Path:
    path = folder / "plan.toml"
    entries = [f'[[task]]\nname = "t{n:05d}"\nbrief = "Do {n}."\n' for n in range(tasks)]
    path.write_text('[plan]\nname = "big"\n\n' + "\n".join(entries))
    return path


def load_once(root: Path, plan: Path, clock: FakeClock, counter: list[int]) -> None:
    counter[0] += 1
    commands.load_plan_file(ArcStore(root / f"repo{counter[0]}"), clock, plan)


def waiting_repo(root: Path, tasks: int, clock: FakeClock) -> ArcStore:
    """A repository whose N tasks all wait on a retry an hour away, in a confirmed plan
    (written as a plan load writes them: one loaded file)."""
    store = ArcStore(root / "waiting")
    later = format_utc(clock.now().replace(hour=clock.now().hour + 1))
    now = format_utc(clock.now())
    template = Task(name="template", plan="big", branch="arc/template", state=State.RETRY_WAIT,
                    retry_at=later, created_at=now, updated_at=now)  # fmt: skip
    waiting = [NewTask(f"t{n:05d}", {}, f"Do {n}.\n") for n in range(tasks)]
    store.write_loaded_plan(Plan(name="big", confirmed=True), template, waiting)
    return store


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tasks", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    clock = FakeClock()
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        plan = plan_file(root, args.tasks)
        counter = [0]
        load = median_secs(lambda: load_once(root, plan, clock, counter), min(args.runs, 3))
        store = waiting_repo(root, args.tasks, clock)
        loop = Loop(store, ArcConfig(), clock, echo=lambda line: None)

        store.index = DueIndex(store)
        build = median_secs(store.index.rebuild, 1)
        idle = median_secs(loop._pass, args.runs * 4)  # noqa: SLF001 - the pass is what is measured
        store.index = None
        loop._pool.shutdown()  # noqa: SLF001
        config = ArcConfig()
        one = f"t{args.tasks // 2:05d}"
        show_lib = median_secs(
            lambda: show.task_text(show.one_task_document(ArcStore(store.repo_root), config, one)),
            args.runs * 4,
        )
        show_cli = median_secs(
            lambda: subprocess.run(
                [str(RADIAN), "arc", "--repo", str(store.repo_root), "show", one],
                check=True,
                capture_output=True,
            ),  # fmt: skip
            args.runs,
        )
        # status over the same tasks, half of them with a folder of their own (claimed once)
        half = [f"t{n:05d}" for n in range(0, args.tasks, 2)]
        for name in half:
            store.save_task(store.load_task(name))
        status_lib = median_secs(
            lambda: status.status_text(status.fleet_status(ArcStore(store.repo_root), clock)),
            args.runs,
        )
        status_cli = median_secs(
            lambda: subprocess.run(
                [str(RADIAN), "arc", "--repo", str(store.repo_root), "status"],
                check=True,
                capture_output=True,
            ),  # fmt: skip
            args.runs,
        )
        # the plan budget's check: the plan's running total, not a read of every task
        budget_plan = store.load_plan("big")
        plan_spent(store, budget_plan)  # the first read counts the total once
        budget = median_secs(lambda: plan_spent(store, budget_plan), args.runs * 4)
        # every slot busy, every task ready: the pass must not look for claimable tasks
        ready = ArcStore(root / "ready")
        ready_template = Task(name="template", plan="big", branch="arc/template",
                              created_at=format_utc(clock.now()),
                              updated_at=format_utc(clock.now()))  # fmt: skip
        fresh = [NewTask(f"t{n:05d}", {}, f"Do {n}.\n") for n in range(args.tasks)]
        ready.write_loaded_plan(Plan(name="big", confirmed=True), ready_template, fresh)
        ready.index = DueIndex(ready)
        ready.index.rebuild()
        busy_loop = Loop(ready, ArcConfig(), clock, echo=lambda line: None)
        busy: Any = {object(): SimpleNamespace(task="x", attempt_id="001") for _ in range(2)}
        busy_loop._running = busy  # noqa: SLF001 - both slots taken
        busy_pass = median_secs(busy_loop._pass, args.runs * 4)  # noqa: SLF001
        busy_loop._pool.shutdown()  # noqa: SLF001
    rows = [
        (f"loop pass, {args.tasks} tasks ready, every slot busy", busy_pass, 0.005),
        (f"plan budget check, {args.tasks} tasks", budget, 0.005),
        (f"status of {args.tasks} tasks, half with a folder (library)", status_lib, 0.300),
        (f"status of {args.tasks} tasks (radian command)", status_cli, None),
        (f"plan load of {args.tasks} tasks", load, 2.0),
        (f"loop pass, {args.tasks} tasks, nothing due", idle, 0.050),
        (f"show of one task among {args.tasks} (library)", show_lib, 0.050),
        (f"show of one task among {args.tasks} (radian command)", show_cli, None),
        (f"due-index built once at run start ({args.tasks} tasks)", build, None),
    ]
    for label, secs, target in rows:
        goal = f"target <= {target * 1000:.0f} ms" if target is not None else "no target"
        verdict = "" if target is None else ("  ok" if secs <= target else "  OVER")
        print(f"{label:<58} {secs * 1000:9.1f} ms   {goal}{verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

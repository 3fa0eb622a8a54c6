"""radian arc at scale: the figures issue 14 sets, measured (not a test: timings vary).

    .venv/bin/python radian/benchmarks/bench_arc.py [--tasks 10000]    (or: make bench-radian)

- `plan load` of N tasks (the library call the CLI makes), target <= 2 s;
- one pass of the loop over N tasks with nothing due (every task waiting on a retry an hour
  away), once the due-index is built, target <= 50 ms;
- `show` of one task among N (the library's document and text), target <= 50 ms; and the
  same through the installed `radian` command, whose Python start-up is most of it;
- `status` over N tasks, half of them with a folder of their own, target <= 300 ms, the
  library's answer and the installed `radian arc status` command alike (issue 33);
- the plan budget's check over N tasks, and the CPU an idle `run` spends with every slot busy
  (passes at the loop's poll, N tasks ready), as a share of one core;
- throughput as history grows (history_flow below): `radian arc run` takes --flow
  tasks (default 1,000) through a repository that already has --history done (default 1,000),
  with an instant worker and a gate that integrates; tasks/min over the first and the last
  tenth, the end within 20% of the start. `--flow 0` skips it; `--flow 200` is a quick run.
Each figure is the median of several runs, printed with its target.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from radian.arc import commands, show, status
from radian.arc.budget import plan_spent
from radian.arc.clock import FakeClock, SystemClock, format_utc
from radian.arc.config import ArcConfig
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


def idle_cpu_share(
    action: Callable[[], object], secs: float, poll_secs: float
) -> tuple[float, float]:
    """The CPU a loop spends calling `action` every `poll_secs` for `secs`, as a share of
    one core (what an idle `run` costs: a pass, then a wait of one poll); and the CPU seconds
    of one pass, which a machine's other load leaves as it is (it lengthens each pass in
    time, so fewer passes are made and the share looks smaller than on an idle machine)."""
    cpu, started, passes = time.process_time(), time.perf_counter(), 0
    while time.perf_counter() - started < secs:
        action()
        passes += 1
        time.sleep(poll_secs)
    spent = time.process_time() - cpu
    return spent / (time.perf_counter() - started), spent / max(1, passes)


# -- throughput as history grows -------------------------------------------------------------
# Throughput as history grows: N tasks run through a repository that already has H done.
#
# The repository is real (a clone of a bare remote); the H done tasks are set up quickly: their
# records written as a plan load writes them and then saved one by one (each done task has its
# folder, as after a real run), and their branches `arc/<task>` made by one `git fast-import`
# and pushed once, local and remote. Then `radian arc run` (the command, in a subprocess, as a
# user runs it) takes N new tasks through an instant worker (it rewrites one of 64 files and
# pushes its branch) and a gate with no stages (each task is integrated into main). The time of
# each "-> done.integrated" line is noted: tasks/min over the first and the last tenth.
# The worker's files are a fixed few so that the target's tree stays the size it was: checking
# out a tree costs what its files are (a worktree of 538 files 103 ms of CPU, of 2 files 10 ms,
# twice per task: the attempt's and the gate's), so a file added per task grew every attempt by
# what git does for any repository that big, not by anything arc keeps per task done.
#
# Uses only what radian arc has had since issue 14, so it runs against an older checkout too
# (PYTHONPATH=<checkout>/radian/src).

INSTANT_WORKER = """\
import json, os, subprocess, sys
sys.stdin.read()
task = os.environ["RADIAN_ARC_TASK"]
with open(f"work-{sum(task.encode()) % 64:02d}.txt", "w") as out:
    out.write(task + "\\n")
subprocess.run(["git", "add", "-A"], check=True)
subprocess.run(["git", "commit", "-q", "-m", f"work of {task}"], check=True)
subprocess.run(["git", "push", "-q", os.environ["RADIAN_ARC_REMOTE"],
                "HEAD:refs/heads/" + os.environ["RADIAN_ARC_BRANCH"]], check=True)
print(json.dumps({"type": "result", "outcome": "completed", "session_id": "s-" + task}))
"""

RUN_RADIAN = "import sys; from radian.cli import main; sys.exit(main())"
INTEGRATED = " -> done.integrated"


@dataclass(frozen=True)
class FlowFigures:
    done_before: int
    tasks: int
    start_per_min: float  # over the first tenth of the tasks (from the first integration)
    end_per_min: float  # over the last tenth (to the last integration)
    total_secs: float
    cpu_per_task: float  # CPU seconds of every process, per task integrated
    integrated: int
    # CPU seconds per task over the first and the last tenth (None where /proc cannot tell):
    # what a machine's other load does not change, as it changes the rates above
    start_cpu_per_task: float | None = None
    end_cpu_per_task: float | None = None
    # of which the run's own process (the loop, its gates' and attempts' threads), the rest
    # its children's (wrappers, workers, git)
    start_loop_cpu_per_task: float | None = None
    end_loop_cpu_per_task: float | None = None


def git(cwd: Path, *args: str, stdin: str | None = None) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True,
                          input=stdin).stdout.strip()  # fmt: skip


def make_repo(root: Path, *, claim_refs: bool = True) -> Path:
    remote, repo = root / "remote.git", root / "repo"
    git(root, "init", "-q", "--bare", "-b", "main", str(remote))
    git(root, "init", "-q", "-b", "main", str(repo))
    git(repo, "config", "user.name", "bench")
    git(repo, "config", "user.email", "bench@example.invalid")
    (repo / "README.md").write_text("bench\n")
    git(repo, "add", "README.md")
    git(repo, "commit", "-q", "-m", "initial")
    git(repo, "remote", "add", "origin", str(remote))
    git(repo, "push", "-q", "origin", "main")
    worker = root / "instant_worker.py"
    worker.write_text(INSTANT_WORKER)
    config = repo / ".radian" / "arc.toml"
    config.parent.mkdir(parents=True)
    # The history's claims (add_history) are this host's, as when this clone ran those tasks.
    hosts = '[hosts]\nname = "bench"\n' if claim_refs else "[hosts]\nclaim_refs = false\n"
    config.write_text(
        f"[worker]\nexec_args = {json.dumps([sys.executable, str(worker)])}\n[gate]\nstages = []\n"
        + hosts
    )
    return repo


def add_history(repo: Path, done: int, *, claim_refs: bool = True) -> None:
    """`done` integrated tasks, as a run of arc leaves them: records with folders; each task's
    branch merged into main by its integration commit ("arc: integrate <task>"), the branch
    kept here and on the remote (as arc did before [cleanup] keep_integrated_branches, or
    with `branches` kept by a user); each task's claim ref on the remote and its copy here
    (none with `claim_refs` off: the flow then measures what grows besides the claims)."""
    if done == 0:
        return
    store = ArcStore(repo)
    now = format_utc(SystemClock().now())
    template = Task(name="template", plan="history", branch="arc/template",
                    state=State.INTEGRATED, created_at=now, updated_at=now)  # fmt: skip
    names = [f"h{n:05d}" for n in range(done)]
    news = [NewTask(name, {"branch": f"arc/{name}"}, f"Did {name}.\n") for name in names]
    store.write_loaded_plan(Plan(name="history", confirmed=True), template, news)
    for name in names:
        store.save_task(store.load_task(name))
    who = "committer bench <bench@example.invalid> 1700000000 +0000"
    parent, stream = git(repo, "rev-parse", "main"), []
    for number, name in enumerate(names, start=1):
        # the task's commit (it changes one file: main's tree stays as small as before)
        text, integrate = f"{name}\n", f"arc: integrate {name}"
        claim = json.dumps({"host": "bench", "task": name, "plan": "history"})
        stream += [
            f"commit refs/heads/arc/{name}\nmark :{3 * number}\n{who}\ndata {len(name)}\n"
            f"{name}\nfrom {parent}\nM 644 inline history.txt\ndata {len(text)}\n{text}\n",
            f"commit refs/heads/main\nmark :{3 * number + 1}\n{who}\ndata {len(integrate)}\n"
            f"{integrate}\nfrom {parent}\nmerge :{3 * number}\n"
            f"M 644 inline history.txt\ndata {len(text)}\n{text}\n",
        ]
        if claim_refs:
            stream.append(
                f"commit refs/arc-claims/{name}\n{who}\ndata {len(claim) + 1}\n{claim}\n\n"
            )
        parent = f":{3 * number + 1}"
    git(repo, "fast-import", "--quiet", "--force", stdin="".join(stream))
    git(repo, "reset", "-q", "--hard", "main")  # the checkout follows its branch
    claims = ["refs/arc-claims/*:refs/arc-claims/*"] if claim_refs else []
    git(repo, "push", "-q", "origin", "main", "refs/heads/arc/*:refs/heads/arc/*", *claims)
    # A remote that lived through those tasks has had its refs packed (by its own gc, as a
    # hosting service does); the clone's are as arc left them.
    git(repo.parent / "remote.git", "pack-refs", "--all")


def add_flow(repo: Path, tasks: int) -> None:
    store = ArcStore(repo)
    now = format_utc(SystemClock().now())
    template = Task(name="template", plan="flow", branch="arc/template",
                    created_at=now, updated_at=now)  # fmt: skip
    news = [NewTask(f"f{n:05d}", {"branch": f"arc/f{n:05d}"}, f"Do f{n:05d}.\n")
            for n in range(tasks)]  # fmt: skip
    store.write_loaded_plan(Plan(name="flow", confirmed=True), template, news)


def tree_cpu(pid: int) -> tuple[float, float] | None:
    """CPU seconds process `pid` has spent so far, its own (the loop: its main thread, its
    gates' and attempts' threads) and that of its children it waited for (its wrappers, their
    workers and every git), from /proc; None without it."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except OSError:
        return None
    ticks = os.sysconf("SC_CLK_TCK")
    own, children = fields[11:13], fields[13:15]
    return sum(int(f) for f in own) / ticks, sum(int(f) for f in children) / ticks


Cpu = tuple[float, float] | None  # the run's own CPU seconds and its children's, so far


def run_flow(repo: Path, tasks: int, timeout_secs: float) -> tuple[list[float], float, list[Cpu]]:
    """`radian arc run` until it is done; the time of each integration, from its start, and
    the CPU seconds the run and every process under it spent (the loop, the wrappers, the
    workers, git), which a machine's other load does not change as it changes the time; and
    the run's CPU so far at each integration."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    times: list[float] = []
    cpus: list[Cpu] = []
    process = subprocess.Popen(
        [sys.executable, "-c", RUN_RADIAN, "arc", "--repo", str(repo), "run"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=dict(os.environ),
    )  # fmt: skip
    assert process.stdout is not None
    deadline = started + timeout_secs
    for line in process.stdout:
        if INTEGRATED in line:
            times.append(time.perf_counter() - started)
            cpus.append(tree_cpu(process.pid))
            if len(times) == tasks:
                break
        if time.perf_counter() > deadline:
            break
    process.terminate()
    process.wait()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return times, cpu, cpus


def cpu_per_task(cpus: list[Cpu], first: int, last: int, part: int | None = None) -> float | None:
    """CPU seconds per integration between the first-th and the last-th (1-based): the run's
    and its children's, or only the run's own (part 0) or its children's (part 1)."""
    start, end = cpus[first - 1], cpus[last - 1]
    if start is None or end is None:
        return None
    parts = (0, 1) if part is None else (part,)
    return sum(end[n] - start[n] for n in parts) / (last - first)


def per_min(times: list[float], first: int, last: int) -> float:
    """Integrations per minute between the first-th and the last-th (1-based)."""
    span = times[last - 1] - times[first - 1]
    return (last - first) * 60 / span if span > 0 else float("inf")


def history_flow(
    root: Path, done: int, tasks: int, timeout_secs: float = 1800, *, claim_refs: bool = True
) -> FlowFigures:
    repo = make_repo(root, claim_refs=claim_refs)
    add_history(repo, done, claim_refs=claim_refs)
    add_flow(repo, tasks)
    times, cpu, cpus = run_flow(repo, tasks, timeout_secs)
    tenth = max(5, tasks // 10)  # integrations a window spans
    if len(times) < 2 * tenth + 1:
        raise SystemExit(f"only {len(times)} of {tasks} tasks were integrated")
    return FlowFigures(
        done_before=done,
        tasks=tasks,
        start_per_min=per_min(times, 1, tenth + 1),
        end_per_min=per_min(times, len(times) - tenth, len(times)),
        total_secs=times[-1],
        cpu_per_task=cpu / len(times),
        integrated=len(times),
        start_cpu_per_task=cpu_per_task(cpus, 1, tenth + 1),
        end_cpu_per_task=cpu_per_task(cpus, len(times) - tenth, len(times)),
        start_loop_cpu_per_task=cpu_per_task(cpus, 1, tenth + 1, part=0),
        end_loop_cpu_per_task=cpu_per_task(cpus, len(times) - tenth, len(times), part=0),
    )


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tasks", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--idle-secs", type=float, default=30.0, help="the idle run measured")
    parser.add_argument("--flow", type=int, default=1_000, help="tasks run (0: skip)")
    parser.add_argument("--history", type=int, default=1_000, help="tasks done before")
    parser.add_argument("--only-flow", action="store_true", help="only the history flow")
    parser.add_argument("--flow-timeout", type=float, default=1800.0, help="the flow's limit, s")
    no_claims = "the flow with [hosts] claim_refs = false (no claims on the remote)"
    parser.add_argument("--no-claim-refs", action="store_true", help=no_claims)
    args = parser.parse_args()
    if not args.only_flow:
        scale(args)
    if args.flow > 0:
        flow(args)
    return 0


def flow(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as folder:
        found = history_flow(Path(folder), args.history, args.flow, args.flow_timeout,
                             claim_refs=not args.no_claim_refs)  # fmt: skip
    ratio = found.end_per_min / found.start_per_min
    verdict = "ok" if ratio >= 0.8 else "OVER"
    print(f"radian arc run, {found.tasks} tasks through a repository with {found.done_before} "
          f"done: {found.total_secs:.0f} s")  # fmt: skip
    if found.integrated < found.tasks:
        print(f"  only {found.integrated} of {found.tasks} integrated within --flow-timeout "
              f"({args.flow_timeout:.0f} s): the figures are theirs")  # fmt: skip
    print(f"  tasks/min at the start (first tenth, {found.done_before} done) "
          f"{found.start_per_min:9.1f}")  # fmt: skip
    print(
        f"  tasks/min at the end (last tenth, {found.done_before + found.integrated} done)  "
        f"{found.end_per_min:9.1f}   target: within 20% of the start ({ratio:.0%})  {verdict}"
    )
    print(f"  CPU per task, every process (loop, wrappers, workers, git) {found.cpu_per_task:.2f} s"
          f"; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")  # fmt: skip
    start, end = found.start_cpu_per_task, found.end_cpu_per_task
    if start is not None and end is not None:
        growth = end / start if start > 0 else float("inf")
        print(f"  CPU per task at the start {start:.3f} s, at the end {end:.3f} s ({growth:.0%}; "
              f"what the machine's other load leaves as it is)")  # fmt: skip
    start, end = found.start_loop_cpu_per_task, found.end_loop_cpu_per_task
    if start is not None and end is not None:
        print(f"    of which the run's own process (loop, gates): {start:.3f} s and {end:.3f} s")


def scale(args: argparse.Namespace) -> None:
    clock = FakeClock()
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        plan = plan_file(root, args.tasks)
        counter = [0]
        load = median_secs(lambda: load_once(root, plan, clock, counter), min(args.runs, 3))
        store = waiting_repo(root, args.tasks, clock)
        loop = Loop(store, ArcConfig(), clock, echo=lambda line: None)

        build = median_secs(loop.index.rebuild, 1)
        idle = median_secs(loop._pass, args.runs * 4)  # noqa: SLF001 - the pass is what is measured
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
        # every slot busy, every task ready, as many done before: the pass must not look for
        # claimable tasks, nor at the tasks done before
        ready = ArcStore(root / "ready")
        ready_template = Task(name="template", plan="big", branch="arc/template",
                              created_at=format_utc(clock.now()),
                              updated_at=format_utc(clock.now()))  # fmt: skip
        fresh = [NewTask(f"t{n:05d}", {}, f"Do {n}.\n") for n in range(args.tasks)]
        ready.write_loaded_plan(Plan(name="big", confirmed=True), ready_template, fresh)
        done_template = ready_template.model_copy(update={"state": State.INTEGRATED})
        done = [NewTask(f"d{n:05d}", {}, f"Did {n}.\n") for n in range(args.tasks)]
        ready.write_loaded_plan(Plan(name="done", confirmed=True), done_template, done)
        busy_loop = Loop(ready, ArcConfig(), clock, echo=lambda line: None)
        busy_loop.index.rebuild()
        busy: Any = {object(): SimpleNamespace(task="x", attempt_id="001") for _ in range(2)}
        busy_loop._running = busy  # noqa: SLF001 - both slots taken
        busy_loop._pass()  # noqa: SLF001 - the first pass looks at the tasks done before, once
        busy_pass = median_secs(busy_loop._pass, args.runs * 4)  # noqa: SLF001
        idle_share, pass_cpu = idle_cpu_share(busy_loop._pass, args.idle_secs, busy_loop.poll_secs)  # noqa: SLF001
        busy_loop._pool.shutdown()  # noqa: SLF001
    rows = [
        (f"loop pass, {args.tasks} ready, {args.tasks} done, every slot busy", busy_pass, 0.005),
        (f"plan budget check, {args.tasks} tasks", budget, 0.005),
        (f"status of {args.tasks} tasks, half with a folder (library)", status_lib, 0.300),
        (f"status of {args.tasks} tasks (radian command)", status_cli, 0.300),
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
    label = f"idle run, {args.tasks} ready, {args.tasks} done, every slot busy: CPU"
    print(f"{label:<58} {idle_share * 100:9.1f} %    of one core over {args.idle_secs:.0f} s")
    alone = pass_cpu / (busy_loop.poll_secs + pass_cpu)
    print(f"{'  CPU per pass (on an idle machine: share of a core)':<58} {pass_cpu * 1000:9.2f} ms"
          f"   ({alone:.1%})")  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())

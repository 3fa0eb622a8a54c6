"""Sessions per second with 1, 2, 4 and 8 worker processes on one PostgreSQL record:
`python stalwart/benchmarks/workers.py` (also part of `make bench`).

A durable PostgreSQL server is started for the run (fsync and synchronous_commit on, the
tests' pgserver.py; skipped, saying why, when none can be). Each worker process opens the
same agent.yaml (its own Agent, its own store and connections) and drives sessions of its
own to their end: a chat naming two writes, then the approval of each. The tools sleep
`--tool-ms` (0 and 20 by default): a tool's wait is not CPU, so with 20 ms tools throughput
should keep growing up to 8 workers on 2 cores; with instant tools it should not fall past
the core count. The workers start together (a barrier, after their imports and a warm-up
session each). Sessions per second is the steady state with that many workers: the
sessions finished while every worker still ran, over the time from the first start to the
moment the first worker was done. (Over the whole batch, the tail in which the last few
workers finish alone would count as throughput with all of them; the more workers, the
fewer sessions each, and the larger that tail's share.) Each figure is the median of
`--rounds` (3) rounds, run interleaved (every count once per round), so a drift of the
machine's speed during the run does not fall on one count. Bounded: `--sessions` (240)
sessions per measurement in all.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import sys
import tempfile
import time
from dataclasses import dataclass
from multiprocessing.synchronize import Barrier
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))  # pgserver: the tests' PostgreSQL server

WORKER_COUNTS = (1, 2, 4, 8)
TOOL_MS = (0, 20)

TOOLS = '''
"""Two writes a person approves one after the other; each waits like a remote call."""

import os
import time

from stalwart import tool

PAUSE = float(os.environ.get("STALWART_BENCH_TOOL_MS", "0")) / 1000


@tool(writes=True, irreversible=True)
def pack_parcel(order: int) -> dict[str, object]:
    """Pack the parcel of an order."""
    if PAUSE:
        time.sleep(PAUSE)
    return {"order": order, "packed": True}


@tool(writes=True, irreversible=True)
def ship_parcel(order: int) -> dict[str, object]:
    """Ship the parcel of an order."""
    if PAUSE:
        time.sleep(PAUSE)
    return {"order": order, "shipped": True}
'''


def write_desk(folder: Path, record: str) -> Path:
    (folder / "bench_workers_tools.py").write_text(TOOLS)
    yaml = folder / "agent.yaml"
    yaml.write_text(
        "agents:\n"
        "  desk:\n"
        '    model: "anthropic:claude-sonnet-5-5"\n'
        "    tools: [pack_parcel, ship_parcel]\n"
        "    on_unread: refuse\n"
        "tools:\n"
        "  - python: bench_workers_tools\n"
        f"record: {record}\n"
    )
    return yaml


def one_session(agent: Any, user: str, order: int) -> None:
    reply = agent.chat(
        f"pack the parcel for order {order}, then ship the parcel for order {order}", user=user
    )
    for _ in range(2):
        if not reply.waiting or reply.waiting[0].kind != "confirm":
            raise SystemExit(f"{user}: expected a confirmation, got {reply.text!r}")
        reply = agent.confirm(user, "approve", question=reply.waiting[0])
    if reply.state != "done":
        raise SystemExit(f"{user}: expected done, got {reply.state}: {reply.text!r}")


def _worker(yaml: str, tool_ms: int, name: str, sessions: int, barrier: Barrier, out: Any) -> None:
    os.environ["STALWART_BENCH_TOOL_MS"] = str(tool_ms)
    from stalwart import Agent

    try:
        with Agent.from_file(yaml) as agent:
            one_session(agent, f"{name}-warm", 1)
            barrier.wait(60)
            began = time.perf_counter()
            ends: list[float] = []
            for number in range(sessions):
                one_session(agent, f"{name}-{number}", 1000 + number)
                ends.append(time.perf_counter())
            out.put((began, ends, None))
    except BaseException as error:  # told to the parent, which fails the run
        out.put((0.0, [], f"{type(error).__name__}: {error}"))


@dataclass(frozen=True)
class Scaling:
    tool_ms: int
    workers: int
    sessions: int
    seconds: float

    @property
    def per_sec(self) -> float:
        return self.sessions / self.seconds


def measure(yaml: Path, tool_ms: int, workers: int, sessions: int, tag: str) -> Scaling:
    context = multiprocessing.get_context("spawn")
    barrier = context.Barrier(workers)
    out = context.Queue()
    each = max(1, sessions // workers)
    processes = [
        context.Process(
            target=_worker, args=(str(yaml), tool_ms, f"{tag}-w{n}", each, barrier, out)
        )
        for n in range(workers)
    ]
    for process in processes:
        process.start()
    try:
        results = [out.get(timeout=300) for _ in processes]
    finally:
        for process in processes:
            process.join(60)
            if process.is_alive():
                process.kill()
    failures = [error for _, _, error in results if error]
    if failures:
        raise SystemExit(f"a worker failed: {failures[0]}")
    return steady_state(tool_ms, workers, [(start, ends) for start, ends, _ in results])


def steady_state(tool_ms: int, workers: int, runs: list[tuple[float, list[float]]]) -> Scaling:
    """From each worker's start and the end of each of its sessions: the sessions finished
    by the moment the first worker was done, over the time since the first start."""
    began = min(start for start, _ in runs)
    first_done = min(ends[-1] for _, ends in runs)
    finished = sum(1 for _, ends in runs for end in ends if end <= first_done)
    return Scaling(tool_ms, workers, finished, first_done - began)


def median_of(rounds: list[Scaling]) -> Scaling:
    """The round of median sessions/s (the lower middle one of an even number)."""
    ordered = sorted(rounds, key=lambda scaling: scaling.per_sec)
    return ordered[(len(ordered) - 1) // 2]


def run_all(
    sessions: int,
    counts: tuple[int, ...] = WORKER_COUNTS,
    tool_ms: tuple[int, ...] = TOOL_MS,
    rounds: int = 3,
) -> list[Scaling] | str:
    """The median of `rounds` measurements of each (tool pause, worker count), or why none
    could be made."""
    from pgserver import PostgresUnavailable, start_postgres

    try:
        server = start_postgres(durable=True, database="stalwart_workers")
    except PostgresUnavailable as why:
        return f"PostgreSQL skipped: {why}"
    try:
        with tempfile.TemporaryDirectory(prefix="stalwart-workers-") as folder:
            yaml = write_desk(Path(folder), server.url())
            measured: dict[tuple[int, int], list[Scaling]] = {}
            for round_number in range(1, rounds + 1):
                for pause in tool_ms:
                    for workers in counts:
                        tag = f"r{round_number}-t{pause}-n{workers}"
                        scaling = measure(yaml, pause, workers, sessions, tag)
                        measured.setdefault((pause, workers), []).append(scaling)
                        print(
                            f"  round {round_number}: {workers} worker(s), tools {pause} ms: "
                            f"{scaling.per_sec:.0f}/s",
                            flush=True,
                        )
            return [median_of(measured[(pause, n)]) for pause in tool_ms for n in counts]
    finally:
        server.stop()


def table(rows: list[Scaling]) -> str:
    counts = sorted({row.workers for row in rows})
    lines = [
        "sessions/s on PostgreSQL (durable), each a chat and two approvals, by worker processes:",
        "  tools  " + "".join(f"{n:>8d}w" for n in counts),
    ]
    for pause in sorted({row.tool_ms for row in rows}):
        by_count = {row.workers: row for row in rows if row.tool_ms == pause}
        cells = "".join(f"{by_count[n].per_sec:9.0f}" if n in by_count else " " * 9 for n in counts)
        lines.append(f"  {pause:3d} ms" + cells)
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=240, help="sessions per measurement")
    parser.add_argument("--rounds", type=int, default=3, help="rounds; each figure is their median")
    parser.add_argument(
        "--tool-ms", default=",".join(map(str, TOOL_MS)), help="tool pauses, ms (0,20)"
    )
    parser.add_argument(
        "--workers", default=",".join(map(str, WORKER_COUNTS)), help="worker counts (1,2,4,8)"
    )
    options = parser.parse_args(argv)
    counts = tuple(int(n) for n in options.workers.split(","))
    pauses = tuple(int(n) for n in options.tool_ms.split(","))
    if options.rounds < 1:
        parser.error("--rounds must be 1 or more")
    rows = run_all(options.sessions, counts, pauses, options.rounds)
    if isinstance(rows, str):
        print(rows)
        return 0
    print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())

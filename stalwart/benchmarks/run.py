"""The record's cost, end to end: `make bench` (or `python stalwart/benchmarks/run.py`).

Two scenarios on the shop's desk (examples/shop), each repeated `--runs` times (1,000 by
default), each run in a session of its own:

- failed order: chapter 34's first run: the turn, three approvals, provision_account
  failing, two undos (restore_crm, refund_card) and the rewind;
- happy order: three writes (charge_card, update_crm, send_receipt), each approved.

On SQLite (WAL, synchronous=FULL: every commit durable) and on a durable PostgreSQL
server started for the run (skipped, with the reason, when none can be). It prints runs
per second, the median and p95 time of one run, durable commits per run and per write
step (writes and undos sent, counted from the record), both counted by the store itself,
and two floors measured in the same process, right after each run: the same number of
durable commits, raw; and the record alone: the run's own commits, made again on a fresh
record with no engine around them.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
SHOP = HERE.parent / "examples" / "shop"
sys.path.insert(0, str(HERE.parent / "tests"))  # pgserver: the tests' PostgreSQL server

import selector_speed  # noqa: E402
import workers  # noqa: E402
from floor import (  # noqa: E402
    CommitsSeen,
    Floor,
    PostgresFloor,
    RecordAlone,
    SQLiteFloor,
    fsync_latency,
)
from profile_runs import where_time_goes  # noqa: E402
from report import Measured, notes, one_table  # noqa: E402

from stalwart import Agent  # noqa: E402
from stalwart.record import Store, open_store  # noqa: E402

WARM_UP_RUNS = 20


@dataclass(frozen=True)
class Scenario:
    name: str
    turn: str
    reply_starts: str  # a run whose reply does not start so measured something else


SCENARIOS = (
    Scenario(
        "failed order",
        "charge order 4411 40.00, then update the crm for order 4411, "
        "then provision the account for order 4411",
        "This run stopped: provision_account failed (RuntimeError). Undone, latest first: "
        "update_crm (by restore_crm), charge_card (by refund_card).",
    ),
    Scenario(
        "happy order",
        "charge order 4411 40.00, then update the crm for order 4411, "
        "then send the receipt for order 4411",
        "Done: charge_card returned",
    ),
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=1000, help="runs per scenario (1000)")
    parser.add_argument(
        "--backend", choices=("sqlite", "postgres", "all"), default="all", help="record(s)"
    )
    parser.add_argument(
        "--profile",
        action="store_true",
        help="after the table, profile the failed order on each backend: where the time goes",
    )
    parser.add_argument(
        "--sessions",
        type=int,
        default=240,
        help="sessions per worker-scaling measurement on PostgreSQL (240); 0 leaves it out",
    )
    parser.add_argument("--turns", type=int, default=1000, help="selector turns per batch")
    options = parser.parse_args(argv)
    if options.runs < 1:
        parser.error("--runs must be 1 or more")
    print(
        f"stalwart benchmark: {options.runs} runs per scenario; Python "
        f"{platform.python_version()} on {platform.system()} {platform.machine()}, "
        f"{os.cpu_count()} cores",
        flush=True,
    )
    # First, so a reader can tell a slow disk from slow code: what one fsync costs here.
    with tempfile.TemporaryDirectory(prefix="stalwart-fsync-") as folder:
        fsync = fsync_latency(Path(folder))
    print(f"  measured fsync: median {fsync.median_ms:.3f} ms", flush=True)
    rows: list[Measured] = []
    profiles: list[str] = []
    backends = ("sqlite", "postgres") if options.backend == "all" else (options.backend,)
    for backend in backends:
        with _record(backend) as opened:
            if opened is None:
                continue
            store, floors, alone = opened
            for scenario in SCENARIOS:
                rows.append(_measure(backend, scenario, store, options.runs, floors, alone))
                print(f"  measured {backend} {scenario.name}", flush=True)
            if options.profile:
                where = _profile(backend, store.store)
                profiles.append(f"{backend}, {SCENARIOS[0].name}: {where}")
    selector = selector_speed.measure(options.turns)
    print("  measured the selector", flush=True)
    scaling = (
        workers.run_all(options.sessions) if options.sessions > 0 else "left out (--sessions 0)"
    )
    print(one_table(fsync, rows, selector, scaling))
    print(notes(rows))
    for profile in profiles:
        print(profile)
    return 0


def _profile(backend: str, store: Store, runs: int = 200) -> str:
    desk = Agent.from_file(SHOP / "agent.yaml", store=store)
    calls = _shop_calls()

    def run_once(number: int) -> None:
        _order(desk, SCENARIOS[0], f"profile-{backend}-{number}")
        calls.clear()

    return where_time_goes(run_once, runs)


@contextmanager
def _record(backend: str) -> Iterator[tuple[CommitsSeen, list[Floor], RecordAlone] | None]:
    """A fresh record on the backend, keeping the commits it is given; its floors (its own
    raw commits first, then raw sqlite3's); and a second fresh record of the same kind, for
    the record alone. None, with the reason printed, when it cannot run."""
    with tempfile.TemporaryDirectory(prefix="stalwart-bench-") as folder:
        if backend == "sqlite":
            store = CommitsSeen(open_store(str(Path(folder) / "record.sqlite")))
            floors: list[Floor] = [SQLiteFloor(Path(folder))]
            alone = RecordAlone(str(Path(folder) / "alone.sqlite"))
            try:
                yield store, floors, alone
            finally:
                store.close()
                alone.close()
                for floor in floors:
                    floor.close()
            return
        from pgserver import PostgresUnavailable, start_postgres

        try:
            server = start_postgres(durable=True, database="stalwart_bench")
        except PostgresUnavailable as why:
            print(f"PostgreSQL skipped: {why}", flush=True)
            yield None
            return
        try:
            store = CommitsSeen(open_store(server.url()))
            floors = [PostgresFloor(server.url()), SQLiteFloor(Path(folder))]
            alone = RecordAlone(server.create_database("stalwart_alone"))
            try:
                yield store, floors, alone
            finally:
                store.close()
                alone.close()
                for floor in floors:
                    floor.close()
        finally:
            server.stop()


def _measure(
    backend: str,
    scenario: Scenario,
    store: CommitsSeen,
    runs: int,
    floors: list[Floor],
    alone: RecordAlone,
) -> Measured:
    desk = Agent.from_file(SHOP / "agent.yaml", store=store)
    calls = _shop_calls()

    slug = scenario.name.replace(" ", "-")
    for number in range(WARM_UP_RUNS):
        _order(desk, scenario, f"warm-{backend}-{slug}-{number}")
        calls.clear()
    store.take()
    seconds: list[float] = []
    alone_secs = 0.0
    commits = step_commits = 0
    floor_secs = [0.0] * len(floors)
    users = [f"{backend}-{slug}-{number}" for number in range(runs)]
    for user in users:
        before = store.commits
        began = time.perf_counter()
        turn_commits = _order(desk, scenario, user)
        seconds.append(time.perf_counter() - began)
        made = store.commits - before
        commits += made
        step_commits += made - turn_commits
        for number, floor in enumerate(floors):  # right after the run: the same disk weather
            floor_secs[number] += floor.commit(made)
        alone_secs += alone.commit(store.take())
        calls.clear()
    write_steps = sum(
        1
        for user in users
        for call in desk.record(user)
        if call.kind in ("write", "undo") and call.status in ("ran", "failed")
    )
    return Measured(
        backend=backend,
        scenario=scenario.name,
        seconds_per_run=tuple(seconds),
        commits=commits,
        step_commits=step_commits,
        write_steps=write_steps,
        floor_secs=floor_secs[0],
        floor_name=floors[0].name,
        alone_secs=alone_secs,
        other_floors=tuple(
            (floor.label, secs) for floor, secs in zip(floors[1:], floor_secs[1:], strict=True)
        ),
    )


def _shop_calls() -> list[str]:
    """The shop's list of the tools it ran, in order (its agent.yaml put it on sys.path)."""
    from shop.tools import CALLS  # on sys.path from here

    calls: list[str] = CALLS
    return calls


def _order(desk: Agent, scenario: Scenario, user: str) -> int:
    """Run the scenario as one person would; return the commits the turn itself made."""
    before = desk.store.commits
    reply = desk.chat(scenario.turn, user=user)
    turn_commits = desk.store.commits - before
    while reply.waiting and reply.waiting[0].kind == "confirm":
        reply = desk.confirm_current(user, "approve")
    if not reply.text.startswith(scenario.reply_starts):
        raise SystemExit(f"{scenario.name}: unexpected reply {reply.text!r}")
    return turn_commits


if __name__ == "__main__":
    sys.exit(main())

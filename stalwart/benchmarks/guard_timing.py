"""What the three adapter benchmarks share (pydantic_ai_guard.py, langgraph_guard.py,
openai_agents_guard.py): the shop's desk on a SQLite record, the two scenarios, the timing
of a scenario's runs guarded and unguarded beside the raw floor of the guarded run's own
durable commits, the figures' line, and the command line.

Each benchmark gives only its framework's part: how to build its agent unguarded and
guarded (a `Build`), and its title. Per call: the median run's time over its calls.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

HERE = Path(__file__).resolve().parent
SHOP = HERE.parent / "examples" / "shop"

from floor import CommitsSeen, SQLiteFloor  # noqa: E402

import stalwart  # noqa: E402
from stalwart.record import open_store  # noqa: E402

WARM_UP_RUNS = 10
TOOL_NAMES = ("get_order", "charge_card", "update_crm", "send_receipt")

Call = tuple[str, dict[str, Any]]


@dataclass(frozen=True)
class Scenario:
    name: str
    calls: tuple[Call, ...]
    writes: bool

    @property
    def slug(self) -> str:
        return self.name.replace(" ", "-")

    @property
    def tools(self) -> list[str]:
        """The scenario's tools, each once, in the order it calls them."""
        return list(dict.fromkeys(name for name, _ in self.calls))


SCENARIOS = (
    Scenario("a read", tuple(("get_order", {"order": 4411}) for _ in range(5)), writes=False),
    Scenario(
        "a write",
        (
            ("charge_card", {"order": 4411, "amount": 40.0}),
            ("update_crm", {"order": 4411}),
            ("send_receipt", {"order": 4411}),
        ),
        writes=True,
    ),
)


@dataclass(frozen=True)
class Figures:
    scenario: Scenario
    unguarded_ms: float  # per call, the median run's
    guarded_ms: float
    commits_per_call: float
    floor_ms: float  # per call: the raw floor of the guarded run's commits

    @property
    def added_ms(self) -> float:
        return self.guarded_ms - self.unguarded_ms

    def line(self) -> str:
        per = len(self.scenario.calls)
        what = f"{self.scenario.name} ({', '.join(self.scenario.tools)}, {per} per run"
        what += ", each approved)" if self.scenario.writes else ")"
        return (
            f"  {what}: unguarded {self.unguarded_ms:.3f} ms/call; guarded "
            f"{self.guarded_ms:.3f} ms/call; the guard adds {self.added_ms:.3f} ms/call, "
            f"{self.commits_per_call:.1f} durable commits/call, their raw floor "
            f"{self.floor_ms:.3f} ms/call"
        )


class Driver(Protocol):
    """What every adapter's driver has: a turn, and a person's confirmation."""

    def run_sync(self, turn: str, *, user: str) -> Any: ...

    def confirm_sync(self, user: str, answer: str, *, question: Any = None) -> Any: ...


@dataclass(frozen=True)
class Agents:
    """A scenario's agent, unguarded (`unguarded()` runs it once) and guarded (`driver`)."""

    unguarded: Callable[[], None]
    driver: AbstractContextManager[Driver]


# The framework's part: the scenario's agents over the stalwart desk, its model scripted to
# make the scenario's calls (`tools` by name: the shop's functions), in `folder`.
Build = Callable[[Scenario, stalwart.Agent, dict[str, Any], Path], AbstractContextManager[Agents]]


def measure(build: Build, runs: int, folder: Path) -> Iterator[Figures]:
    """Each scenario's figures, `runs` runs each (after the warm-up), as it is measured."""
    store = CommitsSeen(open_store(str(folder / "record.sqlite")))
    floor = SQLiteFloor(folder)
    desk = stalwart.Agent.from_file(SHOP / "agent.yaml", store=store)
    from shop.tools import CALLS  # on sys.path: the desk's agent.yaml imported it

    tools = {name: getattr(sys.modules["shop.tools"], name) for name in TOOL_NAMES}
    try:
        for scenario in SCENARIOS:
            with build(scenario, desk, tools, folder) as agents:
                yield _measure(scenario, runs, agents, store, floor, CALLS)
    finally:
        desk.close()
        floor.close()


def _measure(
    scenario: Scenario,
    runs: int,
    agents: Agents,
    store: CommitsSeen,
    floor: SQLiteFloor,
    calls: list[str],
) -> Figures:
    commits: list[int] = []
    floor_secs = 0.0
    with agents.driver as driver:

        def once(number: int) -> None:
            nonlocal floor_secs
            before = store.commits
            _guarded(driver, f"{scenario.slug}-{number}")
            commits.append(store.commits - before)
            floor_secs += floor.commit(commits[-1])
            store.take()

        unguarded_secs = _times(runs, lambda _: agents.unguarded(), calls)
        guarded_secs = _times(runs, once, calls)
    per = len(scenario.calls)
    return Figures(
        scenario=scenario,
        unguarded_ms=statistics.median(unguarded_secs) * 1000 / per,
        guarded_ms=statistics.median(guarded_secs) * 1000 / per,
        commits_per_call=statistics.mean(commits[WARM_UP_RUNS:]) / per,
        floor_ms=floor_secs * 1000 / len(commits) / per,
    )


def _times(runs: int, run: Callable[[int], None], calls: list[str]) -> list[float]:
    """Each run's seconds, the warm-up left out."""
    seconds = []
    for number in range(WARM_UP_RUNS + runs):
        began = time.perf_counter()
        run(number)
        elapsed = time.perf_counter() - began
        calls.clear()
        if number >= WARM_UP_RUNS:
            seconds.append(elapsed)
    return seconds


def _guarded(driver: Driver, user: str) -> None:
    result = driver.run_sync("the order", user=user)
    while result.waiting:
        result = driver.confirm_sync(user, "approve", question=result.waiting[0])
    if (result.state, result.text) != ("done", "Done."):
        raise SystemExit(f"guarded: unexpected reply {result.state} {result.text!r}")


def check_output(output: Any) -> None:
    """The unguarded agent's run did not end on the scripted model's last word."""
    if output != "Done.":
        raise SystemExit(f"unguarded: unexpected output {output!r}")


def main(build: Build, doc: str, title: str, argv: list[str] | None = None) -> int:
    """The benchmark's command line: `--runs`; prints `title`, then each scenario's line."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=200, help="runs per scenario (200)")
    options = parser.parse_args(argv)
    if options.runs < 1:
        parser.error("--runs must be 1 or more")
    load = ", ".join(f"{figure:.1f}" for figure in os.getloadavg())
    print(
        f"{title}: {options.runs} runs per scenario; {os.cpu_count()} cores, load average {load}",
        flush=True,
    )
    with tempfile.TemporaryDirectory(prefix="stalwart-guard-bench-") as folder:
        for figures in measure(build, options.runs, Path(folder)):
            print(f"  measured {figures.scenario.name}", flush=True)
            print(figures.line(), flush=True)
    return 0

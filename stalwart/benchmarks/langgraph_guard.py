"""What stalwart's guard adds to each tool call of a LangChain v1 agent (LangGraph)
(`make bench`, or `python stalwart/benchmarks/langgraph_guard.py`).

The shop's desk (examples/shop) as a `create_agent` graph, its model a scripted LangChain
chat model (no network, next to no time), on a SQLite record (WAL, synchronous=FULL: every
commit durable) and the graph's own checkpoints in SQLite (SqliteSaver, durability "sync"),
as the adapter requires. Two scenarios, each `--runs` times (200 by default), each run a
session of its own:

- a read: the model calls get_order five times, one call per answer, then ends;
- a write: the chapter's happy order (charge_card, update_crm, send_receipt), one call
  per answer, each approved by the person through the driver: its question (an interrupt),
  the answer, and the graph resumed from its checkpoint are part of its cost.

Each beside the same agent unguarded (no middleware, no checkpointer: the calls run as the
model makes them, nothing asked, nothing recorded), and beside the raw floor of the guarded
run's own durable record commits (raw sqlite3, one small row per fsync'd commit, made right
after the run; the graph's checkpoints are not in the floor). Per call: the median run's
time over its calls.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SHOP = HERE.parent / "examples" / "shop"

from floor import CommitsSeen, SQLiteFloor  # noqa: E402
from langchain.agents import create_agent  # noqa: E402
from langchain_core.callbacks import CallbackManagerForLLMRun  # noqa: E402
from langchain_core.language_models import BaseChatModel, LanguageModelInput  # noqa: E402
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage  # noqa: E402
from langchain_core.outputs import ChatGeneration, ChatResult  # noqa: E402
from langchain_core.runnables import Runnable  # noqa: E402
from langgraph.checkpoint.sqlite import SqliteSaver  # noqa: E402

import stalwart  # noqa: E402
from stalwart.adapters.langgraph import StalwartDriver, StalwartMiddleware  # noqa: E402
from stalwart.record import open_store  # noqa: E402

WARM_UP_RUNS = 10

Call = tuple[str, dict[str, Any]]


@dataclass(frozen=True)
class Scenario:
    name: str
    calls: tuple[Call, ...]
    writes: bool


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
        tools = ", ".join(dict.fromkeys(name for name, _ in self.scenario.calls))
        what = f"{self.scenario.name} ({tools}, {per} per run"
        what += ", each approved)" if self.scenario.writes else ")"
        return (
            f"  {what}: unguarded {self.unguarded_ms:.3f} ms/call; guarded "
            f"{self.guarded_ms:.3f} ms/call; the guard adds {self.added_ms:.3f} ms/call, "
            f"{self.commits_per_call:.1f} durable commits/call, their raw floor "
            f"{self.floor_ms:.3f} ms/call"
        )


class Scripted(BaseChatModel):
    """The model: the scenario's next call not answered yet (one per answer), then its word."""

    calls: tuple[Call, ...]

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(
        self, tools: Sequence[Any], **kwargs: Any
    ) -> Runnable[LanguageModelInput, AIMessage]:
        return self

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        answered = sum(isinstance(message, ToolMessage) for message in messages)
        if answered < len(self.calls):
            name, args = self.calls[answered]
            call = {"id": f"call_{answered + 1}", "name": name, "args": args}
            message = AIMessage("", tool_calls=[call])
        else:
            message = AIMessage("Done.")
        return ChatResult(generations=[ChatGeneration(message=message)])


def measure(runs: int, folder: Path) -> list[Figures]:
    store = CommitsSeen(open_store(str(folder / "record.sqlite")))
    floor = SQLiteFloor(folder)
    desk = stalwart.Agent.from_file(SHOP / "agent.yaml", store=store)
    from shop.tools import CALLS  # on sys.path: the desk's agent.yaml imported it

    tools = {name: getattr(sys.modules["shop.tools"], name) for name in _TOOL_NAMES}
    figures = []
    try:
        for scenario in SCENARIOS:
            figures.append(_measure(scenario, runs, desk, store, floor, tools, CALLS, folder))
            print(f"  measured {scenario.name}", flush=True)
    finally:
        desk.close()
        floor.close()
    return figures


def _measure(
    scenario: Scenario,
    runs: int,
    desk: stalwart.Agent,
    store: CommitsSeen,
    floor: SQLiteFloor,
    tools: dict[str, Any],
    calls: list[str],
    folder: Path,
) -> Figures:
    model = Scripted(calls=scenario.calls)
    used = [tools[name] for name in dict.fromkeys(name for name, _ in scenario.calls)]
    plain = create_agent(model, used)
    slug = scenario.name.replace(" ", "-")
    checkpoints = sqlite3.connect(folder / f"checkpoints-{slug}.sqlite", check_same_thread=False)
    checkpoints.execute("PRAGMA journal_mode=WAL")
    checkpoints.execute("PRAGMA synchronous=FULL")
    guarded = create_agent(
        model, used, middleware=[StalwartMiddleware(desk)], checkpointer=SqliteSaver(checkpoints)
    )
    commits: list[int] = []
    floor_secs = 0.0
    with StalwartDriver(guarded) as driver:

        def once(number: int) -> None:
            nonlocal floor_secs
            before = store.commits
            _guarded(driver, f"{slug}-{number}")
            commits.append(store.commits - before)
            floor_secs += floor.commit(commits[-1])
            store.take()

        unguarded_secs = _times(runs, lambda _: _unguarded(plain), calls)
        guarded_secs = _times(runs, once, calls)
    checkpoints.close()
    per = len(scenario.calls)
    return Figures(
        scenario=scenario,
        unguarded_ms=statistics.median(unguarded_secs) * 1000 / per,
        guarded_ms=statistics.median(guarded_secs) * 1000 / per,
        commits_per_call=statistics.mean(commits[WARM_UP_RUNS:]) / per,
        floor_ms=floor_secs * 1000 / len(commits) / per,
    )


_TOOL_NAMES = ("get_order", "charge_card", "update_crm", "send_receipt")


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


def _unguarded(graph: Any) -> None:
    state = graph.invoke({"messages": [("user", "the order")]})
    if state["messages"][-1].content != "Done.":
        raise SystemExit(f"unguarded: unexpected output {state['messages'][-1].content!r}")


def _guarded(driver: StalwartDriver, user: str) -> None:
    result = driver.run_sync("the order", user=user)
    while result.waiting:
        result = driver.confirm_sync(user, "approve", question=result.waiting[0])
    if (result.state, result.text) != ("done", "Done."):
        raise SystemExit(f"guarded: unexpected reply {result.state} {result.text!r}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=200, help="runs per scenario (200)")
    options = parser.parse_args(argv)
    if options.runs < 1:
        parser.error("--runs must be 1 or more")
    load = ", ".join(f"{figure:.1f}" for figure in os.getloadavg())
    print(
        f"LangGraph (create_agent) guarded by stalwart: {options.runs} runs per scenario, "
        "SQLite record and checkpoints (every commit durable), a scripted chat model (no "
        "network); "
        f"{os.cpu_count()} cores, load average {load}",
        flush=True,
    )
    with tempfile.TemporaryDirectory(prefix="stalwart-langgraph-") as folder:
        for figures in measure(options.runs, Path(folder)):
            print(figures.line())
    return 0


if __name__ == "__main__":
    sys.exit(main())

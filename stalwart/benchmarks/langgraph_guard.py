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

import sqlite3
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from guard_timing import Agents, Call, Scenario, check_output, main
from langchain.agents import create_agent
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from langgraph.checkpoint.sqlite import SqliteSaver

import stalwart
from stalwart.adapters.langgraph import StalwartDriver, StalwartMiddleware


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


@contextmanager
def build(
    scenario: Scenario, desk: stalwart.Agent, tools: dict[str, Any], folder: Path
) -> Iterator[Agents]:
    model = Scripted(calls=scenario.calls)
    used = [tools[name] for name in scenario.tools]
    plain: Any = create_agent(model, used)
    path = folder / f"checkpoints-{scenario.slug}.sqlite"
    checkpoints = sqlite3.connect(path, check_same_thread=False)
    checkpoints.execute("PRAGMA journal_mode=WAL")
    checkpoints.execute("PRAGMA synchronous=FULL")
    guarded = create_agent(
        model, used, middleware=[StalwartMiddleware(desk)], checkpointer=SqliteSaver(checkpoints)
    )

    def unguarded() -> None:
        state = plain.invoke({"messages": [("user", "the order")]})
        check_output(state["messages"][-1].content)

    try:
        yield Agents(unguarded, StalwartDriver(guarded))
    finally:
        checkpoints.close()


if __name__ == "__main__":
    sys.exit(
        main(
            build,
            __doc__,
            "LangGraph (create_agent) guarded by stalwart: SQLite record and checkpoints (every "
            "commit durable), a scripted chat model (no network)",
        )
    )

"""What stalwart's guard adds to each tool call of an OpenAI Agents SDK agent (`make bench`,
or `python stalwart/benchmarks/openai_agents_guard.py`).

The shop's desk (examples/shop) as an SDK agent whose tools stalwart's factory built, its
model a scripted `agents.Model` (no network, next to no time; tracing off), on a SQLite
record (WAL, synchronous=FULL: every commit durable). Two scenarios, each `--runs` times
(200 by default), each run a session of its own:

- a read: the model calls get_order five times, one call per answer, then ends;
- a write: the chapter's happy order (charge_card, update_crm, send_receipt), one call
  per answer, each approved by the person through the driver: its question (an
  interruption whose RunState the record keeps), the answer, and the SDK's run taken up
  again from that RunState are part of its cost.

Each beside the same agent unguarded (`function_tool`s: the calls run as the model makes
them, nothing asked, nothing recorded), and beside the raw floor of the guarded run's own
durable commits (raw sqlite3, one small row per fsync'd commit, made right after the run).
Per call: the median run's time over its calls.
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from agents import Agent, Model, ModelResponse, Runner, Usage, function_tool, set_tracing_disabled
from guard_timing import Agents, Call, Scenario, check_output, main
from openai.types.responses import (
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
)

import stalwart
from stalwart.adapters.openai_agents import StalwartDriver, StalwartTools


class Scripted(Model):
    """The model: the scenario's next call not answered yet (one per answer), then its word."""

    def __init__(self, calls: Sequence[Call]) -> None:
        self.calls = calls

    async def get_response(
        self, system_instructions: str | None, input: str | list[Any], *args: Any, **kwargs: Any
    ) -> ModelResponse:
        items = [] if isinstance(input, str) else input
        answered = sum(_kind(item) == "function_call_output" for item in items)
        if answered < len(self.calls):
            name, args_ = self.calls[answered]
            call = ResponseFunctionToolCall(
                type="function_call",
                call_id=f"call_{answered + 1}",
                name=name,
                arguments=json.dumps(args_),
            )
            return ModelResponse(output=[call], usage=Usage(), response_id=None)
        said = ResponseOutputMessage(
            id="said",
            type="message",
            role="assistant",
            status="completed",
            content=[ResponseOutputText(type="output_text", text="Done.", annotations=[])],
        )
        return ModelResponse(output=[said], usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        raise NotImplementedError("the benchmark does not stream")


def _kind(item: Any) -> Any:
    return item.get("type") if isinstance(item, dict) else getattr(item, "type", None)


@contextmanager
def build(
    scenario: Scenario, desk: stalwart.Agent, tools: dict[str, Any], folder: Path
) -> Iterator[Agents]:
    model = Scripted(scenario.calls)
    used = [tools[name] for name in scenario.tools]
    plain: Agent[Any] = Agent(name="desk", model=model, tools=[function_tool(f) for f in used])
    factory = StalwartTools(desk)
    guarded: Agent[Any] = Agent(name="desk", model=model, tools=factory.tools(*used))
    yield Agents(
        lambda: check_output(Runner.run_sync(plain, "the order").final_output),
        StalwartDriver(guarded, factory),
    )


if __name__ == "__main__":
    set_tracing_disabled(True)
    sys.exit(
        main(
            build,
            __doc__,
            "OpenAI Agents SDK guarded by stalwart: SQLite (every commit durable), a scripted "
            "agents.Model (no network, tracing off)",
        )
    )

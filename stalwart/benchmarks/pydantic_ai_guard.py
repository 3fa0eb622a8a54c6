"""What stalwart's guard adds to each tool call of a Pydantic AI agent (`make bench`, or
`python stalwart/benchmarks/pydantic_ai_guard.py`).

The shop's desk (examples/shop) as a Pydantic AI agent, its model Pydantic AI's own
FunctionModel (scripted, no network, next to no time), on a SQLite record (WAL,
synchronous=FULL: every commit durable). Two scenarios, each `--runs` times (200 by
default), each run a session of its own:

- a read: the model calls get_order five times, one call per answer, then ends;
- a write: the chapter's happy order (charge_card, update_crm, send_receipt), one call
  per answer, each approved by the person through the driver: its question, the answer,
  and the Pydantic AI run taken up again from the kept history are part of its cost.

Each beside the same Pydantic AI agent unguarded (no capability: the calls run as the
model makes them, nothing asked, nothing recorded), and beside the raw floor of the
guarded run's own durable commits (raw sqlite3, one small row per fsync'd commit, made
right after the run). Per call: the median run's time over its calls.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from guard_timing import Agents, Call, Scenario, check_output, main
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

import stalwart
from stalwart.adapters.pydantic_ai import StalwartDriver, StalwartGuard


def scripted(calls: Sequence[Call]) -> Callable[[list[ModelMessage], AgentInfo], ModelResponse]:
    """The model: the scenario's next call not answered yet (one per answer), then its word."""

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        answered = sum(
            isinstance(part, ToolReturnPart) for message in messages for part in message.parts
        )
        if answered < len(calls):
            name, args = calls[answered]
            return ModelResponse(parts=[ToolCallPart(name, args)])
        return ModelResponse(parts=[TextPart("Done.")])

    return model


@contextmanager
def build(
    scenario: Scenario, desk: stalwart.Agent, tools: dict[str, Any], folder: Path
) -> Iterator[Agents]:
    model = FunctionModel(scripted(scenario.calls))
    used = [tools[name] for name in scenario.tools]
    plain = Agent(model, tools=used)
    guarded = Agent(model, tools=used, capabilities=[StalwartGuard(desk)])
    yield Agents(lambda: check_output(plain.run_sync("the order").output), StalwartDriver(guarded))


if __name__ == "__main__":
    sys.exit(
        main(
            build,
            __doc__,
            "Pydantic AI guarded by stalwart: SQLite (every commit durable), Pydantic AI's "
            "FunctionModel (no network)",
        )
    )

"""The OpenAI Agents SDK adapter through the real package: an SDK agent whose tools stalwart's
factory built, its model the SDK's Chat Completions model on a local stand-in of the API
(client retries off, tracing off), on SQLite and PostgreSQL records. No connection leaves
127.0.0.1 (`loopback_only`). test_adapters_contract.py runs the cases every adapter shares;
these are the SDK's own: the set-ups refused, and a tool's failure kept from the model.

Checked against `CHECKED` (the version constraints-dev.txt pins; the newest tested; the extra's
floor, constraints-lowest.txt's, runs test_adapters_contract.py in make test-adapters-lowest).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest
from agents import (
    Agent,
    OpenAIChatCompletionsModel,
    Runner,
    WebSearchTool,
    function_tool,
    set_tracing_disabled,
)
from conftest import session_identity
from model_wire import WireServer
from openai import AsyncOpenAI
from pydantic_ai_desk import (
    MODEL_TOOLS,
    any_address,
    loopback_only,
    text,
    tool_calls,
    write_desk,
)

from stalwart import FakeClock, UnsafeSetup
from stalwart._engine.keys import idempotency_key
from stalwart.adapters.openai_agents import StalwartDriver, StalwartTools

pytestmark = pytest.mark.acceptance

CHECKED = {"openai-agents": "0.24.0"}

WAIT = 60.0  # a bound on what should take a moment; reaching it fails the test

set_tracing_disabled(True)


@pytest.fixture(autouse=True)
def _loopback() -> Iterator[None]:
    loopback_only()
    try:
        yield
    finally:
        any_address()


@pytest.fixture
def wire() -> Iterator[WireServer]:
    server = WireServer()
    server.start()
    try:
        yield server
    finally:
        server.stop()


def sdk_agent(desk: Any, module: Any, wire_url: str) -> tuple[Agent[Any], StalwartTools]:
    """The SDK agent, its tools built by stalwart's factory, on the wire's stand-in."""
    client = AsyncOpenAI(base_url=wire_url + "/v1", api_key="k", max_retries=0)
    tools = StalwartTools(desk)
    agent: Agent[Any] = Agent(
        name="desk",
        model=OpenAIChatCompletionsModel(model="m", openai_client=client),
        tools=tools.tools(*(getattr(module, name) for name in MODEL_TOOLS)),
    )
    return agent, tools


class Desk:
    def __init__(self, folder: Path, wire: WireServer, record: str, facts: str = "") -> None:
        self.folder = folder
        self.wire = wire
        self.project = write_desk(folder, record=record, facts=facts)
        self.stalwart = self.project.agent(clock=FakeClock())
        self.module: Any = self.project.module
        self.agent, self.tools = sdk_agent(self.stalwart, self.module, wire.url)
        self.driver = StalwartDriver(self.agent, self.tools)

    @property
    def calls(self) -> list[str]:
        return [name for name, *_ in self.module.CALLS]

    def key(self, step: int, tool: str, args: dict[str, Any]) -> str:
        identity = session_identity(self.stalwart.store, "u")
        return idempotency_key(identity, f"1.{step}", tool, args)

    def close(self) -> None:
        self.driver.close()
        self.stalwart.close()


@pytest.fixture
def desk(tmp_path: Path, wire: WireServer, record: str) -> Iterator[Desk]:
    opened = Desk(tmp_path, wire, record)
    yield opened
    opened.close()


def test_the_version_checked_is_the_one_installed() -> None:
    assert {name: version(name) for name in CHECKED} == CHECKED


# --- the set-ups refused ---


def test_a_function_tool_the_factory_did_not_build_is_refused(desk: Desk) -> None:
    plain = function_tool(desk.module.close_order)
    agent: Agent[Any] = Agent(name="desk", model=desk.agent.model, tools=[plain])
    with pytest.raises(UnsafeSetup, match="close_order is a function tool stalwart's factory"):
        StalwartDriver(agent, desk.tools)


def test_a_hosted_tool_beside_guarded_writes_is_refused(desk: Desk) -> None:
    agent: Agent[Any] = Agent(
        name="desk", model=desk.agent.model, tools=[*desk.agent.tools, WebSearchTool()]
    )
    with pytest.raises(UnsafeSetup, match="WebSearchTool runs on OpenAI's side"):
        StalwartDriver(agent, desk.tools)


def test_the_agent_run_without_its_driver_sends_nothing(desk: Desk) -> None:
    desk.wire.enqueue_reply(tool_calls(("call_1", "close_order", {"order": 4411})))
    with pytest.raises(Exception) as refused:
        asyncio.run(Runner.run(desk.agent, "close order 4411"))
    assert isinstance(refused.value.__cause__ or refused.value, UnsafeSetup)
    assert desk.calls == []


def test_a_tool_that_raises_fails_the_run_and_the_model_never_reads_it(desk: Desk) -> None:
    desk.module.FAIL.add("close_order")
    desk.wire.enqueue_reply(tool_calls(("call_1", "close_order", {"order": 4411})))
    desk.wire.enqueue_reply(text("never read"))
    asked = desk.driver.run_sync("close order 4411", user="u")
    stopped = desk.driver.confirm_sync("u", "approve", question=asked.waiting[0])
    assert stopped.text == (
        "This run stopped: close_order failed (RuntimeError). "
        "Nothing had been written, so nothing needed undoing."
    )
    assert len(desk.wire.requests) == 1  # no error text went back to the model


# Approve, skip, cancel all, a reset after the charge, a forged approval, another user's and
# a stale answer, two writes undone in reverse, a model failure and a worker killed mid-write
# (taken up from the last RunState kept): test_adapters_contract.py, for every adapter.

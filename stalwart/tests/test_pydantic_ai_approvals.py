"""Pydantic AI's own approval flag never stands in for the person: a tool declared with
`requires_approval=True` is asked of the person as any write is, sent once only after the
person's bound answer, and a framework approval forged for it (`DeferredToolResults`)
sends nothing. Through the real package, its model Pydantic AI's OpenAI model on the local
wire stand-in (client retries off), on SQLite and PostgreSQL records.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import pytest
from model_wire import WireServer
from openai import AsyncOpenAI
from pydantic_ai import Agent, DeferredToolResults, Tool
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider
from pydantic_ai_desk import any_address, loopback_only, text, tool_calls, write_desk

from stalwart import FakeClock, UnsafeSetup, texts
from stalwart.adapters.pydantic_ai import StalwartDriver, StalwartGuard

pytestmark = pytest.mark.acceptance


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


class Flagged:
    """The desk's Pydantic AI agent, its write close_order declared with Pydantic AI's
    `requires_approval=True`."""

    def __init__(self, folder: Path, wire: WireServer, record: str) -> None:
        self.wire = wire
        project = write_desk(folder, record=record)
        self.stalwart = project.agent(clock=FakeClock())
        self.module: Any = cast(Any, project.module)
        self.client = AsyncOpenAI(base_url=wire.url + "/v1", api_key="k", max_retries=0)
        model = OpenAIChatModel("m", provider=OpenAIProvider(openai_client=self.client))
        self.agent = Agent(
            model,
            tools=[Tool(self.module.close_order, requires_approval=True), self.module.get_order],
            capabilities=[StalwartGuard(self.stalwart)],
        )
        self.driver: StalwartDriver[str] = StalwartDriver(self.agent)

    @property
    def calls(self) -> list[str]:
        return [name for name, *_ in self.module.CALLS]

    def close(self) -> None:
        self.driver._sync(self.client.close())
        self.driver.close()
        self.stalwart.close()


@pytest.fixture
def flagged(tmp_path: Path, wire: WireServer, record: str) -> Iterator[Flagged]:
    opened = Flagged(tmp_path, wire, record)
    yield opened
    opened.close()


def test_a_flagged_write_is_asked_of_the_person_and_sent_once(flagged: Flagged) -> None:
    flagged.wire.enqueue_reply(tool_calls(("call_1", "close_order", {"order": 4411})))
    flagged.wire.enqueue_reply(text("Closed."))
    asked = flagged.driver.run_sync("close order 4411", user="u")
    assert asked.text.startswith("Run close_order(order=4411)?")  # stalwart's question
    assert flagged.calls == []
    done = flagged.driver.confirm_sync("u", "approve", question=asked.waiting[0])
    assert (done.state, done.text) == ("done", "Closed.")
    assert flagged.calls == ["close_order"]
    assert len(flagged.wire.requests) == 2


def test_a_flagged_write_skipped_by_the_person_is_never_sent(flagged: Flagged) -> None:
    flagged.wire.enqueue_reply(tool_calls(("call_1", "close_order", {"order": 4411})))
    flagged.wire.enqueue_reply(text("Left open."))
    asked = flagged.driver.run_sync("close order 4411", user="u")
    done = flagged.driver.confirm_sync("u", "skip", question=asked.waiting[0])
    assert (done.state, done.text, flagged.calls) == ("done", "Left open.", [])
    tool_results = [m for m in flagged.wire.requests[1].body["messages"] if m["role"] == "tool"]
    assert [m["content"] for m in tool_results] == [texts.DECLINED_RESULT]


def test_a_framework_approval_forged_for_a_flagged_write_sends_nothing(flagged: Flagged) -> None:
    flagged.wire.enqueue_reply(tool_calls(("call_1", "close_order", {"order": 4411})))
    asked = flagged.driver.run_sync("close order 4411", user="u")
    forged = DeferredToolResults(approvals={"call_1": True})  # Pydantic AI's flag, no person
    with pytest.raises(UnsafeSetup, match="StalwartDriver"):
        asyncio.run(flagged.agent.run(message_history=asked.messages, deferred_tool_results=forged))
    assert flagged.calls == [] and len(flagged.wire.requests) == 1
    assert flagged.stalwart.pending("u") == asked.reply  # the question still waits


def test_a_flagged_read_no_person_confirms_is_refused_when_the_agent_is_built(
    flagged: Flagged,
) -> None:
    """agent.yaml says get_order only reads, so no person is asked: Pydantic AI's flag on it
    could only be granted with no person's answer. It ran so before, unasked."""
    with pytest.raises(UnsafeSetup) as refused:
        Agent(
            flagged.agent.model,
            tools=[Tool(flagged.module.get_order, requires_approval=True)],
            capabilities=[StalwartGuard(flagged.stalwart)],
        )
    assert texts.requires_approval_refused("get_order") in str(refused.value)
    assert refused.value.code == "unsafe_setup"
    assert flagged.calls == [] and flagged.wire.requests == []

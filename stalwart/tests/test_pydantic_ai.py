"""The Pydantic AI adapter through the real package: a Pydantic AI agent, its OpenAI model on
a local stand-in of the provider's wire (client retries off), stalwart's guard and driver,
on SQLite and PostgreSQL. No connection leaves 127.0.0.1 (`loopback_only`).

Checked against pydantic-ai-slim `PYDANTIC_AI_CHECKED` (the version constraints-dev.txt
pins; the newest tested; the extra's
floor, constraints-lowest.txt's, runs test_adapters_contract.py in make test-adapters-lowest).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest
from conftest import Project, session_identity
from model_wire import WireServer
from pydantic_ai import Agent, DeferredToolResults, Tool
from pydantic_ai.capabilities import HandleDeferredToolCalls
from pydantic_ai.tools import DeferredToolRequests, RunContext
from pydantic_ai_desk import (
    any_address,
    loopback_only,
    pydantic_agent,
    text,
    tool_calls,
    write_desk,
)

import stalwart
from stalwart import (
    CallChanged,
    FakeClock,
    StepAction,
    UnsafeSetup,
)
from stalwart._engine.keys import idempotency_key
from stalwart.adapters.pydantic_ai import StalwartDriver, StalwartGuard
from stalwart.guarded import Guard

PYDANTIC_AI_CHECKED = "2.68.0"


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


class Desk:
    """The desk's project (pydantic_ai_desk.py), its stalwart agent and its Pydantic AI agent."""

    def __init__(self, folder: Path, wire: WireServer, record: str, facts: str = "") -> None:
        self.folder = folder
        self.wire = wire
        self.project: Project = write_desk(folder, record=record, facts=facts)
        self.stalwart = self.project.agent(clock=FakeClock())
        self.module: Any = self.project.module
        self.agent, self.client = pydantic_agent(self.stalwart, self.module, wire.url)
        self.driver: StalwartDriver[str] = StalwartDriver(self.agent)

    @property
    def calls(self) -> list[str]:
        return [name for name, *_ in self.module.CALLS]

    def key(self, step: int, tool: str, args: dict[str, Any], user: str = "u") -> str:
        identity = session_identity(self.stalwart.store, user)
        return idempotency_key(identity, f"1.{step}", tool, args)

    def close(self) -> None:
        self.driver._sync(self.client.close())
        self.driver.close()
        self.stalwart.close()


@pytest.fixture
def desk(tmp_path: Path, wire: WireServer, record: str) -> Iterator[Desk]:
    """The desk on each record backend (SQLite, PostgreSQL)."""
    opened = Desk(tmp_path, wire, record)
    yield opened
    opened.close()


# --- the set-up ---


def test_the_version_checked_is_the_one_installed() -> None:
    assert version("pydantic-ai-slim") == PYDANTIC_AI_CHECKED


def test_no_connection_leaves_127_0_0_1() -> None:
    import socket

    with socket.socket() as outside, pytest.raises(OSError, match="127.0.0.1 only"):
        outside.connect(("192.0.2.1", 80))  # TEST-NET-1: refused before any packet


# Approve, skip, cancel all, a reset after the charge, a forged approval, another user's and
# a stale answer, two writes undone in reverse, a model failure and a worker killed mid-write:
# test_adapters_contract.py, for every adapter. Here, what is Pydantic AI's own.


# --- answers are stalwart's, bound to the user and the question ---


def test_stalwarts_own_answers_take_a_pydantic_ai_runs_question_like_any_other(
    desk: Desk,
) -> None:
    """The interface and `stalwart chat` answer through a plain `stalwart.Agent` of the same
    agent.yaml, in a process of their own; the driver takes the run up from there."""
    desk.wire.enqueue_reply(tool_calls(("call_1", "close_order", {"order": 4411})))
    desk.wire.enqueue_reply(text("Closed."))
    asked = desk.driver.run_sync("close order 4411", user="u")
    with stalwart.Agent.from_file(desk.project.yaml, clock=FakeClock()) as elsewhere:
        shown = elsewhere.pending("u")
        assert shown is not None and shown.waiting == asked.waiting
        answered = elsewhere.confirm("u", "approve", question=shown.waiting[0])
    assert answered.state == "running"  # approved: Pydantic AI sends it when it goes on
    assert desk.calls == []
    done = desk.driver.resume_sync("u")
    assert (done.state, done.text) == ("done", "Closed.")
    assert desk.calls == ["close_order"]


def test_a_call_that_comes_back_with_other_arguments_sends_nothing(desk: Desk) -> None:
    guard = Guard(desk.stalwart, framework="test-loop")
    with guard.open("u") as run:
        run.begin("close order 4411")
        first = run.step("call_1", "close_order", {"order": 4411})
        assert first.action is StepAction.WAIT
        with pytest.raises(CallChanged) as changed:
            run.step("call_1", "close_order", {"order": 9999})
        assert changed.value.code == "call_changed"
    reply = guard.confirm("u", "approve", question=first.waiting)
    assert reply.state == "running"
    with guard.open("u") as run:
        with pytest.raises(CallChanged):  # approved: still only with what was shown
            run.step("call_1", "close_order", {"order": 9999})
        step = run.step("call_1", "close_order", {"order": 4411})
        assert step.action is StepAction.SEND
    assert desk.calls == []


# --- what the framework itself fails at ---


def test_a_tool_agent_yaml_does_not_declare_is_a_confirmed_write_with_no_undo(
    desk: Desk,
) -> None:
    def stamp_form(order: int) -> dict[str, object]:
        """Stamp the form of an order."""
        return {"order": order, "stamped": True}

    agent = Agent(
        desk.agent.model,
        tools=[stamp_form, desk.module.close_order],
        capabilities=[StalwartGuard(desk.stalwart)],
    )
    with StalwartDriver(agent) as driver:
        assert driver.guard.undeclared == ("stamp_form",)
        assert [(lint.tool, lint.name) for lint in driver.guard.lints][-1:] == [
            ("stamp_form", "undeclared_tool")
        ]
        desk.wire.enqueue_reply(tool_calls(("call_1", "stamp_form", {"order": 4411})))
        desk.wire.enqueue_reply(tool_calls(("call_2", "close_order", {"order": 4411})))
        asked = driver.run_sync("stamp the form of order 4411", user="u")
        assert (asked.waiting[0].kind, asked.waiting[0].tool) == ("confirm", "stamp_form")
        asked = driver.confirm_sync("u", "approve", question=asked.waiting[0])
        assert asked.waiting[0].tool == "close_order"
        stopped = driver.confirm_sync("u", "cancel all", question=asked.waiting[0])
    assert stopped.text == (
        "This run stopped: you cancelled it at close_order. "
        "Not undoable, and left as they are: stamp_form."
    )
    assert [(c.kind, c.tool, c.status) for c in desk.stalwart.record("u")] == [
        ("write", "stamp_form", "ran")
    ]


# --- the set-ups refused when the driver is built ---


def test_a_framework_timeout_on_a_write_is_refused_when_the_agent_is_built(desk: Desk) -> None:
    guard = StalwartGuard(desk.stalwart)
    with pytest.raises(UnsafeSetup, match="close_order is a write") as refused:
        Agent(
            desk.agent.model, tools=[Tool(desk.module.close_order, timeout=5)], capabilities=[guard]
        )
    assert refused.value.code == "unsafe_setup"
    with pytest.raises(UnsafeSetup, match="close_order is a write"):
        Agent(
            desk.agent.model,
            tools=[desk.module.close_order],
            tool_timeout=5,
            capabilities=[StalwartGuard(desk.stalwart)],
        )
    # A read may keep Pydantic AI's timeout.
    Agent(
        desk.agent.model,
        tools=[Tool(desk.module.get_order, timeout=5)],
        capabilities=[StalwartGuard(desk.stalwart)],
    )


def test_an_inline_approver_is_refused_when_the_agent_is_built(desk: Desk) -> None:
    async def approve_everything(
        ctx: RunContext[None], requests: DeferredToolRequests
    ) -> DeferredToolResults:
        return requests.build_results(approve_all=True)

    with pytest.raises(UnsafeSetup, match="override_args"):
        Agent(
            desk.agent.model,
            tools=[desk.module.close_order],
            capabilities=[
                HandleDeferredToolCalls(handler=approve_everything),
                StalwartGuard(desk.stalwart),
            ],
        )


@pytest.mark.parametrize("guard_first", [False, True], ids=["engine_first", "guard_first"])
def test_a_durable_engine_around_guarded_writes_is_refused_when_the_agent_is_built(
    desk: Desk, guard_first: bool
) -> None:
    from pydantic_ai.durable_exec.temporal import TemporalDurability

    capabilities: list[Any] = [TemporalDurability(), StalwartGuard(desk.stalwart)]
    if guard_first:
        capabilities.reverse()
    with pytest.raises(UnsafeSetup, match="TemporalDurability runs the agent under a durable"):
        Agent(
            desk.agent.model,
            name="desk",
            tools=[desk.module.close_order],
            capabilities=capabilities,
        )


def test_a_guarded_agent_run_without_its_driver_is_refused_before_the_model_is_asked(
    desk: Desk,
) -> None:
    with pytest.raises(UnsafeSetup, match="StalwartDriver"):
        asyncio.run(desk.agent.run("close order 4411"))
    assert desk.wire.requests == [] and desk.calls == []

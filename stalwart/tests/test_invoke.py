"""Never run what cannot be honoured: async tools are awaited, a result the record cannot
hold fails its step, and a tool's timeout leaves its call in doubt without blocking."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import Project, approve_all, write_project

from stalwart import Agent, FakeClock, ToolDefinitionError, ToolTimeout, current_call, tool
from stalwart.errors import ConfigError
from stalwart.tools import spec_of

pytestmark = pytest.mark.unit

TOOLS = '''
"""Tools that are async, return what the record cannot hold, or never answer."""

import asyncio
import threading

from stalwart import current_call, tool

CALLS: list[tuple[str, dict]] = []
RELEASE = threading.Event()  # set by the test when it ends: the late calls may finish


@tool
async def count_apples(order: int) -> dict:
    """Count the apples of an order."""
    await asyncio.sleep(0)
    CALLS.append(("count_apples", {"order": order, "key": current_call().key}))
    return {"order": order, "apples": 7}


@tool(writes=True, undo="delete_vm")
def create_vm(order: int) -> dict:
    """Create the virtual machine of an order."""
    CALLS.append(("create_vm", {"order": order}))
    return {"order": order, "vm": object()}


@tool(writes=True, retry_safe=True)
def delete_vm(order: int, vm: str) -> dict:
    """Delete a virtual machine."""
    CALLS.append(("delete_vm", {"order": order, "vm": vm}))
    return {}


@tool
def list_tags(order: int) -> dict:
    """List the tags of an order."""
    CALLS.append(("list_tags", {"order": order}))
    return {"order": order, "tags": {"a", "b"}}


@tool(writes=True, undo="unpaint_fence", timeout=0.05)
def paint_fence(order: int) -> dict:
    """Paint the fence for an order."""
    CALLS.append(("paint_fence", {"order": order}))
    RELEASE.wait()
    return {"order": order}


@tool(writes=True, retry_safe=True)
def unpaint_fence(order: int) -> dict:
    """Strip the paint off the fence."""
    CALLS.append(("unpaint_fence", {"order": order}))
    return {}


@tool(timeout=0.05)
def weigh_melons(order: int) -> dict:
    """Weigh the melons of an order."""
    CALLS.append(("weigh_melons", {"order": order, "key": current_call().key}))
    RELEASE.wait()
    return {"order": order}


@tool(writes=True, timeout=5)
async def ring_bell(order: int) -> dict:
    """Ring the bell for an order."""
    await asyncio.sleep(0)
    CALLS.append(("ring_bell", {"order": order}))
    return {"order": order, "rung": True}
'''

NAMES = [
    "count_apples",
    "create_vm",
    "delete_vm",
    "list_tags",
    "paint_fence",
    "unpaint_fence",
    "weigh_melons",
    "ring_bell",
]


@pytest.fixture
def shed(tmp_path: Path, clock: FakeClock) -> Iterator[tuple[Project, Agent]]:
    project = write_project(tmp_path, tools_source=TOOLS, tool_names=NAMES)
    agent = project.agent(clock=clock)
    yield project, agent
    assert project.module is not None
    project.module.RELEASE.set()
    for opened in project.agents:
        opened.close()


def calls(project: Project) -> list[tuple[str, dict[str, Any]]]:
    assert project.module is not None
    found: list[tuple[str, dict[str, Any]]] = project.module.CALLS
    return found


# --- async tools ---------------------------------------------------------------------------


def test_an_async_tool_is_awaited_and_its_result_is_the_steps(
    shed: tuple[Project, Agent],
) -> None:
    project, agent = shed
    reply = agent.chat("count the apples of order 4411", user="u")
    assert reply.state == "done", reply.text
    [(name, args)] = calls(project)
    assert name == "count_apples" and args["order"] == 4411
    assert args["key"]  # the call's context reached the coroutine
    [recorded] = agent.record("u")
    assert recorded.result == {"order": 4411, "apples": 7}
    assert "coroutine" not in reply.text


def test_an_async_write_is_awaited_within_its_timeout(shed: tuple[Project, Agent]) -> None:
    project, agent = shed
    reply = approve_all(agent, "ring the bell for order 4411", "u")
    assert reply.state == "done", reply.text
    assert calls(project) == [("ring_bell", {"order": 4411})]


def test_an_async_tool_is_awaited_when_the_caller_runs_an_event_loop() -> None:
    @tool
    async def fetch(order: int) -> dict[str, int]:
        """Fetch."""
        await asyncio.sleep(0)
        return {"order": order}

    spec = spec_of(fetch)
    assert spec is not None

    async def handler() -> Any:
        return spec.call({"order": 1})  # a web handler calling the synchronous engine

    assert asyncio.run(handler()) == {"order": 1}
    assert spec.call({"order": 2}) == {"order": 2}


# --- a result the record cannot hold ---------------------------------------------------------


def test_an_object_result_fails_its_step_and_no_undo_acts_on_its_text(
    shed: tuple[Project, Agent],
) -> None:
    project, agent = shed
    reply = approve_all(agent, "create the vm for order 4411", "u")
    # It ran, so it needs undoing; its undo is never sent with a stand-in for the vm: the
    # rollback stops there and a person is asked.
    assert reply.state == "stuck"
    assert reply.waiting[0].text == (
        "Undoing create_vm was not sent: delete_vm: nothing of the step binds vm. "
        "The rollback stopped there, before the writes below it. 1 step(s) still need undoing."
    )
    assert [name for name, _ in calls(project)] == ["create_vm"]
    write, *rest = agent.record("u")
    assert (write.status, write.result) == ("ran", None)
    assert write.error == ("NotRecordable: object has no exact JSON form the record can keep")
    assert all("object at 0x" not in str(call.args) for call in rest)


def test_a_set_result_fails_its_step(shed: tuple[Project, Agent]) -> None:
    _, agent = shed
    reply = agent.chat("list the tags of order 4411", user="u")
    assert reply.state == "rolled_back"
    assert "(set has no order the record can keep; return a sorted list)" in reply.text


# --- a timeout ---------------------------------------------------------------------------------


def test_a_write_past_its_timeout_is_in_doubt_and_a_person_is_asked(
    shed: tuple[Project, Agent],
) -> None:
    project, agent = shed
    reply = approve_all(agent, "paint the fence for order 4411", "u")
    # The worker came back although the call never answered.
    assert reply.waiting[0].kind == "outcome"
    assert reply.text == "Did paint_fence take effect? The call was sent and no answer came back."
    [call] = agent.record("u")
    assert call.status == "in_doubt" and call.tries == 1
    assert call.error == "ToolTimeout: paint_fence took longer than its timeout of 0.05 seconds"
    reply = agent.answer_current("u", "happened")
    assert reply.state == "done"


def test_a_read_past_its_timeout_is_sent_again_under_its_key_then_fails(
    shed: tuple[Project, Agent],
) -> None:
    project, agent = shed
    reply = agent.chat("weigh the melons of order 4411", user="u")
    assert reply.state == "rolled_back"
    assert reply.text.startswith("This run stopped: weigh_melons failed (ToolTimeout).")
    sent = calls(project)
    assert [name for name, _ in sent] == ["weigh_melons"] * 3
    assert len({args["key"] for _, args in sent}) == 1  # one key, every try


def test_a_timeout_is_a_number_of_seconds_above_zero() -> None:
    assert issubclass(ToolTimeout, TimeoutError)  # so it is in doubt
    for bad in (0, -1, "5", True, float("inf")):
        with pytest.raises(ToolDefinitionError, match="timeout must be a number of seconds"):

            @tool(timeout=bad)  # type: ignore[arg-type]
            def slow() -> None:
                """Slow."""


def test_agent_yaml_says_a_tools_timeout(tmp_path: Path, clock: FakeClock) -> None:
    facts = "  - count_apples: {timeout: 2.5}\n"
    (tmp_path / "ok").mkdir()
    (tmp_path / "bad").mkdir()
    project = write_project(tmp_path / "ok", tools_source=TOOLS, tool_names=NAMES, facts=facts)
    agent = project.agent(clock=clock)
    try:
        assert agent.tools["count_apples"].timeout == 2.5
        assert agent.tools["paint_fence"].timeout == 0.05
    finally:
        agent.close()
    bad = write_project(
        tmp_path / "bad",
        tools_source=TOOLS,
        tool_names=NAMES,
        facts="  - count_apples: {timeout: 0}\n",
    )
    with pytest.raises(ConfigError, match="timeout must be a number of seconds above 0"):
        bad.agent(clock=clock)


def test_a_tool_with_a_timeout_reads_its_call_in_the_worker_thread() -> None:
    seen: list[str] = []
    threads: list[str] = []

    @tool(timeout=5)
    def look() -> None:
        """Look."""
        threads.append(threading.current_thread().name)
        call = current_call()
        seen.append(call.tool if call is not None else "none")

    spec = spec_of(look)
    assert spec is not None
    from stalwart.tools.current import CurrentCall, sending

    with sending(CurrentCall("k", "s", "s#1", 1, "look", "read", 1)):
        spec.call({})
    assert seen == ["look"] and threads == ["stalwart-tool-look"]


def test_an_async_tool_past_its_timeout_is_cancelled_on_its_loop() -> None:
    cancelled = threading.Event()

    @tool(timeout=0.05)
    async def hang() -> None:
        """Hang."""
        try:
            await asyncio.Event().wait()
        finally:
            cancelled.set()

    spec = spec_of(hang)
    assert spec is not None
    with pytest.raises(ToolTimeout, match="hang took longer than its timeout of 0.05 seconds"):
        spec.call({})
    assert cancelled.wait(10)  # its own loop cancelled it; no thread is left waiting

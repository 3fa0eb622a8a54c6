"""The LangGraph adapter through the real packages: a LangChain v1 agent (`create_agent`), its
model LangChain's OpenAI chat model on a local stand-in of the provider's wire (client retries
off), stalwart's middleware and driver, its checkpoints durable (SQLite beside the record, or
PostgreSQL), on SQLite and PostgreSQL records. No connection leaves 127.0.0.1
(`loopback_only`).

Checked against `CHECKED` (the versions constraints-dev.txt pins, the newest tested; the
extra's floors, constraints-lowest.txt's, run test_adapters_contract.py in make
test-adapters-lowest). test_adapters_contract.py runs the cases every adapter shares.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest
from conftest import Project, session_identity
from langchain.agents import create_agent
from langchain.agents.middleware import (
    AgentMiddleware,
    HumanInTheLoopMiddleware,
    ModelCallLimitMiddleware,
    ToolRetryMiddleware,
)
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.types import Command, RetryPolicy
from langgraph_desk import chat_model, checkpointer, langgraph_agent
from model_wire import WireServer
from pydantic_ai_desk import (
    any_address,
    loopback_only,
    text,
    tool_calls,
    write_desk,
)

from stalwart import FakeClock, UnsafeSetup
from stalwart._engine.keys import idempotency_key
from stalwart.adapters.langgraph import GuardedResult, StalwartDriver, StalwartMiddleware

pytestmark = pytest.mark.acceptance

CHECKED = {
    "langchain": "1.5.2",
    "langchain-core": "1.8.3",
    "langchain-openai": "1.8.1",
    "langgraph": "1.2.24",
    "langgraph-prebuilt": "1.1.3",
    "langgraph-checkpoint": "4.3.2",
    "langgraph-checkpoint-sqlite": "3.1.2",
    "langgraph-checkpoint-postgres": "3.2.0",
}

WAIT = 60.0  # a bound on what should take a moment; reaching it fails the test


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
    """The desk's project (pydantic_ai_desk.py), its stalwart agent and its LangChain agent."""

    def __init__(self, folder: Path, wire: WireServer, record: str, saver: Any, facts: str = ""):
        self.folder = folder
        self.wire = wire
        self.record = record
        self.project: Project = write_desk(folder, record=record, facts=facts)
        self.stalwart = self.project.agent(clock=FakeClock())
        self.module: Any = self.project.module
        self.saver = saver
        self.graph = langgraph_agent(self.stalwart, self.module, wire.url, saver)
        self.driver = StalwartDriver(self.graph)

    @property
    def calls(self) -> list[str]:
        return [name for name, *_ in self.module.CALLS]

    def key(self, step: int, tool: str, args: dict[str, Any], user: str = "u") -> str:
        identity = session_identity(self.stalwart.store, user)
        return idempotency_key(identity, f"1.{step}", tool, args)

    def thread(self, user: str = "u") -> dict[str, Any]:
        kept = self.stalwart_kept(user)
        return {"configurable": {"thread_id": kept["thread"]}}

    def stalwart_kept(self, user: str = "u") -> dict[str, Any]:
        kept: dict[str, Any] = self.driver.guard.kept(user)
        return kept


@pytest.fixture
def desk(tmp_path: Path, wire: WireServer, record: str) -> Iterator[Desk]:
    """The desk on each record backend (SQLite, PostgreSQL), its checkpoints beside it."""
    with checkpointer(tmp_path, _record_url(tmp_path, record)) as saver:
        opened = Desk(tmp_path, wire, record, saver)
        yield opened
        opened.stalwart.close()


def _record_url(folder: Path, record: str) -> str:
    return record if record.startswith("postgresql") else str(folder / record)


def _approve_all(desk: Desk, result: GuardedResult, user: str = "u") -> GuardedResult:
    while result.waiting and result.waiting[0].kind == "confirm":
        result = desk.driver.confirm_sync(user, "approve", question=result.waiting[0])
    return result


def _tool_messages(body: dict[str, Any]) -> list[tuple[str, str]]:
    """(tool_call_id, content) of every tool result a request sent the model."""
    return [(m["tool_call_id"], m["content"]) for m in body["messages"] if m["role"] == "tool"]


# --- the set-up ---


def test_the_versions_checked_are_the_ones_installed() -> None:
    assert {name: version(name) for name in CHECKED} == CHECKED


def test_no_connection_leaves_127_0_0_1() -> None:
    import socket

    with socket.socket() as outside, pytest.raises(OSError, match="127.0.0.1 only"):
        outside.connect(("192.0.2.1", 80))  # TEST-NET-1: refused before any packet


# Approve, skip, cancel all, a reset after the charge, a forged approval, another user's and
# a stale answer, two writes undone in reverse, a model failure and a worker killed mid-write:
# test_adapters_contract.py, for every adapter. Here, what is LangGraph's own: the question
# an interrupt of the run's thread, the rewound history, the calls run at once.


# --- approve ---


def test_approve_sends_the_call_once_under_stalwarts_key_and_the_model_reads_its_result(
    desk: Desk,
) -> None:
    desk.wire.enqueue_reply(tool_calls(("call_1", "close_order", {"order": 4411})))
    desk.wire.enqueue_reply(text("Order 4411 is closed."))
    asked = desk.driver.run_sync("close order 4411", user="u")
    assert asked.state == "waiting"
    assert [w.kind for w in asked.waiting] == ["confirm"]
    assert asked.text == (
        "Run close_order(order=4411)?\nWhere the arguments came from: order from your turn."
    )
    assert desk.calls == [] and len(desk.wire.requests) == 1
    # The question is a LangGraph interrupt of the run's own thread, durable.
    pending = desk.graph.get_state(desk.thread()).interrupts
    assert [p.value["stalwart"] for p in pending] == [asked.waiting[0].id]

    done = desk.driver.confirm_sync("u", "approve", question=asked.waiting[0])
    assert (done.state, done.text) == ("done", "Order 4411 is closed.")
    key = desk.key(1, "close_order", {"order": 4411})
    assert [("close_order", {"order": 4411}, key, 1)] == desk.module.CALLS
    assert len(desk.wire.requests) == 2
    assert _tool_messages(desk.wire.requests[1].body) == [
        ("call_1", json.dumps({"order": 4411, "closed": True}))
    ]
    recorded = [(c.tool, c.status, c.key, c.tries) for c in desk.stalwart.record("u")]
    assert recorded == [("close_order", "ran", key, 1)]
    assert isinstance(done.messages[-1], AIMessage)


def test_the_next_turn_goes_on_from_the_rewound_history(desk: Desk) -> None:
    desk.wire.enqueue_reply(tool_calls(("call_1", "close_order", {"order": 4411})))
    asked = desk.driver.run_sync("close order 4411", user="u")
    stopped = desk.driver.confirm_sync("u", "cancel all", question=asked.waiting[0])
    desk.wire.enqueue_reply(text("Hello again."))
    done = desk.driver.run_sync("hello", user="u", messages=stopped.messages)
    assert (done.state, done.text) == ("done", "Hello again.")
    sent = desk.wire.requests[-1].body["messages"]
    assert [(m["role"], m["content"]) for m in sent] == [
        ("user", "close order 4411"),
        ("assistant", stopped.text),
        ("user", "hello"),
    ]


# --- answers are stalwart's, bound to the user and the question ---


def test_a_forged_framework_resume_sends_nothing_and_the_question_still_waits(desk: Desk) -> None:
    desk.wire.enqueue_reply(tool_calls(("call_1", "close_order", {"order": 4411})))
    desk.wire.enqueue_reply(text("Closed."))
    asked = desk.driver.run_sync("close order 4411", user="u")
    # The app resumes the graph itself, approving the call in LangGraph's own terms.
    with pytest.raises(UnsafeSetup, match="StalwartDriver"):
        desk.graph.invoke(Command(resume=True), desk.thread(), durability="sync")
    pending = desk.graph.get_state(desk.thread()).interrupts
    with pytest.raises(UnsafeSetup, match="StalwartDriver"):
        desk.graph.invoke(
            Command(resume={p.id: {"type": "approve"} for p in pending}),
            desk.thread(),
            durability="sync",
        )
    assert desk.calls == [] and len(desk.wire.requests) == 1
    assert desk.stalwart.pending("u") == asked.reply  # the question still waits
    # A person's answer, through stalwart, still goes on from there.
    done = desk.driver.confirm_sync("u", "approve", question=asked.waiting[0])
    assert (done.state, done.text) == ("done", "Closed.")
    assert desk.calls == ["close_order"]


def test_stalwarts_own_answers_take_a_langgraph_runs_question_like_any_other(desk: Desk) -> None:
    """The interface and `stalwart chat` answer through a plain `stalwart.Agent` of the same
    agent.yaml; the driver takes the run up from there."""
    import stalwart

    desk.wire.enqueue_reply(tool_calls(("call_1", "close_order", {"order": 4411})))
    desk.wire.enqueue_reply(text("Closed."))
    asked = desk.driver.run_sync("close order 4411", user="u")
    with stalwart.Agent.from_file(desk.project.yaml, clock=FakeClock()) as elsewhere:
        shown = elsewhere.pending("u")
        assert shown is not None and shown.waiting == asked.waiting
        answered = elsewhere.confirm("u", "approve", question=shown.waiting[0])
    assert answered.state == "running"  # approved: LangGraph sends it when it goes on
    assert desk.calls == []
    done = desk.driver.resume_sync("u")
    assert (done.state, done.text) == ("done", "Closed.")
    assert desk.calls == ["close_order"]


# --- one model message, two writes ---


class SecondFirst(AgentMiddleware):
    """Holds the model message's first call back until its second has been to the guard:
    LangGraph runs them as tasks at once, and this makes the second reach the guard first."""

    def __init__(self) -> None:
        super().__init__()
        self.second_went = threading.Event()

    def wrap_tool_call(self, request: ToolCallRequest, handler: Any) -> Any:
        if request.tool_call["id"] == "call_1":
            assert self.second_went.wait(WAIT), "the second call never reached the guard"
            return handler(request)
        try:
            return handler(request)
        finally:
            self.second_went.set()


def test_two_writes_in_one_model_message_run_in_its_order_and_are_undone_in_reverse(
    desk: Desk,
) -> None:
    desk.graph = langgraph_agent(
        desk.stalwart, desk.module, desk.wire.url, desk.saver, middleware=[SecondFirst()]
    )
    desk.driver = StalwartDriver(desk.graph)
    desk.wire.enqueue_reply(
        tool_calls(
            ("call_1", "close_order", {"order": 4411}),
            ("call_2", "hold_stock", {"order": 4411}),
        )
    )
    desk.wire.enqueue_reply(tool_calls(("call_3", "notify", {"order": 4411})))
    desk.module.FAIL.add("notify")
    asked = desk.driver.run_sync("close 4411, hold its stock and tell the customer", user="u")
    assert [(w.tool, w.step) for w in asked.waiting] == [("close_order", 1)]
    # LangGraph runs both calls as tasks at once: both wait, the second behind the first.
    assert len(desk.graph.get_state(desk.thread()).interrupts) == 2
    assert len(desk.wire.requests) == 1
    asked = desk.driver.confirm_sync("u", "approve", question=asked.waiting[0])
    assert [(w.tool, w.step) for w in asked.waiting] == [("hold_stock", 2)]
    assert len(desk.wire.requests) == 1  # the second call was the same message's
    stopped = _approve_all(desk, asked)
    assert stopped.text == (
        "This run stopped: notify failed (RuntimeError). Undone, latest first: "
        "hold_stock (by release_stock), close_order (by reopen_order)."
    )
    assert desk.calls == ["close_order", "hold_stock", "notify", "release_stock", "reopen_order"]
    assert desk.module.CALLS[3][1] == {"order": 4411, "hold": "h-4411"}  # $result.hold
    assert len(desk.wire.requests) == 2


# --- what the graph itself fails at: LangGraph has no run-failure hook ---


def test_a_tool_agent_yaml_does_not_declare_is_a_confirmed_write_with_no_undo(
    desk: Desk,
) -> None:
    def stamp_form(order: int) -> dict[str, object]:
        """Stamp the form of an order."""
        return {"order": order, "stamped": True}

    graph = create_agent(
        chat_model(desk.wire.url),
        [stamp_form, desk.module.close_order],
        middleware=[StalwartMiddleware(desk.stalwart)],
        checkpointer=desk.saver,
    )
    driver = StalwartDriver(graph)
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


def test_a_guarded_graph_invoked_without_its_driver_is_refused_before_anything_is_sent(
    desk: Desk,
) -> None:
    desk.wire.enqueue_reply(tool_calls(("call_1", "close_order", {"order": 4411})))
    with pytest.raises(UnsafeSetup, match="StalwartDriver"):
        desk.graph.invoke(
            {"messages": [HumanMessage("close order 4411")]},
            {"configurable": {"thread_id": "app"}},
            durability="sync",
        )
    assert desk.calls == [] and desk.stalwart.record("u") == []


@pytest.mark.parametrize("saver", [None, InMemorySaver()], ids=["none", "in_memory"])
def test_a_graph_without_a_durable_checkpointer_is_refused(desk: Desk, saver: Any) -> None:
    graph = langgraph_agent(desk.stalwart, desk.module, desk.wire.url, saver)
    with pytest.raises(UnsafeSetup, match="checkpointer") as refused:
        StalwartDriver(graph)
    assert refused.value.code == "unsafe_setup"


def test_a_tool_retry_middleware_around_a_write_that_is_not_retry_safe_is_refused(
    desk: Desk,
) -> None:
    graph = langgraph_agent(
        desk.stalwart, desk.module, desk.wire.url, desk.saver, middleware=[ToolRetryMiddleware()]
    )
    with pytest.raises(UnsafeSetup, match="ToolRetryMiddleware retries close_order, hold_stock"):
        StalwartDriver(graph)
    # Around a read, giving up with the error, it may stay: the guard replays the record.
    with pytest.raises(UnsafeSetup, match="turns a failure of get_order it gives up on"):
        StalwartDriver(
            langgraph_agent(
                desk.stalwart,
                desk.module,
                desk.wire.url,
                desk.saver,
                middleware=[ToolRetryMiddleware(tools=["get_order"])],
            )
        )
    reads = ToolRetryMiddleware(tools=["get_order"], on_failure="error")
    StalwartDriver(
        langgraph_agent(desk.stalwart, desk.module, desk.wire.url, desk.saver, middleware=[reads])
    )


def test_a_middleware_wrapping_tool_calls_inside_the_guard_is_refused(desk: Desk) -> None:
    graph = create_agent(
        chat_model(desk.wire.url),
        [desk.module.get_order],
        middleware=[StalwartMiddleware(desk.stalwart), ToolRetryMiddleware(tools=["get_order"])],
        checkpointer=desk.saver,
    )
    with pytest.raises(UnsafeSetup, match="ToolRetryMiddleware wraps tool calls inside"):
        StalwartDriver(graph)


def test_the_human_in_the_loop_middlewares_edit_is_refused(desk: Desk) -> None:
    hitl = HumanInTheLoopMiddleware(interrupt_on={"close_order": True})
    graph = langgraph_agent(
        desk.stalwart, desk.module, desk.wire.url, desk.saver, middleware=[hitl]
    )
    with pytest.raises(UnsafeSetup, match="lets a reviewer edit close_order"):
        StalwartDriver(graph)
    # approve and reject only: no call changes after the person approved it.
    plain = HumanInTheLoopMiddleware(
        interrupt_on={"close_order": {"allowed_decisions": ["approve", "reject"]}}
    )
    StalwartDriver(
        langgraph_agent(
            desk.stalwart,
            desk.module,
            desk.wire.url,
            desk.saver,
            middleware=[plain, ModelCallLimitMiddleware(run_limit=5)],
        )
    )


def _hand_built(desk: Desk, node: ToolNode, retry: RetryPolicy | None = None) -> Any:
    model = chat_model(desk.wire.url).bind_tools(list(node.tools_by_name.values()))

    def call_model(state: MessagesState) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    def route(state: MessagesState) -> str:
        last = state["messages"][-1]
        return "tools" if isinstance(last, AIMessage) and last.tool_calls else END

    builder = StateGraph(MessagesState)
    builder.add_node("model", call_model)
    builder.add_node("tools", node, retry_policy=retry)
    builder.add_edge(START, "model")
    builder.add_conditional_edges("model", route, ["tools", END])
    builder.add_edge("tools", "model")
    return builder.compile(checkpointer=desk.saver)


def test_a_hand_built_tool_node_guarded_by_the_middleware_runs_and_is_undone(desk: Desk) -> None:
    guard = StalwartMiddleware(desk.stalwart)
    node = ToolNode([desk.module.close_order], wrap_tool_call=guard.wrap_tool_call)
    driver = StalwartDriver(_hand_built(desk, node))
    desk.wire.enqueue_reply(tool_calls(("call_1", "close_order", {"order": 4411})))
    desk.wire.enqueue("openai/bad_request")
    stopped = _approve_all(desk, driver.run_sync("close order 4411", user="u"))
    assert stopped.text == (
        "This run stopped: langgraph failed (OpenAIInvalidRequestError). "
        "Undone, latest first: close_order (by reopen_order)."
    )
    assert desk.calls == ["close_order", "reopen_order"]


@pytest.mark.parametrize("handling", [True, "try again", (RuntimeError,)], ids=repr)
def test_a_tool_node_that_turns_a_failure_into_text_is_refused(desk: Desk, handling: Any) -> None:
    guard = StalwartMiddleware(desk.stalwart)
    node = ToolNode(
        [desk.module.close_order], wrap_tool_call=guard.wrap_tool_call, handle_tool_errors=handling
    )
    with pytest.raises(UnsafeSetup, match="handles tool errors as"):
        StalwartDriver(_hand_built(desk, node))


def test_a_retry_policy_on_the_tools_node_around_a_write_is_refused(desk: Desk) -> None:
    guard = StalwartMiddleware(desk.stalwart)
    node = ToolNode([desk.module.close_order], wrap_tool_call=guard.wrap_tool_call)
    with pytest.raises(UnsafeSetup, match="has a RetryPolicy, and close_order is a write"):
        StalwartDriver(_hand_built(desk, node, RetryPolicy(max_attempts=3)))


def test_a_graph_whose_tools_no_middleware_guards_is_refused(desk: Desk) -> None:
    graph = create_agent(
        chat_model(desk.wire.url), [desk.module.close_order], checkpointer=desk.saver
    )
    with pytest.raises(UnsafeSetup, match="not guarded by a StalwartMiddleware"):
        StalwartDriver(graph)


# --- the graph on an event loop: graph.ainvoke, awrap_tool_call, an async checkpointer ---


async def _async_run(tmp_path: Path, wire: WireServer, record: str) -> tuple[Any, ...]:
    from contextlib import AsyncExitStack

    async with AsyncExitStack() as stack:
        url = _record_url(tmp_path, record)
        saver: Any
        if url.startswith("postgresql"):
            from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

            saver = await stack.enter_async_context(AsyncPostgresSaver.from_conn_string(url))
            await saver.setup()
        else:
            from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

            saver = await stack.enter_async_context(
                AsyncSqliteSaver.from_conn_string(str(tmp_path / "checkpoints.sqlite"))
            )
        project = write_desk(tmp_path, record=record)
        desk = project.agent(clock=FakeClock())
        stack.callback(desk.close)
        module: Any = project.module
        module.FAIL.add("notify")
        driver = StalwartDriver(langgraph_agent(desk, module, wire.url, saver))
        wire.enqueue_reply(
            tool_calls(
                ("call_1", "close_order", {"order": 4411}),
                ("call_2", "hold_stock", {"order": 4411}),
            )
        )
        wire.enqueue_reply(tool_calls(("call_3", "notify", {"order": 4411})))
        asked = await driver.run("close 4411, hold its stock and tell the customer", user="u")
        first = [(w.tool, w.step) for w in asked.waiting]
        while asked.waiting and asked.waiting[0].kind == "confirm":
            asked = await driver.confirm("u", "approve", question=asked.waiting[0])
        return first, asked.text, [name for name, *_ in module.CALLS], module.CALLS[3][1]


def test_a_graph_awaited_on_an_event_loop_is_guarded_by_awrap_tool_call(
    tmp_path: Path, wire: WireServer, record: str
) -> None:
    first, reply, calls, released = asyncio.run(_async_run(tmp_path, wire, record))
    assert first == [("close_order", 1)]
    assert reply == (
        "This run stopped: notify failed (RuntimeError). Undone, latest first: "
        "hold_stock (by release_stock), close_order (by reopen_order)."
    )
    assert calls == ["close_order", "hold_stock", "notify", "release_stock", "reopen_order"]
    assert released == {"order": 4411, "hold": "h-4411"}
    assert len(wire.requests) == 2


def test_a_structured_output_call_beside_a_tool_call_is_no_step(desk: Desk) -> None:
    from langchain.agents.structured_output import ToolStrategy
    from pydantic import BaseModel

    class Verdict(BaseModel):
        """The agent's verdict."""

        closed: bool

    graph = create_agent(
        chat_model(desk.wire.url),
        [desk.module.close_order],
        middleware=[StalwartMiddleware(desk.stalwart)],
        checkpointer=desk.saver,
        response_format=ToolStrategy(Verdict),
    )
    driver = StalwartDriver(graph)
    desk.wire.enqueue_reply(
        tool_calls(
            ("call_0", "Verdict", {"closed": True}),
            ("call_1", "close_order", {"order": 4411}),
        )
    )
    desk.wire.enqueue_reply(text("Closed."))
    asked = driver.run_sync("close order 4411", user="u")
    assert [(w.tool, w.step) for w in asked.waiting] == [("close_order", 1)]
    driver.confirm_sync("u", "approve", question=asked.waiting[0])
    assert desk.calls == ["close_order"]
    assert [(c.tool, c.status) for c in desk.stalwart.record("u")] == [("close_order", "ran")]

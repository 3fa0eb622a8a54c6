"""One contract, every adapter: the same cases through each framework's real package (Pydantic
AI, LangChain v1 / LangGraph, the OpenAI Agents SDK), each agent's model on the local wire
stand-in of OpenAI's Chat Completions (client retries off), on SQLite and PostgreSQL
records. No connection leaves 127.0.0.1. What differs between the frameworks is only how an
agent is built and how its own approval is forged; what a person and the record see is the
same.

Run at both ends of each framework's supported range: the newest by `make test` (.venv,
constraints-dev.txt: pydantic-ai-slim 2.68.0, langchain 1.5.2, langgraph 1.2.24,
langgraph-checkpoint-sqlite 3.1.2, langgraph-checkpoint-postgres 3.2.0, openai-agents
0.24.0), the lowest by `make test-adapters-lowest` (.venv-lowest, SQLite, the pins in
constraints-lowest.txt: pydantic-ai-slim 2.14.0, langchain 1.3.0, langgraph 1.2.0,
langgraph-checkpoint-sqlite 3.1.0, openai-agents 0.21.0). The first test says which end
is installed.
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import json
import tomllib
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from conftest import Project, session_identity
from http_faults import charging_server
from model_wire import WireServer
from pydantic_ai_desk import (
    MODEL_TOOLS,
    any_address,
    loopback_only,
    pydantic_agent,
    text,
    tool_calls,
    write_desk,
)

from stalwart import AnswerError, FakeClock, StaleAnswer, UnsafeSetup, texts
from stalwart._engine.keys import idempotency_key

pytestmark = pytest.mark.acceptance

ADAPTERS = ("pydantic_ai", "langgraph", "openai_agents")


@dataclass
class Guarded:
    """An adapter's desk: the stalwart agent, its tools, the framework's driver, and how to
    approve its question in the framework's own terms, with no person's answer."""

    name: str
    framework: str
    folder: Path
    wire: WireServer
    stalwart: Any
    module: Any
    driver: Any
    forge: Callable[[Any], None]

    @property
    def calls(self) -> list[str]:
        return [name for name, *_ in self.module.CALLS]

    def key(self, step: int, tool: str, args: dict[str, Any]) -> str:
        identity = session_identity(self.stalwart.store, "u")
        return idempotency_key(identity, f"1.{step}", tool, args)

    def tool_results(self, request: int) -> list[str]:
        body = self.wire.requests[request].body
        return [m["content"] for m in body["messages"] if m["role"] == "tool"]


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


def _pydantic_ai(stack: ExitStack, project: Project, desk: Any, wire: WireServer) -> Guarded:
    from pydantic_ai import DeferredToolResults

    from stalwart.adapters.pydantic_ai import StalwartDriver

    agent, client = pydantic_agent(desk, project.module, wire.url)
    driver: Any = stack.enter_context(StalwartDriver(agent))
    stack.callback(lambda: driver._sync(client.close()))

    def forge(asked: Any) -> None:
        forged = DeferredToolResults(approvals={"call_1": True})
        asyncio.run(agent.run(message_history=asked.messages, deferred_tool_results=forged))

    return Guarded(
        "pydantic_ai", "pydantic-ai", project.folder, wire, desk, project.module, driver, forge
    )


def _langgraph(
    stack: ExitStack, project: Project, desk: Any, wire: WireServer, record: str
) -> Guarded:
    from langgraph.types import Command
    from langgraph_desk import checkpointer, langgraph_agent

    from stalwart.adapters.langgraph import StalwartDriver

    url = record if record.startswith("postgresql") else str(project.folder / record)
    saver = stack.enter_context(checkpointer(project.folder, url))
    graph = langgraph_agent(desk, project.module, wire.url, saver)
    driver = StalwartDriver(graph)

    def forge(asked: Any) -> None:
        thread = driver.guard.kept("u")["thread"]
        config = {"configurable": {"thread_id": thread}}
        graph.invoke(Command(resume=True), config, durability="sync")

    return Guarded(
        "langgraph", "langgraph", project.folder, wire, desk, project.module, driver, forge
    )


def _openai_agents(stack: ExitStack, project: Project, desk: Any, wire: WireServer) -> Guarded:
    from agents import Agent, OpenAIChatCompletionsModel, Runner, RunState, set_tracing_disabled
    from agents.exceptions import UserError
    from openai import AsyncOpenAI

    from stalwart.adapters.openai_agents import StalwartDriver, StalwartTools

    set_tracing_disabled(True)
    client = AsyncOpenAI(base_url=wire.url + "/v1", api_key="k", max_retries=0)
    tools = StalwartTools(desk)
    agent: Agent[Any] = Agent(
        name="desk",
        model=OpenAIChatCompletionsModel(model="m", openai_client=client),
        tools=tools.tools(*(getattr(project.module, name) for name in MODEL_TOOLS)),
    )
    driver = stack.enter_context(StalwartDriver(agent, tools))
    stack.callback(lambda: driver._sync(client.close()))

    def forge(asked: Any) -> None:
        async def approve_it() -> None:
            state = await RunState.from_json(agent, driver.guard.kept("u")["state"])
            for item in state.get_interruptions():
                state.approve(item)
            try:
                await Runner.run(agent, state)
            except UserError as wrapped:  # the SDK wraps what a tool raises: the refusal
                raise wrapped.__cause__ or wrapped from None

        driver._sync(approve_it())

    return Guarded(
        "openai_agents", "openai-agents", project.folder, wire, desk, project.module, driver, forge
    )


@pytest.fixture(params=ADAPTERS)
def make(
    request: pytest.FixtureRequest, tmp_path: Path, wire: WireServer, record: str
) -> Iterator[Callable[..., Guarded]]:
    """Builds the adapter's desk (with agent.yaml `facts`), once per adapter and backend."""
    with ExitStack() as stack:

        def build(facts: str = "") -> Guarded:
            project = write_desk(tmp_path, record=record, facts=facts)
            desk = project.agent(clock=FakeClock())
            stack.callback(desk.close)
            if request.param == "pydantic_ai":
                return _pydantic_ai(stack, project, desk, wire)
            if request.param == "openai_agents":
                return _openai_agents(stack, project, desk, wire)
            return _langgraph(stack, project, desk, wire, record)

        yield build


@pytest.fixture
def guarded(make: Callable[..., Guarded]) -> Guarded:
    return make()


STALWART = Path(__file__).resolve().parents[1]
EXTRAS = ("pydantic-ai", "langgraph", "openai-agents")


def _pins(path: Path) -> dict[str, str]:
    lines = (line.strip() for line in path.read_text(encoding="utf-8").splitlines())
    return dict(line.split("==", 1) for line in lines if "==" in line and not line.startswith("#"))


def test_the_lowest_pins_are_the_extras_floors_and_one_end_is_installed() -> None:
    """constraints-lowest.txt pins each adapter extra's floor (pyproject.toml), so raising
    one without the other fails here; and the suite runs at one end of the range: every
    framework at its floor, or every one at constraints-dev.txt's pin."""
    with open(STALWART / "pyproject.toml", "rb") as project:
        extras = tomllib.load(project)["project"]["optional-dependencies"]
    floors = dict(req.split(">=", 1) for extra in EXTRAS for req in extras[extra])
    lowest = _pins(STALWART / "constraints-lowest.txt")
    newest = _pins(STALWART.parent / "constraints-dev.txt")
    assert {name: lowest.get(name) for name in floors} == floors
    installed = {name: importlib.metadata.version(name) for name in floors}
    ends = [{name: pins[name] for name in floors} for pins in (lowest, newest)]
    assert installed in ends, (installed, ends)


def _approve_all(guarded: Guarded, result: Any) -> Any:
    while result.waiting and result.waiting[0].kind == "confirm":
        result = guarded.driver.confirm_sync("u", "approve", question=result.waiting[0])
    return result


def test_approve_sends_once_under_stalwarts_key(guarded: Guarded) -> None:
    guarded.wire.enqueue_reply(tool_calls(("call_1", "close_order", {"order": 4411})))
    guarded.wire.enqueue_reply(text("Closed."))
    asked = guarded.driver.run_sync("close order 4411", user="u")
    assert asked.text == (
        "Run close_order(order=4411)?\nWhere the arguments came from: order from your turn."
    )
    assert guarded.calls == [] and len(guarded.wire.requests) == 1
    done = guarded.driver.confirm_sync("u", "approve", question=asked.waiting[0])
    assert (done.state, done.text) == ("done", "Closed.")
    key = guarded.key(1, "close_order", {"order": 4411})
    assert [(c.tool, c.status, c.key, c.tries) for c in guarded.stalwart.record("u")] == [
        ("close_order", "ran", key, 1)
    ]
    assert [(name, key) for name, _, key, _ in guarded.module.CALLS] == [("close_order", key)]
    assert json.loads(guarded.tool_results(1)[0]) == {"order": 4411, "closed": True}


def test_skip_sends_nothing_and_the_model_reads_the_declined_result(guarded: Guarded) -> None:
    guarded.wire.enqueue_reply(tool_calls(("call_1", "close_order", {"order": 4411})))
    guarded.wire.enqueue_reply(text("Left open."))
    asked = guarded.driver.run_sync("close order 4411", user="u")
    done = guarded.driver.confirm_sync("u", "skip", question=asked.waiting[0])
    assert (done.state, done.text, guarded.calls) == ("done", "Left open.", [])
    assert guarded.tool_results(1) == [texts.DECLINED_RESULT]


def test_cancel_all_undoes_and_asks_the_model_nothing_more(guarded: Guarded) -> None:
    guarded.wire.enqueue_reply(tool_calls(("call_1", "close_order", {"order": 4411})))
    guarded.wire.enqueue_reply(tool_calls(("call_2", "hold_stock", {"order": 4411})))
    asked = guarded.driver.run_sync("close order 4411 and hold its stock", user="u")
    asked = guarded.driver.confirm_sync("u", "approve", question=asked.waiting[0])
    stopped = guarded.driver.confirm_sync("u", "cancel all", question=asked.waiting[0])
    assert (stopped.state, stopped.text) == (
        "rolled_back",
        "This run stopped: you cancelled it at hold_stock. "
        "Undone, latest first: close_order (by reopen_order).",
    )
    assert guarded.calls == ["close_order", "reopen_order"]
    assert len(guarded.wire.requests) == 2


def test_a_reset_after_the_charge_is_a_question_and_did_not_happen_undoes(
    make: Callable[..., Guarded],
) -> None:
    guarded = make()
    with charging_server("reset") as service:
        (guarded.folder / "service.url").write_text(service.url)
        guarded.wire.enqueue_reply(tool_calls(("call_1", "close_order", {"order": 4411})))
        guarded.wire.enqueue_reply(
            tool_calls(("call_2", "charge_card", {"order": 4411, "amount": 40}))
        )
        asked = _approve_all(guarded, guarded.driver.run_sync("close and charge 4411", user="u"))
        assert asked.text == (
            "Did charge_card take effect? The call was sent and no answer came back."
        )
        assert len(service.charges) == 1
        stopped = guarded.driver.answer_sync("u", "did not happen", question=asked.waiting[0])
    assert stopped.text == (
        "This run stopped: you said charge_card did not take effect. "
        "Undone, latest first: close_order (by reopen_order)."
    )
    assert len(guarded.wire.requests) == 2


def test_a_retry_safe_charge_reset_is_charged_once_under_one_key(
    make: Callable[..., Guarded],
) -> None:
    guarded = make("  - charge_card: {retry_safe: true}\n")
    with charging_server("reset_once") as service:
        (guarded.folder / "service.url").write_text(service.url)
        guarded.wire.enqueue_reply(
            tool_calls(("call_1", "charge_card", {"order": 4411, "amount": 40}))
        )
        guarded.wire.enqueue_reply(text("Charged."))
        done = _approve_all(guarded, guarded.driver.run_sync("charge 4411 40.00", user="u"))
    assert (done.state, done.text) == ("done", "Charged.")
    key = guarded.key(1, "charge_card", {"order": 4411, "amount": 40.0})
    assert [json.loads(body)["key"] for body in service.charges] == [key, key]
    assert service.applied == {key: "ch-1"}


def test_a_forged_framework_approval_sends_nothing(guarded: Guarded) -> None:
    guarded.wire.enqueue_reply(tool_calls(("call_1", "close_order", {"order": 4411})))
    asked = guarded.driver.run_sync("close order 4411", user="u")
    with pytest.raises(UnsafeSetup, match="StalwartDriver"):
        guarded.forge(asked)
    assert guarded.calls == [] and len(guarded.wire.requests) == 1
    assert guarded.stalwart.pending("u") == asked.reply


def test_another_users_answer_and_a_stale_one_are_refused(guarded: Guarded) -> None:
    guarded.wire.enqueue_reply(tool_calls(("call_1", "close_order", {"order": 4411})))
    guarded.wire.enqueue_reply(tool_calls(("call_2", "hold_stock", {"order": 4411})))
    asked = guarded.driver.run_sync("close order 4411", user="u")
    with pytest.raises(AnswerError):
        guarded.driver.confirm_sync("mallory", "approve", question=asked.waiting[0])
    second = guarded.driver.confirm_sync("u", "approve", question=asked.waiting[0])
    with pytest.raises(StaleAnswer):
        guarded.driver.confirm_sync("u", "approve", question=asked.waiting[0])
    assert guarded.calls == ["close_order"]
    assert guarded.stalwart.pending("u") == second.reply


def test_two_writes_of_one_model_answer_run_in_order_and_are_undone_in_reverse(
    guarded: Guarded,
) -> None:
    guarded.wire.enqueue_reply(
        tool_calls(
            ("call_1", "close_order", {"order": 4411}),
            ("call_2", "hold_stock", {"order": 4411}),
        )
    )
    guarded.wire.enqueue_reply(tool_calls(("call_3", "notify", {"order": 4411})))
    guarded.module.FAIL.add("notify")
    asked = guarded.driver.run_sync("close 4411, hold its stock and tell them", user="u")
    assert [(w.tool, w.step) for w in asked.waiting] == [("close_order", 1)]
    stopped = _approve_all(guarded, asked)
    assert stopped.text == (
        "This run stopped: notify failed (RuntimeError). Undone, latest first: "
        "hold_stock (by release_stock), close_order (by reopen_order)."
    )
    assert guarded.calls == [
        "close_order",
        "hold_stock",
        "notify",
        "release_stock",
        "reopen_order",
    ]
    assert guarded.module.CALLS[3][1] == {"order": 4411, "hold": "h-4411"}


def test_a_model_that_fails_after_a_write_rolls_the_run_back(guarded: Guarded) -> None:
    guarded.wire.enqueue_reply(tool_calls(("call_1", "close_order", {"order": 4411})))
    guarded.wire.enqueue("openai/bad_request")
    stopped = _approve_all(guarded, guarded.driver.run_sync("close order 4411", user="u"))
    assert stopped.state == "rolled_back"
    assert stopped.text.startswith(f"This run stopped: {guarded.framework} failed (")
    assert stopped.text.endswith("). Undone, latest first: close_order (by reopen_order).")
    assert guarded.calls == ["close_order", "reopen_order"]


def test_an_answer_given_elsewhere_is_taken_up_by_the_driver(guarded: Guarded) -> None:
    """The interface and `stalwart chat` answer through a plain `stalwart.Agent` of the same
    agent.yaml; the framework's driver takes the run up from there."""
    import stalwart

    guarded.wire.enqueue_reply(tool_calls(("call_1", "close_order", {"order": 4411})))
    guarded.wire.enqueue_reply(text("Closed."))
    asked = guarded.driver.run_sync("close order 4411", user="u")
    with stalwart.Agent.from_file(guarded.folder / "agent.yaml", clock=FakeClock()) as elsewhere:
        shown = elsewhere.pending("u")
        assert shown is not None and shown.waiting == asked.waiting
        assert elsewhere.confirm("u", "approve", question=shown.waiting[0]).state == "running"
    assert guarded.calls == []
    done = guarded.driver.resume_sync("u")
    assert (done.state, done.text, guarded.calls) == ("done", "Closed.", ["close_order"])

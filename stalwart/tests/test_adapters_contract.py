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
import os
import signal
import subprocess
import sys
import time
import tomllib
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from conftest import session_identity
from http_faults import charging_server
from model_wire import WireServer
from pydantic_ai_desk import (
    MODEL_TOOLS,
    any_address,
    keys_log,
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
    record: str

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


# Each adapter's driver over a stalwart agent whose tools module is `module`, its model on
# the wire at `url`, and how to approve its question in the framework's own terms. The same
# in a test and in a worker process (WORKER below).
Forge = Callable[[Any], None]
Builder = Callable[[ExitStack, Any, Any, str, Path, str], tuple[Any, Forge]]


def _pydantic_ai(
    stack: ExitStack, desk: Any, module: Any, url: str, folder: Path, record: str
) -> tuple[Any, Forge]:
    from pydantic_ai import DeferredToolResults

    from stalwart.adapters.pydantic_ai import StalwartDriver

    agent, client = pydantic_agent(desk, module, url)
    driver: Any = stack.enter_context(StalwartDriver(agent))
    stack.callback(lambda: driver._sync(client.close()))

    def forge(asked: Any) -> None:
        forged = DeferredToolResults(approvals={"call_1": True})
        asyncio.run(agent.run(message_history=asked.messages, deferred_tool_results=forged))

    return driver, forge


def _langgraph(
    stack: ExitStack, desk: Any, module: Any, url: str, folder: Path, record: str
) -> tuple[Any, Forge]:
    from langgraph.types import Command
    from langgraph_desk import checkpointer, langgraph_agent

    from stalwart.adapters.langgraph import StalwartDriver

    saver = stack.enter_context(checkpointer(folder, record))
    graph = langgraph_agent(desk, module, url, saver)
    driver = StalwartDriver(graph)

    def forge(asked: Any) -> None:
        thread = driver.guard.kept("u")["thread"]
        config = {"configurable": {"thread_id": thread}}
        graph.invoke(Command(resume=True), config, durability="sync")

    return driver, forge


def _openai_agents(
    stack: ExitStack, desk: Any, module: Any, url: str, folder: Path, record: str
) -> tuple[Any, Forge]:
    from agents import Agent, OpenAIChatCompletionsModel, Runner, RunState, set_tracing_disabled
    from agents.exceptions import UserError
    from openai import AsyncOpenAI

    from stalwart.adapters.openai_agents import StalwartDriver, StalwartTools

    set_tracing_disabled(True)
    client = AsyncOpenAI(base_url=url + "/v1", api_key="k", max_retries=0)
    tools = StalwartTools(desk)
    agent: Agent[Any] = Agent(
        name="desk",
        model=OpenAIChatCompletionsModel(model="m", openai_client=client),
        tools=tools.tools(*(getattr(module, name) for name in MODEL_TOOLS)),
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

    return driver, forge


BUILDERS: dict[str, Builder] = {
    "pydantic_ai": _pydantic_ai,
    "langgraph": _langgraph,
    "openai_agents": _openai_agents,
}
FRAMEWORKS = {
    "pydantic_ai": "pydantic-ai",
    "langgraph": "langgraph",
    "openai_agents": "openai-agents",
}


@pytest.fixture(params=ADAPTERS)
def make(
    request: pytest.FixtureRequest, tmp_path: Path, wire: WireServer, record: str
) -> Iterator[Callable[..., Guarded]]:
    """Builds the adapter's desk (with agent.yaml `facts`), once per adapter and backend."""
    name: str = request.param
    with ExitStack() as stack:

        def build(facts: str = "") -> Guarded:
            project = write_desk(tmp_path, record=record, facts=facts)
            desk = project.agent(clock=FakeClock())
            stack.callback(desk.close)
            module = project.module
            driver, forge = BUILDERS[name](stack, desk, module, wire.url, project.folder, record)
            folder = project.folder
            return Guarded(
                name, FRAMEWORKS[name], folder, wire, desk, module, driver, forge, record
            )

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


def _history(adapter: str, result: Any) -> list[tuple[str, str]]:
    """(role, text) of each message of the history a result hands back, in any framework."""
    if adapter == "openai_agents":
        return [(item["role"], item["content"]) for item in result.items]
    said: list[tuple[str, str]] = []
    for message in result.messages:
        if adapter == "langgraph":
            said.append(("user" if message.type == "human" else "assistant", message.content))
        else:
            role = "user" if message.kind == "request" else "assistant"
            said.append((role, message.parts[0].content))
    return said


def _approve_all(guarded: Guarded, result: Any) -> Any:
    while result.waiting and result.waiting[0].kind == "confirm":
        result = guarded.driver.confirm_sync("u", "approve", question=result.waiting[0])
    return result


def test_approve_sends_once_under_stalwarts_key(guarded: Guarded) -> None:
    guarded.wire.enqueue_reply(tool_calls(("call_1", "close_order", {"order": 4411})))
    guarded.wire.enqueue_reply(text("Closed."))
    asked = guarded.driver.run_sync("close order 4411", user="u")
    assert (asked.state, [w.kind for w in asked.waiting]) == ("waiting", ["confirm"])
    assert asked.text == (
        "Run close_order(order=4411)?\nWhere the arguments came from: order from your turn."
    )
    assert guarded.calls == [] and len(guarded.wire.requests) == 1
    done = guarded.driver.confirm_sync("u", "approve", question=asked.waiting[0])
    assert (done.state, done.text) == ("done", "Closed.")
    assert len(guarded.wire.requests) == 2
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
    assert [(c.tool, c.status) for c in guarded.stalwart.record("u")] == [
        ("close_order", "declined")
    ]


def test_cancel_all_undoes_and_asks_the_model_nothing_more(guarded: Guarded) -> None:
    guarded.wire.enqueue_reply(tool_calls(("call_1", "close_order", {"order": 4411})))
    guarded.wire.enqueue_reply(tool_calls(("call_2", "hold_stock", {"order": 4411})))
    guarded.wire.enqueue_reply(text("never read"))
    asked = guarded.driver.run_sync("close order 4411 and hold its stock", user="u")
    asked = guarded.driver.confirm_sync("u", "approve", question=asked.waiting[0])
    assert asked.waiting[0].tool == "hold_stock"
    stopped = guarded.driver.confirm_sync("u", "cancel all", question=asked.waiting[0])
    assert (stopped.state, stopped.text) == (
        "rolled_back",
        "This run stopped: you cancelled it at hold_stock. "
        "Undone, latest first: close_order (by reopen_order).",
    )
    assert guarded.calls == ["close_order", "reopen_order"]
    assert len(guarded.wire.requests) == 2  # no model request after cancel all
    # The history to go on with is rewound: the turn and the run's one reply.
    assert _history(guarded.name, stopped) == [
        ("user", "close order 4411 and hold its stock"),
        ("assistant", stopped.text),
    ]


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
        assert [w.kind for w in asked.waiting] == ["outcome"]
        assert asked.text == (
            "Did charge_card take effect? The call was sent and no answer came back."
        )
        assert len(service.charges) == 1  # sent once: not retry-safe
        stopped = guarded.driver.answer_sync("u", "did not happen", question=asked.waiting[0])
    assert stopped.text == (
        "This run stopped: you said charge_card did not take effect. "
        "Undone, latest first: close_order (by reopen_order)."
    )
    assert stopped.state == "rolled_back"
    assert guarded.calls == ["close_order", "charge_card", "reopen_order"]
    assert guarded.module.CALLS[-1][1] == {"order": 4411}  # reopen_order's $args.order
    assert len(guarded.wire.requests) == 2  # no model request after it


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
    assert service.applied == {key: "ch-1"}  # charged once
    assert [(c.tool, c.status, c.tries) for c in guarded.stalwart.record("u")] == [
        ("charge_card", "ran", 2)
    ]


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
    with pytest.raises(AnswerError) as not_hers:
        guarded.driver.confirm_sync("mallory", "approve", question=asked.waiting[0])
    assert not_hers.value.code == "stale_answer"  # mallory's sessions hold no such question
    with pytest.raises(AnswerError):
        guarded.driver.confirm_sync("mallory", "approve")  # nor anything else waiting
    assert guarded.calls == []
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


# --- a worker killed mid-write, the run taken up in another process ---

WORKER = """
import json, sys
sys.path.insert(0, sys.argv[1])
from pydantic_ai_desk import loopback_only
loopback_only()
from contextlib import ExitStack
from pathlib import Path
import stalwart
from test_adapters_contract import BUILDERS

adapter, yaml, url, record, what, user = sys.argv[2:8]
with ExitStack() as stack:
    desk = stack.enter_context(stalwart.Agent.from_file(yaml))
    module = sys.modules[next(iter(desk.config.project.modules))]
    driver, _ = BUILDERS[adapter](stack, desk, module, url, Path(yaml).parent, record)
    if what == "approve":
        result = driver.confirm_sync(user, "approve", question=sys.argv[8])
    else:
        result = driver.resume_sync(user)
print(json.dumps({"state": result.state, "text": result.text,
                  "waiting": [w.kind for w in result.waiting]}))
"""

TESTS = Path(__file__).resolve().parent
WAIT = 60.0  # a bound on what should take a moment; reaching it fails the test


def _worker(guarded: Guarded, *args: str) -> subprocess.Popen[str]:
    yaml, url = str(guarded.folder / "agent.yaml"), guarded.wire.url
    return subprocess.Popen(
        [sys.executable, "-c", WORKER, str(TESTS), guarded.name, yaml, url, guarded.record, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _kill_when_started(worker: subprocess.Popen[str], started: Path) -> None:
    try:
        deadline = time.monotonic() + WAIT
        while not started.exists():
            if worker.poll() is not None:
                pytest.fail(f"the worker ended before its tool began: {worker.communicate()}")
            assert time.monotonic() < deadline, "the tool never began"
            time.sleep(0.01)
        os.kill(worker.pid, signal.SIGKILL)
        worker.communicate(timeout=WAIT)
    finally:
        if worker.poll() is None:
            worker.kill()
        worker.communicate()
    assert worker.returncode == -signal.SIGKILL


def _finish(worker: subprocess.Popen[str]) -> dict[str, Any]:
    out, err = worker.communicate(timeout=WAIT)
    assert worker.returncode == 0, err
    finished: dict[str, Any] = json.loads(out)
    return finished


@pytest.mark.parametrize("retry_safe", [False, True], ids=["not_retry_safe", "retry_safe"])
def test_a_worker_killed_mid_write_is_taken_up_in_another_process(
    make: Callable[..., Guarded], retry_safe: bool
) -> None:
    """kill -9 of the process sending an approved write, the run taken up by another
    process: the write is resolved by the record (not retry-safe: the question, never sent
    again; retry-safe: sent again under its key), and the model is not asked for the call
    again (Pydantic AI: the kept history; LangGraph: the checkpoint; the Agents SDK: the
    RunState kept at the write's approval)."""
    guarded = make("  - close_order: {retry_safe: true}\n" if retry_safe else "")
    folder = guarded.folder
    guarded.wire.enqueue_reply(tool_calls(("call_1", "close_order", {"order": 4411})))
    asked = guarded.driver.run_sync("close order 4411", user="u")
    (folder / "block-close_order").touch()
    _kill_when_started(
        _worker(guarded, "approve", "u", asked.waiting[0].id), folder / "started-close_order"
    )
    (folder / "block-close_order").unlink()
    key = guarded.key(1, "close_order", {"order": 4411})
    assert keys_log(folder) == [("close_order", key, 1)]
    assert len(guarded.wire.requests) == 1  # the model answered once, before the kill

    guarded.wire.enqueue_reply(text("Closed."))
    taken_up = _finish(_worker(guarded, "resume", "u"))
    if retry_safe:
        assert taken_up == {"state": "done", "text": "Closed.", "waiting": []}
        assert keys_log(folder) == [("close_order", key, 1), ("close_order", key, 2)]
        # No new model request for that step: one request after the kill, with its result.
        assert len(guarded.wire.requests) == 2
        assert len(guarded.tool_results(1)) == 1
    else:
        assert taken_up == {
            "state": "waiting",
            "text": "Did close_order take effect? It was being sent when the run stopped.",
            "waiting": ["outcome"],
        }
        assert keys_log(folder) == [("close_order", key, 1)]  # never sent again
        assert len(guarded.wire.requests) == 1
        done = guarded.driver.answer_sync("u", "happened")
        assert (done.state, done.text) == ("done", "Closed.")
        assert guarded.tool_results(1) == [texts.MEMORY_HAPPENED]
        assert keys_log(folder) == [("close_order", key, 1)]

"""The OpenAI Agents SDK adapter through the real package: an SDK agent whose tools stalwart's
factory built, its model the SDK's Chat Completions model on a local stand-in of the API
(client retries off, tracing off), on SQLite and PostgreSQL records. No connection leaves
127.0.0.1 (`loopback_only`). test_adapters_contract.py runs the cases every adapter shares;
these are the SDK's own: the set-ups refused, and crash resume from the last RunState kept.

Checked against `CHECKED` (the version constraints-dev.txt pins; the extra's floor in
stalwart/pyproject.toml).
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
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
    keys_log,
    loopback_only,
    text,
    tool_calls,
    write_desk,
)

from stalwart import FakeClock, UnsafeSetup, texts
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


# --- a worker killed mid-write, the run taken up in another process ---

WORKER = """
import json, sys
sys.path.insert(0, sys.argv[1])
from pydantic_ai_desk import loopback_only
loopback_only()
from test_openai_agents import sdk_agent
import stalwart
from stalwart.adapters.openai_agents import StalwartDriver

yaml, url, what, user = sys.argv[2:6]
desk = stalwart.Agent.from_file(yaml)
tools = sys.modules[next(iter(desk.config.project.modules))]
agent, built = sdk_agent(desk, tools, url)
with StalwartDriver(agent, built) as driver:
    if what == "approve":
        result = driver.confirm_sync(user, "approve", question=sys.argv[6])
    else:
        result = driver.resume_sync(user)
print(json.dumps({"state": result.state, "text": result.text,
                  "waiting": [w.kind for w in result.waiting]}))
"""

TESTS = Path(__file__).resolve().parent


def _worker(desk: Desk, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", WORKER, str(TESTS), str(desk.project.yaml), desk.wire.url, *args],
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
def test_a_worker_killed_mid_write_is_taken_up_from_the_last_runstate_kept(
    tmp_path: Path, wire: WireServer, record: str, retry_safe: bool
) -> None:
    """Crash resume is partial here, and exactly so: the run goes on from the RunState kept
    at the write's approval; the write is resolved by the record (never sent again unless
    retry-safe, then under its key); the model turn after it is made once, by the worker
    that took the run up."""
    facts = "  - close_order: {retry_safe: true}\n" if retry_safe else ""
    desk = Desk(tmp_path, wire, record, facts=facts)
    try:
        wire.enqueue_reply(tool_calls(("call_1", "close_order", {"order": 4411})))
        asked = desk.driver.run_sync("close order 4411", user="u")
        (tmp_path / "block-close_order").touch()
        _kill_when_started(
            _worker(desk, "approve", "u", asked.waiting[0].id), tmp_path / "started-close_order"
        )
        (tmp_path / "block-close_order").unlink()
        key = desk.key(1, "close_order", {"order": 4411})
        assert keys_log(tmp_path) == [("close_order", key, 1)]
        assert len(wire.requests) == 1

        wire.enqueue_reply(text("Closed."))
        taken_up = _finish(_worker(desk, "resume", "u"))
        if retry_safe:
            assert taken_up == {"state": "done", "text": "Closed.", "waiting": []}
            assert keys_log(tmp_path) == [("close_order", key, 1), ("close_order", key, 2)]
            # The model was not asked for the call again: it came from the kept RunState.
            assert len(wire.requests) == 2
        else:
            assert taken_up == {
                "state": "waiting",
                "text": "Did close_order take effect? It was being sent when the run stopped.",
                "waiting": ["outcome"],
            }
            assert keys_log(tmp_path) == [("close_order", key, 1)]  # never sent again
            done = desk.driver.answer_sync("u", "happened")
            assert (done.state, done.text) == ("done", "Closed.")
            tool_results = [
                m["content"] for m in wire.requests[1].body["messages"] if m["role"] == "tool"
            ]
            assert tool_results == [texts.MEMORY_HAPPENED]
            assert keys_log(tmp_path) == [("close_order", key, 1)]
    finally:
        desk.close()

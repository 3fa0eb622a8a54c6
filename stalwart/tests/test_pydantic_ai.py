"""The Pydantic AI adapter through the real package: a Pydantic AI agent, its OpenAI model on
a local stand-in of the provider's wire (client retries off), stalwart's guard and driver,
on SQLite and PostgreSQL. No connection leaves 127.0.0.1 (`loopback_only`).

Checked against pydantic-ai-slim `PYDANTIC_AI_CHECKED` (the version constraints-dev.txt
pins; the extra's floor in stalwart/pyproject.toml).
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
from conftest import Project, session_identity
from http_faults import charging_server
from model_wire import WireServer
from pydantic_ai import Agent, DeferredToolResults, Tool
from pydantic_ai.capabilities import HandleDeferredToolCalls
from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, UserPromptPart
from pydantic_ai.tools import DeferredToolRequests, RunContext
from pydantic_ai_desk import (
    any_address,
    keys_log,
    loopback_only,
    pydantic_agent,
    text,
    tool_calls,
    write_desk,
)

import stalwart
from stalwart import (
    AnswerError,
    CallChanged,
    FakeClock,
    StaleAnswer,
    StepAction,
    UnsafeSetup,
    texts,
)
from stalwart._engine.keys import idempotency_key
from stalwart.adapters.pydantic_ai import GuardedResult, StalwartDriver, StalwartGuard
from stalwart.guarded import Guard

PYDANTIC_AI_CHECKED = "2.68.0"

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


def _approve_all(desk: Desk, result: GuardedResult[str], user: str = "u") -> GuardedResult[str]:
    while result.waiting and result.waiting[0].kind == "confirm":
        result = desk.driver.confirm_sync(user, "approve", question=result.waiting[0])
    return result


def _tool_messages(body: dict[str, Any]) -> list[tuple[str, str]]:
    """(tool_call_id, content) of every tool result a request sent the model."""
    return [(m["tool_call_id"], m["content"]) for m in body["messages"] if m["role"] == "tool"]


# --- the set-up ---


def test_the_version_checked_is_the_one_installed() -> None:
    assert version("pydantic-ai-slim") == PYDANTIC_AI_CHECKED


def test_no_connection_leaves_127_0_0_1() -> None:
    import socket

    with socket.socket() as outside, pytest.raises(OSError, match="127.0.0.1 only"):
        outside.connect(("192.0.2.1", 80))  # TEST-NET-1: refused before any packet


# --- approve, skip, cancel all ---


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

    done = desk.driver.confirm_sync("u", "approve", question=asked.waiting[0])
    assert (done.state, done.text, done.output) == ("done", "Order 4411 is closed.", done.text)
    key = desk.key(1, "close_order", {"order": 4411})
    assert [("close_order", {"order": 4411}, key, 1)] == desk.module.CALLS
    assert len(desk.wire.requests) == 2
    assert _tool_messages(desk.wire.requests[1].body) == [
        ("call_1", json.dumps({"closed": True, "order": 4411}, separators=(",", ":")))
    ]
    recorded = [(c.tool, c.status, c.key, c.tries) for c in desk.stalwart.record("u")]
    assert recorded == [("close_order", "ran", key, 1)]
    # The history to go on with is the run's, ending on the model's last word.
    assert isinstance(done.messages[-1], ModelResponse)


def test_skip_sends_nothing_and_the_model_reads_the_declined_result(desk: Desk) -> None:
    desk.wire.enqueue_reply(tool_calls(("call_1", "close_order", {"order": 4411})))
    desk.wire.enqueue_reply(text("I left the order open."))
    asked = desk.driver.run_sync("close order 4411", user="u")
    done = desk.driver.confirm_sync("u", "skip", question=asked.waiting[0])
    assert (done.state, done.text) == ("done", "I left the order open.")
    assert desk.calls == []
    assert _tool_messages(desk.wire.requests[1].body) == [("call_1", texts.DECLINED_RESULT)]
    assert [(c.tool, c.status) for c in desk.stalwart.record("u")] == [("close_order", "declined")]


def test_cancel_all_undoes_what_ran_and_asks_the_model_nothing_more(desk: Desk) -> None:
    desk.wire.enqueue_reply(tool_calls(("call_1", "close_order", {"order": 4411})))
    desk.wire.enqueue_reply(tool_calls(("call_2", "hold_stock", {"order": 4411})))
    desk.wire.enqueue_reply(text("never read"))
    asked = desk.driver.run_sync("close order 4411 and hold its stock", user="u")
    asked = desk.driver.confirm_sync("u", "approve", question=asked.waiting[0])
    assert asked.waiting[0].tool == "hold_stock"
    requests = len(desk.wire.requests)
    stopped = desk.driver.confirm_sync("u", "cancel all", question=asked.waiting[0])
    assert stopped.state == "rolled_back"
    assert stopped.text == (
        "This run stopped: you cancelled it at hold_stock. "
        "Undone, latest first: close_order (by reopen_order)."
    )
    assert desk.calls == ["close_order", "reopen_order"]
    assert len(desk.wire.requests) == requests == 2  # no model request after cancel all
    # The history to go on with is rewound: the turn and the run's one reply.
    assert [type(m) for m in stopped.messages] == [ModelRequest, ModelResponse]
    turn, reply = stopped.messages
    assert isinstance(turn.parts[0], UserPromptPart) and isinstance(reply.parts[0], TextPart)
    assert (turn.parts[0].content, reply.parts[0].content) == (
        "close order 4411 and hold its stock",
        stopped.text,
    )


# --- a connection reset after the service charged ---


def test_a_reset_after_the_charge_asks_whether_it_took_effect_and_did_not_happen_undoes(
    tmp_path: Path, wire: WireServer, record: str
) -> None:
    desk = Desk(tmp_path, wire, record)
    try:
        with charging_server("reset") as service:
            (tmp_path / "service.url").write_text(service.url)
            wire.enqueue_reply(tool_calls(("call_1", "close_order", {"order": 4411})))
            wire.enqueue_reply(tool_calls(("call_2", "charge_card", {"order": 4411, "amount": 40})))
            asked = _approve_all(desk, desk.driver.run_sync("close and charge 4411", user="u"))
            assert [w.kind for w in asked.waiting] == ["outcome"]
            assert asked.text == (
                "Did charge_card take effect? The call was sent and no answer came back."
            )
            assert len(service.charges) == 1  # sent once: not retry-safe
            requests = len(wire.requests)
            stopped = desk.driver.answer_sync("u", "did not happen", question=asked.waiting[0])
        assert stopped.state == "rolled_back"
        assert stopped.text == (
            "This run stopped: you said charge_card did not take effect. "
            "Undone, latest first: close_order (by reopen_order)."
        )
        assert desk.calls == ["close_order", "charge_card", "reopen_order"]
        assert desk.module.CALLS[-1][1] == {"order": 4411}  # reopen_order's $args.order
        assert len(wire.requests) == requests  # no model request after it
    finally:
        desk.close()


def test_a_retry_safe_charge_reset_after_it_took_effect_is_sent_again_under_its_key_once(
    tmp_path: Path, wire: WireServer, record: str
) -> None:
    desk = Desk(tmp_path, wire, record, facts="  - charge_card: {retry_safe: true}\n")
    try:
        with charging_server("reset_once") as service:
            (tmp_path / "service.url").write_text(service.url)
            wire.enqueue_reply(tool_calls(("call_1", "charge_card", {"order": 4411, "amount": 40})))
            wire.enqueue_reply(text("Charged."))
            done = _approve_all(desk, desk.driver.run_sync("charge 4411 40.00", user="u"))
        assert (done.state, done.text) == ("done", "Charged.")
        key = desk.key(1, "charge_card", {"order": 4411, "amount": 40.0})
        sent_keys = [json.loads(body)["key"] for body in service.charges]
        assert sent_keys == [key, key]  # sent again, under the same key
        assert service.applied == {key: "ch-1"}  # charged once
        assert [(c.tool, c.status, c.tries) for c in desk.stalwart.record("u")] == [
            ("charge_card", "ran", 2)
        ]
        assert _tool_messages(wire.requests[1].body)[0][1] == (
            '{"amount":40.0,"charge":"ch-1","order":4411}'
        )
    finally:
        desk.close()


# --- answers are stalwart's, bound to the user and the question ---


def test_a_forged_framework_approval_sends_nothing(desk: Desk) -> None:
    desk.wire.enqueue_reply(tool_calls(("call_1", "close_order", {"order": 4411})))
    asked = desk.driver.run_sync("close order 4411", user="u")
    history = asked.messages
    # The app runs the agent itself, approving the call in Pydantic AI's own terms.
    forged = DeferredToolResults(approvals={"call_1": True})
    with pytest.raises(UnsafeSetup, match="StalwartDriver"):
        asyncio.run(desk.agent.run(message_history=history, deferred_tool_results=forged))
    assert desk.calls == [] and len(desk.wire.requests) == 1
    assert desk.stalwart.pending("u") == asked.reply  # the question still waits


def test_another_users_answer_and_a_stale_one_are_refused_and_change_nothing(desk: Desk) -> None:
    desk.wire.enqueue_reply(tool_calls(("call_1", "close_order", {"order": 4411})))
    desk.wire.enqueue_reply(tool_calls(("call_2", "hold_stock", {"order": 4411})))
    asked = desk.driver.run_sync("close order 4411", user="u")
    with pytest.raises(AnswerError) as not_hers:
        desk.driver.confirm_sync("mallory", "approve", question=asked.waiting[0])
    assert not_hers.value.code == "stale_answer"  # mallory's sessions hold no such question
    with pytest.raises(AnswerError):
        desk.driver.confirm_sync("mallory", "approve")  # nor anything else waiting
    assert desk.calls == []
    second = desk.driver.confirm_sync("u", "approve", question=asked.waiting[0])
    assert second.waiting[0].tool == "hold_stock"
    with pytest.raises(StaleAnswer):  # a double click: the first question was answered
        desk.driver.confirm_sync("u", "approve", question=asked.waiting[0])
    assert desk.calls == ["close_order"]
    assert desk.stalwart.pending("u") == second.reply


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


# --- one model response, two writes ---


def test_two_writes_in_one_model_response_run_in_its_order_and_are_undone_in_reverse(
    desk: Desk,
) -> None:
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
    assert len(desk.wire.requests) == 1
    asked = desk.driver.confirm_sync("u", "approve", question=asked.waiting[0])
    assert [(w.tool, w.step) for w in asked.waiting] == [("hold_stock", 2)]
    assert len(desk.wire.requests) == 1  # the second call was the same answer's
    stopped = _approve_all(desk, asked)
    assert stopped.text == (
        "This run stopped: notify failed (RuntimeError). Undone, latest first: "
        "hold_stock (by release_stock), close_order (by reopen_order)."
    )
    assert desk.calls == ["close_order", "hold_stock", "notify", "release_stock", "reopen_order"]
    assert desk.module.CALLS[3][1] == {"order": 4411, "hold": "h-4411"}  # $result.hold
    assert len(desk.wire.requests) == 2


# --- what the framework itself fails at ---


def test_a_model_that_fails_after_a_write_rolls_the_run_back(desk: Desk) -> None:
    desk.wire.enqueue_reply(tool_calls(("call_1", "close_order", {"order": 4411})))
    desk.wire.enqueue("openai/bad_request")  # the model's next answer is refused
    stopped = _approve_all(desk, desk.driver.run_sync("close order 4411", user="u"))
    assert stopped.state == "rolled_back"
    assert stopped.text == (
        "This run stopped: pydantic-ai failed (ModelRequestRejectedError). "
        "Undone, latest first: close_order (by reopen_order)."
    )
    assert desk.calls == ["close_order", "reopen_order"]


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


# --- a worker killed mid-write, the run taken up in another process ---

WORKER = """
import json, sys
sys.path.insert(0, sys.argv[1])
from pydantic_ai_desk import loopback_only, pydantic_agent
loopback_only()
import stalwart
from stalwart.adapters.pydantic_ai import StalwartDriver

yaml, url, what, user = sys.argv[2:6]
desk = stalwart.Agent.from_file(yaml)
tools = sys.modules[next(iter(desk.config.project.modules))]
agent, client = pydantic_agent(desk, tools, url)
with StalwartDriver(agent) as driver:
    if what == "approve":
        result = driver.confirm_sync(user, "approve", question=sys.argv[6])
    else:
        result = driver.resume_sync(user)
    driver._sync(client.close())
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
def test_a_worker_killed_mid_write_is_taken_up_in_another_process_from_the_kept_history(
    tmp_path: Path, wire: WireServer, record: str, retry_safe: bool
) -> None:
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
        assert len(wire.requests) == 1  # the model answered once, before the kill

        wire.enqueue_reply(text("Closed."))
        taken_up = _finish(_worker(desk, "resume", "u"))
        if retry_safe:
            assert taken_up == {"state": "done", "text": "Closed.", "waiting": []}
            assert keys_log(tmp_path) == [("close_order", key, 1), ("close_order", key, 2)]
            # No new model request for that step: the call came from the kept history.
            assert len(wire.requests) == 2
            assert [cid for cid, _ in _tool_messages(wire.requests[1].body)] == ["call_1"]
        else:
            assert taken_up == {
                "state": "waiting",
                "text": "Did close_order take effect? It was being sent when the run stopped.",
                "waiting": ["outcome"],
            }
            assert keys_log(tmp_path) == [("close_order", key, 1)]  # never sent again
            assert len(wire.requests) == 1
            done = desk.driver.answer_sync("u", "happened")
            assert (done.state, done.text) == ("done", "Closed.")
            assert _tool_messages(wire.requests[1].body) == [("call_1", texts.MEMORY_HAPPENED)]
            assert keys_log(tmp_path) == [("close_order", key, 1)]
    finally:
        desk.close()

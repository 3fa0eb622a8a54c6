"""Answered elsewhere, gone on by themselves: a framework run whose question a person answers
outside its driver (a plain `stalwart.Agent` of the same agent.yaml, as the interface and
`stalwart chat` answer; `stalwart chat` itself in a real terminal) is taken up again by its
application's `driver.continue_answered()` / `driver.serve_answers()`, once, whichever
worker looks; and `stalwart resume` says what such a run is.

Through the real packages (Pydantic AI, LangGraph, the OpenAI Agents SDK), each agent's
model on the local wire stand-in of OpenAI's Chat Completions, on SQLite and PostgreSQL
records (the desks of test_adapters_contract.py). Time is a FakeClock: no test sleeps.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import test_adapters_contract as contract
from model_wire import WireServer
from pydantic_ai_desk import (
    any_address,
    keys_log,
    loopback_only,
    pydantic_agent,
    text,
    tool_calls,
    write_desk,
)
from terminal import STALWART, Terminal
from test_adapters_contract import Guarded

import stalwart
from stalwart import FakeClock, texts
from stalwart.adapters.pydantic_ai import StalwartDriver, StalwartGuard

pytestmark = pytest.mark.acceptance

# The contract's desks: each adapter, on SQLite and PostgreSQL.
wire, make, guarded = contract.wire, contract.make, contract.guarded


@pytest.fixture(autouse=True)
def _loopback() -> Iterator[None]:
    loopback_only()
    try:
        yield
    finally:
        any_address()


def _elsewhere(guarded: Guarded) -> stalwart.Agent:
    """The same agent.yaml opened as the interface and `stalwart chat` open it."""
    return stalwart.Agent.from_file(guarded.folder / "agent.yaml", clock=FakeClock())


def _asked(guarded: Guarded, *calls: tuple[str, str, dict[str, Any]]) -> Any:
    for call in calls:
        guarded.wire.enqueue_reply(tool_calls(call))
    return guarded.driver.run_sync("close order 4411", user="u")


def test_an_approval_given_elsewhere_goes_on_once_by_itself(guarded: Guarded) -> None:
    from stalwart.guarded import AnsweredRun

    guarded.wire.enqueue_reply(tool_calls(("call_1", "close_order", {"order": 4411})))
    guarded.wire.enqueue_reply(text("Closed."))
    asked = guarded.driver.run_sync("close order 4411", user="u")
    assert guarded.driver.guard.answered_runs() == []  # it waits for a person, not its app
    assert guarded.driver.continue_answered() == []
    with _elsewhere(guarded) as elsewhere:
        assert elsewhere.confirm("u", "approve", question=asked.waiting[0]).state == "running"
    sid = asked.reply.session
    assert guarded.driver.guard.answered_runs() == [AnsweredRun(sid, "u", None, asked.reply.run)]
    assert guarded.calls == [] and len(guarded.wire.requests) == 1

    (continued,) = guarded.driver.continue_answered()
    assert continued.error is None and continued.run.session == sid
    done = continued.result
    assert (done.state, done.text) == ("done", "Closed.")
    key = guarded.key(1, "close_order", {"order": 4411})
    assert [(name, key) for name, _, key, _ in guarded.module.CALLS] == [("close_order", key)]
    assert len(guarded.wire.requests) == 2
    # A second worker's round, or this one's next: nothing waits, nothing is sent again.
    assert guarded.driver.guard.answered_runs() == []
    assert guarded.driver.continue_answered() == []
    assert guarded.calls == ["close_order"] and len(guarded.wire.requests) == 2


def test_a_run_another_worker_holds_is_left_to_it(guarded: Guarded) -> None:
    asked = _asked(guarded, ("call_1", "close_order", {"order": 4411}))
    with _elsewhere(guarded) as elsewhere:
        elsewhere.confirm("u", "approve", question=asked.waiting[0])
    store = guarded.stalwart.store
    with store.lock(asked.reply.session, wait=False, clock=FakeClock()):  # a worker holds it
        assert guarded.driver.continue_answered() == []
    assert guarded.calls == [] and len(guarded.wire.requests) == 1
    guarded.wire.enqueue_reply(text("Closed."))
    (continued,) = guarded.driver.continue_answered()  # let go: the next round takes it
    assert continued.result.state == "done" and guarded.calls == ["close_order"]


def test_a_skip_given_elsewhere_reaches_the_framework_run_as_declined(guarded: Guarded) -> None:
    asked = _asked(guarded, ("call_1", "close_order", {"order": 4411}))
    with _elsewhere(guarded) as elsewhere:
        assert elsewhere.confirm("u", "skip", question=asked.waiting[0]).state == "running"
    guarded.wire.enqueue_reply(text("Left open."))
    (continued,) = guarded.driver.continue_answered()
    assert (continued.result.state, continued.result.text) == ("done", "Left open.")
    assert guarded.calls == []
    assert guarded.tool_results(1) == [texts.DECLINED_RESULT]


def test_a_cancel_all_given_elsewhere_ends_the_run_and_asks_no_model(guarded: Guarded) -> None:
    asked = _asked(
        guarded,
        ("call_1", "close_order", {"order": 4411}),
        ("call_2", "hold_stock", {"order": 4411}),
    )
    asked = guarded.driver.confirm_sync("u", "approve", question=asked.waiting[0])
    with _elsewhere(guarded) as elsewhere:
        stopped = elsewhere.confirm("u", "cancel all", question=asked.waiting[0])
    assert stopped.state == "rolled_back"
    assert guarded.driver.guard.answered_runs() == []
    assert guarded.driver.continue_answered() == []
    assert guarded.calls == ["close_order", "reopen_order"]
    assert len(guarded.wire.requests) == 2  # none after cancel all


def test_serve_answers_goes_round_on_the_clock_until_stopped(guarded: Guarded) -> None:
    asked = _asked(guarded, ("call_1", "close_order", {"order": 4411}))
    with _elsewhere(guarded) as elsewhere:
        elsewhere.confirm("u", "approve", question=asked.waiting[0])
    guarded.wire.enqueue_reply(text("Closed."))
    clock = FakeClock()  # its sleep moves time on at once: two rounds, a wait after each

    def stop() -> bool:
        return len(clock.slept) >= 2

    assert guarded.driver.serve_answers(stop=stop, every=0.5, clock=clock) == 2
    assert clock.slept == [0.5, 0.5]
    assert guarded.calls == ["close_order"] and len(guarded.wire.requests) == 2
    assert guarded.stalwart.pending("u").state == "done"


def test_stalwart_resume_says_a_framework_run_is_its_applications(guarded: Guarded) -> None:
    """It printed "<session>: running: " (an empty text) before."""
    asked = _asked(guarded, ("call_1", "close_order", {"order": 4411}))
    with _elsewhere(guarded) as elsewhere:
        elsewhere.confirm("u", "approve", question=asked.waiting[0])
    shown = subprocess.run(
        [STALWART, "resume", str(guarded.folder / "agent.yaml")],
        capture_output=True,
        text=True,
        cwd=guarded.folder,
        check=True,
    )
    assert shown.stdout == (
        f"{asked.reply.session}: running: a run of {guarded.framework}: its application goes on "
        "with it (the adapter's driver: resume, or serve_answers)\n"
    )
    guarded.wire.enqueue_reply(text("Closed."))
    (continued,) = guarded.driver.continue_answered()  # and it does
    assert continued.result.state == "done" and guarded.calls == ["close_order"]


def test_stalwart_chat_answers_and_shows_where_the_framework_run_went(guarded: Guarded) -> None:
    asked = _asked(guarded, ("call_1", "close_order", {"order": 4411}))
    chat = Terminal(STALWART, "chat", str(guarded.folder / "agent.yaml"), "--user", "u",
                    cwd=guarded.folder)  # fmt: skip
    try:
        chat.expect(asked.text.splitlines()[0])  # shown at start: it waits for u
        chat.expect("[a] approve  [s] skip  [c] cancel all")
        guarded.wire.enqueue_reply(tool_calls(("call_2", "hold_stock", {"order": 4411})))
        chat.send("a")
        chat.expect(texts.framework_goes_on(guarded.framework))
        (continued,) = guarded.driver.continue_answered()  # the application's worker
        assert continued.result.waiting[0].tool == "hold_stock"
        chat.expect("Run hold_stock(order=4411)?")  # chat shows the framework's next question
        chat.expect("[a] approve")
        guarded.wire.enqueue_reply(text("Closed and held."))
        chat.send("a")
        chat.expect(texts.framework_goes_on(guarded.framework))
        (continued,) = guarded.driver.continue_answered()
        assert continued.result.state == "done"
        chat.expect("Closed and held.")
        chat.expect("you> ")
        chat.send("\n")
    finally:
        code = chat.close()
    assert code == 0
    assert guarded.calls == ["close_order", "hold_stock"]
    assert len(guarded.wire.requests) == 3
    assert json.loads(guarded.tool_results(2)[-1]) == {"order": 4411, "hold": "h-4411"}


# --- many workers: two processes look at the same answered runs at once ---

RESUMER = """
import json, sys, time
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from pydantic_ai_desk import loopback_only, pydantic_agent
loopback_only()
import stalwart
from stalwart.adapters.pydantic_ai import StalwartDriver

yaml, url, go = sys.argv[2:5]
desk = stalwart.Agent.from_file(yaml)
tools = sys.modules[next(iter(desk.config.project.modules))]
agent, client = pydantic_agent(desk, tools, url)
taken = []
with StalwartDriver(agent) as driver:
    print("ready", flush=True)
    while not Path(go).exists():  # both workers start their rounds together
        time.sleep(0.005)
    deadline = time.monotonic() + 60
    while driver.guard.answered_runs() and time.monotonic() < deadline:
        for done in driver.continue_answered():
            said = done.result.state if done.result is not None else repr(done.error)
            taken.append([done.run.session, said])
    driver._sync(client.close())
print(json.dumps(taken))
"""

TESTS = Path(__file__).resolve().parent


def test_two_worker_processes_continue_each_answered_run_once(
    tmp_path: Path, wire: WireServer, record: str
) -> None:
    project = write_desk(tmp_path, record=record)
    users = [f"u{n}" for n in range(1, 5)]
    with project.agent(clock=FakeClock()) as desk:
        agent, client = pydantic_agent(desk, project.module, wire.url)
        with StalwartDriver(agent) as driver:
            asked = {}
            for n, user in enumerate(users, start=1):
                wire.enqueue_reply(tool_calls(("call_1", "close_order", {"order": n})))
                asked[user] = driver.run_sync(f"close order {n}", user=user)
            driver._sync(client.close())
        for user in users:
            desk.confirm(user, "approve", question=asked[user].waiting[0])
        for _ in users:
            wire.enqueue_reply(text("Closed."))
        go = tmp_path / "go"
        workers = [
            subprocess.Popen(
                [sys.executable, "-c", RESUMER, str(TESTS), str(project.yaml), wire.url, str(go)],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for _ in range(2)
        ]
        try:
            for worker in workers:
                assert worker.stdout is not None
                assert worker.stdout.readline().strip() == "ready", worker.communicate()
            go.touch()
            outs = [worker.communicate(timeout=120) for worker in workers]
        finally:
            for worker in workers:
                if worker.poll() is None:
                    worker.kill()
                    worker.communicate()
        taken: list[list[str]] = []
        for worker, (out, err) in zip(workers, outs, strict=True):
            assert worker.returncode == 0, err
            taken.extend(json.loads(out))
        sessions = sorted(asked[user].reply.session for user in users)
        assert sorted(taken) == [[session, "done"] for session in sessions]  # each once
        sent = [key for tool, key, _ in keys_log(tmp_path) if tool == "close_order"]
        assert len(sent) == len(set(sent)) == 4  # each write sent once, under its own key
        assert len(wire.requests) == 8  # each run's model asked twice: its call, its end
        assert StalwartGuard(desk).guard.answered_runs() == []


def test_chat_says_so_when_the_application_does_not_go_on(guarded: Guarded) -> None:
    """`stalwart chat`'s loop on an agent whose clock is a FakeClock: it looks at the record
    every 0.25 s for a minute, then says the run has not moved on, and asks for a turn."""
    from stalwart.serve.terminal import FRAMEWORK_LOOK_SECS, FRAMEWORK_WAIT_SECS, chat

    asked = _asked(guarded, ("call_1", "close_order", {"order": 4411}))
    shown: list[str] = []

    def no_more_turns(prompt: str) -> str:
        raise EOFError

    clock = FakeClock()
    yaml = guarded.folder / "agent.yaml"
    with stalwart.Agent.from_file(yaml, clock=clock) as elsewhere:
        chat(
            elsewhere, "u", None, read_line=no_more_turns, read_key=lambda: "a", write=shown.append
        )
        looks = int(FRAMEWORK_WAIT_SECS / FRAMEWORK_LOOK_SECS)
        assert clock.slept == [FRAMEWORK_LOOK_SECS] * looks
    assert shown[-2:] == [
        texts.framework_goes_on(guarded.framework),
        texts.framework_still_running(guarded.framework, FRAMEWORK_WAIT_SECS),
    ]
    assert asked.waiting[0].text in shown
    assert guarded.calls == [] and len(guarded.wire.requests) == 1  # chat sends nothing itself
    guarded.wire.enqueue_reply(text("Closed."))
    (continued,) = guarded.driver.continue_answered()
    assert continued.result.state == "done" and guarded.calls == ["close_order"]

"""An operator ends a run that cannot go on (issue 10, point 7): stuck on an undo that keeps
failing, waiting on a question nobody will answer, left in flight, or left rolling back by
a worker whose agent.yaml lacks the undo. Nothing is sent that a person did not confirm,
nothing sent before is sent again, every write ends undone once, left as it is, or handed
to a person; the record keeps every call; memory is rewound; one reply says what was
undone and what a person must do by hand; who ended it, when and why is recorded.

Real runs of the service's tools (tests/service.py) on SQLite and PostgreSQL; the command
in a subprocess, with no terminal.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import Project
from pg_fixtures import BACKENDS
from service import keys_log, turn, write_service_project
from terminal import without_terminal

from stalwart import (
    Agent,
    AnswerError,
    FakeClock,
    InputRefused,
    OperatorTokenError,
    SessionBusy,
    texts,
)
from stalwart.clock import Clock
from stalwart.record import Store
from stalwart.record.lease import LEASE_SECS

TOKEN = "op-7f3a9c-never-to-be-written-down"
START = 1_800_000_000.0  # the FakeClock's


@pytest.fixture(params=BACKENDS)
def record(request: pytest.FixtureRequest) -> str:
    """agent.yaml's record: a SQLite file, or a fresh PostgreSQL database."""
    if request.param == "postgres":
        return str(request.getfixturevalue("pg_url"))
    return "record.sqlite"


@pytest.fixture
def desk(tmp_path: Path, record: str) -> Iterator[tuple[Project, Agent]]:
    project = write_service_project(tmp_path, record=record)
    agent = project.agent(clock=FakeClock())
    agent.set_operator_token(TOKEN)
    yield project, agent
    for opened in project.agents:
        opened.close()


def _sends(project: Project) -> list[str]:
    assert project.module is not None
    return [name for name, _, _ in project.module.CALLS]


def _approve(agent: Agent, text: str) -> Any:
    reply = agent.chat(text, user="u")
    while reply.waiting and reply.waiting[0].kind == "confirm":
        reply = agent.confirm_current("u", "approve")
    return reply


def _calls(agent: Agent) -> list[tuple[str, str, str]]:
    return [(c.kind, c.tool, c.status) for c in agent.record("u")]


def _memory(agent: Agent) -> list[tuple[str, str]]:
    return [(m.role, m.content) for m in agent.memory("u")]


def test_a_stuck_run_is_ended_without_sending_its_failing_undo_again(
    desk: tuple[Project, Agent],
) -> None:
    project, agent = desk
    assert project.module is not None
    project.module.PLAN.update({"free_slot": ["error"] * 4, "stamp_form": ["error"]})
    text = turn(("charge_card", 1), ("book_slot", 2), ("stamp_form", 3))
    stuck = _approve(agent, text)
    assert stuck.state == "stuck"
    sent, calls = _sends(project), _calls(agent)

    reply = agent.operator_end("u", token=TOKEN, reason="the slot service is retired", by="ops")
    assert reply.state == "ended_by_operator"
    assert reply.text == (
        "This run stopped: stamp_form failed (RuntimeError), and then ops, an operator, ended "
        "it (the slot service is retired). Still to be undone by hand: book_slot, charge_card."
    )
    assert reply.waiting == []
    assert reply.ended is not None
    assert (reply.ended.by, reply.ended.at, reply.ended.reason) == (
        "ops",
        START + 7.0,  # after the undo's waits of 1, 2 and 4 seconds
        "the slot service is retired",
    )
    assert _sends(project) == sent, "nothing is sent again"
    assert _calls(agent) == calls, "the record keeps every call as it was"
    assert _memory(agent) == [("user", text), ("assistant", reply.text)]
    # What it left was handed to a person: an operator's undo no longer takes it.
    with pytest.raises(AnswerError, match="was ended by an operator"):
        agent.operator_undo("u", token=TOKEN)
    with pytest.raises(AnswerError, match="has ended already"):
        agent.operator_end("u", token=TOKEN, reason="again")
    assert agent.pending("u") == reply
    assert _approve(agent, turn(("charge_card", 4))).state == "done", "the session goes on"


def test_what_an_ending_left_by_hand_is_said_undone_by_hand_one_write_at_a_time(
    desk: tuple[Project, Agent],
) -> None:
    project, agent = desk
    assert project.module is not None
    project.module.PLAN.update({"free_slot": ["error"] * 4, "stamp_form": ["error"]})
    stuck = _approve(agent, turn(("charge_card", 1), ("book_slot", 2), ("stamp_form", 3)))
    assert stuck.state == "stuck"
    ended = agent.operator_end("u", token=TOKEN, reason="the slot service is retired", by="ops")
    book_slot = next(c.call_id for c in agent.record("u") if c.tool == "book_slot")

    told = agent.undone_by_hand("u", book_slot)
    assert told.text == (
        "This run stopped: stamp_form failed (RuntimeError), and then ops, an operator, ended "
        "it (the slot service is retired). Undone, latest first: book_slot (by hand). Still "
        "to be undone by hand: charge_card."
    )
    assert (told.state, told.ended) == ("ended_by_operator", ended.ended)
    with pytest.raises(AnswerError, match="left to be undone by hand; nothing was changed"):
        agent.undone_by_hand("u", book_slot)
    assert agent.pending("u") == told
    assert _sends(project).count("free_slot") == 4, "nothing is sent"


def test_a_confirmation_nobody_answers_is_not_run_and_the_writes_before_it_are_undone(
    desk: tuple[Project, Agent],
) -> None:
    project, agent = desk
    text = turn(("charge_card", 1), ("book_slot", 2), ("send_note", 3))
    agent.chat(text, user="u")
    agent.confirm_current("u", "approve")
    waiting = agent.confirm_current("u", "approve")
    assert waiting.waiting[0].tool == "send_note"

    reply = agent.operator_end("u", token=TOKEN, reason="nobody answers", by="ops")
    assert reply.text == (
        "This run stopped: ops, an operator, ended it (nobody answers). send_note, which "
        "waited for your confirmation, was not run. Undone, latest first: book_slot (by "
        "free_slot), charge_card (by refund_card)."
    )
    assert _sends(project) == ["charge_card", "book_slot", "free_slot", "refund_card"]
    assert ("write", "send_note", "in_flight") not in _calls(agent)
    assert [c.tool for c in agent.record("u") if c.kind == "write"] == ["charge_card", "book_slot"]
    assert _memory(agent) == [("user", text), ("assistant", reply.text)]


def test_a_write_in_doubt_is_left_for_a_person_and_nothing_below_it_is_undone(
    desk: tuple[Project, Agent],
) -> None:
    project, agent = desk
    assert project.module is not None
    project.module.PLAN["charge_card"] = ["lost"]  # it took effect; its answer was lost
    asked = _approve(agent, turn(("book_slot", 1), ("charge_card", 2)))
    assert asked.waiting[0].kind == "outcome"

    reply = agent.operator_end("u", token=TOKEN, reason="the clerk left", by="ops")
    assert reply.text == (
        "This run stopped: ops, an operator, ended it (the clerk left). Nobody knows whether "
        "charge_card took effect: that is for you to check by hand. Still to be undone by "
        "hand: book_slot."
    )
    assert _sends(project) == ["book_slot", "charge_card"], "no undo out of order"
    assert ("write", "charge_card", "in_doubt") in _calls(agent)


def test_a_call_left_in_flight_is_not_sent_again(desk: tuple[Project, Agent]) -> None:
    project, agent = desk
    module = project.module
    assert module is not None
    # count_stock's answer takes its process down (a result nobody can record, say): every
    # resume would send it again. The operator ends the run instead.
    module.PLAN["count_stock"] = ["crash_after"]
    agent.chat(turn(("charge_card", 1), ("count_stock", 2), ("book_slot", 3)), user="u")
    with pytest.raises(module.SimulatedCrash):
        agent.confirm_current("u", "approve")
    other = project.agent(clock=FakeClock())
    reply = other.operator_end("u", token=TOKEN, reason="count_stock wedges", by="ops")
    assert reply.text == (
        "This run stopped: ops, an operator, ended it (count_stock wedges). Undone, latest "
        "first: charge_card (by refund_card)."
    )
    assert _sends(project) == ["charge_card", "count_stock", "refund_card"]
    assert ("read", "count_stock", "failed") in _calls(other)

    # A write left in flight is in doubt: not sent again, and left for a person.
    module.PLAN["book_slot"] = ["crash_after"]
    other.chat(turn(("charge_card", 4), ("book_slot", 5)), user="u")
    other.confirm_current("u", "approve")
    with pytest.raises(module.SimulatedCrash):
        other.confirm_current("u", "approve")
    third = project.agent(clock=FakeClock())
    reply = third.operator_end("u", token=TOKEN, reason="stop here", by="ops")
    assert reply.text == (
        "This run stopped: ops, an operator, ended it (stop here). Nobody knows whether "
        "book_slot took effect: that is for you to check by hand. Still to be undone by hand: "
        "charge_card."
    )
    assert _sends(project)[3:] == ["charge_card", "book_slot"]


def test_a_worker_lacking_the_undo_ends_the_rollback_and_leaves_the_rest_by_hand(
    desk: tuple[Project, Agent], tmp_path: Path
) -> None:
    project, agent = desk
    assert project.module is not None
    # A deploy in progress: refund_card moved to another agent of the project, so the run
    # is left rolling back for a worker that has it (were it in no agent, a person is asked).
    deploying = tmp_path / "agent-deploying.yaml"
    deploying.write_text(
        project.yaml.read_text()
        .replace("refund_card, ", "")
        .replace(
            "\ntools:\n  - python", "\n  refunds:\n    tools: [refund_card]\ntools:\n  - python"
        )
    )
    partial = Agent.from_file(deploying, "keeper", clock=FakeClock())
    project.agents.append(partial)
    partial.set_operator_token(TOKEN)  # its own verifier, beside its own agent.yaml
    project.module.PLAN["stamp_form"] = ["error"]
    agent.chat(turn(("charge_card", 1), ("book_slot", 2), ("stamp_form", 3)), user="u")
    agent.confirm_current("u", "approve")
    agent.confirm_current("u", "approve")
    left = partial.confirm_current("u", "approve")
    assert left.state == "rolling_back", left.text  # book_slot undone; refund_card lacking

    reply = partial.operator_end("u", token=TOKEN, reason="refund_card is retired", by="ops")
    assert reply.text == (
        "This run stopped: stamp_form failed (RuntimeError), and then ops, an operator, ended "
        "it (refund_card is retired). Undone, latest first: book_slot (by free_slot). Still "
        "to be undone by hand: charge_card."
    )
    assert _sends(project) == ["charge_card", "book_slot", "stamp_form", "free_slot"]


def test_a_process_stopped_while_ending_leaves_it_ending_and_the_next_finishes_it(
    desk: tuple[Project, Agent],
) -> None:
    project, agent = desk
    module = project.module
    assert module is not None
    agent.chat(turn(("charge_card", 1), ("book_slot", 2), ("send_note", 3)), user="u")
    agent.confirm_current("u", "approve")
    agent.confirm_current("u", "approve")
    module.PLAN["refund_card"] = ["crash_after"]  # the refund acts; its process stops
    with pytest.raises(module.SimulatedCrash):
        agent.operator_end("u", token=TOKEN, reason="nobody answers", by="ops")
    [run] = agent.store.load("u").runs  # type: ignore[union-attr]
    assert run.state == "ending"

    other = project.agent(clock=FakeClock())
    reply = other.pending("u")
    assert reply is not None and reply.state == "ended_by_operator"
    assert reply.text == (
        "This run stopped: ops, an operator, ended it (nobody answers). send_note, which "
        "waited for your confirmation, was not run. Undone, latest first: book_slot (by "
        "free_slot). Still to be undone by hand: charge_card. An earlier try of refund_card "
        "got no answer, so it may have taken effect."
    )
    assert _sends(project).count("refund_card") == 1, "an undo sent before is not sent again"


def test_no_token_or_no_reason_or_nothing_to_end_changes_nothing(
    desk: tuple[Project, Agent],
) -> None:
    project, agent = desk
    agent.chat(turn(("charge_card", 1)), user="u")
    before = agent.store.load("u")
    for token in (None, "", "not-the-token-at-all"):
        with pytest.raises(OperatorTokenError, match="wrong or missing; nothing was changed"):
            agent.operator_end("u", token=token, reason="why")
    for reason in ("", "  ", "x" * 2001, "a\x00b"):
        with pytest.raises(InputRefused):
            agent.operator_end("u", token=TOKEN, reason=reason)
    with pytest.raises(InputRefused):
        agent.operator_end("u", token=TOKEN, reason="why", by="")
    assert agent.store.load("u") == before
    with pytest.raises(AnswerError, match="has no run to end"):
        agent.operator_end("nobody", token=TOKEN, reason="why")
    agent.confirm_current("u", "approve")
    with pytest.raises(AnswerError, match="has ended already"):
        agent.operator_end("u", token=TOKEN, reason="why")
    assert _sends(project) == ["charge_card"]


# --- a worker that hangs, holding the session: real processes ---

WAIT = 30.0  # a bound on what should take a moment; reaching it fails the test

WORKER = """
import json, sys
from stalwart import Agent, StalwartError

agent = Agent.from_file(sys.argv[1])  # the system's clock: its lease is real time's
try:
    reply = agent.confirm_current("u", "approve")
except StalwartError as error:
    print(json.dumps({"code": str(error.code), "error": str(error)}))
else:
    print(json.dumps({"state": reply.state, "text": reply.text}))
"""


def _operator(project: Project, record: str, clock: Clock) -> Agent:
    """An operator's agent on `clock`, whose store waits a moment, not half a minute, for a
    session's lock."""
    store: Store
    if record.startswith("postgresql"):
        from stalwart.record.postgres import PostgresStore

        store = PostgresStore(record, lock_wait_secs=0.2)
    else:
        from stalwart.record.sqlite import SQLiteStore

        store = SQLiteStore(project.folder / record, lock_wait_secs=0.2)
    agent = Agent.from_file(project.yaml, store=store, clock=clock)
    project.agents.append(agent)
    return agent


@pytest.mark.timeout(120)
def test_a_hung_worker_is_fenced_once_its_lease_expires_and_the_operator_ends_its_run(
    desk: tuple[Project, Agent], record: str
) -> None:
    project, agent = desk
    folder = project.folder
    agent.chat(turn(("charge_card", 1), ("count_stock", 2), ("book_slot", 3)), user="u")
    (folder / "hold-count_stock").touch()
    worker = subprocess.Popen(
        [sys.executable, "-c", WORKER, str(project.yaml)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + WAIT
        while not (folder / "started-count_stock").exists():
            assert worker.poll() is None, worker.communicate()
            assert time.monotonic() < deadline, "the worker never began count_stock"
            time.sleep(0.01)
        # The worker hangs inside count_stock, holding the session's lock; its heartbeat
        # stops with it, so its lease is no longer renewed.
        os.kill(worker.pid, signal.SIGSTOP)
        before = agent.store.load("u")

        # Within its lease, the operator does not take the session: nothing changes.
        within = _operator(project, record, FakeClock(start=time.time()))
        with pytest.raises(SessionBusy, match=r"whose lease runs \d+s more unless renewed"):
            within.operator_end("u", token=TOKEN, reason="the worker hangs", by="ops")
        assert agent.store.load("u") == before

        # Past it, the operator's end takes the session, fencing the worker, and says so.
        late = _operator(project, record, FakeClock(start=time.time() + LEASE_SECS + 1))
        reply = late.operator_end("u", token=TOKEN, reason="the worker hangs", by="ops")
        ended = (
            "This run stopped: ops, an operator, ended it (the worker hangs). Undone, latest "
            "first: charge_card (by refund_card)."
        )
        assert reply.state == "ended_by_operator"
        assert reply.text == f"{ended} {texts.OPERATOR_TOOK_SESSION}"
        calls = _calls(late)
        assert calls == [
            ("write", "charge_card", "ran"),
            ("read", "count_stock", "failed"),
            ("undo", "refund_card", "ran"),
        ]

        # The worker wakes: count_stock answers, and its commit is refused by the fence.
        os.kill(worker.pid, signal.SIGCONT)
        (folder / "hold-count_stock").unlink()
        out, err = worker.communicate(timeout=WAIT)
        assert worker.returncode == 0, err
        assert json.loads(out)["code"] == "lease_lost"
        assert _calls(late) == calls, "nothing the fenced worker did was recorded"
        pending = late.pending("u")
        assert pending is not None and (pending.state, pending.text) == ("ended_by_operator", ended)
        assert [tool for tool, _, _ in keys_log(folder)] == [
            "charge_card",
            "count_stock",
            "refund_card",
        ], "the fenced worker sent nothing more"
        assert _approve(late, turn(("book_slot", 4))).state == "done", "the session goes on"
    finally:
        if worker.poll() is None:
            os.kill(worker.pid, signal.SIGCONT)
            worker.kill()
        worker.communicate()
        (folder / "hold-count_stock").unlink(missing_ok=True)


# --- the command, in a subprocess with no terminal ---


def test_operator_end_command_ends_the_run_and_says_so_in_json(
    desk: tuple[Project, Agent],
) -> None:
    project, agent = desk
    agent.chat(turn(("charge_card", 1), ("book_slot", 2)), user="u")
    agent.confirm_current("u", "approve")
    agent.close()
    args = ["operator-end", str(project.yaml), "u", "--reason", "nobody answers"]

    wrong = without_terminal([*args, "--by", "ops"], b"not-the-token\n")
    assert (wrong.code, wrong.stderr) == (
        3,
        "The operator token is wrong or missing; nothing was changed.\n",
    )
    ended = without_terminal([*args, "--by", "ops", "--json"], TOKEN.encode() + b"\n")
    assert ended.code == 0, ended
    assert TOKEN not in ended.shown + ended.stderr
    shown = json.loads(ended.shown)
    assert shown == {
        "session": "u",
        "run": "u#1",
        "state": "ended_by_operator",
        "text": "This run stopped: ops, an operator, ended it (nobody answers). book_slot, "
        "which waited for your confirmation, was not run. Undone, latest first: charge_card "
        "(by refund_card).",
        "ended": {"by": "ops", "at": shown["ended"]["at"], "reason": "nobody answers"},
    }
    again = without_terminal(args, TOKEN.encode() + b"\n")
    assert again.code == 4
    assert again.stderr == (
        "Session 'u''s run u#1 has ended already (ended_by_operator); nothing was changed.\n"
    )
    no_reason = without_terminal(["operator-end", str(project.yaml), "u"], TOKEN.encode())
    assert no_reason.code == 2 and "--reason" in no_reason.stderr

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
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import Project
from pg_fixtures import BACKENDS
from service import turn, write_service_project
from terminal import without_terminal

from stalwart import Agent, AnswerError, FakeClock, InputRefused, OperatorTokenError

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

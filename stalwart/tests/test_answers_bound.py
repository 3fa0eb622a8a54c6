"""An answer names its question where it can be repeated (a stale one changes nothing), or
answers the question waiting now, as the chapter's example does."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import Project
from service import turn, write_service_project

from stalwart import Agent, AnswerError, FakeClock, StaleAnswer, Waiting


def _project(tmp_path: Path, record: str = "record.sqlite") -> tuple[Project, Agent]:
    project = write_service_project(tmp_path, record=record)
    return project, project.agent(clock=FakeClock())


def _ran(agent: Agent) -> list[str]:
    return [call.tool for call in agent.record("u") if call.status == "ran"]


def test_an_answer_names_its_question_and_a_stale_one_changes_nothing(tmp_path: Path) -> None:
    project, agent = _project(tmp_path)
    first = agent.chat(turn(("book_slot", 1), ("charge_card", 2), ("stamp_form", 3)), user="u")
    shown = first.waiting[0]
    assert shown.id.startswith("u#1/1/confirm/")
    second = agent.confirm("u", "approve", question=shown)
    assert second.waiting[0].tool == "charge_card" and second.waiting[0].id != shown.id
    before = agent.store.load("u")
    for stale in (shown, shown.id):  # a double click, an HTTP retry
        with pytest.raises(StaleAnswer, match="no longer waits; nothing was changed") as error:
            agent.confirm("u", "approve", question=stale)
        assert error.value.code == "stale_answer"
        assert isinstance(error.value, AnswerError)
    assert agent.store.load("u") == before
    assert _ran(agent) == ["book_slot"]
    # Read back in another process (here: another Agent), a question keeps its id.
    with project.agent(clock=FakeClock()) as other:
        pending = other.pending("u")
        assert pending is not None and pending.waiting[0].id == second.waiting[0].id
    third = agent.answer("u", "skip", question=second.waiting[0].id)
    assert third.waiting[0].tool == "stamp_form"
    agent.close()


def test_an_answer_that_names_no_question_answers_the_one_waiting_now(tmp_path: Path) -> None:
    """As the chapter's example answers: `confirm(user, "approve")`, no question named
    (before: TypeError, question= was required)."""
    _, agent = _project(tmp_path)
    agent.chat(turn(("book_slot", 1), ("charge_card", 2), ("stamp_form", 3)), user="u")
    assert agent.confirm("u", "approve").waiting[0].tool == "charge_card"
    assert agent.answer("u", "skip", question=None).waiting[0].tool == "stamp_form"
    assert agent.answer("u", "approve").state == "done"
    assert _ran(agent) == ["book_slot", "stamp_form"]
    before = agent.store.load("u")
    with pytest.raises(AnswerError, match="waits for an answer") as error:
        agent.confirm("u", "approve")  # nothing waits: an AnswerError, but not a stale one
    assert not isinstance(error.value, StaleAnswer)
    assert agent.store.load("u") == before
    agent.close()


def test_a_question_named_by_nothing_is_refused(tmp_path: Path) -> None:
    _, agent = _project(tmp_path)
    agent.chat(turn(("book_slot", 1)), user="u")
    before = agent.store.load("u")
    for nothing in ("", 3):
        with pytest.raises(AnswerError, match="names the question it answers"):
            agent.confirm("u", "approve", question=nothing)  # type: ignore[arg-type]
    assert agent.store.load("u") == before
    agent.close()


def test_confirm_without_a_question_answers_a_confirmation_only(tmp_path: Path) -> None:
    project, agent = _project(tmp_path)
    assert project.module is not None
    project.module.PLAN.update({"free_slot": ["error"] * 4, "stamp_form": ["error"]})
    agent.chat(turn(("book_slot", 1), ("stamp_form", 2)), user="u")
    agent.confirm("u", "approve")
    stuck = agent.confirm("u", "approve")
    assert stuck.state == "stuck" and stuck.waiting[0].kind == "undo"
    before = agent.store.load("u")
    with pytest.raises(AnswerError, match="confirmation"):
        agent.confirm("u", "retry")
    assert agent.store.load("u") == before
    assert agent.answer("u", "abandon").state == "abandoned"
    agent.close()


def test_a_stale_retry_of_a_stuck_undo_is_refused(tmp_path: Path) -> None:
    project, agent = _project(tmp_path)
    assert project.module is not None
    project.module.PLAN.update({"free_slot": ["error"] * 8, "stamp_form": ["error"]})
    reply = agent.chat(turn(("book_slot", 1), ("stamp_form", 2)), user="u")
    while reply.waiting and reply.waiting[0].kind == "confirm":
        reply = agent.confirm("u", "approve", question=reply.waiting[0])
    stuck = reply.waiting[0]
    assert stuck.kind == "undo" and "after 4 tries" in stuck.text
    again = agent.answer("u", "retry", question=stuck)
    assert again.state == "stuck" and "after 8 tries" in again.waiting[0].text
    assert again.waiting[0].id != stuck.id
    sends = len(project.module.CALLS)
    before = agent.store.load("u")
    with pytest.raises(StaleAnswer):
        agent.answer("u", "retry", question=stuck)
    assert agent.store.load("u") == before and len(project.module.CALLS) == sends
    agent.close()


RACER = """
import json, sys, time
from pathlib import Path
from stalwart import Agent, StaleAnswer

agent = Agent.from_file(sys.argv[1])
question, go = sys.argv[2], Path(sys.argv[3])
while not go.exists():
    time.sleep(0.002)
try:
    reply = agent.confirm("u", "approve", question=question)
except StaleAnswer as error:
    print(json.dumps({"stale": error.code}))
else:
    print(json.dumps({"approved": reply.waiting[0].tool}))
"""


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_four_racing_processes_approve_exactly_one_step(
    tmp_path: Path, backend: str, request: pytest.FixtureRequest
) -> None:
    record = "record.sqlite" if backend == "sqlite" else request.getfixturevalue("pg_url")
    _, agent = _project(tmp_path, record)
    shown: Waiting = agent.chat(
        turn(("book_slot", 1), ("charge_card", 2), ("book_slot", 3), ("stamp_form", 4)), user="u"
    ).waiting[0]
    go = tmp_path / "go"
    racers = [
        subprocess.Popen(
            [sys.executable, "-c", RACER, str(tmp_path / "agent.yaml"), shown.id, str(go)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(4)
    ]
    go.touch()
    said = []
    try:
        for racer in racers:
            out, err = racer.communicate(timeout=60)
            assert racer.returncode == 0, err
            said.append(json.loads(out))
    finally:  # a racer a failed assertion left running is killed and waited for
        for racer in racers:
            if racer.poll() is None:
                racer.kill()
            racer.communicate()
    assert sorted(said, key=str) == [{"approved": "charge_card"}] + [{"stale": "stale_answer"}] * 3
    assert _ran(agent) == ["book_slot"], "exactly one step approved"
    pending = agent.pending("u")
    assert pending is not None and pending.waiting[0].tool == "charge_card"
    agent.close()


def test_the_same_threads_racing_in_one_process_approve_one_step(tmp_path: Path) -> None:
    from concurrent.futures import ThreadPoolExecutor

    project, agent = _project(tmp_path)
    shown = agent.chat(turn(("book_slot", 1), ("charge_card", 2)), user="u").waiting[0]
    agents = [project.agent(clock=FakeClock()) for _ in range(4)]

    def race(racer: Agent) -> str:
        try:
            return racer.confirm("u", "approve", question=shown.id).waiting[0].tool
        except StaleAnswer:
            return "stale"

    with ThreadPoolExecutor(4) as pool:
        outcomes = sorted(pool.map(race, agents))
    assert outcomes == ["charge_card", "stale", "stale", "stale"]
    assert _ran(agent) == ["book_slot"]
    for opened in project.agents:
        opened.close()

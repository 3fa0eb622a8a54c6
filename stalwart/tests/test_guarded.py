"""The public guarded-run API (stalwart.guarded), driven by a loop of the test's own: no
framework, the garden's tools sent by the loop itself, through stalwart."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import Project, session_identity, write_project

from stalwart import (
    Agent,
    FakeClock,
    FrameworkTool,
    Guard,
    GuardedRun,
    QuestionPending,
    RunStateError,
    StepAction,
    texts,
)
from stalwart._engine.keys import idempotency_key

pytestmark = pytest.mark.unit


class Crash(BaseException):
    """The loop's process stops mid-send: nothing in the engine catches this."""


@pytest.fixture
def garden(tmp_path: Path) -> Iterator[tuple[Project, Agent]]:
    project = write_project(tmp_path, facts="  - plant_tree: {retry_safe: true}\n")
    agent = project.agent(clock=FakeClock())
    yield project, agent
    for opened in project.agents:
        opened.close()


def _send(project: Project, run: GuardedRun, call_id: str, tool: str, order: int) -> Any:
    """The loop sends its call through stalwart: the tool's own function, its arguments."""
    step = run.step(call_id, tool, {"order": order})
    assert step.action is StepAction.SEND, step
    return run.send(step, lambda args, key: getattr(project.module, tool)(**args))


def test_each_call_is_a_step_found_again_by_its_call_id_and_keyed_by_stalwart(
    garden: tuple[Project, Agent],
) -> None:
    project, agent = garden
    guard = Guard(agent, framework="my-loop")
    with guard.open("u") as run:
        run.begin("count the apples of order 1, then paint its fence")
        counted = _send(project, run, "c1", "count_apples", 1)  # a read: not confirmed
        assert (counted.action, counted.result) == (StepAction.REPLAY, {"apples": 7, "order": 1})
        identity = session_identity(agent.store, "u")
        assert counted.key == idempotency_key(identity, "1.1", "count_apples", {"order": 1})
        asked = run.step("c2", "paint_fence", {"order": 1})
        assert asked.action is StepAction.WAIT
        assert asked.waiting is not None and asked.waiting.kind == "confirm"
        assert asked.waiting.text.startswith("Run paint_fence(order=1)?")
        again = run.step("c2", "paint_fence", {"order": 1})  # found again, not a new step
        assert (again.number, again.waiting) == (2, asked.waiting)
    assert project.calls == [("count_apples", {"order": 1})]

    reply = guard.confirm("u", "approve", question=asked.waiting)
    assert reply.state == "running"  # an approval sends nothing: the loop sends it
    assert project.calls == [("count_apples", {"order": 1})]

    with guard.open("u") as run:
        assert run.running
        replayed = run.step("c1", "count_apples", {"order": 1})
        assert (replayed.action, replayed.result) == (StepAction.REPLAY, counted.result)
        painted = _send(project, run, "c2", "paint_fence", 1)
        assert painted.action is StepAction.REPLAY
        assert painted.key == idempotency_key(identity, "1.2", "paint_fence", {"order": 1})
        done = run.finish("Counted and painted.")
    assert (done.state, done.text) == ("done", "Counted and painted.")
    assert project.calls == [("count_apples", {"order": 1}), ("paint_fence", {"order": 1})]
    assert agent.memory("u")[-1].content == "Counted and painted."


def _approved(guard: Guard, project: Project, call_id: str, tool: str, order: int) -> Any:
    """Ask for a write, approve it as a person, and send it: the step as it then stands."""
    with guard.open("u") as run:
        asked = run.step(call_id, tool, {"order": order})
        assert asked.action is StepAction.WAIT, asked
    guard.confirm("u", "approve", question=asked.waiting)
    with guard.open("u") as run:
        return _send(project, run, call_id, tool, order)


def test_a_failed_send_rolls_the_run_back_last_write_first_with_one_reply(
    garden: tuple[Project, Agent],
) -> None:
    project, agent = garden
    guard = Guard(agent, framework="my-loop")
    with guard.open("u") as run:
        run.begin("paint, plant, then ring")
    assert _approved(guard, project, "c1", "paint_fence", 3).action is StepAction.REPLAY
    assert _approved(guard, project, "c2", "plant_tree", 3).action is StepAction.REPLAY
    project.fail.add("water_lawn")
    stopped = _approved(guard, project, "c3", "water_lawn", 3)
    assert stopped.action is StepAction.STOP and stopped.reply is not None
    assert stopped.reply.text == (
        "This run stopped: water_lawn failed (RuntimeError). Undone, latest first: "
        "plant_tree (by unplant_tree), paint_fence (by unpaint_fence)."
    )
    assert [name for name, _ in project.calls] == [
        "paint_fence",
        "plant_tree",
        "water_lawn",
        "unplant_tree",
        "unpaint_fence",
    ]
    assert project.calls[-2] == ("unplant_tree", {"order": 3, "hole": "h3"})  # $result.hole
    with guard.open("u") as run:  # the run has ended: a call the loop makes now stops it
        late = run.step("c4", "count_apples", {"order": 3})
        assert late.action is StepAction.STOP
    assert len(project.calls) == 5


def test_a_failure_of_the_loop_itself_is_rolled_back(garden: tuple[Project, Agent]) -> None:
    project, agent = garden
    guard = Guard(agent, framework="my-loop")
    with guard.open("u") as run:
        run.begin("paint the fence")
    _approved(guard, project, "c1", "paint_fence", 4)
    with guard.open("u") as run:
        reply = run.fail(ConnectionError("the model's provider is gone"))
    assert reply.text == (
        "This run stopped: my-loop failed (ConnectionError). "
        "Undone, latest first: paint_fence (by unpaint_fence)."
    )
    assert [name for name, _ in project.calls] == ["paint_fence", "unpaint_fence"]


def test_a_new_turn_waits_for_the_question_and_for_a_run_left_running(
    garden: tuple[Project, Agent],
) -> None:
    project, agent = garden
    guard = Guard(agent, framework="my-loop")
    with guard.open("u") as run:
        run.begin("paint the fence")
        asked = run.step("c1", "paint_fence", {"order": 5})
        with pytest.raises(QuestionPending):
            run.begin("plant a tree")
    guard.confirm("u", "approve", question=asked.waiting)
    with guard.open("u") as run, pytest.raises(RunStateError, match="left mid-way"):
        run.begin("plant a tree")  # approved, not sent yet: the loop takes it up first
    with pytest.raises(RunStateError, match="left mid-way"):
        agent.chat("plant a tree for order 5", user="u")  # stalwart's own turn, the same
    assert project.calls == []


@pytest.mark.parametrize("tool", ["plant_tree", "paint_fence"])
def test_a_write_left_in_flight_is_resolved_when_the_session_is_opened_again(
    garden: tuple[Project, Agent], tool: str
) -> None:
    project, agent = garden
    guard = Guard(agent, framework="my-loop")
    with guard.open("u") as run:
        run.begin("the one write")
        asked = run.step("c1", tool, {"order": 6})
    guard.confirm("u", "approve", question=asked.waiting)

    def crash(args: Any, key: str | None) -> Any:
        raise Crash

    with pytest.raises(Crash), guard.open("u") as run:
        run.send(run.step("c1", tool, {"order": 6}), crash)
    key = idempotency_key(session_identity(agent.store, "u"), "1.1", tool, {"order": 6})
    assert [(c.tool, c.status, c.key, c.tries) for c in agent.record("u")] == [
        (tool, "in_flight", key, 1)
    ]
    with guard.open("u") as run:
        step = run.step("c1", tool, {"order": 6})
        if tool == "plant_tree":  # retry-safe: sent again by the loop, under its key
            assert step.action is StepAction.SEND and step.key == key
            sent = _send(project, run, "c1", tool, 6)
            assert (sent.action, sent.key) == (StepAction.REPLAY, key)
            assert [(c.status, c.tries) for c in agent.record("u")] == [("ran", 2)]
        else:  # not retry-safe: never sent again; a person says whether it took effect
            assert step.action is StepAction.WAIT and step.waiting is not None
            assert step.waiting.text == texts.outcome_question(tool, stopped=True)
            assert project.calls == []


def test_the_loops_checkpoint_is_kept_beside_the_run_for_any_process(
    garden: tuple[Project, Agent],
) -> None:
    project, agent = garden
    guard = Guard(agent, framework="my-loop")
    with guard.open("u") as run:
        run.begin("paint the fence", kept={"messages": ["paint the fence"]})
        assert run.kept == {"messages": ["paint the fence"]}
        run.step("c1", "paint_fence", {"order": 7})
        run.keep({"messages": ["paint the fence", "call c1"], "deferred": ["c1"]})
    with Agent.from_file(project.yaml, clock=FakeClock()) as elsewhere:
        assert Guard(elsewhere, framework="my-loop").kept("u") == {
            "deferred": ["c1"],
            "messages": ["paint the fence", "call c1"],
        }


def test_a_guarded_run_is_used_on_the_thread_that_opened_it(
    garden: tuple[Project, Agent],
) -> None:
    _, agent = garden
    guard = Guard(agent, framework="my-loop")
    refused: list[BaseException] = []
    with guard.open("u") as run:
        run.begin("paint the fence")

        def elsewhere() -> None:
            try:
                run.step("c1", "paint_fence", {"order": 8})
            except RunStateError as error:
                refused.append(error)

        thread = threading.Thread(target=elsewhere)
        thread.start()
        thread.join()
    assert [str(error) for error in refused] == [texts.GUARDED_RUN_THREAD]
    assert agent.record("u") == []


def test_a_framework_tool_agent_yaml_does_not_declare_is_a_confirmed_write_linted(
    garden: tuple[Project, Agent],
) -> None:
    _, agent = garden
    stamp = FrameworkTool(
        "stamp_form", "Stamp a form.", {"properties": {"order": {}}, "required": ["order"]}
    )
    guard = Guard(agent, framework="my-loop", tools=[stamp, FrameworkTool("paint_fence")])
    assert guard.undeclared == ("stamp_form",)  # paint_fence keeps agent.yaml's facts
    assert guard.is_write("stamp_form") and guard.spec("paint_fence") == agent.tools["paint_fence"]
    assert str(guard.lints[-1]) == "stamp_form: undeclared_tool: " + texts.EXTRA_LINT_TEXTS[
        "undeclared_tool"
    ].format(framework="my-loop")
    with guard.open("u") as run:
        run.begin("stamp the form")
        asked = run.step("c1", "stamp_form", {"order": 9})
    assert asked.action is StepAction.WAIT and asked.waiting is not None
    assert asked.waiting.text.startswith("Run stamp_form(order=9)?")

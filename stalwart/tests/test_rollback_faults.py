"""Undos under real faults: an earlier try that may have taken effect is said, the tries
made before a process stopped count, and the rollback stops at an undo it cannot send.

Real runs of the service's tools (tests/service.py) on SQLite and PostgreSQL; a process
that stops is a `SimulatedCrash` the engine does not catch, and the next worker takes the
session up from the record. Time is a FakeClock.
"""

from __future__ import annotations

from typing import Any

import pytest
from conftest import ServiceProject, approve_all
from service import turn

from stalwart import Agent, FakeClock, QuestionPending, ToolUnavailable, UndoUnavailable, texts


def _tries(module: Any, tool: str) -> list[int]:
    return [tries for name, _, tries in module.CALLS if name == tool]


def test_an_undo_whose_first_try_got_no_answer_says_it_may_have_taken_effect(
    service_project: ServiceProject,
) -> None:
    _, agent, module = service_project
    # The refund is made and its answer lost; the next three tries fail plainly.
    module.PLAN["refund_card"] = ["lost", "error", "error", "error"]
    module.PLAN["stamp_form"] = ["error"]
    reply = approve_all(agent, turn(("charge_card", 1), ("stamp_form", 2)), "u")
    assert reply.state == "stuck"
    question = (
        "Undoing charge_card failed after 4 tries (RuntimeError: refund_card is down). "
        "An earlier try of refund_card got no answer, so it may have taken effect. "
        "1 step(s) still need undoing."
    )
    assert reply.waiting[0].text == question
    assert reply.text == f"This run stopped: stamp_form failed (RuntimeError). {question}"
    assert [name for name, *_ in module.DONE] == ["charge_card", "refund_card"]
    reply = agent.answer_current("u", "abandon")
    assert reply.text == (
        "This run stopped: stamp_form failed (RuntimeError). The rollback was abandoned; "
        "still to be undone by hand: charge_card. An earlier try of refund_card got no "
        "answer, so it may have taken effect."
    )
    undo = [c for c in agent.record("u") if c.kind == "undo"][0]
    assert (undo.status, undo.tries) == ("failed", 4)


def test_an_undo_in_flight_when_its_process_stopped_may_have_taken_effect(
    service_project: ServiceProject,
) -> None:
    project, first, module = service_project
    module.PLAN["stamp_form"] = ["error"]
    module.PLAN["refund_card"] = ["crash_after", "error", "error", "error"]
    first.chat(turn(("charge_card", 1), ("stamp_form", 2)), user="u")
    first.confirm_current("u", "approve")
    with pytest.raises(module.SimulatedCrash):
        first.confirm_current("u", "approve")  # the refund is made; its process stops
    second = project.agent(clock=FakeClock())
    reply = second.pending("u")
    assert reply is not None and reply.state == "stuck"
    assert "An earlier try of refund_card got no answer, so it may have taken effect." in (
        reply.waiting[0].text
    )
    assert reply.waiting[0].text.startswith("Undoing charge_card failed after 4 tries")


def test_after_a_stop_during_the_waits_the_undo_tries_made_before_count(
    service_project: ServiceProject, clock: FakeClock
) -> None:
    project, first, module = service_project  # first is on clock
    module.PLAN["stamp_form"] = ["error"]
    module.PLAN["free_slot"] = ["error", "error"]

    stop_after = {"waits": 2}

    def sleep_then_stop(seconds: float) -> None:
        FakeClock.sleep(clock, seconds)
        if len(clock.slept) >= stop_after["waits"]:
            raise module.SimulatedCrash("stopped during the wait")

    clock.sleep = sleep_then_stop  # type: ignore[method-assign]
    first.chat(turn(("book_slot", 1), ("stamp_form", 2)), user="u")
    first.confirm_current("u", "approve")
    with pytest.raises(module.SimulatedCrash):
        first.confirm_current("u", "approve")  # free_slot failed twice; stopped in the 2nd wait
    assert _tries(module, "free_slot") == [1, 2]

    module.PLAN["free_slot"] = ["error"] * 10
    later = FakeClock()
    second = project.agent(clock=later)
    reply = second.pending("u")
    assert reply is not None and reply.state == "stuck"
    # 4 tries in all, not 2 + a fresh round of 4; the wait cut short is waited again.
    assert _tries(module, "free_slot") == [1, 2, 3, 4]
    assert later.slept == [2.0, 4.0]
    assert reply.waiting[0].text == (
        "Undoing book_slot failed after 4 tries (RuntimeError: free_slot is down). "
        "1 step(s) still need undoing."
    )
    # A person's retry gives a new round of four.
    reply = second.answer_current("u", "retry")
    assert reply.waiting[0].text.startswith("Undoing book_slot failed after 8 tries")


def test_a_stop_with_the_last_try_in_flight_asks_at_once_and_sends_nothing_more(
    service_project: ServiceProject,
) -> None:
    project, first, module = service_project
    module.PLAN["stamp_form"] = ["error"]
    module.PLAN["free_slot"] = ["error", "error", "error", "crash"]
    first.chat(turn(("book_slot", 1), ("stamp_form", 2)), user="u")
    first.confirm_current("u", "approve")
    with pytest.raises(module.SimulatedCrash):
        first.confirm_current("u", "approve")
    second = project.agent(clock=FakeClock())
    reply = second.pending("u")
    assert reply is not None and reply.state == "stuck"
    assert _tries(module, "free_slot") == [1, 2, 3, 4]
    assert reply.waiting[0].text == (
        "Undoing book_slot failed after 4 tries (RuntimeError: free_slot is down). "
        "An earlier try of free_slot got no answer, so it may have taken effect. "
        "1 step(s) still need undoing."
    )


def test_the_failed_runs_reply_is_given_once_after_a_stop_mid_rollback(
    service_project: ServiceProject,
) -> None:
    project, first, module = service_project
    module.PLAN["stamp_form"] = ["error"]
    module.PLAN["free_slot"] = ["crash"]
    first.chat(turn(("charge_card", 1), ("book_slot", 2), ("stamp_form", 3)), user="u")
    first.confirm_current("u", "approve")
    first.confirm_current("u", "approve")
    with pytest.raises(module.SimulatedCrash):
        first.confirm_current("u", "approve")  # stamp_form fails; the rollback stops mid-way

    second = project.agent(clock=FakeClock())
    reply = second.chat(turn(("count_stock", 4)), user="u")
    failed = (
        "This run stopped: stamp_form failed (RuntimeError). Undone, latest first: "
        "book_slot (by free_slot), charge_card (by refund_card)."
    )
    new = 'Done: count_stock returned {"order":4,"stock":3}.'
    assert reply.earlier == (failed,)
    assert reply.text == f"{failed}\n\n{new}"
    assert reply.state == "done" and reply.run == "u#2"
    # Given once: the next turn's reply is its own.
    again = second.chat(turn(("count_stock", 5)), user="u")
    assert again.earlier == () and again.text.startswith("Done: count_stock")


def _moved_to_another_agent(text: str, tool: str) -> str:
    """agent.yaml with `tool` taken from the keeper and given to another agent, refunds."""
    assert f"{tool}, " in text and "\ntools:\n  - python" in text
    text = text.replace(f"{tool}, ", "")
    return text.replace(
        "\ntools:\n  - python", f"\n  refunds:\n    tools: [{tool}]\ntools:\n  - python"
    )


def test_a_worker_lacking_the_undo_leaves_the_rollback_for_one_that_has_it(
    service_project: ServiceProject,
) -> None:
    project, full, module = service_project
    # A deploy in progress: another worker's agent.yaml gives refund_card to another agent
    # of the project, so a worker that has it may come.
    deploying = project.folder / "agent-deploying.yaml"
    deploying.write_text(_moved_to_another_agent(project.yaml.read_text(), "refund_card"))
    partial = Agent.from_file(deploying, "keeper", clock=FakeClock())
    assert "refund_card" not in partial.tools

    module.PLAN["stamp_form"] = ["error"]
    full.chat(turn(("charge_card", 1), ("stamp_form", 2)), user="u")
    full.confirm_current("u", "approve")  # charged, recorded with its undo: refund_card
    [charge] = full.store.load("u").calls  # type: ignore[union-attr]
    assert charge.undo == {"tool": "refund_card", "args": None}

    reply = partial.confirm_current("u", "approve")  # stamp_form fails on the deploying worker
    assert reply.state == "rolling_back"
    assert reply.text == (
        "This run is being undone: undoing charge_card needs refund_card, which this "
        "worker's agent.yaml lacks, so it is left for a worker that has it."
    )
    assert [name for name, *_ in module.CALLS] == ["charge_card", "stamp_form"]
    with pytest.raises(UndoUnavailable, match="left for a worker that has it"):
        partial.chat(turn(("count_stock", 1)), user="u")

    taken_up = full.pending("u")  # a worker that has it takes the rollback up
    assert taken_up is not None and taken_up.state == "rolled_back"
    assert taken_up.text == (
        "This run stopped: stamp_form failed (RuntimeError). Undone, latest first: "
        "charge_card (by refund_card)."
    )
    assert [name for name, *_ in module.CALLS][-1] == "refund_card"
    partial.close()


def test_a_worker_lacking_the_tool_of_a_call_left_in_flight_leaves_the_run_for_one_that_has_it(
    service_project: ServiceProject,
) -> None:
    """A run its process left with a call in flight, taken up by a worker whose agent.yaml
    lacks the call's tool (a deploy in progress): the call is not decided there, the run is
    left running for a worker that has the tool, and that worker takes it up. Before,
    the resume raised KeyError at every touch of the session on the deploying worker."""
    project, full, module = service_project
    text = project.yaml.read_text()
    assert "stamp_form" in text
    deploying = project.folder / "agent-deploying.yaml"
    deploying.write_text(text.replace(", stamp_form", "").replace("stamp_form, ", ""))
    partial = Agent.from_file(deploying, clock=FakeClock())
    assert "stamp_form" not in partial.tools and "charge_card" in partial.tools

    module.PLAN["stamp_form"] = ["crash"]
    full.chat(turn(("charge_card", 1), ("stamp_form", 2)), user="u")
    full.confirm_current("u", "approve")
    with pytest.raises(module.SimulatedCrash):
        full.confirm_current("u", "approve")  # stamp_form is being sent; its process stops
    sends = [name for name, *_ in module.CALLS]

    left = texts.call_left_for_another_worker("stamp_form")
    assert left == (
        "This run stopped while stamp_form was being sent, and this worker's agent.yaml "
        "lacks stamp_form, so it is left for a worker that has it."
    )
    taken = partial.pending("u")
    assert taken is not None and (taken.state, taken.text) == ("running", left)
    with pytest.raises(ToolUnavailable) as unavailable:
        partial.chat(turn(("count_stock", 1)), user="u")
    assert (unavailable.value.code, str(unavailable.value)) == ("tool_unavailable", left)
    commits = partial.store.commits
    with pytest.raises(ToolUnavailable):
        partial.confirm_current("u", "approve")
    assert partial.store.commits == commits, "said once, not written again at every touch"
    assert [name for name, *_ in module.CALLS] == sends, "nothing sent by the deploying worker"
    [_, stamp] = full.store.load("u").calls  # type: ignore[union-attr]
    assert (stamp.tool, stamp.status) == ("stamp_form", "in_flight")

    # A worker that has the tool takes the run up: stamp_form was in flight and may have
    # taken effect, so a person is asked (it is not retry-safe).
    taken_up = project.agent(clock=FakeClock()).pending("u")
    assert taken_up is not None and taken_up.state == "waiting"
    assert taken_up.waiting[0].kind == "outcome"
    partial.close()


def test_the_rollback_uses_the_undo_recorded_with_the_write_not_todays(
    service_project: ServiceProject,
) -> None:
    project, first, module = service_project
    module.PLAN["stamp_form"] = ["error"]
    first.chat(turn(("charge_card", 1), ("stamp_form", 2)), user="u")
    first.confirm_current("u", "approve")
    # Meanwhile agent.yaml changes charge_card's undo; the charge ran under the old one.
    text = project.yaml.read_text()
    changed = project.folder / "agent-changed.yaml"
    changed.write_text(
        text.replace("rulebook:", "  - charge_card:\n      undo: free_slot\nrulebook:")
    )
    second = Agent.from_file(changed, clock=FakeClock())
    assert second.tools["charge_card"].undo is not None
    assert second.tools["charge_card"].undo.tool == "free_slot"
    reply = second.confirm_current("u", "approve")
    assert reply.text == (
        "This run stopped: stamp_form failed (RuntimeError). Undone, latest first: "
        "charge_card (by refund_card)."
    )
    second.close()


def _misspelt(text: str) -> str:
    """agent.yaml where charge_card's undo is misspelt: refund_cards, which no tool is."""
    return text.replace("rulebook:", "  - charge_card:\n      undo: refund_cards\nrulebook:")


MISSING_QUESTION = (
    "Undoing charge_card needs refund_cards, and no agent of this project has a tool named "
    "refund_cards (did you mean refund_card?). The rollback stopped there, before the writes "
    "below it; once agent.yaml names the undo's tool and the process is restarted, answer "
    "retry. 2 step(s) still need undoing."
)


def test_an_undo_no_agent_has_stops_the_rollback_and_asks_and_retry_works_once_fixed(
    service_project: ServiceProject,
) -> None:
    """Issue 28: a misspelt undo (refund_cards) was "left for a worker that has it", nobody
    was asked, and every later turn failed with UndoUnavailable. Now the rollback stops at
    it as at an undo that fails, and asks; fixed and restarted, `retry` undoes it."""
    project, _, module = service_project
    original = project.yaml.read_text()
    project.yaml.write_text(_misspelt(original))
    typo = project.agent(clock=FakeClock())
    assert typo.tools["charge_card"].undo is not None
    assert typo.tools["charge_card"].undo.tool == "refund_cards"

    module.PLAN["stamp_form"] = ["error"]
    reply = approve_all(typo, turn(("book_slot", 1), ("charge_card", 2), ("stamp_form", 3)), "u")
    assert reply.state == "stuck"
    [question] = reply.waiting
    assert (question.kind, question.tool, question.answers) == (
        "undo",
        "refund_cards",
        texts.UNDO_ANSWERS,
    )
    assert question.text == MISSING_QUESTION
    assert reply.text == f"This run stopped: stamp_form failed (RuntimeError). {MISSING_QUESTION}"
    # Stopped there: book_slot, below it, is not undone out of order; nothing was sent.
    assert [name for name, *_ in module.CALLS] == ["book_slot", "charge_card", "stamp_form"]
    with pytest.raises(QuestionPending):
        typo.chat(turn(("count_stock", 1)), user="u")
    # Retried before the fix: asked again, nothing sent.
    again = typo.answer("u", "retry")
    assert (again.state, again.waiting[0].text) == ("stuck", MISSING_QUESTION)
    assert [name for name, *_ in module.CALLS] == ["book_slot", "charge_card", "stamp_form"]

    # agent.yaml fixed, the process restarted (a new Agent from the file): retry undoes.
    project.yaml.write_text(original)
    fixed = project.agent(clock=FakeClock())
    done = fixed.answer("u", "retry", question=again.waiting[0])
    assert done.state == "rolled_back"
    assert done.text == (
        "This run stopped: stamp_form failed (RuntimeError). Undone, latest first: "
        "charge_card (by refund_card), book_slot (by free_slot)."
    )
    assert [name for name, *_ in module.CALLS][3:] == ["refund_card", "free_slot"]
    undos = [(c.tool, c.status) for c in fixed.record("u") if c.kind == "undo"]
    assert undos == [("refund_card", "ran"), ("free_slot", "ran")]


def test_an_undo_no_agent_has_can_be_done_by_hand_and_the_rollback_goes_on(
    service_project: ServiceProject,
) -> None:
    project, _, module = service_project
    project.yaml.write_text(_misspelt(project.yaml.read_text()))
    typo = project.agent(clock=FakeClock())
    module.PLAN["stamp_form"] = ["error"]
    stuck = approve_all(typo, turn(("book_slot", 1), ("charge_card", 2), ("stamp_form", 3)), "u")
    assert stuck.state == "stuck"
    reply = typo.answer("u", "done by hand", question=stuck.waiting[0])
    assert reply.state == "rolled_back"
    assert reply.text == (
        "This run stopped: stamp_form failed (RuntimeError). Undone, latest first: "
        "charge_card (by hand), book_slot (by free_slot)."
    )
    assert [name for name, *_ in module.CALLS][3:] == ["free_slot"]


def test_a_rollback_left_for_a_worker_is_asked_once_no_agent_of_the_project_has_the_undo(
    service_project: ServiceProject,
) -> None:
    """Left rolling back while another agent of the project had refund_card; then a worker
    whose agent.yaml has it in no agent touches the session: a person is asked (before:
    left again, UndoUnavailable at every turn). A worker that has it then retries."""
    project, full, module = service_project
    text = project.yaml.read_text()
    moved = project.folder / "agent-moved.yaml"
    moved.write_text(_moved_to_another_agent(text, "refund_card"))
    nowhere = project.folder / "agent-nowhere.yaml"
    nowhere.write_text(text.replace("refund_card, ", ""))
    partial = Agent.from_file(moved, "keeper", clock=FakeClock())
    lacking = Agent.from_file(nowhere, clock=FakeClock())
    project.agents.extend([partial, lacking])

    module.PLAN["stamp_form"] = ["error"]
    full.chat(turn(("charge_card", 1), ("stamp_form", 2)), user="u")
    full.confirm("u", "approve")
    left = partial.confirm("u", "approve")
    assert left.state == "rolling_back" and "left for a worker that has it" in left.text

    asked = lacking.pending("u")
    assert asked is not None and asked.state == "stuck"
    assert asked.waiting[0].text == (
        "Undoing charge_card needs refund_card, and no agent of this project has a tool "
        "named refund_card. The rollback stopped there, before the writes below it; once "
        "agent.yaml names the undo's tool and the process is restarted, answer retry. "
        "1 step(s) still need undoing."
    )
    with pytest.raises(QuestionPending):
        lacking.chat(turn(("count_stock", 1)), user="u")
    reply = full.answer("u", "retry", question=asked.waiting[0])
    assert reply.state == "rolled_back"
    assert reply.text == (
        "This run stopped: stamp_form failed (RuntimeError). Undone, latest first: "
        "charge_card (by refund_card)."
    )
    assert [name for name, *_ in module.CALLS] == ["charge_card", "stamp_form", "refund_card"]

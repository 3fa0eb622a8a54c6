"""Keys, retries, outcomes nobody knows, undos that fail, and the answers a person gives.

Every test runs real runs of the service's tools (tests/service.py) on a real record
(the `shop` tests on SQLite and on PostgreSQL); failures are scripted per send, and
time is a FakeClock.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import Project, ServiceProject, approve_all, session_identity
from service import turn, write_service_project

from stalwart import (
    Agent,
    AnswerError,
    FakeClock,
    QuestionPending,
    RewindRefused,
    current_call,
)
from stalwart._engine.keys import idempotency_key
from stalwart.backoff import Backoff, no_jitter
from stalwart.record import Store

pytestmark = pytest.mark.unit

Shop = tuple[Project, Agent, Any]


@pytest.fixture
def shop(tmp_path: Path, clock: FakeClock, store: Store) -> Iterator[Shop]:
    """The service's agent on a fresh record, once per backend (SQLite, PostgreSQL)."""
    project = write_service_project(tmp_path)
    agent = project.agent(clock=clock, store=store)
    yield project, agent, project.module
    for opened in project.agents:
        opened.close()


def _sends(module: Any, tool: str) -> list[tuple[str, int]]:
    return [(key, tries) for name, key, tries in module.CALLS if name == tool]


# --- keys ---


def test_a_tool_reads_its_key_from_current_call_and_from_its_parameter(shop: Shop) -> None:
    _, agent, module = shop
    assert current_call() is None
    reply = approve_all(agent, turn(("charge_card", 4)), "u")
    assert reply.state == "done"
    key = idempotency_key(session_identity(agent.store, "u"), "1.1", "charge_card", {"order": 4})
    assert [key] == module.KEY_PARAMS
    assert _sends(module, "charge_card") == [(key, 1)]
    assert current_call() is None, "the current call is reset after the send"


# --- retries ---


def test_a_read_in_doubt_is_tried_again_under_the_same_key_at_most_twice_more(
    shop: Shop,
) -> None:
    _, agent, module = shop
    module.PLAN["count_stock"] = ["timeout", "timeout"]
    reply = agent.chat(turn(("count_stock", 1)), user="u")
    assert reply.state == "done"
    sends = _sends(module, "count_stock")
    key = sends[0][0]
    assert sends == [(key, 1), (key, 2), (key, 3)]
    [call] = agent.record("u")
    assert (call.status, call.tries) == ("ran", 3)


def test_a_read_still_in_doubt_after_three_tries_fails_the_run(shop: Shop) -> None:
    _, agent, module = shop
    module.PLAN["count_stock"] = ["timeout"] * 3
    reply = agent.chat(turn(("count_stock", 1)), user="u")
    assert reply.state == "rolled_back"
    assert reply.text == (
        "This run stopped: count_stock failed (TimeoutError). "
        "Nothing had been written, so nothing needed undoing."
    )
    assert [t for _, t in _sends(module, "count_stock")] == [1, 2, 3]


@pytest.mark.parametrize("behaviour", ["refused", "error"])
def test_a_failure_not_in_doubt_is_never_tried_again_and_the_run_is_undone(
    shop: Shop, behaviour: str
) -> None:
    _, agent, module = shop
    module.PLAN["book_slot"] = [behaviour]
    reply = approve_all(agent, turn(("charge_card", 1), ("book_slot", 2)), "u")
    assert len(_sends(module, "book_slot")) == 1
    error = "ConnectionRefusedError" if behaviour == "refused" else "RuntimeError"
    assert reply.text == (
        f"This run stopped: book_slot failed ({error}). "
        "Undone, latest first: charge_card (by refund_card)."
    )


def test_a_retry_safe_write_in_doubt_is_sent_again_and_the_service_does_it_once(
    shop: Shop,
) -> None:
    _, agent, module = shop
    module.PLAN["book_slot"] = ["lost"]
    reply = approve_all(agent, turn(("book_slot", 7)), "u")
    assert reply.text == 'Done: book_slot returned {"order":7,"slot":"s-7"}.'
    sends = _sends(module, "book_slot")
    key = sends[0][0]
    assert sends == [(key, 1), (key, 2)] and list(module.APPLIED) == [key]
    [call] = agent.record("u")
    assert (call.status, call.tries, call.error) == (
        "ran",
        2,
        "TimeoutError: book_slot: the answer was lost",
    )


# --- an outcome nobody knows ---


def test_a_write_in_doubt_that_is_not_retry_safe_asks_a_person_and_is_sent_once(
    shop: Shop,
) -> None:
    _, agent, module = shop
    module.PLAN["charge_card"] = ["lost"]
    reply = approve_all(agent, turn(("charge_card", 1), ("book_slot", 2)), "u")
    assert reply.state == "waiting"
    [waiting] = reply.waiting
    assert waiting.kind == "outcome"
    assert waiting.text == "Did charge_card take effect? The call was sent and no answer came back."
    assert reply.text == waiting.text
    assert waiting.answers == ("happened", "did not happen")
    assert len(_sends(module, "charge_card")) == 1
    assert [(c.tool, c.status) for c in agent.record("u")] == [("charge_card", "in_doubt")]
    with pytest.raises(AnswerError, match="not a confirmation"):
        agent.confirm_current("u", "approve")
    with pytest.raises(AnswerError, match="the answers are: happened, did not happen"):
        agent.answer_current("u", "maybe")
    with pytest.raises(QuestionPending, match="Did charge_card take effect"):
        agent.chat(turn(("count_stock", 3)), user="u")
    assert agent.pending("u") == reply


def test_happened_goes_on_and_a_later_failure_cannot_bind_its_unseen_result(
    shop: Shop,
) -> None:
    _, agent, module = shop
    module.PLAN["charge_card"] = ["lost"]
    module.PLAN["stamp_form"] = ["error"]
    reply = approve_all(agent, turn(("book_slot", 1), ("charge_card", 2), ("stamp_form", 3)), "u")
    assert reply.waiting[0].kind == "outcome"
    reply = agent.answer_current("u", "happened")
    assert reply.waiting[0].kind == "confirm" and reply.waiting[0].tool == "stamp_form"
    reply = agent.confirm_current("u", "approve")
    # The charge's undo cannot be bound: the rollback stops there, before book_slot.
    assert reply.state == "stuck"
    assert reply.waiting[0].text == (
        "Undoing charge_card was not sent: refund_card: charge comes from the step's "
        "result, which nobody saw. The rollback stopped there, before the writes below "
        "it. 2 step(s) still need undoing."
    )
    assert _sends(module, "free_slot") == []
    reply = agent.answer_current("u", "done by hand")
    assert reply.state == "rolled_back"
    assert reply.text == (
        "This run stopped: stamp_form failed (RuntimeError). Undone, latest first: "
        "charge_card (by hand), book_slot (by free_slot)."
    )
    statuses = [(c.tool, c.kind, c.status) for c in agent.record("u")]
    assert ("charge_card", "write", "happened") in statuses
    assert ("refund_card", "undo", "by_hand") in statuses
    assert _sends(module, "refund_card") == []


def test_happened_in_a_run_that_ends_well_says_so(shop: Shop) -> None:
    _, agent, module = shop
    module.PLAN["charge_card"] = ["lost"]
    approve_all(agent, turn(("charge_card", 2)), "u")
    reply = agent.answer_current("u", "happened")
    assert reply.text == "Done: charge_card took effect, a person said (no answer came back)."


def test_did_not_happen_fails_the_run_and_leaves_that_write_alone(shop: Shop) -> None:
    _, agent, module = shop
    module.PLAN["charge_card"] = ["timeout"]
    approve_all(agent, turn(("book_slot", 1), ("charge_card", 2), ("stamp_form", 3)), "u")
    reply = agent.answer_current("u", "did not happen")
    assert reply.state == "rolled_back"
    assert reply.text == (
        "This run stopped: you said charge_card did not take effect. "
        "Undone, latest first: book_slot (by free_slot)."
    )
    assert _sends(module, "refund_card") == [] and _sends(module, "stamp_form") == []
    charge = [c for c in agent.record("u") if c.tool == "charge_card"][0]
    assert (charge.status, charge.undone_by) == ("did_not_happen", None)


def test_a_retry_safe_write_still_in_doubt_after_its_retries_is_asked_about(shop: Shop) -> None:
    _, agent, module = shop
    module.PLAN["book_slot"] = ["lost", "timeout", "timeout"]
    reply = approve_all(agent, turn(("book_slot", 1)), "u")
    assert [t for _, t in _sends(module, "book_slot")] == [1, 2, 3]
    assert reply.waiting[0].kind == "outcome"
    assert reply.waiting[0].text == (
        "Did book_slot take effect? The call was sent and no answer came back."
    )
    reply = agent.answer_current("u", "happened")
    assert reply.state == "done"


# --- an undo that fails, and the person's answers ---


def _stuck(agent: Agent, module: Any) -> Any:
    module.PLAN["free_slot"] = ["error"] * 4
    module.PLAN["stamp_form"] = ["error"]
    return approve_all(agent, turn(("charge_card", 1), ("book_slot", 2), ("stamp_form", 3)), "u")


def test_an_undo_failing_every_try_asks_a_person_with_the_chapters_question(
    shop: Shop, clock: FakeClock
) -> None:
    _, agent, module = shop
    reply = _stuck(agent, module)
    assert reply.state == "stuck"
    [waiting] = reply.waiting
    assert waiting.kind == "undo"
    assert waiting.text == (
        "Undoing book_slot failed after 4 tries (RuntimeError: free_slot is down). "
        "2 step(s) still need undoing."
    )
    assert waiting.answers == ("retry", "done by hand", "abandon")
    assert reply.text == "This run stopped: stamp_form failed (RuntimeError). " + waiting.text
    assert clock.slept == [1.0, 2.0, 4.0]
    sends = _sends(module, "free_slot")
    key = sends[0][0]
    assert sends == [(key, 1), (key, 2), (key, 3), (key, 4)]
    with pytest.raises(QuestionPending):
        agent.chat(turn(("count_stock", 9)), user="u")
    with pytest.raises(RewindRefused):
        agent.rewind("u")


def test_retry_sends_the_undo_again_under_its_key_on_the_same_schedule(
    shop: Shop, clock: FakeClock
) -> None:
    _, agent, module = shop
    _stuck(agent, module)
    module.PLAN["free_slot"] = ["error"] * 4
    reply = agent.answer_current("u", "retry")
    assert reply.state == "stuck"
    assert reply.waiting[0].text.startswith("Undoing book_slot failed after 8 tries")
    assert clock.slept == [1.0, 2.0, 4.0] * 2
    reply = agent.answer_current("u", "retry")
    assert reply.state == "rolled_back"
    assert reply.text == (
        "This run stopped: stamp_form failed (RuntimeError). Undone, latest first: "
        "book_slot (by free_slot), charge_card (by refund_card)."
    )
    keys = {key for key, _ in _sends(module, "free_slot")}
    assert len(keys) == 1 and [t for _, t in _sends(module, "free_slot")] == list(range(1, 10))
    assert [m.role for m in agent.memory("u")] == ["user", "assistant"]


def test_done_by_hand_goes_on_with_the_next_write(shop: Shop) -> None:
    _, agent, module = shop
    _stuck(agent, module)
    reply = agent.answer_current("u", "done by hand")
    assert reply.state == "rolled_back"
    assert reply.text == (
        "This run stopped: stamp_form failed (RuntimeError). Undone, latest first: "
        "book_slot (by hand), charge_card (by refund_card)."
    )
    assert len(_sends(module, "free_slot")) == 4
    undo = [c for c in agent.record("u") if c.tool == "free_slot"][0]
    assert (undo.status, undo.tries) == ("by_hand", 4)
    book = [c for c in agent.record("u") if c.tool == "book_slot"][0]
    assert book.undone_by == undo.call_id


def test_abandon_stops_the_rollback_lists_what_remains_and_rewinds_memory(shop: Shop) -> None:
    _, agent, module = shop
    _stuck(agent, module)
    reply = agent.answer_current("u", "abandon")
    assert reply.state == "abandoned"
    assert reply.waiting == []
    assert reply.text == (
        "This run stopped: stamp_form failed (RuntimeError). The rollback was abandoned; "
        "still to be undone by hand: book_slot, charge_card."
    )
    assert _sends(module, "refund_card") == []
    # The person took the remaining undos on: the run is over, its memory rewound to one
    # summary that still says what needs undoing, and a new turn may start.
    assert [(m.role, m.content) for m in agent.memory("u")][1:] == [("assistant", reply.text)]
    assert agent.rewind("u") is False
    assert agent.chat(turn(("count_stock", 5)), user="u").state == "done"


def test_the_undo_schedule_is_configurable(tmp_path: Path) -> None:
    project = write_service_project(tmp_path)
    clock = FakeClock()
    agent = project.agent(clock=clock, undo_backoff=Backoff(base=0.5, factor=3.0, jitter=no_jitter))
    assert project.module is not None
    _stuck(agent, project.module)
    assert clock.slept == [0.5, 1.5, 4.5]
    agent.close()


# --- the same key across a retry, a resume and a re-sent undo ---


def test_one_key_across_a_retry_a_crash_and_resume_and_a_resent_undo(
    service_project: ServiceProject,
) -> None:
    project, first, module = service_project
    module.PLAN["book_slot"] = ["lost", "crash"]
    first.chat(turn(("book_slot", 1), ("stamp_form", 2)), user="u")
    with pytest.raises(module.SimulatedCrash):
        first.confirm_current("u", "approve")  # try 1: lost, retried; try 2: the process "stops"

    second = project.agent(clock=FakeClock())  # another worker, the same record
    reply = second.pending("u")
    assert reply is not None and reply.waiting[0].tool == "stamp_form"
    key = idempotency_key(session_identity(second.store, "u"), "1.1", "book_slot", {"order": 1})
    assert _sends(module, "book_slot") == [(key, 1), (key, 2), (key, 3)]

    module.PLAN["stamp_form"] = ["error"]
    module.PLAN["free_slot"] = ["crash_after"]
    with pytest.raises(module.SimulatedCrash):
        second.confirm_current("u", "approve")  # the undo ran, and its process stopped after
    third = project.agent(clock=FakeClock())
    reply = third.resume("u")
    assert reply is not None and reply.state == "rolled_back"
    undo_sends = _sends(module, "free_slot")
    undo_key = undo_sends[0][0]
    assert undo_sends == [(undo_key, 1), (undo_key, 2)] and undo_key != key
    assert list(module.APPLIED).count(undo_key) == 1
    undo = [c for c in third.record("u") if c.kind == "undo"][0]
    assert (undo.status, undo.tries, undo.key) == ("ran", 2, undo_key)


def test_an_answer_meant_for_a_question_that_moved_on_is_refused(
    service_project: ServiceProject,
) -> None:
    project, first, _ = service_project
    second = project.agent(clock=FakeClock())
    shown = first.chat(turn(("book_slot", 1), ("charge_card", 2)), user="u").waiting[0]
    assert second.confirm("u", "approve", question=shown).waiting[0].tool == "charge_card"
    before = first.store.load("u")
    with pytest.raises(AnswerError, match="no longer waits; nothing was changed"):
        first.confirm("u", "approve", question=shown)
    assert first.store.load("u") == before

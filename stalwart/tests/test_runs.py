"""Runs: the state table, rollback, undo bindings, the check, stuck undos, durable commits."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest
from conftest import Project, approve_all, session_identity, write_project

from stalwart import Agent, FakeClock, QuestionPending, RewindRefused, RunStateError
from stalwart._engine.keys import idempotency_key, undo_key
from stalwart.policy.rulebook import PastCall
from stalwart.record import Store
from stalwart.states import ENDED, TRANSITIONS, Event, State, transition

pytestmark = pytest.mark.unit

Garden = tuple[Project, Agent]


# --- the table ---


def test_the_table_allows_exactly_its_transitions() -> None:
    for state in State:
        for event in Event:
            if (state, event) in TRANSITIONS:
                assert transition(state.value, event) == TRANSITIONS[(state, event)]
            else:
                with pytest.raises(RunStateError, match=f"cannot take {event.value!r}"):
                    transition(state.value, event)


def test_ended_states_lead_nowhere_but_to_an_operators_undo_and_every_state_is_reachable() -> None:
    assert {key[1] for key in TRANSITIONS if key[0] in ENDED} == {Event.OPERATOR_UNDO}
    reached, frontier = {State.NEW}, [State.NEW]
    while frontier:
        state = frontier.pop()
        for (source, _), target in TRANSITIONS.items():
            if source == state and target not in reached:
                reached.add(target)
                frontier.append(target)
    assert reached == set(State)


# --- undo bindings ---


def test_explicit_bindings_from_agent_yaml_bind_the_undo(tmp_path: Path) -> None:
    facts = (
        "  - paint_fence:\n"
        "      undo: {tool: unpaint_fence, args: {order: $args.order, colour: $result.colour}}\n"
    )
    project = write_project(tmp_path, facts=facts)
    agent = project.agent(clock=FakeClock())
    project.fail.add("water_lawn")
    approve_all(agent, "paint the fence for order 2, then water the lawn for order 2", "u")
    assert project.calls[-1] == ("unpaint_fence", {"order": 2, "colour": "green"})
    undo = agent.record("u")[-1]
    assert undo.kind == "undo"
    assert undo.allowed == (
        "unpaint_fence undoes paint_fence (step 1): bound order <- $args.order, "
        "colour <- $result.colour; allowed by the rulebook"
    )
    agent.close()


def test_an_undo_that_cannot_be_bound_stops_the_rollback_and_asks(tmp_path: Path) -> None:
    # The rollback does not go on past it, out of order: the writes below wait.
    facts = "  - paint_fence:\n      undo: {tool: unpaint_fence, args: {colour: $result.shade}}\n"
    project = write_project(tmp_path, facts=facts)
    agent = project.agent(clock=FakeClock())
    project.fail.add("water_lawn")
    reply = approve_all(
        agent,
        "plant a tree for order 1, then paint the fence for order 2, "
        "then water the lawn for order 3",
        "u",
    )
    assert [name for name, _ in project.calls] == ["plant_tree", "paint_fence", "water_lawn"]
    question = (
        "Undoing paint_fence was not sent: unpaint_fence: nothing of the step binds colour. "
        "The rollback stopped there, before the writes below it. 2 step(s) still need undoing."
    )
    assert reply.state == "stuck"
    assert reply.waiting[0].kind == "undo" and reply.waiting[0].text == question
    assert reply.text == f"This run stopped: water_lawn failed (RuntimeError). {question}"
    refused = [c for c in agent.record("u") if c.kind == "undo" and c.status == "refused"]
    assert [(c.tool, c.undoes) for c in refused] == [("unpaint_fence", "u#1:2")]
    with pytest.raises(RewindRefused):
        agent.rewind("u")
    reply = agent.answer_current("u", "done by hand")
    assert [name for name, _ in project.calls][-1] == "unplant_tree"
    assert reply.text == (
        "This run stopped: water_lawn failed (RuntimeError). Undone, latest first: "
        "paint_fence (by hand), plant_tree (by unplant_tree)."
    )
    agent.close()


def test_an_undo_refused_then_abandoned_lists_what_remains(tmp_path: Path) -> None:
    facts = "  - paint_fence:\n      undo: {tool: unpaint_fence, args: {colour: $result.shade}}\n"
    project = write_project(tmp_path, facts=facts)
    agent = project.agent(clock=FakeClock())
    project.fail.add("water_lawn")
    approve_all(
        agent,
        "plant a tree for order 1, then paint the fence for order 2, "
        "then water the lawn for order 3",
        "u",
    )
    reply = agent.answer_current("u", "retry")  # bound again: still cannot be
    assert reply.state == "stuck" and "was not sent" in reply.waiting[0].text
    reply = agent.answer_current("u", "abandon")
    assert [name for name, _ in project.calls] == ["plant_tree", "paint_fence", "water_lawn"]
    assert reply.text == (
        "This run stopped: water_lawn failed (RuntimeError). Not undone, and still to be "
        "undone by hand: paint_fence (unpaint_fence: nothing of the step binds colour). "
        "The rollback was abandoned; still to be undone by hand: plant_tree."
    )
    agent.close()


# --- the check ---


def test_a_refused_first_write_ends_the_run_with_nothing_to_undo(tmp_path: Path) -> None:
    project = write_project(tmp_path, rulebook="cap paint_fence.order <= 5\n")
    agent = project.agent(clock=FakeClock())
    reply = agent.chat("count the apples for order 9, then paint the fence for order 9", user="u")
    why = agent.config.rulebook.refusal(
        "paint_fence", {"order": 9}, [PastCall("count_apples", {"order": 9}, True, False)]
    )
    assert why == "its order is 9, and line 1 of policy.co allows at most 5"
    assert reply.waiting == []
    assert reply.text == (
        "This run stopped: the check refused paint_fence, because its order is 9, and line 1 "
        "of policy.co allows at most 5. Nothing had been written, so nothing needed undoing."
    )
    assert project.calls == [("count_apples", {"order": 9})]
    assert [(c.tool, c.status, c.error) for c in agent.record("u")][-1] == (
        "paint_fence",
        "refused",
        f"paint_fence is refused: {why}.",
    )
    agent.close()


def test_a_refusal_after_a_write_rolls_the_run_back(tmp_path: Path) -> None:
    project = write_project(tmp_path, rulebook="cap paint_fence.order <= 5\n")
    agent = project.agent(clock=FakeClock())
    reply = approve_all(agent, "plant a tree for order 1, then paint the fence for order 9", "u")
    assert [name for name, _ in project.calls] == ["plant_tree", "unplant_tree"]
    assert reply.text == (
        "This run stopped: the check refused paint_fence, because its order is 9, and line 1 "
        "of policy.co allows at most 5. Undone, latest first: plant_tree (by unplant_tree)."
    )
    agent.close()


def test_an_undo_the_rulebook_refuses_is_not_sent_and_stops_the_rollback(
    tmp_path: Path,
) -> None:
    project = write_project(tmp_path, rulebook="cap unpaint_fence.order <= 5\n")
    agent = project.agent(clock=FakeClock())
    project.fail.add("water_lawn")
    reply = approve_all(agent, "paint the fence for order 7, then water the lawn for order 7", "u")
    assert [name for name, _ in project.calls] == ["paint_fence", "water_lawn"]
    assert reply.state == "stuck"
    assert reply.waiting[0].text == (
        "Undoing paint_fence was not sent: the check refused unpaint_fence, because its "
        "order is 7, and line 1 of policy.co allows at most 5. The rollback stopped there, "
        "before the writes below it. 1 step(s) still need undoing."
    )
    agent.close()


# --- an undo that fails on every try ---


def test_an_undo_failing_every_try_leaves_the_run_stuck_and_the_rewind_refused(
    garden: Garden, clock: FakeClock
) -> None:
    project, agent = garden
    project.fail.update({"water_lawn", "unplant_tree"})
    reply = approve_all(
        agent,
        "paint the fence for order 1, then plant a tree for order 2, "
        "then water the lawn for order 3",
        "u",
    )
    assert [name for name, _ in project.calls] == [
        "paint_fence",
        "plant_tree",
        "water_lawn",
        *["unplant_tree"] * 4,
    ]
    assert clock.slept == [1.0, 2.0, 4.0]
    assert reply.state == "stuck"
    assert reply.text == (
        "This run stopped: water_lawn failed (RuntimeError). Undoing plant_tree failed "
        "after 4 tries (RuntimeError: unplant_tree is out of order). "
        "2 step(s) still need undoing."
    )
    memory_before = agent.memory("u")
    with pytest.raises(RewindRefused, match="2 step\\(s\\) still need undoing") as refused:
        agent.rewind("u")
    assert refused.value.code == "rewind_with_pending_compensation"
    assert agent.memory("u") == memory_before


# --- the record before the send, keys, and the commits a step costs ---

SPY_TOOLS = '''
from stalwart import tool
from stalwart.record.sqlite import SQLiteStore

RECORD = ""
SEEN = []


def _recorded(session):
    store = SQLiteStore(RECORD)
    try:
        return [(c.tool, c.status, c.allowed) for c in store.load(session).calls]
    finally:
        store.close()


@tool(writes=True, undo="unbook_room")
def book_room(order: int, idempotency_key: str) -> dict:
    """Book a room for an order."""
    SEEN.append(("book_room", idempotency_key, _recorded("u")))
    return {"order": order, "room": 12}


@tool(writes=True)
def unbook_room(room: int, idempotency_key: str) -> dict:
    """Give a booked room back."""
    SEEN.append(("unbook_room", idempotency_key, _recorded("u")))
    return {"room": room}


@tool(writes=True)
def break_vase(order: int) -> dict:
    """Break a vase for an order."""
    raise RuntimeError("it slipped")
'''


def test_each_call_is_recorded_in_flight_before_it_is_sent_and_carries_its_key(
    tmp_path: Path,
) -> None:
    project = write_project(
        tmp_path, tools_source=SPY_TOOLS, tool_names=["book_room", "unbook_room", "break_vase"]
    )
    agent = project.agent(clock=FakeClock())
    assert project.module is not None
    vars(project.module)["RECORD"] = str(tmp_path / "record.sqlite")
    approve_all(agent, "book a room for order 5, then break a vase for order 5", "u")
    [(_, book_key, seen_at_book), (_, undo_key_got, seen_at_undo)] = project.module.SEEN
    assert seen_at_book == [("book_room", "in_flight", "book_room: allowed by the rulebook")]
    write_key = idempotency_key(
        session_identity(agent.store, "u"), "1.1", "book_room", {"order": 5}
    )
    assert book_key == write_key
    assert undo_key_got == undo_key(write_key, "unbook_room", {"room": 12})
    assert seen_at_undo[-1][:2] == ("unbook_room", "in_flight")
    assert seen_at_undo[-1][2].startswith("unbook_room undoes book_room (step 1): bound room")
    agent.close()


def test_a_write_step_costs_two_durable_commits(garden: Garden) -> None:
    _, agent = garden
    before = agent.store.commits
    reply = agent.chat(
        "paint the fence for order 1, then plant a tree for order 2, "
        "then ring the bell for order 3",
        user="u",
    )
    assert agent.store.commits - before == 1  # the run and its first question
    while reply.waiting:
        before = agent.store.commits
        reply = agent.confirm_current("u", "approve")
        assert agent.store.commits - before == 2  # in flight; outcome with what comes next
    assert reply.state == "done"


def test_a_whole_run_goes_the_same_on_every_backend(tmp_path: Path, store: Store) -> None:
    project = write_project(tmp_path)
    agent = project.agent(clock=FakeClock(), store=store)
    project.fail.add("water_lawn")
    reply = approve_all(
        agent,
        "paint the fence for order 1, then ring the bell for order 2, "
        "then water the lawn for order 3",
        "u",
    )
    assert reply.text == (
        "This run stopped: water_lawn failed (RuntimeError). Undone, latest first: "
        "paint_fence (by unpaint_fence). Not undoable, and left as they are: ring_bell."
    )
    assert [(c.tool, c.status) for c in agent.record("u")] == [
        ("paint_fence", "ran"),
        ("ring_bell", "ran"),
        ("water_lawn", "failed"),
        ("unpaint_fence", "ran"),
    ]
    assert [m.role for m in agent.memory("u")] == ["user", "assistant"]


def test_the_agent_shows_its_registration_lints(garden: Garden) -> None:
    _, agent = garden
    said = [str(lint) for lint in agent.lints]
    assert any("water_lawn" in text and "write_without_compensation" in text for text in said)


INTERRUPTING_TOOLS = '''
from stalwart import tool

CALLS = []
FAIL = set()


@tool(writes=True)
def pull_plug(order: int) -> dict:
    """Pull the plug for an order."""
    CALLS.append(("pull_plug", {"order": order}))
    raise KeyboardInterrupt  # the process stops mid-call, as a killed one would
'''


def test_a_run_whose_process_stopped_mid_call_asks_whether_the_write_took_effect(
    tmp_path: Path,
) -> None:
    project = write_project(tmp_path, tools_source=INTERRUPTING_TOOLS, tool_names=["pull_plug"])
    agent = project.agent(clock=FakeClock())
    agent.chat("pull the plug for order 1", user="u")
    with pytest.raises(KeyboardInterrupt):
        agent.confirm_current("u", "approve")
    [call] = agent.record("u")
    assert (call.tool, call.status) == ("pull_plug", "in_flight")
    with pytest.raises(QuestionPending, match="It was being sent when the run stopped."):
        agent.chat("pull the plug for order 2", user="u")
    [call] = agent.record("u")
    assert (call.status, call.tries) == ("in_doubt", 1)
    assert len(project.calls) == 1, "a write that is not retry-safe is never sent again"
    agent.close()


DECIMAL_TOOLS = '''
from decimal import Decimal

from stalwart import tool

CALLS = []
FAIL = set()


@tool(writes=True, undo="refund_money")
def charge_money(order: int, amount: Decimal, idempotency_key: str) -> dict:
    """Charge money for an order."""
    CALLS.append(("charge_money", {"amount": amount, "key": idempotency_key}))
    return {"order": order}


@tool(writes=True)
def refund_money(order: int, amount: Decimal) -> dict:
    """Refund money for an order."""
    CALLS.append(("refund_money", {"amount": amount}))
    return {"order": order}


@tool(writes=True)
def jam_till(order: int) -> dict:
    """Jam the till for an order."""
    raise RuntimeError("jammed")
'''


def test_a_decimal_argument_reaches_the_tool_and_its_undo_as_a_decimal_in_any_process(
    tmp_path: Path,
) -> None:
    project = write_project(
        tmp_path,
        tools_source=DECIMAL_TOOLS,
        tool_names=["charge_money", "refund_money", "jam_till"],
    )
    first = project.agent(clock=FakeClock())
    first.chat("charge money for order 1 amount 40.50, then jam the till for order 1", user="u")
    step_args = first.store.load("u").runs[0].steps[0]["args"]  # type: ignore[union-attr]
    second = project.agent(clock=FakeClock())  # what another process would read back
    second.confirm_current("u", "approve")
    second.confirm_current("u", "approve")
    [(_, charged), (_, refunded)] = project.calls
    assert charged["amount"] == Decimal("40.50") and isinstance(charged["amount"], Decimal)
    assert refunded["amount"] == Decimal("40.50") and isinstance(refunded["amount"], Decimal)
    assert charged["key"] == idempotency_key(
        session_identity(first.store, "u"),
        "1.1",
        "charge_money",
        {"order": 1, "amount": Decimal(step_args["amount"])},
    )
    first.close()
    second.close()

"""The Agent as a person meets it: confirmations, answers, replies, memory and the record."""

from __future__ import annotations

import dataclasses
from decimal import Decimal
from pathlib import Path

import pytest
from conftest import Project, approve_all, session_identity, write_project

from stalwart import (
    Agent,
    AnswerError,
    FakeClock,
    Message,
    NoModelError,
    QuestionPending,
    Reply,
)
from stalwart._engine.keys import idempotency_key

pytestmark = pytest.mark.unit

Garden = tuple[Project, Agent]


def test_a_write_waits_for_a_confirmation_and_a_read_does_not(garden: Garden) -> None:
    project, agent = garden
    reply = agent.chat("count the apples for order 1, then paint the fence for order 1", user="u")
    assert project.calls == [("count_apples", {"order": 1})]
    assert reply.state == "waiting"
    [waiting] = reply.waiting
    assert waiting.kind == "confirm"
    assert waiting.tool == "paint_fence"
    assert waiting.args == {"order": 1}
    assert waiting.answers == ("approve", "skip", "cancel all")
    assert waiting.text == "Run paint_fence(order=1)?"
    assert reply.text == waiting.text


def test_approve_runs_exactly_the_arguments_shown_and_the_reply_says_what_came_back(
    garden: Garden,
) -> None:
    project, agent = garden
    reply = agent.chat("paint the fence for order 3, then plant a tree for order 4", user="u")
    reply = agent.confirm_current("u", "approve")
    assert project.calls == [("paint_fence", {"order": 3})]
    assert reply.waiting[0].tool == "plant_tree"
    reply = agent.confirm_current("u", "approve")
    assert project.calls[-1] == ("plant_tree", {"order": 4})
    assert reply.waiting == []
    assert reply.state == "done"
    assert reply.text == (
        'Done: paint_fence returned {"colour":"green","order":3}; '
        'plant_tree returned {"hole":"h4","order":4}.'
    )


def test_a_reply_has_every_field_of_its_class_as_its_init_sets_them(garden: Garden) -> None:
    # The agent builds its replies without the frozen __init__ (one for every call): each
    # has every field, in the class's order, and equals the Reply __init__ makes of them.
    _, agent = garden
    asked = agent.chat("paint the fence for order 3, then plant a tree for order 4", user="u")
    agent.confirm_current("u", "approve")
    done = agent.confirm_current("u", "approve")
    assert asked.state == "waiting" and done.state == "done"
    names = [field.name for field in dataclasses.fields(Reply)]
    for reply in (asked, done):
        assert list(vars(reply)) == names
        assert reply == Reply(**{name: getattr(reply, name) for name in names})


def test_skip_declines_the_call_and_the_run_goes_on(garden: Garden) -> None:
    project, agent = garden
    agent.chat("paint the fence for order 3, then plant a tree for order 4", user="u")
    agent.confirm_current("u", "skip")
    reply = agent.confirm_current("u", "approve")
    assert project.calls == [("plant_tree", {"order": 4})]
    assert (
        reply.text == 'Done: paint_fence was skipped; plant_tree returned {"hole":"h4","order":4}.'
    )
    [skipped, planted] = agent.record("u")
    assert (skipped.tool, skipped.status, skipped.result) == (
        "paint_fence",
        "declined",
        "declined: the person skipped this call",
    )
    assert planted.status == "ran"


def test_cancel_all_fails_the_run_and_undoes_what_it_did(garden: Garden) -> None:
    project, agent = garden
    agent.chat(
        "paint the fence for order 3, then plant a tree for order 4, "
        "then ring the bell for order 5",
        user="u",
    )
    agent.confirm_current("u", "approve")
    agent.confirm_current("u", "approve")
    reply = agent.answer_current("u", "cancel all")
    assert [name for name, _ in project.calls] == [
        "paint_fence",
        "plant_tree",
        "unplant_tree",
        "unpaint_fence",
    ]
    assert project.calls[2] == ("unplant_tree", {"order": 4, "hole": "h4"})
    assert project.calls[3] == ("unpaint_fence", {"order": 3, "colour": "green"})
    assert reply.state == "rolled_back"
    assert reply.waiting == []
    assert reply.text == (
        "This run stopped: you cancelled it at ring_bell. "
        "Undone, latest first: plant_tree (by unplant_tree), paint_fence (by unpaint_fence)."
    )


def test_an_irreversible_write_is_confirmed_with_its_warnings(garden: Garden) -> None:
    _, agent = garden
    alone = agent.chat("ring the bell for order 1", user="solo")
    assert alone.waiting[0].text == (
        "Run ring_bell(order=1)?\nNothing can undo this step once it runs."
    )
    agent.chat("paint the fence for order 1, then ring the bell for order 1", user="u")
    reply = agent.confirm_current("u", "approve")
    assert reply.waiting[0].text == (
        "Run ring_bell(order=1)? Nothing undoes this step, and the steps after it cannot "
        "undo it.\nNothing can undo this step once it runs."
    )
    first = agent.chat("ring the bell for order 2, then plant a tree for order 2", user="v")
    assert first.waiting[0].text.startswith(
        "Run ring_bell(order=2)? Nothing undoes this step, and the steps after it"
    )


def test_the_atomic_run_sentence_shows_only_where_another_write_would_be_undone(
    garden: Garden,
) -> None:
    project, agent = garden
    plain = "Run ring_bell(order={})?\nNothing can undo this step once it runs."
    # Two irreversible writes in one turn: nothing in the run could ever be undone.
    twice = agent.chat("ring the bell for order 1, then ring the bell for order 2", user="a")
    assert twice.waiting[0].text == plain.format(1)
    assert agent.confirm("a", "approve", question=twice.waiting[0]).waiting[0].text == (
        plain.format(2)
    )
    # A later write with no undo is not undone either.
    unundoable = agent.chat("ring the bell for order 3, then water the lawn for order 3", user="b")
    assert unundoable.waiting[0].text == plain.format(3)
    # An earlier write that would be undone makes it, and so does a later one.
    for user, turn in (
        ("c", "paint the fence for order 4, then ring the bell for order 4"),
        ("d", "ring the bell for order 4, then water the lawn for order 4, "
              "then plant a tree for order 4"),
    ):  # fmt: skip
        reply = agent.chat(turn, user=user)
        while reply.waiting[0].tool != "ring_bell":
            reply = agent.confirm(user, "approve", question=reply.waiting[0])
        assert reply.waiting[0].text == (
            "Run ring_bell(order=4)? Nothing undoes this step, and the steps after it cannot "
            "undo it.\nNothing can undo this step once it runs."
        )


def test_a_failing_tool_rolls_back_last_write_first_and_lists_the_irreversible(
    garden: Garden,
) -> None:
    project, agent = garden
    project.fail.add("water_lawn")
    reply = approve_all(
        agent,
        "paint the fence for order 1, then ring the bell for order 1, "
        "then plant a tree for order 1, then water the lawn for order 1",
        "u",
    )
    assert [name for name, _ in project.calls] == [
        "paint_fence",
        "ring_bell",
        "plant_tree",
        "water_lawn",
        "unplant_tree",
        "unpaint_fence",
    ]
    assert reply.text == (
        "This run stopped: water_lawn failed (RuntimeError). Undone, latest first: "
        "plant_tree (by unplant_tree), paint_fence (by unpaint_fence). "
        "Not undoable, and left as they are: ring_bell."
    )


def test_answers_that_cannot_be_taken_raise_and_change_nothing(garden: Garden) -> None:
    project, agent = garden
    with pytest.raises(AnswerError, match="Nothing in session 'u' waits for an answer"):
        agent.confirm_current("u", "approve")
    agent.chat("paint the fence for order 1", user="u")
    before = (agent.record("u"), agent.memory("u"), agent.pending("u"))
    with pytest.raises(AnswerError, match="'maybe' is not an answer to this question"):
        agent.confirm_current("u", "maybe")
    # A session name is the user's own: mallory's "u" is not u's session (test_sessions.py).
    with pytest.raises(AnswerError, match="Nothing in session 'mallory~u' waits"):
        agent.confirm_current("mallory", "approve", session="u")
    with pytest.raises(QuestionPending, match="waits for an answer first: Run paint_fence"):
        agent.chat("plant a tree for order 2", user="u")
    assert (agent.record("u"), agent.memory("u"), agent.pending("u")) == before
    assert project.calls == []
    assert agent.confirm_current("u", " Approve ").state == "done"


def test_sessions_are_per_user_by_default_and_may_be_named(garden: Garden) -> None:
    _, agent = garden
    agent.chat("paint the fence for order 1", user="ann")
    agent.chat("plant a tree for order 2", user="ann", session="ann-2")
    assert agent.pending("ann").waiting[0].tool == "paint_fence"  # type: ignore[union-attr]
    assert agent.pending("ann", session="ann-2").waiting[0].tool == "plant_tree"  # type: ignore[union-attr]
    assert agent.pending("bob") is None


def test_an_unread_turn_says_which_clause_and_runs_nothing(garden: Garden) -> None:
    project, agent = garden
    reply = agent.chat("paint the fence for order 1, then fly to the moon", user="u")
    assert reply.state == "unread"
    assert reply.text == 'I could not read "fly to the moon" (no tool matches), so nothing ran.'
    assert project.calls == []
    assert agent.record("u") == []
    assert agent.memory("u") == [
        Message("user", "paint the fence for order 1, then fly to the moon"),
        Message("assistant", reply.text),
    ]


def test_on_unread_model_without_a_model_is_an_error_at_load(tmp_path: Path) -> None:
    project = write_project(tmp_path, on_unread="model")
    with pytest.raises(NoModelError, match="on_unread: model needs a model"):
        project.agent(clock=FakeClock())


def test_memory_keeps_a_happy_run_and_the_record_keeps_every_call(garden: Garden) -> None:
    _, agent = garden
    approve_all(agent, "count the apples for order 1, then paint the fence for order 1", "u")
    assert agent.memory("u") == [
        Message("user", "count the apples for order 1, then paint the fence for order 1"),
        Message("assistant", "call count_apples(order=1)"),
        Message("tool", '{"apples":7,"order":1}'),
        Message("assistant", "call paint_fence(order=1)"),
        Message("tool", '{"colour":"green","order":1}'),
        Message(
            "assistant",
            'Done: count_apples returned {"apples":7,"order":1}; '
            'paint_fence returned {"colour":"green","order":1}.',
        ),
    ]
    read, write = agent.record("u")
    assert (read.kind, read.run, read.step) == ("read", "u#1", 1)
    assert (write.kind, write.step, write.status) == ("write", 2, "ran")
    assert write.key == idempotency_key(
        session_identity(agent.store, "u"), "1.2", "paint_fence", {"order": 1}
    )
    assert write.allowed == "paint_fence: allowed by the rulebook"


def test_a_failed_run_is_rewound_in_memory_but_never_in_the_record(garden: Garden) -> None:
    project, agent = garden
    approve_all(agent, "count the apples for order 9", "u")
    project.fail.add("plant_tree")
    reply = approve_all(agent, "paint the fence for order 1, then plant a tree for order 1", "u")
    memory = agent.memory("u")
    assert memory[-2:] == [
        Message("user", "paint the fence for order 1, then plant a tree for order 1"),
        Message("assistant", reply.text),
    ]
    assert len(memory) == 6  # the first run's four messages stay
    assert "out of order" not in " ".join(m.content for m in memory)
    record = agent.record("u")
    assert [(c.tool, c.kind, c.status) for c in record] == [
        ("count_apples", "read", "ran"),
        ("paint_fence", "write", "ran"),
        ("plant_tree", "write", "failed"),
        ("unpaint_fence", "undo", "ran"),
    ]
    assert record[1].undone_by_tool == "unpaint_fence"
    assert record[2].error == "RuntimeError: plant_tree is out of order"
    assert record[3].undoes == record[1].call_id
    assert agent.rewind("u") is False  # it rewound itself; nothing is left to rewind


def test_rewind_takes_a_finished_run_out_of_memory(garden: Garden) -> None:
    _, agent = garden
    reply = approve_all(agent, "count the apples for order 1", "u")
    assert agent.rewind("u") is True
    assert agent.memory("u") == [
        Message("user", "count the apples for order 1"),
        Message("assistant", reply.text),
    ]
    assert len(agent.record("u")) == 1


TILL_TOOLS = '''
from decimal import Decimal

from stalwart import tool

CALLS: list[tuple[str, dict]] = []
FAIL: set[str] = set()


@tool(writes=True, irreversible=True)
def charge_card(order: int, amount: Decimal) -> dict:
    """Charge the card on file for an order."""
    CALLS.append(("charge_card", {"order": order, "amount": amount}))
    return {"order": order}


@tool(writes=True, irreversible=True)
def tip_waiter(order: int, amount: float) -> dict:
    """Tip the waiter for an order."""
    CALLS.append(("tip_waiter", {"order": order, "amount": amount}))
    return {"order": order}
'''


def test_a_confirmation_shows_exactly_what_runs_in_whichever_process_confirms(
    tmp_path: Path,
) -> None:
    project = write_project(
        tmp_path, tools_source=TILL_TOOLS, tool_names=["charge_card", "tip_waiter"]
    )
    first = project.agent(clock=FakeClock())
    reply = first.chat("charge order 4411 40.00, then tip the waiter for order 4411 2.50", user="u")
    # A Decimal keeps the digits the turn wrote; a float is the float that runs.
    charge = reply.waiting[0]
    assert list(charge.args.items()) == [("order", 4411), ("amount", Decimal("40.00"))]
    assert charge.text.startswith("Run charge_card(order=4411, amount=40.00)?")

    # Another Agent reads the run back from the record: same arguments, types and order.
    second = project.agent(clock=FakeClock())
    reply = second.confirm_current("u", "approve")
    tip = reply.waiting[0]
    assert list(tip.args.items()) == [("order", 4411), ("amount", 2.5)]
    assert type(tip.args["amount"]) is float
    assert tip.text.startswith("Run tip_waiter(order=4411, amount=2.5)?")
    third = project.agent(clock=FakeClock())
    third.confirm_current("u", "approve")

    assert project.calls == [("charge_card", charge.args), ("tip_waiter", tip.args)]
    assert [type(args["amount"]) for _, args in project.calls] == [Decimal, float]
    for opened in project.agents:
        opened.close()


def test_a_skipped_call_is_remembered_with_its_arguments_as_they_were_shown(
    tmp_path: Path,
) -> None:
    project = write_project(
        tmp_path, tools_source=TILL_TOOLS, tool_names=["charge_card", "tip_waiter"]
    )
    first = project.agent(clock=FakeClock())
    shown = first.chat("tip the waiter for order 7 2.50, then charge order 7 9.90", user="u")
    assert shown.text.startswith("Run tip_waiter(order=7, amount=2.5)?")
    second = project.agent(clock=FakeClock())  # reads the run back from the record
    second.confirm_current("u", "skip")
    second.confirm_current("u", "skip")
    assert [m.content for m in second.memory("u")][1:5] == [
        "call tip_waiter(order=7, amount=2.5)",
        "declined: the person skipped this call",
        "call charge_card(order=7, amount=9.90)",
        "declined: the person skipped this call",
    ]
    assert project.calls == []
    for opened in project.agents:
        opened.close()

"""For any answers and tool failures: every write that ran is undone once or listed, no more.

The property runs real runs (the real selector, the real record on SQLite) over random
plans of reads and writes, some irreversible, some with no undo, answering each
confirmation at random and making random steps raise.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import Project, write_project
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stalwart import Agent, FakeClock

pytestmark = pytest.mark.unit

PROPERTY_TOOLS = '''
from stalwart import tool

CALLS = []
FAILING = set()


def _call(name, order, **more):
    CALLS.append((name, order))
    if (name, order) in FAILING:
        raise RuntimeError(f"{name} failed for order {order}")


@tool
def count_apples(order: int) -> dict:
    """Count the apples of an order."""
    _call("count_apples", order)
    return {"order": order}


@tool(writes=True, undo="unpaint_fence")
def paint_fence(order: int) -> dict:
    """Paint the fence for an order."""
    _call("paint_fence", order)
    return {"order": order, "colour": "green"}


@tool(writes=True)
def unpaint_fence(order: int, colour: str) -> dict:
    """Strip the paint off the fence."""
    _call("unpaint_fence", order)
    return {"order": order}


@tool(writes=True, undo="unplant_tree")
def plant_tree(order: int) -> dict:
    """Plant a tree for an order."""
    _call("plant_tree", order)
    return {"order": order, "hole": f"h{order}"}


@tool(writes=True)
def unplant_tree(order: int, hole: str) -> dict:
    """Dig a planted tree out of its hole."""
    _call("unplant_tree", order)
    return {"order": order}


@tool(writes=True, irreversible=True)
def ring_bell(order: int) -> dict:
    """Ring the bell for an order."""
    _call("ring_bell", order)
    return {"order": order}


@tool(writes=True)
def water_lawn(order: int) -> dict:
    """Water the lawn for an order."""
    _call("water_lawn", order)
    return {"order": order}
'''

CLAUSES = {
    "count_apples": "count the apples for order {}",
    "paint_fence": "paint the fence for order {}",
    "plant_tree": "plant a tree for order {}",
    "ring_bell": "ring the bell for order {}",
    "water_lawn": "water the lawn for order {}",
}
UNDO = {"paint_fence": "unpaint_fence", "plant_tree": "unplant_tree"}
READS = {"count_apples"}
ANSWERS = ["approve", "approve", "skip", "cancel all"]  # approve twice as often


@pytest.fixture(scope="module")
def yard(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Project, Agent]]:
    folder: Path = tmp_path_factory.mktemp("yard")
    project = write_project(
        folder,
        tools_source=PROPERTY_TOOLS,
        tool_names=[*CLAUSES, *UNDO.values()],
    )
    agent = project.agent(clock=FakeClock())
    yield project, agent
    agent.close()


_users = itertools.count()


def _expected(
    plan: list[str], failing: set[int], answers: list[str]
) -> tuple[list[tuple[str, int]], bool, list[tuple[str, int]]]:
    """What must be called, in order; whether the run fails; the writes that ran."""
    calls: list[tuple[str, int]] = []
    ran: list[tuple[str, int]] = []
    pending = list(answers)
    failed = False
    for order, tool in enumerate(plan, 1):
        if tool not in READS:
            answer = pending.pop(0) if pending else "approve"
            if answer == "skip":
                continue
            if answer == "cancel all":
                failed = True
                break
        calls.append((tool, order))
        if order in failing:
            failed = True
            break
        if tool not in READS:
            ran.append((tool, order))
    if failed:
        calls += [(UNDO[tool], order) for tool, order in reversed(ran) if tool in UNDO]
    return calls, failed, ran


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    plan=st.lists(st.sampled_from(sorted(CLAUSES)), min_size=1, max_size=5),
    failing=st.sets(st.integers(min_value=1, max_value=5), max_size=2),
    answers=st.lists(st.sampled_from(ANSWERS), max_size=5),
)
def test_every_write_that_ran_is_undone_once_or_listed_and_nothing_else_is_called(
    yard: tuple[Project, Agent], plan: list[str], failing: set[int], answers: list[str]
) -> None:
    project, agent = yard
    module = project.module
    assert module is not None
    module.CALLS.clear()
    module.FAILING.clear()
    module.FAILING.update((tool, order) for order, tool in enumerate(plan, 1) if order in failing)
    user = f"p{next(_users)}"

    given_answers = list(answers)
    reply = agent.chat(
        ", then ".join(CLAUSES[t].format(n) for n, t in enumerate(plan, 1)), user=user
    )
    while reply.waiting:
        answer = given_answers.pop(0) if given_answers else "approve"
        reply = agent.confirm_current(user, answer)

    calls, failed, ran = _expected(plan, failing, answers)
    assert calls == module.CALLS  # nothing else was called, in this order
    assert reply.state == ("rolled_back" if failed else "done")

    record = agent.record(user)
    writes = {(c.tool, c.step): c for c in record if c.kind == "write"}
    undos = [c for c in record if c.kind == "undo"]
    for tool, order in ran:
        write = writes[(tool, order)]
        assert write.status == "ran"
        if failed and tool in UNDO:
            assert write.undone_by_tool == UNDO[tool]
            assert [u.undoes for u in undos].count(write.call_id) == 1
        elif failed:
            assert write.undone_by is None
            assert tool in reply.text.split("Not undoable, and left as they are: ")[1]
        else:
            assert write.undone_by is None
    skipped = [c for c in record if c.status == "declined"]
    assert all(c.undone_by is None for c in skipped)
    assert {u.undoes for u in undos} <= {writes[w].call_id for w in ran}

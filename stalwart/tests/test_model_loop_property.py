"""For any plan a model gives, in any batches, any answers, tool failures and model failures:
every write that ran is undone once or listed, nothing else is called, and a failed run
asks the model nothing more.

The model is scripted (its answers are the plan cut into batches of parallel calls, then
its last word), the tools and the record (SQLite) are real.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from model_shop import scripted
from test_runs_property import ANSWERS, CLAUSES, PROPERTY_TOOLS, READS, UNDO

from stalwart import Agent, FakeClock
from stalwart.models import Model, ProviderFailure, ScriptedAdapter
from stalwart.models.scripted import ScriptStep

pytestmark = pytest.mark.unit

TURN = "sort out the yard please"  # the selector reads no tool in it


class Refillable(ScriptedAdapter):
    def refill(self, script: list[ScriptStep]) -> None:
        self._script.clear()
        self._script.extend(script)
        self.requests.clear()


@pytest.fixture(scope="module")
def yard(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Agent, Refillable]]:
    folder: Path = tmp_path_factory.mktemp("model_yard")
    (folder / "model_yard_tools.py").write_text(PROPERTY_TOOLS)
    (folder / "agent.yaml").write_text(
        "agents:\n"
        "  keeper:\n"
        '    model: "anthropic:claude-sonnet-5-5"\n'
        f"    tools: [{', '.join([*CLAUSES, *UNDO.values()])}]\n"
        "    on_unread: model\n"
        "tools:\n"
        "  - python: model_yard_tools\n"
        "record: record.sqlite\n"
    )
    clock = FakeClock()
    adapter = Refillable([], selector="scripted:keeper")
    agent = Agent.from_file(
        folder / "agent.yaml", clock=clock, model=Model("scripted:keeper", adapter, clock=clock)
    )
    yield agent, adapter
    agent.close()


_users = itertools.count()


@st.composite
def plans(draw: st.DrawFn) -> tuple[list[str], list[int]]:
    """A plan of tools, and how the model batches it (sizes of its parallel calls)."""
    plan = draw(st.lists(st.sampled_from(sorted(CLAUSES)), min_size=1, max_size=5))
    sizes: list[int] = []
    left = len(plan)
    while left:
        size = draw(st.integers(min_value=1, max_value=left))
        sizes.append(size)
        left -= size
    return plan, sizes


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    planned=plans(),
    failing=st.sets(st.integers(min_value=1, max_value=5), max_size=2),
    answers=st.lists(st.sampled_from(ANSWERS), max_size=5),
    model_fails_at=st.one_of(st.none(), st.integers(min_value=1, max_value=6)),
)
def test_every_write_a_model_chose_is_undone_once_or_listed_and_nothing_else_runs(
    yard: tuple[Agent, Refillable],
    planned: tuple[list[str], list[int]],
    failing: set[int],
    answers: list[str],
    model_fails_at: int | None,
) -> None:
    agent, adapter = yard
    plan, sizes = planned
    module = __import__("model_yard_tools")
    module.CALLS.clear()
    module.FAILING.clear()
    module.FAILING.update((tool, order) for order, tool in enumerate(plan, 1) if order in failing)
    numbered = list(enumerate(plan, 1))
    batches = [numbered[sum(sizes[:i]) : sum(sizes[: i + 1])] for i in range(len(sizes))]
    script: list[ScriptStep] = [
        scripted(calls=[(f"t{order}", tool, {"order": order}) for order, tool in batch])
        for batch in batches
    ]
    script.append(scripted("All done."))
    if model_fails_at is not None and model_fails_at <= len(script):
        script[model_fails_at - 1] = ProviderFailure(400, "the request is wrong")
    adapter.refill(script)
    user = f"m{next(_users)}"

    pending = list(answers)
    reply = agent.chat(TURN, user=user)
    while reply.waiting:
        reply = agent.confirm_current(user, pending.pop(0) if pending else "approve")

    # What must have happened, worked out from the plan alone.
    calls: list[tuple[str, int]] = []
    ran: list[tuple[str, int]] = []
    expected_answers = list(answers)
    failed = False
    asks = 0
    for number, batch in enumerate([*batches, []], 1):
        asks += 1
        if model_fails_at == number:
            failed = True
            break
        for order, tool in batch:
            if tool not in READS:
                answer = expected_answers.pop(0) if expected_answers else "approve"
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
            break
    if failed:
        calls += [(UNDO[tool], order) for tool, order in reversed(ran) if tool in UNDO]

    assert calls == module.CALLS  # nothing else was called, in this order
    assert len(adapter.requests) == asks  # a failed run asks the model nothing more
    assert reply.state == ("rolled_back" if failed else "done")
    record = agent.record(user)
    writes = {(c.tool, c.step): c for c in record if c.kind == "write"}
    undos = [c for c in record if c.kind == "undo"]
    for tool, order in ran:
        write = writes[(tool, order)]
        if failed and tool in UNDO:
            assert [u.undoes for u in undos].count(write.call_id) == 1
        elif failed:
            assert write.undone_by is None
            assert tool in reply.text.split("Not undoable, and left as they are: ")[1]
        else:
            assert write.undone_by is None
    assert {u.undoes for u in undos} <= {writes[w].call_id for w in ran}
    if failed:
        assert [m.content for m in agent.memory(user)] == [TURN, reply.text]

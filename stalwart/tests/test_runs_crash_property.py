"""For any failures, crashes and answers: every write is settled once, and none twice.

Random plans of the service's tools (tests/service.py) run with random failures on every
send (in doubt or not), random crashes (a BaseException out of the tool that the engine
does not catch; the run is then taken up by a fresh Agent on the same record) and random
answers to every question. Whatever happens, each effect the service had for a write
ends in exactly one of: undone by its undo (once), undone by hand, not undoable (and
listed), not undone with a reason (its result was never seen: the rollback stops there
until a person answers), decided by a person (who
said it did not happen), left for a person when the rollback was abandoned, or still
pending in a stuck run; and no write is undone twice.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from conftest import Project
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from service import turn, write_service_project

from stalwart import Agent, FakeClock, Reply

pytestmark = pytest.mark.unit

WRITES = {"charge_card": "refund_card", "book_slot": "free_slot", "send_note": None}
WRITES["stamp_form"] = None
UNDOS = {"refund_card", "free_slot"}
STEP_TOOLS = ["count_stock", *WRITES]
CALL_BEHAVIOURS = ["ok", "ok", "timeout", "lost", "refused", "error", "crash", "crash_after"]
UNDO_BEHAVIOURS = ["ok", "error", "error", "timeout", "lost", "crash", "crash_after"]
ANSWERS = {
    "confirm": ("approve", "approve", "skip", "cancel all"),
    "outcome": ("happened", "did not happen"),
    "undo": ("retry", "done by hand", "abandon"),
}
SETTLED = {"done", "rolled_back", "abandoned", "stuck"}


@pytest.fixture(scope="module")
def depot(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Project]:
    project = write_service_project(tmp_path_factory.mktemp("depot"))
    project.agent(clock=FakeClock())
    yield project
    for opened in project.agents:
        opened.close()


_users = itertools.count()


class Driver:
    """Acts on one session; when the process "crashes", a fresh Agent takes the run up."""

    def __init__(self, project: Project, user: str) -> None:
        self.project = project
        self.user = user
        self.agent = Agent(project.agents[0].config, clock=FakeClock())
        self.crashes = 0

    def act(self, action: Callable[[Agent], Reply | None]) -> Reply:
        crash = self.project.module.SimulatedCrash  # type: ignore[union-attr]
        while True:
            try:
                reply = action(self.agent)
            except crash:
                self.crashes += 1
                self.agent.close()
                self.agent = Agent(self.project.agents[0].config, clock=FakeClock())
                action = lambda agent: agent.pending(self.user)  # noqa: E731
                continue
            assert reply is not None
            return reply


# An undo's sends: anything, or a run of failures long enough to leave the run stuck.
undo_sends = st.lists(st.sampled_from(UNDO_BEHAVIOURS), max_size=6) | st.builds(
    lambda failures, then: ["error"] * failures + then,
    st.integers(min_value=4, max_value=9),
    st.lists(st.sampled_from(UNDO_BEHAVIOURS), max_size=3),
)


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    plan=st.lists(st.sampled_from(STEP_TOOLS), min_size=1, max_size=4),
    behaviours=st.fixed_dictionaries(
        {
            **{t: st.lists(st.sampled_from(CALL_BEHAVIOURS), max_size=3) for t in STEP_TOOLS},
            **{t: undo_sends for t in UNDOS},
        }
    ),
    answers=st.lists(st.integers(min_value=0, max_value=3), max_size=8),
    stop_when_stuck=st.booleans(),
)
def test_every_write_is_settled_exactly_once_whatever_fails_crashes_or_is_answered(
    depot: Project,
    plan: list[str],
    behaviours: dict[str, list[str]],
    answers: list[int],
    stop_when_stuck: bool,
) -> None:
    module: Any = depot.module
    module.PLAN.clear()
    module.PLAN.update({tool: list(sends) for tool, sends in behaviours.items()})
    module.DONE.clear()
    user = f"c{next(_users)}"
    driver = Driver(depot, user)
    text = turn(*[(tool, order) for order, tool in enumerate(plan, 1)])

    reply = driver.act(lambda agent: agent.chat(text, user=user))
    pending = list(answers)
    retries_left = 5
    for _ in range(100):
        if not reply.waiting:
            break
        kind = reply.waiting[0].kind
        if not pending and kind == "undo" and stop_when_stuck:
            break
        options = ANSWERS[kind]
        given = options[pending.pop(0) % len(options)] if pending else options[0]
        if not pending and kind == "undo":
            # An undo the check cannot bind is never sent, so retrying it changes nothing:
            # past a few retries a person abandons it.
            retries_left -= 1
            if retries_left < 0:
                given = "abandon"
        reply = driver.act(lambda agent, given=given: agent.answer_current(user, given))  # type: ignore[misc]
    else:
        pytest.fail("the run never settled")
    assert reply.state in SETTLED

    record = {c.call_id: c for c in driver.agent.record(user)}
    by_key = {c.key: c for c in record.values() if c.key}
    effects = list(module.DONE)
    write_effects = [(tool, key) for tool, key, _ in effects if tool in WRITES]
    undo_effects = [(tool, key, answer) for tool, key, answer in effects if tool in UNDOS]

    # Each undo the service did undoes one write it did, and no write is undone twice.
    undone_orders: list[tuple[str, int]] = []
    for tool, key, answer in undo_effects:
        undo_call = by_key[key]
        write = record[undo_call.undoes or ""]
        assert write.key is not None
        if tool == "refund_card":  # it refunds the very charge that write made
            assert (write.tool, answer["refunded"]) == ("charge_card", "ch-" + write.key[:8])
        else:
            assert (write.tool, answer["freed"]) == ("book_slot", f"s-{write.args['order']}")
        undone_orders.append((write.tool, write.args["order"]))
    assert len(undone_orders) == len(set(undone_orders)), "a write was undone twice"

    failed = reply.state != "done"
    abandoned_part = reply.text.partition("still to be undone by hand: ")[2]
    for tool, key in write_effects:
        write = by_key[key]  # the record knew of every effect before it happened
        undo = record.get(write.undone_by or "")
        refused = record.get(f"{write.call_id}:undo")
        undone_by_service = (tool, write.args["order"]) in undone_orders
        if not failed:
            assert write.status in ("ran", "happened") and not undone_by_service
            continue
        if undo is not None and undo.status == "ran":
            assert undone_by_service  # undone by its undo, once
        elif undo is not None:
            assert undo.status == "by_hand"  # a person undid it outside
        elif write.status == "did_not_happen":
            assert not undone_by_service  # a person decided it did not happen
        elif WRITES[tool] is None:
            assert not undone_by_service  # not undoable, and listed once the rollback ends
            assert reply.state == "stuck" or tool in reply.text
        elif refused is not None and refused.status == "refused":
            assert write.status == "happened" and not undone_by_service  # no result to bind
            # The rollback stopped at it (stuck), or a person abandoned it, listed.
            assert reply.state == "stuck" or f"{tool} ({WRITES[tool]}: " in reply.text
        elif reply.state == "abandoned":
            assert tool in abandoned_part  # a person took it on
        else:
            assert reply.state == "stuck", (tool, write, reply)  # still pending
            assert reply.waiting[0].kind == "undo"

    # Nothing the record says ran was not done by the service.
    done_keys = {key for _, key, _ in effects}
    for call in record.values():
        if call.status == "ran" and call.kind in ("write", "undo"):
            assert call.key in done_keys
    driver.agent.close()

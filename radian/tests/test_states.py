from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from radian.arc.clock import FakeClock
from radian.arc.errors import IllegalTransition
from radian.arc.records import Task, transition
from radian.arc.states import ALLOWED, State, is_allowed

pytestmark = pytest.mark.unit


def make_task(state: State = State.READY) -> Task:
    return Task(
        name="t",
        plan="p",
        state=state,
        branch="arc/t",
        created_at="2026-11-30T07:00:00Z",
        updated_at="2026-11-30T07:00:00Z",
    )


def test_the_table_names_the_ten_states() -> None:
    assert len(State) == 10
    assert set(ALLOWED) == set(State)
    assert ALLOWED[State.INTEGRATED] == frozenset()


def test_an_allowed_transition_sets_state_fields_and_time() -> None:
    clock = FakeClock()
    clock.advance(65)
    task = transition(make_task(), State.WORKING, clock, last_attempt_id="001")
    assert task.state is State.WORKING
    assert task.last_attempt_id == "001"
    assert task.updated_at == "2026-11-30T07:01:05Z"


def test_a_transition_outside_the_table_is_refused_and_changes_nothing() -> None:
    task = make_task(State.READY)
    with pytest.raises(IllegalTransition, match="cannot move from todo.ready to done.integrated"):
        transition(task, State.INTEGRATED, FakeClock(), retry_count=5)
    assert task.state is State.READY
    assert task.retry_count == 0


def test_an_unknown_field_is_refused() -> None:
    with pytest.raises(TypeError):
        transition(make_task(), State.WORKING, FakeClock(), no_such_field=1)


@given(st.lists(st.sampled_from(list(State)), max_size=30))
def test_any_sequence_of_requests_only_follows_the_table(targets: list[State]) -> None:
    task = make_task()
    clock = FakeClock()
    for target in targets:
        before = task.state
        try:
            transition(task, target, clock)
        except IllegalTransition:
            assert not is_allowed(before, target)
            assert task.state is before
        else:
            assert target in ALLOWED[before]
            assert task.state is target

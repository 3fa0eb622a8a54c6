"""settle, the table applied, over any sequence of attempt outcomes (hypothesis)."""

from __future__ import annotations

import tempfile
from dataclasses import replace
from pathlib import Path

import pytest
from arc_helpers import make_plan
from hypothesis import given, settings
from hypothesis import strategies as st

from radian.arc.attempt_result import AttemptOutcome, ModelErrorRecord
from radian.arc.classify import ROWS, Next
from radian.arc.clock import FakeClock
from radian.arc.config import ArcConfig, LimitsConfig
from radian.arc.events import texts_of
from radian.arc.records import transition
from radian.arc.settle import settle, terminated_outcome
from radian.arc.states import State

pytestmark = pytest.mark.unit

RETRY_ROWS = [key for key, row in ROWS.items() if row.next_step is Next.RETRY]


def outcome(row: str, model_wait: bool, session_total: float | None) -> AttemptOutcome:
    base = terminated_outcome("2026-11-30T07:00:00Z", "2026-11-30T07:00:01Z")
    return replace(
        base,
        row=row,
        outcome="failed" if model_wait else None,
        model_wait=model_wait,
        model_error=(
            ModelErrorRecord(kind="unavailable", retry_after_secs=None) if model_wait else None
        ),
        session_id="s" if session_total is not None else None,
        session_cost_usd=session_total,
        worker_started=session_total is not None,
        resumed=session_total is not None,
    )


steps = st.lists(
    st.tuples(
        st.sampled_from(RETRY_ROWS),
        st.booleans(),
        st.one_of(st.none(), st.floats(min_value=0, max_value=3, allow_nan=False)),
    ),
    min_size=1,
    max_size=12,
)


@settings(max_examples=40, deadline=None)
@given(steps, st.integers(min_value=0, max_value=4))
def test_any_sequence_of_failures_keeps_the_rules(
    sequence: list[tuple[str, bool, float | None]], limit: int
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        repo = Path(folder)
        clock = FakeClock()
        store = make_plan(repo, clock, ["t"], confirm=False)
        config = ArcConfig(limits=LimitsConfig(max_attempts=limit))
        spent = 0.0
        for number, (row, model_wait, total) in enumerate(sequence, start=1):
            task = store.load_task("t")
            if task.state is not State.RETRY_WAIT and task.state is not State.READY:
                break
            before = task.model_copy(deep=True)
            attempt_id = f"{number:03d}"
            transition(task, State.WORKING, clock, last_attempt_id=attempt_id,
                       attempts=[*task.attempts, attempt_id])  # fmt: skip
            lines = texts_of(
                settle(store, config, task, attempt_id, outcome(row, model_wait, total), clock)
            )
            after = store.load_task("t")
            record = store.read_attempt_result("t", attempt_id)
            assert record is not None and record.next_state == str(after.state)
            # One line per end; an infrastructure retry's reason follows it on a second.
            infrastructure = ROWS[row].failure_class == "infrastructure" and not model_wait
            assert len(lines) == (2 if infrastructure else 1), lines
            if infrastructure:
                assert lines[1] == (
                    f"t attempt {attempt_id} (infrastructure): "
                    "its run ended and its worker is gone, with no Result"
                )
            assert record.cost_usd is not None and record.cost_usd >= 0
            spent += record.cost_usd
            assert abs(after.total_cost_usd - spent) < 1e-6
            if model_wait:
                assert after.state is State.RETRY_WAIT
                assert after.retry_count == before.retry_count
                assert after.model_wait_streak == before.model_wait_streak + 1
                assert "worker model unavailable -> retry at" in lines[0]
            elif before.retry_count >= limit:
                assert after.state is State.EXHAUSTED
            else:
                assert after.state is State.RETRY_WAIT
                assert after.retry_count == before.retry_count + 1
                assert after.model_wait_streak == 0
            assert after.retry_count <= limit
            clock.advance(3600)

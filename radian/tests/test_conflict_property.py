"""Property: for any sequence of gate outcomes, arc's automatic reworks keep their rules.

The gate's verdicts are applied with `apply_gate` to a task in a real store (no git: the
verdicts are made here); after each one the task goes on as the loop or the lead would take
it. Whatever the sequence:
- conflict reworks in a row never exceed max_conflict_rework, and a conflict waits for the
  lead exactly when the run has reached it (or merge-main is off);
- a conflict rework keeps retry_count, a review rework sets it to 0;
- auto_rework_used never exceeds the plan's auto_rework;
- rework_count is the number of "## Rework" sections in the brief.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from radian.arc import commands
from radian.arc.claims import next_attempt_id
from radian.arc.clock import FakeClock
from radian.arc.config import ArcConfig, LimitsConfig
from radian.arc.gate.apply import apply_gate
from radian.arc.gate.findings import Finding
from radian.arc.gate.pipeline import GateRun
from radian.arc.gate.verdict import Verdict, next_seq, write_verdict
from radian.arc.records import transition
from radian.arc.states import State
from radian.arc.store import ArcStore

pytestmark = pytest.mark.unit

OUTCOMES = ("pass", "conflict", "review_findings", "command_failed")


def verdict(store: ArcStore, attempt_id: str, outcome: str) -> Verdict:
    stage = {"conflict": "commands", "review_findings": "review"}.get(outcome, "commands")
    fields: dict[str, Any] = {}
    if outcome == "conflict":
        fields = {"conflicted_paths": ["a.py"], "main_sha": "c" * 40}
    if outcome == "review_findings":
        fields = {"failing_findings": [Finding(level="major", title="x")], "fix_level": "major"}
    made = Verdict(
        task="t", attempt_id=attempt_id, stage="integration" if outcome == "pass" else stage,
        passed=outcome == "pass", reason=None if outcome == "pass" else outcome,
        head_sha="h" * 40, seq=next_seq(store.task_dir("t")), **fields,
    )  # fmt: skip
    write_verdict(store.task_dir("t"), made)
    return made


def start_attempt(store: ArcStore, clock: FakeClock) -> str:
    """What the loop does from todo.ready: an attempt that delivers and reaches the gate."""
    task = store.load_task("t")
    attempt_id = next_attempt_id(task)
    transition(task, State.WORKING, clock, last_attempt_id=attempt_id,
               attempts=[*task.attempts, attempt_id])  # fmt: skip
    transition(task, State.VERIFYING, clock, head_sha="h" * 40, merge_pending=False)
    store.save_task(task)
    return attempt_id


@settings(max_examples=60, deadline=None)
@given(
    outcomes=st.lists(st.sampled_from(OUTCOMES), min_size=1, max_size=12),
    limit=st.integers(min_value=0, max_value=3),
    auto_rework=st.integers(min_value=0, max_value=2),
    merge_main=st.booleans(),
    retry_count=st.integers(min_value=0, max_value=2),
)
def test_automatic_reworks_keep_their_rules(
    outcomes: list[str], limit: int, auto_rework: int, merge_main: bool, retry_count: int
) -> None:
    clock = FakeClock()
    config = ArcConfig(limits=LimitsConfig(max_conflict_rework=limit))
    with tempfile.TemporaryDirectory() as folder:
        store = ArcStore(Path(folder))
        commands.add_plan(store, "p", merge_main=merge_main, auto_rework=auto_rework)
        commands.add_task(store, clock, "p", "t", "# t\n")
        task = store.load_task("t")
        task.retry_count = retry_count
        store.save_task(task)
        in_a_row = 0
        for outcome in outcomes:
            attempt_id = start_attempt(store, clock)
            before = store.load_task("t")
            apply_gate(
                store,
                config,
                GateRun("t", attempt_id, (verdict(store, attempt_id, outcome),), False),
                clock,
            )
            after = store.load_task("t")

            if outcome == "conflict" and merge_main and in_a_row < limit:
                in_a_row += 1
                assert after.state is State.READY and after.merge_pending
                assert after.retry_count == before.retry_count
            elif outcome == "conflict":
                assert after.state is State.REWORK_PENDING
                assert after.rework_reason is not None
                assert after.rework_reason.startswith("t conflict with main -> ")
            else:
                in_a_row = 0
            assert after.conflict_rework_run == in_a_row <= limit
            if outcome == "review_findings" and before.auto_rework_used < auto_rework:
                assert after.state is State.READY and after.retry_count == 0
            assert after.auto_rework_used <= auto_rework
            assert store.read_brief("t").count("## Rework") == after.rework_count
            if outcome == "pass":
                assert after.state is State.INTEGRATED
                break
            if after.state is State.REWORK_PENDING:
                # The lead steps in: their rework starts the conflict run again.
                commands.rework(store, clock, "t", "try again")
                in_a_row = 0

"""Reverify: automatic when the target branch moved after a command failure, and by hand."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from gate_fixtures.arc_world import (
    PYTEST,
    add_plan,
    run_arc,
    task,
    worker_args,
    write_arc_config,
)
from gate_fixtures.world import OPS_WITH_DOUBLE, GitWorld

from radian.arc import commands
from radian.arc.clock import FakeClock
from radian.arc.config import load_config
from radian.arc.errors import ArcError
from radian.arc.events import texts_of
from radian.arc.gate import reverify_by_hand
from radian.arc.gate.apply import apply_gate, rework_reason_for
from radian.arc.gate.findings import Finding
from radian.arc.gate.pipeline import GateRun
from radian.arc.gate.reverify import auto_reverify_candidates, claim_reverify, reverified_pairs
from radian.arc.gate.verdict import Verdict, next_seq, write_verdict
from radian.arc.states import State
from radian.arc.store import ArcStore

pytestmark = pytest.mark.integration

BROKEN_CHECK = "def test_main_is_broken():\n    assert False\n"
DOUBLE = {"src/calc/ops.py": OPS_WITH_DOUBLE}


def store_of(world: GitWorld) -> ArcStore:
    return ArcStore(world.repo)


def test_a_moved_target_reverifies_by_itself_and_integrates(
    world: GitWorld, clock: FakeClock
) -> None:
    # main itself is broken: the integration key command fails on the merged tree.
    broken_main = world.push_main({"tests/check_broken.py": BROKEN_CHECK}, "a broken test")
    write_arc_config(world, worker_args(world, {"t": {"default": {"files": DOUBLE}}}),
                     stages=("review",), integration_commands=(PYTEST,))  # fmt: skip
    add_plan(world, clock, ["t"])
    run_arc(world, clock)
    waiting = task(world, "t")
    assert str(waiting.state) == "review.rework_pending"
    assert waiting.rework_reason is not None
    assert waiting.rework_reason.startswith("integration failed (command_failed)")

    # The target has not moved: nothing runs again.
    assert run_arc(world, clock) == []
    assert task(world, "t").attempts == ["001"]

    fixed_main = world.push_main({"tests/check_broken.py": None}, "fix main")
    lines = run_arc(world, clock)

    assert lines[0] == (
        f"t target branch moved {broken_main[:8]} -> {fixed_main[:8]} "
        "-> review.verifying (automatic reverify, attempt 002)"
    )
    done = task(world, "t")
    assert str(done.state) == "done.integrated"
    assert done.attempts == ["001", "002"] and done.retry_count == 0
    assert done.auto_reverify_count == 1 and done.auto_rework_used == 0
    assert reverified_pairs(store_of(world), "t") == {(done.head_sha, fixed_main)}
    record = store_of(world).read_attempt_result("t", "002")
    assert record is not None and record.failure_class == "reverify"
    assert record.gate is not None and record.gate.passed is True
    # The reverify ran a review again: its cost counts like any review.
    assert done.cost_usd == pytest.approx(0.5)


def test_the_guards_each_pair_once_and_max_auto_reverify(world: GitWorld, clock: FakeClock) -> None:
    write_arc_config(world, worker_args(world, {"t": {"default": {"files": DOUBLE}}}),
                     stages=("commands",), gate_commands=("exit 1",),
                     limits={"max_auto_reverify": 2})  # fmt: skip
    add_plan(world, clock, ["t"])
    run_arc(world, clock)

    world.push_main({"a.txt": "1"})
    first = run_arc(world, clock)
    assert "automatic reverify, attempt 002" in first[0]
    assert run_arc(world, clock) == []  # the same (head, target) pair: never twice

    world.push_main({"a.txt": "2"})
    assert "automatic reverify, attempt 003" in run_arc(world, clock)[0]
    world.push_main({"a.txt": "3"})
    limit_line = (
        "t target branch moved -> review.rework_pending: "
        "max_auto_reverify 2 automatic reverify(s) used up"
    )
    assert run_arc(world, clock) == [limit_line]
    world.push_main({"a.txt": "4"})
    assert run_arc(world, clock) == []  # said once
    waiting = task(world, "t")
    assert str(waiting.state) == "review.rework_pending"
    assert waiting.rework_reason == limit_line
    assert waiting.auto_reverify_count == 2 and waiting.retry_count == 0
    assert store_of(world).load_plan("p").auto == "on"

    # By hand, the guards do not apply and nothing is used up.
    lines = reverify_by_hand(store_of(world), load_config(world.repo), clock, "t").lines()
    assert lines[0] == "t reverify -> review.verifying (attempt 004)"
    assert lines[1].startswith("t commands failed (command_failed) -> review.rework_pending")
    after = task(world, "t")
    assert after.auto_reverify_count == 2 and after.attempts[-1] == "004"
    assert len(reverified_pairs(store_of(world), "t")) == 2


def test_never_for_a_review_failure_a_conflict_or_a_plan_with_auto_off(
    world: GitWorld, clock: FakeClock
) -> None:
    todo = {"src/calc/ops.py": OPS_WITH_DOUBLE + "# TODO\n"}
    clash = {
        "files": {"src/calc/ops.py": "def add(a, b):\n    return b + a\n"},
        "main_push": {
            "clone": str(world.other),
            "files": {"src/calc/ops.py": "def add(a, b):\n    return a+b\n"},
        },
    }
    scenario = {"review": {"default": {"files": todo}}, "clash": {"default": clash},
                "off": {"default": {"files": {"off.txt": "x"}}}}  # fmt: skip
    write_arc_config(world, worker_args(world, scenario), stages=("commands", "review"),
                     gate_commands=("test ! -e off.txt",), review_mode="todo",
                     limits={"parallel": 1})  # fmt: skip
    add_plan(world, clock, ["review", "clash"], auto_rework=0, merge_main=False)
    add_plan(world, clock, ["off"], plan="quiet")
    run_arc(world, clock)
    commands.set_plan_auto(store_of(world), "quiet", "off")
    reasons = {name: task(world, name).rework_reason for name in ("review", "clash", "off")}
    assert str(task(world, "off").state) == "review.rework_pending"

    world.push_main({"elsewhere.txt": "moved"})
    assert run_arc(world, clock) == []
    for name, reason in reasons.items():
        assert task(world, name).rework_reason == reason
        assert task(world, name).auto_reverify_count == 0


def test_a_reverify_that_conflicts_takes_the_automatic_conflict_path(
    world: GitWorld, clock: FakeClock
) -> None:
    write_arc_config(world, worker_args(world, {"t": {"default": {"files": DOUBLE}}}),
                     stages=("commands",), gate_commands=("exit 1",))  # fmt: skip
    add_plan(world, clock, ["t"])
    run_arc(world, clock)
    world.push_main({"src/calc/ops.py": OPS_WITH_DOUBLE.replace("x * 2", "2 * x")})

    lines = reverify_by_hand(store_of(world), load_config(world.repo), clock, "t").lines()

    assert lines[-1] == "t conflict with main -> todo.ready (Rework 1, starts mid-merge)"
    ready = task(world, "t")
    assert str(ready.state) == "todo.ready" and ready.merge_pending


def test_reverify_by_hand_refuses_a_task_that_is_not_waiting(
    world: GitWorld, clock: FakeClock
) -> None:
    write_arc_config(world, worker_args(world, {"t": {"default": {"files": DOUBLE}}}))
    add_plan(world, clock, ["t"])
    run_arc(world, clock)
    assert str(task(world, "t").state) == "done.integrated"

    refused = r"t is done.integrated: reverify applies to a review.rework_pending \(or todo"
    with pytest.raises(ArcError, match=refused):
        reverify_by_hand(store_of(world), load_config(world.repo), clock, "t")
    assert task(world, "t").attempts == ["001"]


def test_the_reverify_command_line(world: GitWorld, clock: FakeClock) -> None:
    write_arc_config(world, worker_args(world, {"t": {"default": {"files": DOUBLE}}}),
                     stages=("commands",), gate_commands=("test -e ok.txt",))  # fmt: skip
    add_plan(world, clock, ["t"])
    run_arc(world, clock)
    radian = Path(sys.executable).parent / "radian"

    done = subprocess.run([str(radian), "arc", "--repo", str(world.repo), "reverify", "t"],
                          capture_output=True, text=True, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == "t reverify -> review.verifying (attempt 002)"
    assert "t commands failed (command_failed)" in done.stdout

    shown = subprocess.run([str(radian), "arc", "--repo", str(world.repo), "show", "--json", "t"],
                           capture_output=True, text=True, check=True)  # fmt: skip
    document = json.loads(shown.stdout)
    assert document["last_verdict"]["attempt_id"] == "002"
    assert document["rework_reason"].startswith("commands failed (command_failed)")

    missing = subprocess.run([str(radian), "arc", "--repo", str(world.repo), "reverify", "nope"],
                             capture_output=True, text=True, check=False)  # fmt: skip
    assert missing.returncode == 1 and "no task named 'nope'" in missing.stderr


def test_only_the_last_attempts_own_tree_failure_is_a_candidate(
    tmp_path: Path, clock: FakeClock
) -> None:
    store = ArcStore(tmp_path)
    commands.add_plan(store, "p")
    commands.add_task(store, clock, "p", "t", "# t\n")
    failure = Verdict(task="t", attempt_id="001", stage="commands", passed=False,
                      reason="command_failed", detail="`make` exited 2", main_sha="a" * 40,
                      head_sha="b" * 40, seq=1)  # fmt: skip
    write_verdict(store.task_dir("t"), failure)
    task_record = store.load_task("t")
    task_record.state = State.REWORK_PENDING
    task_record.last_attempt_id = "001"
    task_record.rework_reason = rework_reason_for(failure)
    store.save_task(task_record)
    config = load_config(tmp_path)
    assert [v.reason for _, v in auto_reverify_candidates(store, config)] == ["command_failed"]

    # A later attempt whose delivery check failed: not the gate's failure any more.
    task_record.last_attempt_id = "002"
    task_record.rework_reason = "not_pushed"
    store.save_task(task_record)
    assert auto_reverify_candidates(store, config) == []

    # The lead's note replaced arc's reason: arc leaves the task to the lead.
    task_record.last_attempt_id = "001"
    task_record.rework_reason = "rejected: the approach is wrong"
    store.save_task(task_record)
    assert auto_reverify_candidates(store, config) == []

    # The lead returned the task to todo.ready: not a candidate either.
    task_record.rework_reason = rework_reason_for(failure)
    task_record.state = State.READY
    store.save_task(task_record)
    assert auto_reverify_candidates(store, config) == []


def test_a_review_rework_after_a_reverify_does_not_count_toward_auto_rework(
    tmp_path: Path, clock: FakeClock
) -> None:
    store = ArcStore(tmp_path)
    commands.add_plan(store, "p", auto_rework=1)
    commands.add_task(store, clock, "p", "t", "# t\n")
    with store.task_lock("t"):
        waiting = store.load_task("t")
        waiting.state = State.REWORK_PENDING
        waiting.attempts, waiting.last_attempt_id = ["001"], "001"
        waiting.head_sha, waiting.retry_count = "b" * 40, 2
        store.save_task(waiting)
        attempt_id = claim_reverify(store, waiting, clock, "radian arc reverify")
    findings = [Finding(level="major", title="unchecked None", path="a.py", line=3)]
    review = Verdict(task="t", attempt_id=attempt_id, stage="review", passed=False,
                     reason="review_findings", detail="1 finding(s)", fix_level="major",
                     findings=findings, failing_findings=findings, head_sha="b" * 40,
                     seq=next_seq(store.task_dir("t")))  # fmt: skip
    write_verdict(store.task_dir("t"), review)

    events = apply_gate(store, load_config(tmp_path), GateRun("t", attempt_id, (review,), False),
                        clock)  # fmt: skip
    lines = texts_of(events)
    assert [(e.kind, e.task, e.state, e.attempt_id) for e in events] == [
        ("review_rework", "t", "todo.ready", attempt_id)]  # fmt: skip

    assert lines == ["t review findings -> todo.ready (Rework 1)"]
    after = store.load_task("t")
    assert (str(after.state), after.retry_count, after.auto_rework_used) == ("todo.ready", 0, 0)
    assert "- [major] unchecked None (a.py:3)" in store.read_brief("t")
    record = store.read_attempt_result("t", attempt_id)
    assert record is not None and record.failure_class == "reverify"


def test_reverify_without_a_gate_section_is_refused_and_pushes_nothing(
    world: GitWorld, clock: FakeClock
) -> None:
    # issue 14, bug 8: without [gate] there is no gate; reverify used to integrate anyway.
    write_arc_config(world, worker_args(world, {"t": {"default": {"files": DOUBLE}}}),
                     stages=("commands",), gate_commands=("test -e ok.txt",))  # fmt: skip
    add_plan(world, clock, ["t"])
    run_arc(world, clock)
    assert task(world, "t").state == State.REWORK_PENDING
    config = world.repo / ".radian" / "arc.toml"
    config.write_text(config.read_text().split("[gate]")[0])
    main_before = world.main_sha()
    radian = Path(sys.executable).parent / "radian"

    done = subprocess.run([str(radian), "arc", "--repo", str(world.repo), "reverify", "t"],
                          capture_output=True, text=True, check=False)  # fmt: skip

    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr == (
        "t: .radian/arc.toml has no [gate], so there is no gate to run again "
        "(add [gate]; stages = [] runs the integration alone)\n"
    )
    assert world.main_sha() == main_before
    after = task(world, "t")
    assert after.state == State.REWORK_PENDING and after.attempts == ["001"]

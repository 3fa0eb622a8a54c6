"""[[hooks]]: commands run on the events people want to hear about, and the report at the end."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from arc_helpers import make_plan
from conftest import run_env, write_config

from radian.arc.clock import FakeClock
from radian.arc.config import HOOK_EVENTS, HookConfig
from radian.arc.events import Event
from radian.arc.hooks import HOOK_OF_KIND, HOOK_OF_STATE, Hooks, hook_name
from radian.arc.states import State

Worker = Callable[..., list[str]]

# A hook that keeps what it was given: the event's JSON (stdin) and its environment.
KEEPER = """import json, os, sys
event = json.load(sys.stdin)
env = {k: v for k, v in os.environ.items() if k.startswith("RADIAN_")}
with open(sys.argv[1], "a") as out:
    out.write(json.dumps({"stdin": event, "env": env}) + "\\n")
"""


@pytest.mark.unit
def test_the_hook_events_are_the_table_and_only_it() -> None:
    assert set(HOOK_OF_STATE.values()) | set(HOOK_OF_KIND.values()) | {"plan_done"} == set(
        HOOK_EVENTS
    )
    assert (
        hook_name(Event("integrated", "t integrated", "t", str(State.INTEGRATED))) == "integrated"
    )
    for failed in (State.EXHAUSTED, State.IRRECOVERABLE, State.CANCELLED):
        assert hook_name(Event("exhausted", "x", "t", str(failed))) == "failed"
    assert hook_name(Event("model_wait", "x", "t", str(State.RETRY_WAIT))) == "model_wait"
    assert hook_name(Event("retry", "x", "t", str(State.RETRY_WAIT))) is None
    assert hook_name(Event("claimed", "x", "t", str(State.WORKING))) is None
    assert hook_name(Event("waiting", "x")) is None


def hooks_for(tmp_path: Path, *configs: HookConfig, unfinished: set[str] | None = None) -> Hooks:
    left = set() if unfinished is None else unfinished
    return Hooks(list(configs), tmp_path, FakeClock(), plan_of=lambda task: "p",
                 unfinished=lambda plan: set(left))  # fmt: skip


@pytest.mark.integration
def test_a_hook_that_fails_or_hangs_is_logged_and_the_next_runs(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    out = tmp_path / "kept.jsonl"
    (tmp_path / "keeper.py").write_text(KEEPER)
    keeper = f"{sys.executable} keeper.py {out}"
    hooks = hooks_for(
        tmp_path,
        HookConfig(run="echo broken >&2; exit 3"),
        HookConfig(run="sleep 30", timeout_secs=0.5),
        HookConfig(run=keeper, events=["failed"]),
    )
    started = time.monotonic()
    hooks(Event("exhausted", "t failed", "t", str(State.EXHAUSTED)))
    assert time.monotonic() - started < 0.5  # the loop never waits for a hook
    hooks.close()
    assert time.monotonic() - started < 10  # the hanging one was killed at its timeout
    assert [(run.event, run.exit_code) for run in hooks.ran] == [
        ("failed", 3), ("failed", None), ("failed", 0), ("plan_done", 3), ("plan_done", None)
    ]  # fmt: skip
    assert hooks.ran[0].error == "broken"
    assert hooks.ran[1].error == "timed out after 0.5 s"
    assert "exited 3: broken" in caplog.text and "outlived 0.5 s: killed" in caplog.text
    kept = json.loads(out.read_text())
    assert kept["stdin"]["event"] == "failed" and kept["stdin"]["task"] == "t"
    assert kept["env"]["RADIAN_EVENT"] == "failed" and kept["env"]["RADIAN_PLAN"] == "p"
    assert kept["env"]["RADIAN_STATE"] == "failed.exhausted"


@pytest.mark.integration
def test_plan_done_is_said_once_when_its_last_task_finishes(tmp_path: Path) -> None:
    left = {"a", "b"}
    hooks = Hooks([HookConfig(run="true", events=["plan_done"])], tmp_path, FakeClock(),
                  plan_of=lambda task: "p", unfinished=lambda plan: set(left))  # fmt: skip
    hooks(Event("integrated", "a integrated", "a", str(State.INTEGRATED)))
    left.discard("a")
    hooks(Event("integrated", "b integrated", "b", str(State.INTEGRATED)))
    left.discard("b")
    hooks(Event("cancelled", "b cancelled", "b", str(State.CANCELLED)))
    hooks.close()
    assert [run.event for run in hooks.ran] == ["plan_done"]


@pytest.mark.integration
def test_run_calls_the_hooks_on_its_events_and_ends_with_its_report(
    git_repo: Path, scripted_worker: Worker, clock: FakeClock, radian_bin: Path, tmp_path: Path
) -> None:
    steps = {
        "fails": {"default": {"do": "crash"}},
        "idle": {"default": {"do": "result", "cost": 0.25}},  # pushes nothing: rework pending
        "waits": {"001": {"do": "result", "outcome": "failed",
                          "model_error": {"kind": "unavailable", "message": "busy"}}},
    }  # fmt: skip
    config = write_config(git_repo, scripted_worker(steps), limits={"parallel": 3})
    out = tmp_path / "kept.jsonl"
    (tmp_path / "keeper.py").write_text(KEEPER)
    with config.open("a") as file:
        file.write(
            f"\n[[hooks]]\nrun = {json.dumps(f'{sys.executable} {tmp_path}/keeper.py {out}')}\n"
        )
    make_plan(git_repo, clock, {"fails": {"max_attempts": 0}}, plan="one")
    make_plan(git_repo, clock, {"idle": {}, "waits": {}}, plan="two")
    done = subprocess.run([str(radian_bin), "arc", "run", "--once"], cwd=git_repo,
                          capture_output=True, text=True, env=run_env(), timeout=120)  # fmt: skip
    assert done.returncode == 3, done.stdout + done.stderr  # a task failed
    kept = [json.loads(line) for line in out.read_text().splitlines()]
    said = sorted((k["stdin"]["event"], k["stdin"]["task"], k["stdin"]["plan"]) for k in kept)
    assert said == [
        ("failed", "fails", "one"),
        ("model_wait", "waits", "two"),
        ("plan_done", None, "one"),
        ("rework_pending", "idle", "two"),
    ]
    lines = done.stdout.splitlines()
    start = lines.index("report: 0 integrated, 1 failed, 2 not finished; cost $0.25 in total")
    assert lines[start + 1].startswith("  failed.exhausted  fails  $0.00  infrastructure")
    assert lines[start + 2 :] == [
        "  review.rework_pending  idle  $0.25  no_commits",
        "  todo.retry_wait  waits  $0.00",
    ]

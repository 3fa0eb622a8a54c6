"""arc on a GitWorld: a config with a gate, a plan of tasks, a scripted worker, the loop."""

from __future__ import annotations

import json
import stat
import sys
from pathlib import Path
from typing import Any

from gate_fixtures.world import REVIEWER, GitWorld
from radian.arc import commands
from radian.arc.clock import Clock
from radian.arc.config import load_config
from radian.arc.gate import GateVerifier
from radian.arc.loop import Loop
from radian.arc.records import Task
from radian.arc.store import ArcStore

GATE_WORKER = Path(__file__).resolve().parent / "gate_worker.py"
PYTEST = f"{sys.executable} -m pytest -q"
# A cheap real check for the loop's tests; the pytest stage itself is tested in
# test_gate_stages.py (and chosen where a test needs it).
CHEAP_CHECK = "grep -q 'def add' src/calc/ops.py"


def worker_args(world: GitWorld, scenario: dict[str, Any], name: str = "scenario") -> list[str]:
    path = world.root / f"{name}.json"
    path.write_text(json.dumps(scenario))
    launcher = path.with_suffix(".sh")
    launcher.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{GATE_WORKER}" "{path}"\n')
    launcher.chmod(launcher.stat().st_mode | stat.S_IXUSR)
    return [str(launcher)]


def worker_log(world: GitWorld, name: str = "scenario") -> list[str]:
    path = world.root / f"{name}.log"
    return path.read_text().splitlines() if path.is_file() else []


def toml_value(value: Any) -> str:
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {toml_value(v)}" for k, v in value.items()) + " }"
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(item) for item in value) + "]"
    return json.dumps(value)


def write_arc_config(
    world: GitWorld,
    exec_args: list[str],
    *,
    stages: tuple[str, ...] = ("commands", "review"),
    gate_commands: tuple[str, ...] = (CHEAP_CHECK,),
    review_mode: str = "clean",
    fix_level: str = "major",
    integration_commands: tuple[str, ...] = (),
    limits: dict[str, Any] | None = None,
) -> None:
    sections: dict[str, dict[str, Any]] = {
        "limits": {"max_attempts": 3, "parallel": 2, **(limits or {})},
        "worker": {"exec_args": exec_args, "stall_secs": 30.0, "wall_time_secs": 60.0,
                   "term_grace_secs": 0.5},
        "integration": {"commands": [{"run": run, "timeout_secs": 60}
                                     for run in integration_commands]},
        "gate": {"stages": list(stages), "fix_level": fix_level,
                 "commands": [{"run": run, "timeout_secs": 60} for run in gate_commands]},
        "gate.review": {"exec_args": [sys.executable, str(REVIEWER), review_mode,
                                      "{diff_file}"], "timeout_secs": 30},
    }  # fmt: skip
    lines = []
    for section, keys in sections.items():
        lines.append(f"[{section}]")
        lines.extend(f"{key} = {toml_value(value)}" for key, value in keys.items())
    path = world.repo / ".radian" / "arc.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")


def add_plan(
    world: GitWorld,
    clock: Clock,
    tasks: dict[str, dict[str, Any]] | list[str],
    plan: str = "p",
    **plan_options: Any,
) -> ArcStore:
    store = ArcStore(world.repo)
    commands.add_plan(store, plan, **plan_options)
    items = tasks if isinstance(tasks, dict) else {name: {} for name in tasks}
    for name, options in items.items():
        commands.add_task(store, clock, plan, name, f"# {name}\n\nDo {name}.\n", **options)
    commands.confirm(store, load_config(world.repo), plan)
    return store


# How often the loop looks at its gates here: a gate is a real thread, so the loop's poll is
# real time; at the default (0.2 s) every gate's end waits 0.1 s on average to be noticed.
LOOP_POLL_SECS = 0.05


def run_arc(world: GitWorld, clock: Clock, *, once: bool = False) -> list[str]:
    """`radian arc run` with the gate, as the CLI builds it; the printed lines."""
    store = ArcStore(world.repo)
    config = load_config(world.repo)
    lines: list[str] = []
    verifier = GateVerifier(store, config, clock, reverify_poll_secs=0)
    loop = Loop(store, config, clock, verifier=verifier, echo=lines.append,
                poll_secs=LOOP_POLL_SECS)  # fmt: skip
    loop.run(once=once)
    return lines


def task(world: GitWorld, name: str) -> Task:
    return ArcStore(world.repo).load_task(name)


def brief(world: GitWorld, name: str) -> str:
    return ArcStore(world.repo).read_brief(name)

"""The gate's stages as a library, on a real git world: commands, conflicts, integration."""

from __future__ import annotations

import sys
import time

import pytest
from gate_fixtures.world import CHECK_DOUBLE, OPS_WITH_DOUBLE, GitWorld, run_git

from radian.arc.clock import FakeClock
from radian.arc.config import parse_config
from radian.arc.gate.pipeline import GateRun, run_gate
from radian.arc.gate.stage import GateJob
from radian.arc.gate.verdict import all_verdicts, last_verdict

pytestmark = pytest.mark.integration

PYTEST = f"{sys.executable} -m pytest -q"

BROKEN_ADD = """\
def add(a, b):
    return a - b


def is_positive(x):
    return x > 0
"""


def gate_job(world: GitWorld, task: str, head_sha: str, toml: str) -> GateJob:
    config = parse_config(toml, "arc.toml")
    return GateJob(
        repo_root=world.repo,
        task=task,
        attempt_id="001",
        head_sha=head_sha,
        config=config,
        fix_level=config.gate.fix_level if config.gate else "major",
        brief_text=f"# {task}\n\nAdd double().\n",
        task_dir=world.repo / ".radian" / "arc" / "runs" / task,
    )


def commands_toml(run: str = PYTEST, timeout: float = 60, integration: str = "") -> str:
    return f"""
[gate]
stages = ["commands"]
commands = [{{ run = "{run}", timeout_secs = {timeout} }}]
[integration]
commands = [{integration}]
"""


def add_double(world: GitWorld, task: str = "double") -> str:
    return world.task_commit(
        task, {"src/calc/ops.py": OPS_WITH_DOUBLE, "tests/check_double.py": CHECK_DOUBLE}
    )


def run(job: GateJob) -> GateRun:
    return run_gate(job, FakeClock())


def test_passing_commands_then_integration_merges_and_pushes(world: GitWorld) -> None:
    old_main = world.main_sha()
    head = add_double(world)
    toml = commands_toml(integration=f'{{ run = "{PYTEST}" }}')
    gate = run(gate_job(world, "double", head, toml))

    assert [(v.stage, v.passed, v.reason) for v in gate.verdicts] == [
        ("commands", True, None),
        ("integration", True, None),
    ]
    commands, integration = gate.verdicts
    assert commands.main_sha == old_main and commands.head_sha == head
    assert integration.base_sha == old_main == integration.main_sha
    assert world.main_sha() == integration.integrated_sha
    assert "def double" in world.read_main("src/calc/ops.py")
    # The merge commit has the old main and the task's head as parents.
    parents = run_git(world.remote, "rev-list", "--parents", "-n", "1", "main").split()[1:]
    assert parents == [old_main, head]
    task_dir = world.repo / ".radian/arc/runs/double"
    assert commands.log is not None
    assert "3 passed" in (task_dir / commands.log).read_text()
    assert [v.stage for v in all_verdicts(task_dir)] == ["commands", "integration"]
    assert last_verdict(task_dir) == integration
    # The scratch worktrees are gone and the user's checkout was never touched.
    assert not (world.repo / ".radian/arc/gate-worktrees/double/verify").exists()
    assert run_git(world.repo, "status", "--porcelain") == ""


def test_failing_command_stops_the_gate_with_command_failed(world: GitWorld) -> None:
    old_main = world.main_sha()
    head = world.task_commit("broken", {"src/calc/ops.py": BROKEN_ADD})
    gate = run(gate_job(world, "broken", head, commands_toml()))

    assert gate.failure is not None
    assert (gate.failure.stage, gate.failure.reason) == ("commands", "command_failed")
    assert gate.failure.command == PYTEST
    assert len(gate.verdicts) == 1
    assert world.main_sha() == old_main
    log = (world.repo / ".radian/arc/runs/broken" / str(gate.failure.log)).read_text()
    assert "1 failed" in log


def test_a_command_past_its_timeout_is_killed_with_reason_timeout(world: GitWorld) -> None:
    slow_check = "import time\n\n\ndef test_slow():\n    time.sleep(60)\n"
    head = world.task_commit("slow", {"tests/check_slow.py": slow_check})
    started = time.monotonic()
    gate = run(gate_job(world, "slow", head, commands_toml(timeout=1.5)))

    assert gate.failure is not None and gate.failure.reason == "timeout"
    assert gate.failure.detail == f"`{PYTEST}` timed out after 1.5s"
    assert time.monotonic() - started < 30  # pytest was killed, not waited for


def test_a_conflict_with_main_fails_the_first_stage_with_the_paths(world: GitWorld) -> None:
    head = world.task_commit("broken", {"src/calc/ops.py": BROKEN_ADD})
    moved = world.push_main({"src/calc/ops.py": BROKEN_ADD.replace("a - b", "b + a")})
    gate = run(gate_job(world, "broken", head, commands_toml()))

    assert gate.failure is not None
    assert (gate.failure.stage, gate.failure.reason) == ("commands", "conflict")
    assert gate.failure.conflicted_paths == ["src/calc/ops.py"]
    assert gate.failure.main_sha == moved


def test_integration_command_failure_records_base_sha(world: GitWorld) -> None:
    old_main = world.main_sha()
    head = add_double(world)
    toml = commands_toml(integration='{ run = "exit 3" }')
    gate = run(gate_job(world, "double", head, toml))

    assert gate.failure is not None
    assert (gate.failure.stage, gate.failure.reason) == ("integration", "command_failed")
    assert gate.failure.base_sha == old_main
    assert gate.failure.detail == "`exit 3` exited 3"
    assert world.main_sha() == old_main


def test_a_target_that_moves_during_integration_is_fetched_and_retried_once(
    world: GitWorld,
) -> None:
    head = add_double(world)
    # The integration command itself moves main the first time it runs: a colleague's push
    # landing between arc's merge and arc's push.
    marker = world.root / "moved-once"
    push = (
        f"test -e {marker} || (touch {marker} && cd {world.other} && "
        "git fetch -q origin && git checkout -q -B main origin/main && "
        "echo notes > NOTES.md && git add NOTES.md && git commit -qm notes && "
        "git push -q origin main)"
    )
    gate = run(gate_job(world, "double", head, commands_toml(integration=f'{{ run = "{push}" }}')))

    integration = gate.verdicts[-1]
    assert integration.passed, integration.detail
    moved = run_git(world.other, "rev-parse", "HEAD")
    assert integration.base_sha == moved
    assert world.read_main("NOTES.md") == "notes"
    assert "def double" in world.read_main("src/calc/ops.py")


def test_a_target_that_keeps_moving_fails_with_target_moved(world: GitWorld) -> None:
    head = add_double(world)
    counter = world.root / "count"
    push = (
        f"echo x >> {counter} && cd {world.other} && "
        "git fetch -q origin && git checkout -q -B main origin/main && "
        f"cp {counter} count.txt && git add count.txt && git commit -qm more && "
        "git push -q origin main"
    )
    gate = run(gate_job(world, "double", head, commands_toml(integration=f'{{ run = "{push}" }}')))

    assert gate.failure is not None
    assert (gate.failure.stage, gate.failure.reason) == ("integration", "target_moved")
    assert counter.read_text().count("x") == 2


def test_a_target_moved_only_by_other_hosts_integrations_is_a_queue_not_a_moving_target(
    world: GitWorld,
) -> None:
    # Three times, another host's arc integrates first (its merge commit's subject is arc's):
    # each round is a wait in line, not one of the two rounds a moving target gets.
    head = add_double(world)
    counter = world.root / "count"
    push = (
        f"test $(cat {counter} 2>/dev/null | wc -l) -ge 3 || (echo x >> {counter} && "
        f"cd {world.other} && git fetch -q origin && git checkout -q -B main origin/main && "
        f"cp {counter} count.txt && git add count.txt && "
        "git commit -qm 'arc: integrate elsewhere' && git push -q origin main)"
    )
    gate = run(gate_job(world, "double", head, commands_toml(integration=f'{{ run = "{push}" }}')))

    integration = gate.verdicts[-1]
    assert integration.passed, integration.detail
    assert counter.read_text().count("x") == 3
    assert "def double" in world.read_main("src/calc/ops.py")

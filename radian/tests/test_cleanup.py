"""Worktrees of integrated or failed tasks are removed; `radian arc gc` removes what is left."""

from __future__ import annotations

import subprocess

import pytest
from gate_fixtures.arc_world import add_plan, run_arc, task, worker_args, write_arc_config
from gate_fixtures.world import OPS_WITH_DOUBLE, GitWorld
from test_signals import RADIAN

from radian.arc import git as arc_git
from radian.arc.clock import FakeClock

pytestmark = pytest.mark.integration


def test_run_removes_the_worktree_of_an_integrated_task(world: GitWorld, clock: FakeClock) -> None:
    scenario = {"t": {"default": {"files": {"src/calc/ops.py": OPS_WITH_DOUBLE}}}}
    write_arc_config(world, worker_args(world, scenario), stages=("commands",))
    add_plan(world, clock, ["t"])

    lines = run_arc(world, clock)

    assert str(task(world, "t").state) == "done.integrated", lines
    assert not arc_git.worktree_path(world.repo, "t").exists()
    listed = subprocess.run(["git", "worktree", "list"], cwd=world.repo, text=True,
                            capture_output=True, check=True).stdout  # fmt: skip
    assert "worktrees/t" not in listed
    assert arc_git.local_branch_exists(world.repo, "arc/t")  # the branch stays by default


def test_gc_removes_leftovers_and_by_option_branches(world: GitWorld, clock: FakeClock) -> None:
    scenario = {"t": {"default": {"files": {"src/calc/ops.py": OPS_WITH_DOUBLE}}}}
    write_arc_config(world, worker_args(world, scenario), stages=("commands",))
    config = world.repo / ".radian" / "arc.toml"
    config.write_text(config.read_text() + "[cleanup]\nworktrees = false\n")
    add_plan(world, clock, ["t"])
    run_arc(world, clock)
    assert arc_git.worktree_path(world.repo, "t").is_dir()  # kept: cleanup is off

    done = subprocess.run([RADIAN, "arc", "--repo", str(world.repo), "gc", "--branches"],
                          capture_output=True, text=True, timeout=60)  # fmt: skip

    assert done.returncode == 0, done.stderr
    assert done.stdout == "t worktree removed\nt branch arc/t removed\n"
    assert not arc_git.worktree_path(world.repo, "t").exists()
    assert not arc_git.local_branch_exists(world.repo, "arc/t")
    again = subprocess.run([RADIAN, "arc", "--repo", str(world.repo), "gc"],
                           capture_output=True, text=True, timeout=60)  # fmt: skip
    assert again.stdout == "nothing to clean up\n"

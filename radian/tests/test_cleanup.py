"""Worktrees of integrated or failed tasks are removed; `radian arc gc` removes what is left."""

from __future__ import annotations

import json
import subprocess

import pytest
from gate_fixtures.arc_world import add_plan, run_arc, task, worker_args, write_arc_config
from gate_fixtures.world import OPS_WITH_DOUBLE, GitWorld
from test_signals import RADIAN

from radian.arc import git as arc_git
from radian.arc.clock import FakeClock
from radian.arc.store import lock_path

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


def _remote_has(world: GitWorld, branch: str) -> bool:
    listed = subprocess.run(["git", "for-each-ref", f"refs/heads/{branch}"], cwd=world.remote,
                            capture_output=True, text=True, check=True).stdout  # fmt: skip
    return bool(listed.strip())


def _cleanup(world: GitWorld, settings: str) -> None:
    config = world.repo / ".radian" / "arc.toml"
    config.write_text(config.read_text() + f"[cleanup]\n{settings}\n")


def test_run_prunes_an_integrated_tasks_branches_and_lock_files_by_policy(
    world: GitWorld, clock: FakeClock
) -> None:
    # issue 33: branches (local and remote) and lock files of finished tasks stayed forever
    scenario = {"t": {"default": {"files": {"src/calc/ops.py": OPS_WITH_DOUBLE}}}}
    write_arc_config(world, worker_args(world, scenario), stages=("commands",))
    _cleanup(world, "branches = true\nremote_branches = true")
    add_plan(world, clock, ["t"])

    run_arc(world, clock)

    assert str(task(world, "t").state) == "done.integrated"
    assert "def double" in world.read_main("src/calc/ops.py")  # the work is in the target
    assert not arc_git.local_branch_exists(world.repo, "arc/t")
    assert not _remote_has(world, "arc/t")
    assert arc_git.rev_parse(world.repo, "refs/remotes/origin/arc/t") is None
    assert not arc_git.worktree_lock_path(world.repo, "t").exists()
    assert not lock_path(world.repo, "task", "t").exists()
    assert not lock_path(world.repo, "gate", "t").exists()


def test_a_failed_tasks_remote_branch_is_kept_and_its_rework_continues_from_it(
    world: GitWorld, clock: FakeClock
) -> None:
    scenario = {"t": {"001": {"files": {"first.txt": "first attempt\n"}, "outcome": "failed"},
                      "default": {"files": {"src/calc/ops.py": OPS_WITH_DOUBLE}}}}  # fmt: skip
    write_arc_config(world, worker_args(world, scenario), stages=("commands",),
                     limits={"max_attempts": 0})  # fmt: skip
    _cleanup(world, "branches = true\nremote_branches = true")
    add_plan(world, clock, ["t"])
    run_arc(world, clock)
    assert str(task(world, "t").state) == "failed.exhausted"
    assert not arc_git.local_branch_exists(world.repo, "arc/t")  # the remote has its work
    assert _remote_has(world, "arc/t")  # a rework may need it: never removed by policy

    brief = world.root / "rework.md"
    brief.write_text("Finish it.\n")
    reworked = subprocess.run([RADIAN, "arc", "--repo", str(world.repo), "rework", "t",
                               "--brief", str(brief)], capture_output=True, text=True,
                              timeout=60)  # fmt: skip
    assert reworked.returncode == 0, reworked.stderr
    run_arc(world, clock)

    assert str(task(world, "t").state) == "done.integrated"
    assert world.read_main("first.txt") == "first attempt"  # continued from the remote branch
    assert not _remote_has(world, "arc/t")  # integrated now: pruned


def test_gc_keeps_a_local_branch_with_work_the_remote_lacks_and_prunes_the_remote_once(
    world: GitWorld, clock: FakeClock
) -> None:
    scenario = {"t": {"default": {"files": {"src/calc/ops.py": OPS_WITH_DOUBLE}}},
                "u": {"default": {"files": {"u.txt": "u\n"}, "outcome": "failed"}}}  # fmt: skip
    write_arc_config(world, worker_args(world, scenario), stages=("commands",),
                     limits={"max_attempts": 0})  # fmt: skip
    add_plan(world, clock, ["t", "u"])
    run_arc(world, clock)
    assert str(task(world, "u").state) == "failed.exhausted"
    assert arc_git.local_branch_exists(world.repo, "arc/t")  # off by default: all kept
    assert _remote_has(world, "arc/t")
    # u's local branch gets a commit that was never pushed
    head = arc_git.rev_parse(world.repo, "refs/heads/arc/u")
    tree = arc_git.run_git(world.repo, "rev-parse", f"{head}^{{tree}}").stdout.strip()
    local = arc_git.run_git(world.repo, "commit-tree", tree, "-p", str(head), "-m", "unpushed")
    arc_git.run_git(world.repo, "update-ref", "refs/heads/arc/u", local.stdout.strip())

    done = subprocess.run([RADIAN, "arc", "--repo", str(world.repo), "gc", "--branches",
                           "--remote-branches", "--json"], capture_output=True, text=True,
                          timeout=60)  # fmt: skip

    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["lines"] == [
        "t branch arc/t removed",
        "t branch arc/t removed from origin",
    ]
    assert arc_git.local_branch_exists(world.repo, "arc/u")  # its unpushed commit is kept
    assert _remote_has(world, "arc/u")  # failed: a rework continues from it
    assert not _remote_has(world, "arc/t")
    again = subprocess.run([RADIAN, "arc", "--repo", str(world.repo), "gc", "--branches",
                            "--remote-branches"],
                           capture_output=True, text=True, timeout=60)  # fmt: skip
    assert again.stdout == "nothing to clean up\n"


def test_run_and_gc_pack_the_loose_refs_each_task_leaves(world: GitWorld, clock: FakeClock) -> None:
    # issue 33: every fetch and push read each task's loose ref files (a push at 1,000 done:
    # 77 ms of CPU loose, 36 ms packed)
    write_arc_config(world, worker_args(world, {}), stages=("commands",))
    head = arc_git.rev_parse(world.repo, "HEAD")
    for name in ("arc/a", "arc/b"):
        arc_git.run_git(world.repo, "update-ref", f"refs/heads/{name}", str(head))
    loose = world.repo / ".git" / "refs" / "heads" / "arc"
    assert sorted(path.name for path in loose.iterdir()) == ["a", "b"]

    run_arc(world, clock)  # nothing to do: the run packs the refs all the same

    assert not loose.exists() or not any(loose.iterdir())
    assert arc_git.rev_parse(world.repo, "refs/heads/arc/a") == head
    arc_git.run_git(world.repo, "update-ref", "refs/heads/arc/c", str(head))
    done = subprocess.run([RADIAN, "arc", "--repo", str(world.repo), "gc"],
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert not (loose / "c").exists()
    assert arc_git.rev_parse(world.repo, "refs/heads/arc/c") == head

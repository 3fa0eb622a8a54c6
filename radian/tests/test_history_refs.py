"""Costs flat as history grows (issue 33): integrated tasks leave no refs behind beyond the
newest `[cleanup] keep_integrated_branches`, so what an attempt's fetch and push read (every
ref here, every ref of the remote) does not grow with the tasks done. Counted, not timed."""

from __future__ import annotations

import os
import subprocess
from typing import Any

import pytest
from gate_fixtures.arc_world import add_plan, run_arc
from gate_fixtures.world import GitWorld
from test_claim_archive import ARCHIVE, archived, setup
from test_signals import RADIAN

from radian.arc import git as arc_git
from radian.arc.clock import FakeClock
from radian.arc.config import ArcConfig
from radian.arc.store import ArcStore

pytestmark = pytest.mark.integration


def refs(where: Any) -> set[str]:
    listed = subprocess.run(["git", "for-each-ref", "--format=%(refname)"], cwd=where,
                            capture_output=True, text=True, check=True).stdout  # fmt: skip
    return set(listed.split())


def claims(names: list[str]) -> set[str]:
    return {f"refs/arc-claims/{name}" for name in names}


def test_the_refs_an_attempt_reads_do_not_grow_with_the_tasks_done(
    world: GitWorld, clock: FakeClock
) -> None:
    first, second = ["a1", "a2", "a3"], ["b1", "b2", "b3", "b4"]
    setup(world, first + second, keep=0)
    add_plan(world, clock, first, plan="p1")
    run_arc(world, clock)
    local_after_first, remote_after_first = refs(world.repo), refs(world.remote)

    add_plan(world, clock, second, plan="p2")
    run_arc(world, clock)

    store = ArcStore(world.repo)
    assert {str(store.load_task(name).state) for name in first + second} == {"done.integrated"}
    # Here: the same refs after 3 tasks done and after 7 (no branch, tracking ref or claim
    # copy per task; the claims archive's copy); on the remote: its main and the claims
    # archive, which holds every task's claim (radian/docs/hosts.md), nothing else.
    assert refs(world.repo) == local_after_first
    assert {ref for ref in local_after_first if "arc" in ref} == {ARCHIVE}, local_after_first
    assert remote_after_first == {"refs/heads/main", ARCHIVE}
    assert refs(world.remote) == {"refs/heads/main", ARCHIVE}
    assert set(archived(world.remote)) == set(first + second)
    for name in first + second:
        assert world.read_main(f"{name}.txt") == name  # the work is in the target


def test_run_keeps_the_newest_integrated_tasks_branches_and_prunes_the_older(
    world: GitWorld, clock: FakeClock
) -> None:
    names = ["t1", "t2", "t3", "t4"]
    setup(world, names, keep=1)
    add_plan(world, clock, names)

    run_arc(world, clock)

    store = ArcStore(world.repo)
    tasks = [store.load_task(name) for name in names]
    assert {str(task.state) for task in tasks} == {"done.integrated"}
    newest = max(tasks, key=lambda task: (task.updated_at, task.name)).name
    assert {ref for ref in refs(world.repo) if "arc" in ref} == {
        f"refs/heads/arc/{newest}",
        f"refs/remotes/origin/arc/{newest}",
        f"refs/arc-claims/{newest}",
        ARCHIVE,
    }
    assert refs(world.remote) == {"refs/heads/main", f"refs/heads/arc/{newest}", ARCHIVE} | claims(
        [newest]
    )
    assert set(archived(world.remote)) == set(names) - {newest}


def test_gc_prunes_the_branches_an_earlier_run_left_in_one_push(
    world: GitWorld, clock: FakeClock, tmp_path: Any
) -> None:
    names = ["t1", "t2", "t3", "t4", "t5"]
    setup(world, names, keep=100)  # the default: a run of 5 keeps every branch
    assert ArcConfig().cleanup.keep_integrated_branches == 100
    add_plan(world, clock, names)
    run_arc(world, clock)
    assert {f"refs/heads/arc/{name}" for name in names} <= refs(world.remote)
    config = world.repo / ".radian" / "arc.toml"
    config.write_text(config.read_text().replace("keep_integrated_branches = 100",
                                                 "keep_integrated_branches = 2"))  # fmt: skip
    trace = tmp_path / "git.trace"

    traced = {**os.environ, "GIT_TRACE": str(trace)}  # every git command gc runs
    done = subprocess.run([RADIAN, "arc", "--repo", str(world.repo), "gc"], capture_output=True,
                          text=True, timeout=60, env=traced)  # fmt: skip

    assert done.returncode == 0, done.stderr
    store = ArcStore(world.repo)
    order = sorted(names, key=lambda name: (store.load_task(name).updated_at, name))
    older, newest = order[:3], order[3:]
    assert done.stdout.splitlines() == [
        line
        for name in older
        for line in (
            f"{name} branch arc/{name} removed",
            f"{name} branch arc/{name} removed from origin",
        )
    ]
    assert refs(world.remote) == {"refs/heads/main", ARCHIVE} | claims(newest) | {
        f"refs/heads/arc/{name}" for name in newest
    }
    assert set(archived(world.remote)) == set(older)
    assert {ref for ref in refs(world.repo) if "arc" in ref} == {
        f"{prefix}arc/{name}"
        for name in newest
        for prefix in ("refs/heads/", "refs/remotes/origin/")
    } | claims(newest) | {ARCHIVE}
    # three tasks' branches, local and remote, and their claims: one `branch -D`, three
    # pushes (the branches, the archive, the claim refs), not one a task
    commands = [line.split("built-in: git ", 1)[1] for line in trace.read_text().splitlines()
                if "built-in: git " in line]  # fmt: skip
    assert sum(command.startswith("branch -D") for command in commands) == 1, commands
    assert sum(command.startswith("push") for command in commands) == 3, commands
    assert arc_git.rev_parse(world.repo, "refs/remotes/origin/main") == world.main_sha()

"""Task and plan names never meet arc's own files (issue 14, bug 2)."""

from __future__ import annotations

import pytest
from gate_fixtures.arc_world import add_plan, run_arc, task, worker_args, write_arc_config
from gate_fixtures.world import GitWorld

from radian.arc.clock import FakeClock
from radian.arc.store import ArcStore

pytestmark = pytest.mark.integration


def test_tasks_named_like_arcs_own_locks_are_verified_and_integrated(
    world: GitWorld, clock: FakeClock
) -> None:
    names = ["integration", "remote", "registry", "run"]
    scenario = {name: {"default": {"files": {f"{name}.txt": f"{name}\n"}}} for name in names}
    write_arc_config(world, worker_args(world, scenario), stages=("commands",),
                     limits={"parallel": 4})  # fmt: skip
    add_plan(world, clock, names, plan="integration")

    lines = run_arc(world, clock)

    for name in names:
        assert str(task(world, name).state) == "done.integrated", lines
    locks = ArcStore(world.repo).root / "locks"
    # The task's own gate lock went with its worktree once it was integrated ([cleanup]);
    # arc's lock of the same name is another file, and clean-up left it alone.
    assert not (locks / "gate" / "integration.lock").exists()
    assert (locks / "arc" / "gate-integration.lock").exists()

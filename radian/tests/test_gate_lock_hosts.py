"""One gate per task across hosts (the closing note of issue 31): a gate holds the task's gate
lock from its start until its verdict is applied (the task's state moved), so another host
sharing the PostgreSQL store never starts a second gate of the task between the verdict and
its apply, and never runs its verification commands a second time.

A real PostgreSQL (the test set-up's), real git (a bare remote, arc's clone, a second
host's clone), real `GateVerifier`s. The first gate is held between its verdict and its
apply by not collecting it yet (its thread has ended, its loop has not looked): exactly
the window a running loop leaves between two passes. Each verification command run appends
a line to a marker file, so the commands run are counted."""

from __future__ import annotations

import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator

import psycopg
import pytest
from conftest import run_env
from filelock import Timeout
from gate_fixtures.arc_world import add_plan, worker_args, write_arc_config
from gate_fixtures.world import OPS_WITH_DOUBLE, GitWorld, run_git

from radian.arc import commands
from radian.arc.clock import FakeClock
from radian.arc.config import ArcConfig, load_config
from radian.arc.events import texts_of
from radian.arc.gate import GateVerifier
from radian.arc.gate.verdict import all_verdicts
from radian.arc.loop import Loop
from radian.arc.states import State
from radian.arc.store_postgres import PostgresStore

pytestmark = pytest.mark.integration


# The gate's verification command: it notes each run in the marker file (commands.log), and
# passes (the task is integrated) or fails (the lead's turn: no integration).
PASSES = "echo ran >> ../../../commands.log"
FAILS = "echo ran >> ../../../commands.log; exit 3"
PASSED = "t integrated -> done.integrated"
FAILED = "t commands failed (command_failed) -> review.rework_pending"


@pytest.fixture
def gate_command() -> str:
    return PASSES


@pytest.fixture
def hosts(
    world: GitWorld, pg_url: str, clock: FakeClock, gate_command: str
) -> Iterator[tuple[PostgresStore, PostgresStore]]:
    """Host 1 (arc's clone) and host 2 (a clone of its own) on one store; task t delivered
    by host 1 and left in review.verifying (a loop without a gate), its gate not begun."""
    marker = world.root / "commands.log"
    scenario = {"t": {"default": {"files": {"src/calc/ops.py": OPS_WITH_DOUBLE}}}}
    command = gate_command.replace("../../../commands.log", str(marker))
    write_arc_config(world, worker_args(world, scenario), stages=("commands",),
                     gate_commands=(command,))  # fmt: skip
    first = PostgresStore(world.repo, pg_url, host="h1")
    second = PostgresStore(world.clone("h2"), pg_url, host="h2")
    config = load_config(world.repo)
    commands.add_plan(first, "p")
    commands.add_task(first, clock, "p", "t", "# t\n\nDo t.\n")
    commands.confirm(first, config, "p")
    Loop(first, config, clock, echo=lambda line: None).run()
    assert first.load_task("t").state is State.VERIFYING
    yield first, second
    first.close()
    second.close()


def command_runs(world: GitWorld) -> int:
    """How many times the gate's verification command ran, on any host."""
    marker = world.root / "commands.log"
    return len(marker.read_text().splitlines()) if marker.is_file() else 0


def gate_thread_ended(task: str) -> None:
    """Wait for this process's gate thread of `task` to end: its verdict is written, and
    nothing has applied it yet (no one has collected it)."""
    for thread in threading.enumerate():
        if thread.name == f"gate-{task}":
            thread.join(120)
            assert not thread.is_alive()


def settle(verifier: GateVerifier) -> list[str]:
    """Collect until the verifier has no gate left: what it printed."""
    lines = texts_of(verifier.collect())
    deadline = time.monotonic() + 120
    while verifier.active():
        assert time.monotonic() < deadline, "a gate never ended"
        time.sleep(0.05)  # polling a real background thread, not a backoff
        lines += texts_of(verifier.collect())
    return lines


def lock_free(store: PostgresStore, task: str) -> bool:
    lock = store.gate_lock(task)
    try:
        lock.acquire(timeout=0)
    except Timeout:
        return False
    lock.release()
    return True


def first_words(lines: list[str]) -> list[str]:
    """The lines as far as the state the verdict moved the task to (without its detail)."""
    return [re.sub(r" \([0-9a-f]+ on main\)$", "", line.split(": ")[0]) for line in lines]


@pytest.mark.postgres
@pytest.mark.parametrize(
    ("gate_command", "verdict"), [(PASSES, PASSED), (FAILS, FAILED)], ids=["passes", "fails"]
)
def test_a_second_host_starts_no_gate_of_a_task_whose_verdict_is_not_applied_yet(
    world: GitWorld, hosts: tuple[PostgresStore, PostgresStore], clock: FakeClock, verdict: str
) -> None:
    """Host 1's gate has reached its verdict (its commands passed and it integrated the
    task, or they failed), its loop has not applied it yet. Host 2's pass finds the task
    review.verifying: it starts no gate (the gate lock is still host 1's) and runs no
    command. Host 1 applies its verdict, and only then lets go of the lock. (Before: the
    lock was let go at the verdict and host 2 took the gate up: a second gate that found
    the integration, or, for a failing command, the verification commands run again.)"""
    first, second = hosts
    config: ArcConfig = load_config(world.repo)
    one = GateVerifier(first, config, clock)
    one.start("t", "001")
    gate_thread_ended("t")
    assert command_runs(world) == 1
    assert first.load_task("t").state is State.VERIFYING  # the verdict is not applied yet

    two = GateVerifier(second, config, clock)
    assert settle(two) == []  # host 2's pass: no gate started, nothing applied

    assert command_runs(world) == 1  # the verification ran once
    assert all_verdicts(second.task_dir("t")) == []
    assert first.load_task("t").state is State.VERIFYING
    assert not lock_free(second, "t")  # still host 1's: its verdict waits to be applied

    lines = settle(one)

    assert first_words(lines) == [verdict]
    assert first.load_task("t").state is not State.VERIFYING
    assert lock_free(second, "t")  # let go once the verdict is applied
    # A host that finds the task past the gate (or starts one by a stale view) does not gate.
    assert settle(two) == []
    two.start("t", "001")
    assert settle(two) == []
    assert command_runs(world) == 1
    assert all_verdicts(second.task_dir("t")) == []
    merges = run_git(world.remote, "log", "--first-parent", "--format=%s", "main").splitlines()
    assert merges.count("arc: integrate t") == (1 if verdict == PASSED else 0)


@pytest.mark.postgres
def test_a_verdict_whose_gate_lock_was_lost_is_left_to_the_lock_holder(
    world: GitWorld, hosts: tuple[PostgresStore, PostgresStore], pg_url: str, clock: FakeClock
) -> None:
    """Host 1's gate lock goes with its connection (a restart, a cut) before its verdict is
    applied, and another holds the lock now: a lock lost is not a lock held, so host 1
    applies nothing. Once the lock is free again, host 1's next pass takes it and applies
    the verdict found on its disk, without running the gate again."""
    first, second = hosts
    config = load_config(world.repo)
    one = GateVerifier(first, config, clock)
    one.start("t", "001")
    gate_thread_ended("t")
    with psycopg.connect(pg_url, autocommit=True) as admin:
        cut = admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND granted"
        ).fetchall()
    assert len(cut) == 1  # the gate lock's connection
    other = second.gate_lock("t")
    other.acquire(timeout=5)  # host 2 holds it now
    try:
        assert settle(one) == []
        assert first.load_task("t").state is State.VERIFYING
    finally:
        other.release()

    lines = settle(one)

    assert first_words(lines) == [PASSED]
    assert first.load_task("t").state is State.INTEGRATED
    assert command_runs(world) == 1
    assert lock_free(second, "t")


HOST_ONE = """\
import sys, threading
from pathlib import Path
from radian.arc.clock import FakeClock
from radian.arc.config import load_config
from radian.arc.gate import GateVerifier
from radian.arc.store_postgres import PostgresStore

repo, url = Path(sys.argv[1]), sys.argv[2]
store = PostgresStore(repo, url, host="h1")
verifier = GateVerifier(store, load_config(repo), FakeClock())
verifier.start("t", "001")
for thread in threading.enumerate():
    if thread.name == "gate-t":
        thread.join()
print("verdict", flush=True)
threading.Event().wait()  # killed here, its verdict never applied
"""


@pytest.mark.postgres
def test_a_gate_killed_before_its_apply_lets_another_host_gate_the_task(
    world: GitWorld, hosts: tuple[PostgresStore, PostgresStore], pg_url: str, clock: FakeClock
) -> None:
    """Host 1 (a real process) reaches its gate's verdict and is SIGKILLed before applying
    it. While it lives, host 2 starts no gate of the task; once it is dead its lock goes
    with its connection, and host 2 takes the gate up (the takeover of issue 31): it finds
    host 1's integration on main and records the task integrated, merging nothing again."""
    first, second = hosts
    script = world.root / "host_one.py"
    script.write_text(HOST_ONE)
    process = subprocess.Popen(
        [sys.executable, str(script), str(world.repo), pg_url],
        stdout=subprocess.PIPE,
        text=True,
        env=run_env(),
    )
    try:
        assert process.stdout is not None
        assert process.stdout.readline() == "verdict\n"
        assert command_runs(world) == 1
        config = load_config(world.repo)
        two = GateVerifier(second, config, clock)
        assert settle(two) == []  # host 1 lives and holds the lock: no second gate
        assert command_runs(world) == 1
    finally:
        process.kill()
        process.communicate()  # its pipe closed with it

    deadline = time.monotonic() + 60
    lines: list[str] = []
    while not lines:
        assert time.monotonic() < deadline, "host 2 never took the gate up"
        lines = settle(two)
        time.sleep(0.05)  # the server notices the dead connection: a real event, no backoff

    assert first_words(lines) == [PASSED]
    assert "on main" in lines[0]
    assert first.load_task("t").state is State.INTEGRATED
    merges = run_git(world.remote, "log", "--first-parent", "--format=%s", "main").splitlines()
    assert merges.count("arc: integrate t") == 1  # host 1's, found: not merged again
    assert lock_free(second, "t")


def test_on_one_host_the_gate_lock_is_held_until_the_verdict_is_applied(
    world: GitWorld, clock: FakeClock
) -> None:
    """The files store (one host) holds the gate lock as long: between the verdict and its
    apply no other process of the clone (`reverify`, clean-up) finds the gate over."""
    scenario = {"t": {"default": {"files": {"src/calc/ops.py": OPS_WITH_DOUBLE}}}}
    write_arc_config(world, worker_args(world, scenario), stages=("commands",),
                     gate_commands=("exit 3",))  # fmt: skip
    store = add_plan(world, clock, ["t"])
    config = load_config(world.repo)
    Loop(store, config, clock, echo=lambda line: None).run()
    one = GateVerifier(store, config, clock)
    one.start("t", "001")
    gate_thread_ended("t")
    assert len(all_verdicts(store.task_dir("t"))) == 1
    with pytest.raises(Timeout):
        store.gate_lock("t").acquire(timeout=0)  # its verdict is not applied yet

    assert first_words(settle(one)) == [FAILED]

    assert store.load_task("t").state is State.REWORK_PENDING
    lock = store.gate_lock("t")
    lock.acquire(timeout=0)  # let go once applied
    lock.release()

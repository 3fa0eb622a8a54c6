"""The integration is a keyed write (issue 31: a PostgreSQL restart while hosts integrate).

Its key is the task: the merge commit's subject `arc: integrate <task>`. A push that landed
whose record did not (its host stopped, its store's connections ended) is looked up before
the task is merged again; the locks a holder can lose without knowing (PostgreSQL's advisory
locks go with their connection) are asked again before the push; a gate taken up on another
host fetches the head it does not have instead of reading git's answer as a conflict.

On a real git world (a bare remote, arc's clone, the worker's clone) and, for the locks, a
real PostgreSQL whose connections are cut with pg_terminate_backend."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import psycopg
import pytest
from conftest import git, make_git_repo, run_env, worker_exec_args, write_config
from filelock import Timeout
from gate_fixtures.world import GitWorld, run_git

from radian.arc.clock import FakeClock
from radian.arc.config import parse_config
from radian.arc.gate.integration import run_integration
from radian.arc.gate.pipeline import run_gate
from radian.arc.gate.process import StopRequested
from radian.arc.gate.stage import GateJob
from radian.arc.states import State
from radian.arc.store import ArcStore
from radian.arc.store_postgres import AdvisoryLock, PostgresStore

pytestmark = pytest.mark.integration


def job(world: GitWorld, task: str, head_sha: str) -> GateJob:
    config = parse_config("", "arc.toml")
    return GateJob(
        repo_root=world.repo,
        task=task,
        attempt_id="001",
        head_sha=head_sha,
        config=config,
        fix_level="major",
        brief_text=f"# {task}\n",
        task_dir=world.repo / ".radian" / "arc" / "runs" / task,
        branch=f"arc/{task}",
    )


def integrations(world: GitWorld, task: str) -> list[str]:
    """The target's first-parent commits that integrate `task`."""
    lines = run_git(world.remote, "log", "--first-parent", "--format=%H %s", "main").splitlines()
    return [line.split()[0] for line in lines if line.split(" ", 1)[1] == f"arc: integrate {task}"]


def test_a_task_integrated_before_is_found_and_not_merged_again(world: GitWorld) -> None:
    """The first attempt's integration landed on the remote and was not recorded (its host
    stopped, its store's connection ended); the task went on to another attempt whose head
    builds on the first. Its gate finds the integration on the target and passes with that
    commit: no second merge of the task (before: merged and pushed a second time)."""
    first = world.task_commit("t", {"t.txt": "one\n"})
    landed = run_gate(job(world, "t", first), FakeClock())
    assert landed.passed
    assert integrations(world, "t") == [landed.verdicts[-1].integrated_sha]
    world.push_main({"other.txt": "someone else's\n"})  # the target moves on meanwhile
    second = world.task_commit("t", {"t.txt": "two\n"})
    main_before = world.main_sha()

    gate = run_gate(job(world, "t", second), FakeClock())

    assert gate.passed, gate.verdicts
    verdict = gate.verdicts[-1]
    assert verdict.integrated_sha == landed.verdicts[-1].integrated_sha
    assert "integrated before as" in (verdict.detail or "")
    assert integrations(world, "t") == [landed.verdicts[-1].integrated_sha]  # once
    assert world.main_sha() == main_before  # nothing pushed


def test_an_integration_of_another_task_named_alike_is_not_this_ones(world: GitWorld) -> None:
    """The subject is matched whole: t1's look-up does not take t10's integration."""
    ten = world.task_commit("t10", {"t10.txt": "ten\n"})
    assert run_gate(job(world, "t10", ten), FakeClock()).passed
    one = world.task_commit("t1", {"t1.txt": "one\n"})
    gate = run_gate(job(world, "t1", one), FakeClock())
    assert gate.passed and "merged as" in (gate.verdicts[-1].detail or "")
    assert len(integrations(world, "t1")) == 1 and len(integrations(world, "t10")) == 1


def test_a_gate_taken_up_on_a_host_without_the_head_fetches_it(world: GitWorld) -> None:
    """Another host's worker pushed the head; this clone never fetched it (the gate is
    taken up here after that host's gate lost its lock). git merge-tree answers an unknown
    commit with the exit code of a conflict: before, the gate failed with a 'conflict' in no
    path and sent the task to a rework (and a second integration)."""
    head = world.commit_files(world.worker, "arc/t", {"t.txt": "one\n"}, "work on t")
    seen = subprocess.run(["git", "cat-file", "-e", head], cwd=world.repo, check=False)
    assert seen.returncode != 0  # the set-up: this clone has never seen the head

    gate = run_gate(job(world, "t", head), FakeClock())

    assert [(v.stage, v.passed, v.reason) for v in gate.verdicts] == [("integration", True, None)]
    assert len(integrations(world, "t")) == 1


def test_a_gate_whose_task_branch_was_cleaned_up_finds_the_integration(world: GitWorld) -> None:
    """Another host integrated the task and its clean-up deleted the remote's arc/<task>;
    this clone has neither the head nor the branch. The head's fetch finds no branch (no
    outage: no wait), and the integration stage finds the task's merge on the target."""
    head = world.commit_files(world.worker, "arc/t", {"t.txt": "one\n"}, "work on t")
    run_git(world.other, "fetch", "--quiet", "origin")
    run_git(world.other, "checkout", "--quiet", "-B", "main", "origin/main")
    run_git(world.other, "merge", "--quiet", "--no-ff", "-m", "arc: integrate t", head)
    run_git(world.other, "push", "--quiet", "origin", "main")
    run_git(world.other, "push", "--quiet", "origin", "--delete", "arc/t")
    landed = world.main_sha()

    gate = run_gate(job(world, "t", head), FakeClock())

    assert gate.remote_error is None and gate.passed, gate
    assert gate.verdicts[-1].integrated_sha == landed
    assert world.main_sha() == landed


# -- the locks of a shared store ------------------------------------------------------------


@pytest.fixture
def two_hosts(world: GitWorld, pg_url: str) -> Iterator[tuple[PostgresStore, PostgresStore]]:
    first = PostgresStore(world.repo, pg_url, host="h1")
    second = PostgresStore(world.root / "h2", pg_url, host="h2")
    yield first, second
    first.close()
    second.close()


def _cut(url: str, where: str) -> int:
    """pg_terminate_backend of the connections `where` picks; how many were cut."""
    with psycopg.connect(url, autocommit=True) as admin:
        rows = admin.execute(
            f"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE {where} "
            "AND pid <> pg_backend_pid()"
        ).fetchall()
    return len(rows)


HOLDING_ADVISORY = "pid IN (SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted)"
_CUT_HOLDERS = (
    "SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND granted"
)


def test_a_gate_whose_lock_was_cut_and_taken_by_another_host_pushes_nothing(
    world: GitWorld, two_hosts: tuple[PostgresStore, PostgresStore], pg_url: str
) -> None:
    """Host 1 runs the task's gate; its gate lock's connection is cut (a restart, a
    pg_terminate_backend) and host 2 takes the gate up. Host 1 asks its locks again before
    the push, finds the gate lock another's, and stops without a verdict: it pushes nothing
    (before: it pushed, and both hosts' gates went on for the same task)."""
    first, second = two_hosts
    head = world.task_commit("t", {"t.txt": "one\n"})
    lock = first.gate_lock("t")
    lock.acquire(timeout=0)
    gate = replace(job(world, "t", head), integration_lock=first.integration_lock("main"),
                   gate_lock=lock)  # fmt: skip
    assert _cut(pg_url, HOLDING_ADVISORY) == 1
    taken = second.gate_lock("t")
    taken.acquire(timeout=5)  # host 2 takes the gate up
    main_before = world.main_sha()
    try:
        with pytest.raises(StopRequested):
            run_integration(gate, worktree=world.root / "wt", log_path=world.root / "log")
    finally:
        taken.release()
        lock.release()
    assert world.main_sha() == main_before
    assert integrations(world, "t") == []


def test_an_integration_whose_lock_was_cut_takes_it_again_and_integrates_once(
    world: GitWorld, two_hosts: tuple[PostgresStore, PostgresStore], pg_url: str
) -> None:
    """The integration lock's connection is cut mid-integration (by the integration's own
    key command) and no other host takes it: the gate takes it again before the push, reads
    the target again, and integrates once."""
    first, _ = two_hosts
    head = world.task_commit("t", {"t.txt": "one\n"})
    script = world.root / "cut.py"
    script.write_text(
        "import psycopg\n"
        f"with psycopg.connect({pg_url!r}, autocommit=True) as admin:\n"
        f"    admin.execute({_CUT_HOLDERS!r})\n"
    )
    config = parse_config(
        f'[integration]\ncommands = [{{ run = "{sys.executable} {script}" }}]\n', "arc.toml"
    )
    gate = replace(job(world, "t", head), config=config,
                   integration_lock=first.integration_lock("main"))  # fmt: skip
    log_path = world.root / "log"
    result = run_integration(gate, worktree=world.root / "wt", log_path=log_path)
    assert result.passed, result.detail
    assert integrations(world, "t") == [result.fields["integrated_sha"]]
    assert "lost and taken again" in log_path.read_text()


def test_a_gate_waiting_for_the_integration_lock_rides_through_its_connection_cut(
    two_hosts: tuple[PostgresStore, PostgresStore], pg_url: str
) -> None:
    """Host 2's gate waits for host 1's integration (polling the lock on a connection of its
    own); that connection is cut (AdminShutdown, as in a restart). The wait goes on, and the
    lock is host 2's once host 1 lets go (before: the error ended the gate, gate_error and a
    rework)."""
    first, second = two_hosts
    held = first.integration_lock("main")
    held.acquire(timeout=0)
    waiting: AdvisoryLock = second.integration_lock("main")
    ended: list[object] = []

    def wait_for_it() -> None:
        try:
            ended.append(waiting.acquire(timeout=60))
        except Exception as error:  # what it ended with, for the assertion below
            ended.append(error)

    thread = threading.Thread(target=wait_for_it)
    thread.start()
    polling = "query LIKE '%pg_try_advisory_lock%' AND NOT " + HOLDING_ADVISORY
    deadline = time.monotonic() + 30
    while _cut(pg_url, polling) == 0:
        assert time.monotonic() < deadline, "host 2 never polled"
        time.sleep(0.02)
    thread.join(0.5)  # not a backoff: the time a wait that broke would take to end
    assert ended == [], ended
    held.release()
    thread.join(30)
    assert ended == [waiting]
    with pytest.raises(Timeout):
        first.integration_lock("main").acquire(timeout=0)  # host 2 holds it
    waiting.release()


# -- through `radian arc run` ---------------------------------------------------------------

RADIAN = str(Path(sys.executable).parent / "radian")


def _arc(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([RADIAN, "arc", *args], cwd=repo, capture_output=True, text=True,
                          timeout=300, env=run_env(), check=False)  # fmt: skip


def test_the_next_run_records_an_integration_that_landed_unrecorded(tmp_path: Path) -> None:
    """A task was integrated (its merge is on the remote's main) but the record says
    review.verifying, with a later attempt's head that builds on the integrated one: a host
    whose gate pushed and then lost its locks with the store's connections, while another
    host sent the task on. The next `radian arc run` takes the gate up, finds the
    integration on main and records the task integrated with that commit: no new attempt,
    no second merge (before: the later head was merged and pushed a second time)."""
    repo = make_git_repo(tmp_path)
    scenario = tmp_path / "scenario.json"
    then = {"do": "result", "commit": True, "file": "{task}.txt", "cost": 0.01}
    scenario.write_text(json.dumps({"default": then}))
    write_config(repo, worker_exec_args(scenario), gate={"stages": []})
    plan = tmp_path / "plan.toml"
    plan.write_text('[plan]\nname = "p"\n\n[[task]]\nname = "t"\nbrief = "Write t.txt."\n')
    for args in (("plan", "load", str(plan)), ("confirm", "p"), ("run",)):
        done = _arc(repo, *args)
        assert done.returncode == 0, done.stdout + done.stderr
    remote = tmp_path / "remote.git"
    landed = git(remote, "rev-parse", "main")
    assert git(remote, "log", "-1", "--format=%s", "main") == "arc: integrate t"

    # The record as the other host left it: a second attempt delivered on top of the first.
    git(repo, "checkout", "-q", "-B", "arc/t", "origin/arc/t")
    (repo / "t.txt").write_text("t, again\n")
    git(repo, "commit", "-q", "-am", "attempt 002")
    git(repo, "push", "-q", "origin", "arc/t")
    git(repo, "checkout", "-q", "main")
    later = git(repo, "rev-parse", "arc/t")
    store = ArcStore(repo)
    with store.task_lock("t"):
        task = store.load_task("t")
        task.state, task.head_sha = State.VERIFYING, later
        task.attempts, task.last_attempt_id = ["001", "002"], "002"
        store.save_task(task)
    shutil.rmtree(store.task_dir("t") / "verdicts")  # the gate ran on the other host

    done = _arc(repo, "run")

    assert done.returncode == 0, done.stdout + done.stderr
    assert f"t integrated -> done.integrated ({landed[:12]} on main)" in done.stdout, done.stdout
    found = store.load_task("t")
    assert (found.state, found.attempts) == (State.INTEGRATED, ["001", "002"])
    assert git(remote, "rev-parse", "main") == landed  # nothing merged or pushed again
    ran = (tmp_path / "ran.log").read_text().splitlines()
    assert [line.split()[:2] for line in ran] == [["t", "001"]]  # no new attempt

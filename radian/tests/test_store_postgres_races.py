"""Hosts racing on one PostgreSQL store (issue 31, point 1): two stores on one database, as
two hosts have, each on connections of its own.

- Claiming is one transaction with `SELECT ... FOR UPDATE SKIP LOCKED`: a task another host
  is claiming (or changing, under its task lock) is passed over, never waited for, and of
  two hosts claiming at once every task is taken once.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import psycopg
import pytest
from filelock import Timeout

from radian.arc.budget import BudgetVerdict, add_cost, check_after_cost
from radian.arc.claims import claim, claim_next
from radian.arc.clock import FakeClock
from radian.arc.config import ArcConfig
from radian.arc.gate.integration import run_integration
from radian.arc.gate.jobs import build_job
from radian.arc.gate.process import StopRequested
from radian.arc.loaded import NewTask
from radian.arc.records import Plan, Task, branch_for
from radian.arc.states import State
from radian.arc.store_postgres import PostgresStore

pytestmark = [pytest.mark.unit, pytest.mark.postgres]

NOW = "2026-11-30T07:00:00Z"


@pytest.fixture
def hosts(tmp_path: Path, pg_url: str) -> Iterator[tuple[PostgresStore, PostgresStore]]:
    first = PostgresStore(tmp_path / "h1", pg_url, host="h1")
    second = PostgresStore(tmp_path / "h2", pg_url, host="h2")
    yield first, second
    first.close()
    second.close()


def _load(store: PostgresStore, names: list[str], max_cost_usd: float | None = None) -> None:
    template = Task(name="_", plan="p", branch=branch_for("_"), created_at=NOW, updated_at=NOW)
    tasks = [NewTask(name=name, own={}, brief=f"do {name}\n") for name in names]
    with store.registry_lock():
        store.write_loaded_plan(
            Plan(name="p", confirmed=True, max_cost_usd=max_cost_usd), template, tasks
        )


def _in_time(work: threading.Thread, seconds: float = 10.0) -> None:
    """`work` ended within `seconds` (it must not wait on another host's lock)."""
    work.start()
    work.join(seconds)
    assert not work.is_alive(), "the claim waited for the task another host holds"


def test_a_claim_passes_over_a_task_another_host_holds(
    hosts: tuple[PostgresStore, PostgresStore],
) -> None:
    first, second = hosts
    _load(first, ["a", "b"])
    got: list[object] = []
    with second.task_lock("a"):  # the other host is changing a (its advisory lock)
        _in_time(threading.Thread(target=lambda: got.append(
            claim_next(first, ArcConfig(), ["a"], FakeClock()))))  # fmt: skip
        assert got == [None]  # not waited for: passed over
        _in_time(threading.Thread(target=lambda: got.append(
            claim_next(first, ArcConfig(), ["a", "b"], FakeClock()))))  # fmt: skip
    claimed = got[1]
    assert isinstance(claimed, tuple) and claimed[0].task == "b"
    assert first.load_task("a").state is State.READY
    # A row another host's transaction has locked (its claim under way) is skipped too.
    with psycopg.connect(first.url) as other, other.transaction():
        other.execute("SELECT 1 FROM arc_tasks WHERE name = 'a' FOR UPDATE")
        _in_time(threading.Thread(target=lambda: got.append(
            claim_next(second, ArcConfig(), ["a"], FakeClock()))))  # fmt: skip
        assert got[2] is None
    again = claim_next(second, ArcConfig(), ["a"], FakeClock())
    assert again is not None and again[0].task == "a"
    intent = first.read_attempt_intent("a", "001")
    assert intent is not None and intent["owner_host"] == "h2"
    lease = first.foreign_lease("a", "001")
    assert lease is not None and lease.host == "h2"  # the lease, written with the claim
    second.check_lease("a", "001")  # its fencing token is the one this host holds


def test_start_waits_for_the_holder_of_the_task_and_reads_it_again(
    hosts: tuple[PostgresStore, PostgresStore],
) -> None:
    """`radian arc start <task>` names one task: its claim waits for a host changing it, and
    claims it only if it is still claimable then."""
    first, second = hosts
    _load(first, ["a", "b"])
    got: list[object] = []
    started = [
        threading.Thread(target=lambda: got.append(claim(first, ArcConfig(), "a", FakeClock()))),
        threading.Thread(target=lambda: got.append(claim(first, ArcConfig(), "b", FakeClock()))),
    ]
    with second.task_lock("a"), second.task_lock("b"):
        for thread in started:
            thread.start()
        started[0].join(0.5)  # not a backoff: the time a claim not waiting would take
        assert started[0].is_alive() and got == []  # waiting for the holder
        task = second.load_task("a")
        task.state = State.PAUSED_BUDGET  # what the holder did meanwhile
        second.save_task(task)
    for thread in started:
        thread.join(10)
    assert got.count(None) == 1  # a, read again: no longer claimable
    claimed = next(found for found in got if found is not None)
    assert isinstance(claimed, tuple) and claimed[0].task == "b"
    assert first.load_task("a").state is State.PAUSED_BUDGET


def test_two_hosts_claiming_at_once_take_every_task_once(
    hosts: tuple[PostgresStore, PostgresStore],
) -> None:
    names = [f"t{number:02d}" for number in range(30)]
    _load(hosts[0], names)
    barrier = threading.Barrier(2)
    taken: dict[str, list[str]] = {"h1": [], "h2": []}

    def host(store: PostgresStore) -> None:
        barrier.wait(10)
        while True:
            left = [name for name in names if name not in taken["h1"] + taken["h2"]]
            claimed = claim_next(store, ArcConfig(), left, FakeClock())
            if claimed is None:
                return
            taken[store.host].append(claimed[0].task)

    workers = [threading.Thread(target=host, args=(store,)) for store in hosts]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
    assert Counter(taken["h1"] + taken["h2"]) == Counter(dict.fromkeys(names, 1))
    for name in names:
        task = hosts[0].load_task(name)
        assert (task.state, task.attempts) == (State.WORKING, ["001"])


def test_two_hosts_spending_at_once_find_the_plan_budget_used_up_once(
    hosts: tuple[PostgresStore, PostgresStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each attempt's 0.6 fits under the plan's 1.0, both do not. The two hosts add their
    costs at once (a barrier), and the worst order is forced where a host reads the plan's
    total apart from its addition: both additions first, then both reads."""
    _load(hosts[0], ["a", "b"], max_cost_usd=1.0)
    start = threading.Barrier(2)
    both_added = threading.Barrier(2, timeout=5)
    for store in hosts:
        read = store.plan_cost

        def plan_cost(plan: str, read: Callable[[str], float] = read) -> float:
            both_added.wait()  # only a check that reads the total apart from its addition
            return read(plan)

        monkeypatch.setattr(store, "plan_cost", plan_cost)
    verdicts: dict[str, BudgetVerdict] = {}

    def host(store: PostgresStore, name: str) -> None:
        start.wait(10)
        with store.task_lock(name):
            task = store.load_task(name)
            add_cost(store, task, 0.6)
            verdicts[name] = check_after_cost(store, task, store.load_plan("p"), ArcConfig())
            store.save_task(task)

    workers = [
        threading.Thread(target=host, args=pair) for pair in zip(hosts, ["a", "b"], strict=True)
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(30)
    assert sorted(verdict.used_up for verdict in verdicts.values()) == [False, True]
    went_past = next(verdict for verdict in verdicts.values() if verdict.used_up)
    assert (went_past.scope, went_past.spent, went_past.limit) == ("plan", 1.2, 1.0)
    assert hosts[0].kept_plan_cost("p") == 1.2  # both costs counted, once each


def test_no_host_claims_a_task_of_a_plan_whose_budget_another_host_used_up(
    hosts: tuple[PostgresStore, PostgresStore],
) -> None:
    """Between the addition that uses a plan's budget up and that host's pausing the plan,
    another host's claim must not start a task of the plan (it would spend past the budget
    too); while a host is adding to the plan's total, its tasks are passed over, not waited
    for. A task named by start (`claim`) is the person's choice and is not held back."""
    first, second = hosts
    _load(first, ["a", "b", "c"], max_cost_usd=1.0)
    with first.task_lock("a"):
        task = first.load_task("a")
        add_cost(first, task, 1.2)  # the budget used up; the plan not paused yet
        first.save_task(task)
    assert first.load_plan("p").auto  # the window: the plan still runs by itself
    assert claim_next(second, ArcConfig(), ["b", "c"], FakeClock()) is None
    got: list[object] = []
    _load_other(second)
    with psycopg.connect(first.url) as other, other.transaction():
        other.execute("SELECT 1 FROM arc_plans WHERE name = 'q' FOR UPDATE")  # a spend on q
        _in_time(threading.Thread(target=lambda: got.append(
            claim_next(second, ArcConfig(), ["q1"], FakeClock()))))  # fmt: skip
        assert got == [None]  # passed over while q's total is being added to
    claimed = claim_next(second, ArcConfig(), ["b", "q1"], FakeClock())
    assert claimed is not None and claimed[0].task == "q1"  # another plan's task goes on
    started = claim(second, ArcConfig(), "b", FakeClock())
    assert started is not None and started[0].task == "b"


def _load_other(store: PostgresStore) -> None:
    template = Task(name="_", plan="q", branch=branch_for("_"), created_at=NOW, updated_at=NOW)
    with store.registry_lock():
        store.write_loaded_plan(
            Plan(name="q", confirmed=True, max_cost_usd=5.0),
            template,
            [NewTask(name="q1", own={}, brief="do q1\n")],
        )


def test_an_integration_waits_for_another_hosts_into_the_same_target(
    hosts: tuple[PostgresStore, PostgresStore], tmp_path: Path
) -> None:
    first, second = hosts
    _load(first, ["a"])
    with second.task_lock("a"):
        task = second.load_task("a")
        task.head_sha = "0" * 40
        second.save_task(task)
    held = first.integration_lock("main")
    held.acquire()  # host 1 integrates into main
    try:
        with pytest.raises(Timeout):
            second.integration_lock("main").acquire(timeout=0)
        other_target = second.integration_lock("release")
        other_target.acquire(timeout=0)  # another target branch is another queue
        other_target.release()
        # Host 2's gate reaches its integration stage: it waits for host 1's, until stopped.
        stop = threading.Event()
        job = build_job(second, ArcConfig(), second.load_task("a"), "001", stop)
        ended: list[object] = []

        def integrate() -> None:
            try:
                ended.append(
                    run_integration(job, worktree=tmp_path / "wt", log_path=tmp_path / "log")
                )
            except Exception as error:  # what it ended with, for the assertion below
                ended.append(error)

        gate = threading.Thread(target=integrate)
        gate.start()
        gate.join(1.0)  # not a backoff: the time a gate not waiting would take to go on
        assert gate.is_alive() and ended == [], f"host 2 did not wait: {ended}"
        stop.set()
        gate.join(10)
        assert len(ended) == 1 and isinstance(ended[0], StopRequested)
    finally:
        held.release()
    after = second.integration_lock("main")
    after.acquire(timeout=5)  # host 1 is done: host 2 integrates
    after.release()


def test_a_change_committed_after_a_later_one_was_read_is_still_given(
    hosts: tuple[PostgresStore, PostgresStore],
) -> None:
    """A journal id is taken when the change is written, not when it commits: a change whose
    transaction commits after a later id was read must reach the reader's next look (before,
    `id > position` skipped it for good, and a host's index waited on a task it still took
    for working)."""
    first, second = hosts
    _load(first, ["a", "b"])
    position = second.start_changes()
    with psycopg.connect(first.url) as slow, psycopg.connect(first.url, autocommit=True) as fast:
        with slow.transaction():
            slow.execute("INSERT INTO arc_changes (kind, name) VALUES ('task', 'a')")
            fast.execute("INSERT INTO arc_changes (kind, name) VALUES ('task', 'b')")
            found = second.changes_since(position)
            assert found is not None
            position, changes = found
            assert changes == [("task", "b")]
        found = second.changes_since(position)  # the slow transaction committed now
        assert found is not None
        position, changes = found
        assert changes == [("task", "a")]
        assert second.changes_since(position) == (position, [])  # given once

"""The store protocol's contract (radian.arc.store_protocol), run against every backend: what
the loop, the commands, status and serve may count on, whichever store keeps arc's records."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from postgres_fixtures import STORES

from radian.arc.attempt_result import AttemptResult
from radian.arc.errors import NotFoundError
from radian.arc.loaded import NewTask
from radian.arc.records import Plan, Task, branch_for
from radian.arc.states import State
from radian.arc.store import ArcStore
from radian.arc.store_protocol import Store

pytestmark = pytest.mark.unit

NOW = "2026-11-30T07:00:00Z"


@pytest.fixture(params=STORES)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    """A fresh, empty store of each backend: the files of a folder, a new PostgreSQL database."""
    if request.param == "postgres":
        from radian.arc.store_postgres import PostgresStore

        opened = PostgresStore(tmp_path, request.getfixturevalue("pg_url"))
        yield opened
        opened.close()
    else:
        yield ArcStore(tmp_path)


def _template(plan: str) -> Task:
    return Task(name="_", plan=plan, branch=branch_for("_"), created_at=NOW, updated_at=NOW)


def _load(store: Store, plan: str, names: list[str], **own: object) -> Plan:
    new = Plan(name=plan, confirmed=True)
    tasks = [NewTask(name=name, own=dict(own), brief=f"do {name}\n") for name in names]
    with store.registry_lock():
        store.write_loaded_plan(new, _template(plan), tasks)
    return store.load_plan(plan)


def test_a_loaded_plan_and_its_tasks_read_back(store: Store) -> None:
    plan = _load(store, "p", ["a", "b", "c"], max_attempts=2)
    assert plan.tasks == ["a", "b", "c"] and plan.confirmed
    assert store.plan_exists("p") and not store.plan_exists("q")
    assert store.plan_names() == ["p"] and [found.name for found in store.plans()] == ["p"]
    assert store.task_names() == ["a", "b", "c"]
    assert store.existing_tasks(["c", "x", "a"]) == ["c", "a"]
    task = store.load_task("b")
    assert (task.name, task.plan, task.state, task.max_attempts) == ("b", "p", State.READY, 2)
    assert task.branch == "arc/b"
    assert store.read_brief("b") == "do b\n"
    assert store.task_exists("a") and not store.task_exists("x")


def test_unknown_names_are_not_found_and_noted(store: Store) -> None:
    with pytest.raises(NotFoundError):
        store.load_plan("nope")
    with pytest.raises(NotFoundError):
        store.load_task("nope")
    assert store.plan_if_there("nope") is None
    assert store.try_load_task("nope") is None
    assert "nope" in store.damaged


def test_a_saved_task_replaces_the_record_whole(store: Store) -> None:
    _load(store, "p", ["a", "b"])
    with store.task_lock("a"):
        task = store.load_task("a")
        task.state = State.WORKING
        task.cost_usd = 1.25
        task.attempts = ["a-1"]
        store.save_task(task)
    again = store.load_task("a")
    assert (again.state, again.cost_usd, again.attempts) == (State.WORKING, 1.25, ["a-1"])
    assert store.read_brief("a") == "do a\n"  # the loaded brief stays the task's
    assert store.names_in(State.WORKING) == ["a"]
    assert store.names_in(State.READY) == ["b"]
    assert sorted(store.names_in(State.READY, State.WORKING)) == ["a", "b"]


def test_a_saved_plan_replaces_the_record_whole(store: Store) -> None:
    _load(store, "p", ["a"])
    with store.plan_lock("p"):
        plan = store.load_plan("p")
        plan.auto = "off"
        plan.max_cost_usd = 3.0
        store.save_plan(plan)
    again = store.load_plan("p")
    assert (again.auto, again.max_cost_usd, again.tasks) == ("off", 3.0, ["a"])


def test_briefs(store: Store) -> None:
    _load(store, "p", ["a"])
    store.write_brief("a", "new brief\n")
    assert store.read_brief("a") == "new brief\n"
    assert store.load_task("a").name == "a"  # writing a brief keeps the task's record


def test_attempt_intents_and_results(store: Store) -> None:
    _load(store, "p", ["a"])
    assert store.read_attempt_intent("a", "a-1") is None
    assert store.read_attempt_result("a", "a-1") is None
    store.write_attempt_intent("a", "a-1", {"host": "h1", "pid": 42})
    intent = store.read_attempt_intent("a", "a-1")  # a shared store adds its host
    assert intent is not None and {"host": "h1", "pid": 42}.items() <= intent.items()
    record = AttemptResult(task="a", attempt_id="a-1", outcome="success", cost_usd=0.5)
    store.write_attempt_result("a", "a-1", record)
    found = store.read_attempt_result("a", "a-1")
    assert found is not None and found.cost_usd == 0.5 and found.attempt_id == "a-1"


def test_a_plans_running_cost(store: Store) -> None:
    _load(store, "p", ["a", "b"])
    for name, cost in (("a", 1.5), ("b", 0.25)):
        task = store.load_task(name)
        task.cost_usd = cost
        store.save_task(task)
    assert store.kept_plan_cost("p") is None
    assert store.plan_cost("p") == 1.75  # counted once, then kept
    assert store.kept_plan_cost("p") == 1.75
    store.add_plan_cost("p", 0.5)
    assert store.plan_cost("p") == 2.25
    assert store.count_plan_cost("p") == 1.75
    assert store.reconcile_plan_cost("p") == (2.25, 1.75)
    assert store.plan_cost("p") == 1.75
    store.set_plan_cost("p", 9.0)
    assert store.kept_plan_cost("p") == 9.0


def test_records_for_status_and_serve(store: Store) -> None:
    plan = _load(store, "p", ["a", "b"])
    task = store.load_task("b")
    task.state = State.WORKING
    store.save_task(task)
    records = dict(store.task_records(plan))
    assert list(records) == ["a", "b"]
    assert records["a"] is not None and records["a"]["state"] == str(State.READY)
    assert records["b"] is not None and records["b"]["state"] == str(State.WORKING)
    written = dict(store.all_task_records())
    record = written.get("b")
    assert record is not None and record["state"] == str(State.WORKING)


def test_the_change_mark_moves_with_a_save(store: Store) -> None:
    _load(store, "p", ["a"])
    before = store.change_mark()
    task = store.load_task("a")
    task.rework_count = 1
    store.save_task(task)
    assert store.change_mark() != before


def test_an_unfinished_load_is_undone(store: Store) -> None:
    _load(store, "done", ["a"])
    half = Plan(name="half", loading=True, tasks=["x"])
    store.save_plan(half)
    assert store.plan_if_there("half") is None and store.plan_names() == ["done", "half"]
    with store.registry_lock():
        assert store.discard_unfinished_loads() == ["half"]
    assert store.plan_names() == ["done"] and not store.task_exists("x")
    assert store.load_task("a").plan == "done"


def test_a_task_lock_is_held_by_one_holder_at_a_time(store: Store) -> None:
    _load(store, "p", ["a"])
    order: list[str] = []
    entered = threading.Event()

    def second() -> None:
        entered.wait(5)
        with store.task_lock("a"):
            order.append("second")

    other = threading.Thread(target=second)
    other.start()
    with store.task_lock("a"):
        entered.set()
        time.sleep(0.2)  # not a backoff: the other thread's chance to (wrongly) get in
        order.append("first")
    other.join(5)
    assert order == ["first", "second"]


def _moved(attempt_id: str) -> Callable[[Task], tuple[str, dict[str, object]]]:
    def build(task: Task) -> tuple[str, dict[str, object]]:
        task.state = State.WORKING
        task.attempts = [*task.attempts, attempt_id]
        return attempt_id, {"task": task.name, "attempt_id": attempt_id, "claimed_at": NOW}

    return build


def test_claim_next_takes_the_first_claimable_task_and_writes_its_intent(store: Store) -> None:
    _load(store, "p", ["a", "b", "c"])
    with store.task_lock("a"):
        task = store.load_task("a")
        task.state = State.PAUSED_BUDGET
        store.save_task(task)
    claimed = store.claim_next(["a", "c", "b"], {State.READY}, _moved("001"))
    assert claimed is not None and claimed.name == "c"  # a is not ready; c comes before b
    found = store.load_task("c")
    assert (found.state, found.attempts) == (State.WORKING, ["001"])
    intent = store.read_attempt_intent("c", "001")
    assert intent is not None and intent["claimed_at"] == NOW
    assert store.foreign_lease("c", "001") is None  # this host's own attempt
    store.check_lease("c", "001")
    second = store.claim_next(["c", "b"], {State.READY}, _moved("001"))
    assert second is not None and second.name == "b"  # c is claimed already
    assert store.claim_next(["a", "b", "c", "x"], {State.READY}, _moved("002")) is None
    assert store.load_task("a").state is State.PAUSED_BUDGET
    assert store.claim_next([], {State.READY}, _moved("001")) is None


def test_spend_adds_to_the_plans_running_total_and_gives_the_total_it_left(store: Store) -> None:
    _load(store, "p", ["a", "b"])
    assert store.spend("p", 0.25) == 0.25
    assert store.spend("p", 0.5) == 0.75
    assert store.plan_cost("p") == 0.75

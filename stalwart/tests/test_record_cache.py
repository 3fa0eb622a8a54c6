"""The session kept in process memory (record/cache.py) is used only while it is current.

On both backends: every commit moves the session's version on, whoever makes it; a call
uses the copy kept by its store only when the version read with its lock is the one the
copy was kept at; so a second Agent object, or a second process, that changed the session
always wins, and a commit that fails leaves nothing kept.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import Project, write_project
from pg_fixtures import BACKENDS

from stalwart.errors import AnswerError
from stalwart.record import Changes, MessageRow, SessionRow, Store, open_store
from stalwart.record.cache import SessionCache

TURN = "paint the fence for order 1, then plant a tree for order 2"


@pytest.fixture(params=BACKENDS)
def location(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "postgres":
        return str(request.getfixturevalue("pg_url"))
    return str(tmp_path / "record.sqlite")


@pytest.fixture
def project(tmp_path: Path, location: str) -> Iterator[Project]:
    made = write_project(tmp_path, record=location)
    yield made
    for opened in made.agents:
        opened.close()


def cache_of(store: Store) -> SessionCache:
    cache: SessionCache = store._cache  # type: ignore[attr-defined]
    return cache


def message(seq: int, content: str = "hi") -> MessageRow:
    return MessageRow("s", seq, "user", content, None, rewound=False)


def test_every_commit_moves_the_version_on_whoever_makes_it(location: str) -> None:
    first, second = open_store(location), open_store(location)
    try:
        first.commit(Changes(sessions=[SessionRow("s", "u-17", "desk", 1.0)]))
        versions = []
        for number, (store, changes) in enumerate(
            [
                (first, Changes(messages=[message(0)])),
                (second, Changes(messages=[message(1)])),
                (first, Changes(sessions=[SessionRow("s", "u-17", "desk", 1.0, version=99)])),
                (second, Changes(messages=[message(1, "again")])),
            ]
        ):
            store.commit(changes)
            record = first.load("s")
            assert record is not None, number
            versions.append(record.session.version)
        assert versions == [1, 2, 3, 4]  # a row's own version is not written over the count
    finally:
        first.close()
        second.close()


def test_a_call_uses_the_kept_session_only_at_the_version_it_was_kept(project: Project) -> None:
    agent = project.agent()
    cache = cache_of(agent.store)
    agent.chat(TURN, user="u-17")
    agent.confirm_current("u-17", "approve")  # kept since the session's first commit
    hits = cache.hits
    reply = agent.confirm_current("u-17", "approve")
    assert cache.hits == hits + 1  # nobody else changed it: the kept copy was current
    assert reply.state == "done"
    assert [name for name, _ in project.calls] == ["paint_fence", "plant_tree"]


def test_a_new_session_is_kept_from_its_first_commit(project: Project, location: str) -> None:
    """The record held nothing of a new session when its lock was had, so what its first
    commit wrote is all of it: the next call reads no row of it from the record, and what
    it reads is what the record holds."""
    agent = project.agent()
    cache = cache_of(agent.store)
    agent.chat(TURN, user="u-17")
    hits, misses = cache.hits, cache.misses
    reply = agent.confirm_current("u-17", "approve")
    assert (cache.hits, cache.misses) == (hits + 1, misses)
    assert [waiting.tool for waiting in reply.waiting] == ["plant_tree"]
    session = agent.session_id("u-17")
    with agent.store.lock(session):
        kept = agent.store.load(session)
    other = open_store(location)
    try:
        assert kept is not None and kept == other.load(session)
    finally:
        other.close()


def test_a_second_agent_that_changed_the_session_wins(project: Project) -> None:
    here, there = project.agent(), project.agent()
    here.chat(TURN, user="u-17")
    waiting = here.confirm_current("u-17", "approve")  # here keeps the session now
    assert waiting.waiting[0].tool == "plant_tree"
    misses = cache_of(here.store).misses
    stopped = there.confirm("u-17", "cancel all", question=waiting.waiting[0])
    assert stopped.state == "rolled_back"

    with pytest.raises(AnswerError):  # nothing waits: here sees what there did
        here.confirm_current("u-17", "approve")
    assert cache_of(here.store).misses == misses + 1
    assert [name for name, _ in project.calls] == ["paint_fence", "unpaint_fence"]
    assert [(c.tool, c.status) for c in here.record("u-17")] == [
        ("paint_fence", "ran"),
        ("unpaint_fence", "ran"),
    ]


STEP = """
import json, sys
from stalwart import Agent

with Agent.from_file(sys.argv[1]) as agent:
    reply = agent.confirm_current(sys.argv[2], sys.argv[3])
print(json.dumps({"state": reply.state, "waiting": [w.tool for w in reply.waiting]}))
"""


def step_in_another_process(project: Project, user: str, answer: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-c", STEP, str(project.yaml), user, answer],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    stepped: dict[str, Any] = json.loads(done.stdout)
    return stepped


def test_another_process_that_changed_the_session_wins(project: Project) -> None:
    agent = project.agent()
    cache = cache_of(agent.store)
    agent.chat(TURN, user="u-17")
    agent.chat(TURN, user="u-18")
    agent.confirm_current("u-17", "approve")  # kept here, waiting on plant_tree
    assert step_in_another_process(project, "u-17", "skip") == {"state": "done", "waiting": []}

    misses = cache.misses
    reply = agent.pending("u-17")
    assert reply is not None and reply.state == "done"  # read without the lock: the record
    with pytest.raises(AnswerError):
        agent.confirm_current("u-17", "approve")  # under the lock: the other's change wins
    assert cache.misses == misses + 1
    assert [name for name, _ in project.calls] == ["paint_fence"]  # plant_tree was skipped

    # A session the other process did not touch is still taken from memory.
    agent.confirm_current("u-18", "approve")
    hits = cache.hits
    agent.confirm_current("u-18", "approve")
    assert cache.hits == hits + 1


def test_a_lock_waited_for_reads_what_its_holder_committed_while_it_waited(location: str) -> None:
    """The version a lock reads is read once the lock is had, not when the wait began: a
    holder's commits made while the other worker waited are seen, and the waiter's kept
    copy, now stale, is not used (on PostgreSQL the lock and the read are one statement,
    whose read takes its own snapshot after the lock)."""
    holder, waiter = open_store(location), open_store(location)
    try:
        holder.commit(Changes(sessions=[SessionRow("s", "u-17", "desk", 1.0)]))
        with waiter.lock("s"):
            assert waiter.load("s") is not None  # kept by the waiter at this version
        waiting = threading.Event()
        seen: list[Any] = []

        def wait_for_the_lock() -> None:
            waiting.set()
            with waiter.lock("s"):
                seen.append(waiter.load("s"))

        with holder.lock("s"):
            thread = threading.Thread(target=wait_for_the_lock)
            thread.start()
            assert waiting.wait(10)
            time.sleep(0.3)  # the waiter is inside its lock call, waiting
            holder.commit(Changes(messages=[message(0, "committed while the waiter waited")]))
        thread.join(20)
        assert not thread.is_alive()
        [record] = seen
        assert [m.content for m in record.messages] == ["committed while the waiter waited"]
        assert record.session.version == 1  # moved on by the one commit since the first
    finally:
        holder.close()
        waiter.close()


def test_a_commit_that_fails_leaves_nothing_kept(location: str) -> None:
    store = open_store(location)
    try:
        store.commit(Changes(sessions=[SessionRow("s", "u-17", "desk", 1.0)]))
        with store.lock("s"):
            assert store.load("s") is not None  # kept
        with store.lock("s"):
            with pytest.raises(Exception):  # noqa: B017,PT011  # each backend raises its own
                store.commit(Changes(messages=[message(0, "\ud800 cannot be encoded")]))
            hits = cache_of(store).hits
            record = store.load("s")
            assert cache_of(store).hits == hits  # from the record, not from memory
        assert record is not None and record.messages == ()
        with store.lock("s"):
            again = store.load("s")
        assert again == record
    finally:
        store.close()


def test_a_row_the_kept_copy_holds_is_not_moved_and_one_it_does_not_is(tmp_path: Path) -> None:
    """SQLite sets a row's indexed session column only by a move statement; under the lock,
    a row the kept copy already holds in the session needs none (it would match nothing),
    and a row it does not know still gets one, so a row given another session moves."""
    from stalwart.record.schema import RunRow

    store = open_store(str(tmp_path / "record.sqlite"))
    statements: list[str] = []
    store._db.set_trace_callback(statements.append)  # type: ignore[attr-defined]

    def run(session: str, state: str) -> RunRow:
        return RunRow("r1", session, 1, "turn", state, [], 0, None, None, None, 0, 1.0, 1.0)

    def moves() -> list[str]:
        found = [s for s in statements if s.startswith('UPDATE "runs" SET "session"')]
        statements.clear()
        return found

    try:
        session = SessionRow("s", "u", "desk", 1.0)
        other = SessionRow("t", "u", "desk", 1.0)
        store.commit(Changes(sessions=[session, other], runs=[run("s", "running")]))
        with store.lock("s"):
            assert store.load("s") is not None  # kept, at the version the lock read
            moves()
            store.commit(Changes(runs=[run("s", "done")]))
            assert moves() == []  # r1 is the session's already
        with store.lock("t"):
            assert store.load("t") is not None  # kept, without r1
            moves()
            store.commit(Changes(runs=[run("t", "done")]))
            assert len(moves()) == 1  # r1 is not known as t's: it is moved
        moved = store.load("t")
        assert moved is not None and [r.run_id for r in moved.runs] == ["r1"]
        assert store.sessions_with_runs_in(["done"]) == ["t"]
    finally:
        store.close()

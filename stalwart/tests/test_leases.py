"""Leases with fencing (issue 10, points 2, 8 and 9): a holder whose lock ended but who goes
on keeps the session until its lease expires; a worker that takes an expired lease fences
the old holder, whose commits then write nothing (`LeaseLost`); a lost connection is sent
again on a new one.

The faults are real: on PostgreSQL the server ends the holder's connection (as a failover
or restart does), which ends its advisory lock; on SQLite the lock folder beside the
database is swept away (a clean-up job), which lets a second worker flock a new file.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from conftest import Project, write_project
from pg_fixtures import BACKENDS

from stalwart import Agent, FakeClock, LeaseLost, SessionBusy, texts
from stalwart.record import Changes, Store, open_store
from stalwart.record.lease import LEASE_SECS
from stalwart.record.schema import RunRow, SessionRow
from stalwart.record.sqlite import lock_folder

WAIT = 30.0  # a bound on what should take a moment; reaching it fails the test


@pytest.fixture(params=BACKENDS)
def location(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "postgres":
        return str(request.getfixturevalue("pg_url"))
    return str(tmp_path / "record.sqlite")


def lose_lock(location: str) -> None:
    """The fault: every session lock on the record ends while its holder goes on (on
    PostgreSQL, once its backend has ended: the call waits up to 10 seconds for it)."""
    if location.startswith("postgresql"):
        import psycopg

        with psycopg.connect(location, autocommit=True) as admin:
            ended = admin.execute(
                "SELECT pg_terminate_backend(l.pid, 10000) FROM pg_locks l "
                "JOIN pg_database d ON d.oid = l.database "
                "WHERE l.locktype = 'advisory' AND l.granted AND d.datname = current_database()"
            ).fetchall()
        assert ended, "no advisory lock was held"
    else:
        shutil.rmtree(lock_folder(location))


def set_holder(location: str, session: str, holder: str, expires: float) -> None:
    """Write a lease row as a worker elsewhere would have left it: its holder, and the lock
    it holds there (not one this machine's workers can hold)."""
    if location.startswith("postgresql"):
        import psycopg

        with psycopg.connect(location, autocommit=True) as db:
            db.execute(
                'UPDATE leases SET holder = %s, expires = %s, lock = %s WHERE "session" = %s',
                (holder, expires, "elsewhere/lock", session),
            )
    else:
        import sqlite3

        with closing(sqlite3.connect(location)) as database, database:
            database.execute(
                'UPDATE leases SET holder = ?, expires = ?, lock = ? WHERE "session" = ?',
                (holder, expires, "elsewhere/lock", session),
            )


def _session(session: str) -> SessionRow:
    return SessionRow(session=session, user="u", agent="desk", created=0.0, identity="i")


def _run(session: str, state: str) -> RunRow:
    return RunRow(
        run_id=f"{session}#1",
        session=session,
        number=1,
        turn="charge",
        state=state,
        steps=[],
        cursor=0,
        question=None,
        failure=None,
        reply=None,
        turn_seq=0,
        created=0.0,
        updated=0.0,
    )


# --- the store: leases, tokens, the fence ------------------------------------------------------


def test_a_live_lease_outlives_its_lock_and_once_expired_is_taken_and_fences_the_old_holder(
    location: str,
) -> None:
    a, b = open_store(location), open_store(location)
    clock_a = FakeClock()
    try:
        with a.lock("s", clock=clock_a) as lease_a:
            a.commit(Changes(sessions=[_session("s")], runs=[_run("s", "running")]))
            lose_lock(location)
            # The lock is free now, the lease is not: B does not take the session.
            with pytest.raises(SessionBusy) as busy, b.lock("s", wait=False, clock=FakeClock()):
                pass
            assert "whose lease runs 30s more unless renewed" in str(busy.value)
            # A goes on, and still commits (PostgreSQL: through a new connection).
            a.commit(Changes(runs=[_run("s", "waiting")]))
            assert _state(b, "s") == "waiting"

            # A stalls past its lease; B, whose clock is past it, takes the session.
            late = FakeClock(start=clock_a.now() + LEASE_SECS + 1)
            with b.lock("s", wait=False, clock=late) as lease_b:
                assert lease_b.token == lease_a.token + 1
                with pytest.raises(LeaseLost) as lost:
                    a.commit(Changes(runs=[_run("s", "done")]))
                assert lost.value.code == "lease_lost"
                assert str(lost.value) == texts.lease_lost("s", lease_a.token)
                assert _state(b, "s") == "waiting", "the fenced commit wrote nothing"
                b.commit(Changes(runs=[_run("s", "rolled_back")]))
        assert _state(a, "s") == "rolled_back"
    finally:
        a.close()
        b.close()


def _waiting_briefly(location: str) -> Store:
    """A store whose lock waits a moment, not half a minute, for a lock another holds."""
    if location.startswith("postgresql"):
        from stalwart.record.postgres import PostgresStore

        return PostgresStore(location, lock_wait_secs=0.2)
    from stalwart.record.sqlite import SQLiteStore

    return SQLiteStore(location, lock_wait_secs=0.2)


def test_an_operator_takes_a_session_whose_holder_hangs_once_its_lease_expired(
    location: str,
) -> None:
    """A holder that hangs keeps its lock: `take_over` takes the lease alone once it has
    expired, fencing that holder, and gives it back when done (issue 28)."""
    a, b = open_store(location), _waiting_briefly(location)
    clock_a = FakeClock()
    late = FakeClock(start=clock_a.now() + LEASE_SECS + 1)
    try:
        with a.lock("s", clock=clock_a) as held:
            a.commit(Changes(sessions=[_session("s")], runs=[_run("s", "running")]))
            busy = pytest.raises(SessionBusy, match="whose lease runs 30s more unless renewed")
            with busy, b.take_over("s", clock=FakeClock()):
                pass
            assert _lease_row(location, "s") == (held.token, held.holder, clock_a.now() + 30)

            with b.take_over("s", clock=late) as taken:
                assert (taken.taken_over, taken.taken_from) == (True, held.holder)
                assert taken.token == held.token + 1
                b.commit(Changes(runs=[_run("s", "ended_by_operator")]))
                with pytest.raises(LeaseLost):
                    a.commit(Changes(runs=[_run("s", "done")]))
            assert (_lease_row(location, "s") or ())[:2] == (taken.token, ""), "given back"
            with pytest.raises(LeaseLost):
                a.commit(Changes(runs=[_run("s", "done")]))
        assert _state(b, "s") == "ended_by_operator"
        with b.take_over("s", clock=late) as free:  # nobody holds the lock: it is had
            assert (free.taken_over, free.token) == (False, taken.token + 1)
    finally:
        a.close()
        b.close()


def test_a_lease_given_back_is_taken_at_once_with_the_next_token(location: str) -> None:
    store = open_store(location)
    try:
        tokens = []
        for _ in range(3):
            with store.lock("s", clock=FakeClock()) as lease:
                store.commit(Changes(sessions=[_session("s")]))
                tokens.append(lease.token)
        assert tokens == [1, 2, 3]
    finally:
        store.close()


def test_a_lock_that_commits_nothing_writes_no_lease_and_the_next_takes_it_at_once(
    location: str,
) -> None:
    """The lease is taken by the call's first commit: a look under the lock writes nothing,
    and a lock whose holder lives on but let it go is proof enough for the next."""
    a, b = open_store(location), open_store(location)
    try:
        with a.lock("s", clock=FakeClock()) as looked:
            assert looked.token == 1
        assert _lease_row(location, "s") is None
        with a.lock("s", clock=FakeClock()) as lease:
            a.commit(Changes(sessions=[_session("s")]))
        # Left as it was on SQLite, where the lock file proves it ended; given back with
        # the unlock on PostgreSQL, where a connection closed takes its backend along.
        given_back = location.startswith("postgresql")
        assert (_lease_row(location, "s") or ())[:2] == (1, "" if given_back else lease.holder)
        # A holder nobody here can judge (on PostgreSQL, as if its give-back was lost): the
        # lock its lease names proves it let the lock go, the very lock file B flocks, the
        # backend still running that no longer holds the advisory lock B holds.
        _lost_give_back(location, "s", "elsewhere/boot/1/4242/99/ab")
        with b.lock("s", wait=False, clock=FakeClock()) as taken:  # A lives on: not busy
            assert taken.token == 2
            b.commit(Changes(runs=[_run("s", "done")]))
        assert (_lease_row(location, "s") or ())[:2] == (2, "" if given_back else taken.holder)
    finally:
        a.close()
        b.close()


def test_a_holder_that_lost_its_lock_before_its_first_commit_writes_nothing_after_a_rival(
    location: str,
) -> None:
    """Whoever commits first under a lease read as free holds it: a holder whose lock was
    lost before its first commit (so before it sent anything) finds the rival's token, and
    its commit writes nothing (issue 17: the lease is taken by the first commit)."""
    a, b = open_store(location), open_store(location)
    try:
        with a.lock("s", clock=FakeClock()) as first:
            lose_lock(location)
            with b.lock("s", wait=False, clock=FakeClock()) as rival:
                assert rival.token == first.token == 1  # both read the lease as free
                b.commit(Changes(sessions=[_session("s")], runs=[_run("s", "waiting")]))
            with pytest.raises(LeaseLost):
                a.commit(Changes(sessions=[_session("s")], runs=[_run("s", "done")]))
        assert _state(b, "s") == "waiting", "the holder that lost wrote nothing"
    finally:
        a.close()
        b.close()


def test_a_call_on_sqlite_makes_no_durable_commit_for_its_lease(tmp_path: Path) -> None:
    """Each lock's lease rides the call's own commits: as many durable transactions as
    commits, none to take the lease and none to give it back (issue 17)."""
    store = open_store(str(tmp_path / "record.sqlite"))
    written: list[str] = []
    store._db.set_trace_callback(written.append)  # type: ignore[attr-defined]
    try:
        for number in range(3):
            with store.lock("s", clock=FakeClock()):
                store.commit(Changes(sessions=[_session("s")], runs=[_run("s", "waiting")]))
                store.commit(Changes(runs=[_run("s", "done")]))
            assert store.commits == 2 * (number + 1)
        inside, durable, alone = False, 0, []  # alone: writes outside BEGIN ... COMMIT
        for sql in written:
            if sql == "BEGIN IMMEDIATE":
                inside = True
            elif sql in ("COMMIT", "ROLLBACK"):
                durable += sql == "COMMIT"
                inside = False
            elif not inside and sql.split()[0] in ("INSERT", "UPDATE", "DELETE"):
                alone.append(sql)
        assert (durable, alone) == (store.commits, [])
        assert store.commits == 6
    finally:
        store.close()


def test_a_commit_on_sqlite_renews_its_lease_only_once_a_third_of_it_has_gone(
    tmp_path: Path,
) -> None:
    """Later commits under a lease only read it (the commit holds the write lock), so the
    lease's page is not made durable again on every commit; once a third of its time has
    gone, as often as the heartbeat renews it, a commit renews it (issue 17)."""
    location = str(tmp_path / "record.sqlite")
    store, clock = open_store(location), FakeClock()
    written: list[str] = []
    store._db.set_trace_callback(written.append)  # type: ignore[attr-defined]

    def lease_writes() -> list[str]:
        # A statement that writes the leases table (a commit's version move reads it).
        writes = ('INSERT INTO "leases"', 'UPDATE "leases"', 'DELETE FROM "leases"')
        return [sql for sql in written if sql.startswith(writes)]

    try:
        with store.lock("s", clock=clock) as lease:
            store.commit(Changes(sessions=[_session("s")], runs=[_run("s", "running")]))
            taken_until = clock.now() + LEASE_SECS
            assert _lease_row(location, "s") == (lease.token, lease.holder, taken_until)
            assert len(lease_writes()) == 1, "the first commit takes the lease"

            written.clear()
            clock.advance(LEASE_SECS / 3 - 1)
            store.commit(Changes(runs=[_run("s", "waiting")]))
            assert lease_writes() == [], "a lease taken moments ago is only read"
            assert _lease_row(location, "s") == (lease.token, lease.holder, taken_until)

            clock.advance(2)  # past a third of its time
            store.commit(Changes(runs=[_run("s", "running")]))
            assert len(lease_writes()) == 1
            renewed_until = clock.now() + LEASE_SECS
            assert _lease_row(location, "s") == (lease.token, lease.holder, renewed_until)

            written.clear()
            store.commit(Changes(runs=[_run("s", "done")]))
            assert lease_writes() == []
        assert _state(store, "s") == "done"
    finally:
        store.close()


def _lost_give_back(location: str, session: str, holder: str) -> None:
    """The lease held by `holder`, live on the test's clocks, under the lock it names."""
    expires = FakeClock().now() + LEASE_SECS
    if location.startswith("postgresql"):
        import psycopg

        with psycopg.connect(location, autocommit=True) as db:
            db.execute(
                'UPDATE leases SET holder = %s, expires = %s WHERE "session" = %s',
                (holder, expires, session),
            )
        return
    import sqlite3
    from contextlib import closing

    with closing(sqlite3.connect(location)) as lite, lite:
        lite.execute(
            'UPDATE leases SET holder = ?, expires = ? WHERE "session" = ?',
            (holder, expires, session),
        )


def _lease_row(location: str, session: str) -> tuple[Any, ...] | None:
    sql = 'SELECT "token", "holder", "expires" FROM "leases" WHERE "session" = '
    if location.startswith("postgresql"):
        import psycopg

        with psycopg.connect(location, autocommit=True) as db:
            found = db.execute(sql + "%s", (session,)).fetchone()
    else:
        import sqlite3
        from contextlib import closing

        with closing(sqlite3.connect(location)) as lite:
            found = lite.execute(sql + "?", (session,)).fetchone()
    return None if found is None else tuple(found)


def test_a_lease_of_a_killed_process_is_taken_at_once_and_one_held_elsewhere_waits(
    location: str, tmp_path: Path
) -> None:
    holding = tmp_path / "holding"
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLD, location, str(holding)],
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + WAIT
        while not holding.exists():
            assert holder.poll() is None, holder.communicate()
            assert time.monotonic() < deadline, "the holder never took the lock"
            time.sleep(0.01)
    finally:
        os.kill(holder.pid, signal.SIGKILL)
        holder.communicate(timeout=WAIT)
    store = open_store(location)
    try:
        now = FakeClock(start=time.time())  # within the killed holder's lease
        with store.lock("s", wait=False, clock=now) as lease:  # its holder is gone
            assert lease.token == 2
            store.commit(Changes(sessions=[_session("s")]))  # the lease is written with it
        # A holder on another machine cannot be judged gone: its lease must expire.
        set_holder(location, "s", "elsewhere/boot/1/4242/99/ab", now.now() + LEASE_SECS)
        with pytest.raises(SessionBusy), store.lock("s", wait=False, clock=now):
            pass
        now.advance(LEASE_SECS)
        with store.lock("s", wait=False, clock=now) as lease:
            assert lease.token == 3
    finally:
        store.close()


_HOLD = """
import sys, time
from pathlib import Path
from stalwart.record import Changes, open_store
from stalwart.record.schema import SessionRow

store = open_store(sys.argv[1])
with store.lock("s"):
    store.commit(Changes(sessions=[SessionRow("s", "u", "desk", 0.0, identity="i")]))
    Path(sys.argv[2]).touch()
    time.sleep(120)  # killed here
"""


def _state(store: Any, session: str) -> str:
    record = store.load(session)
    assert record is not None
    return str(record.runs[-1].state)


# --- the runtime: a worker that lost its lease commits nothing --------------------------------

TOOLS = '''
import threading

from stalwart import current_call, tool

CALLS = []
FAIL = set()
TOKENS = []  # the fencing token each send was made under
INSIDE = threading.Event()
RELEASE = threading.Event()


@tool(writes=True)
def charge_card(order: int) -> dict:
    """Charge the card for an order."""
    call = current_call()
    CALLS.append(("charge_card", {"order": order}))
    TOKENS.append(call.lease)
    INSIDE.set()
    RELEASE.wait(60)  # the test takes the session from this worker meanwhile
    return {"order": order, "charge": f"ch-{order}"}


@tool
def get_order(order: int) -> dict:
    """Look an order up."""
    CALLS.append(("get_order", {"order": order}))
    TOKENS.append(current_call().lease)
    if not INSIDE.is_set():
        INSIDE.set()
        RELEASE.wait(60)  # the test ends this worker's connection meanwhile
    return {"order": order, "paid": False}
'''


@pytest.fixture
def desk(tmp_path: Path, location: str) -> Iterator[Project]:
    record = location if location.startswith("postgresql") else "record.sqlite"
    project = write_project(
        tmp_path, tools_source=TOOLS, tool_names=["charge_card", "get_order"], record=record
    )
    yield project
    project.module.RELEASE.set() if project.module is not None else None
    for opened in project.agents:
        opened.close()


def _in_thread(action: Any) -> tuple[threading.Thread, dict[str, Any]]:
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["reply"] = action()
        except BaseException as error:  # what the caller gets, checked by the test
            outcome["error"] = error

    thread = threading.Thread(target=run)
    thread.start()
    return thread, outcome


def test_a_worker_whose_lease_was_taken_over_commits_nothing_and_tools_see_the_token(
    desk: Project, location: str
) -> None:
    clock = FakeClock()
    a = desk.agent(clock=clock)
    module: Any = desk.module
    a.chat("charge the card for order 4411", user="u")
    thread, outcome = _in_thread(lambda: a.confirm_current("u", "approve"))
    assert module.INSIDE.wait(WAIT), "the tool never began"
    lose_lock(location)

    b = Agent.from_file(desk.yaml, clock=FakeClock())
    desk.agents.append(b)
    assert b.pending("u") is not None and b.pending("u").text == texts.BUSY_ELSEWHERE  # type: ignore[union-attr]
    assert [(sid, r.text) for sid, r in b.resume_all()] == [("u", texts.BUSY_ELSEWHERE)]
    with pytest.raises(SessionBusy):
        b.chat("look up order 4411", user="u")

    # A stalls past its lease: B, on a clock past it, takes the run up and asks.
    late = Agent.from_file(desk.yaml, clock=FakeClock(start=clock.now() + LEASE_SECS + 1))
    desk.agents.append(late)
    reply = late.pending("u")
    assert reply is not None
    assert reply.text == "Did charge_card take effect? It was being sent when the run stopped."
    reply = late.answer_current("u", "did not happen")
    assert reply.state == "rolled_back"

    module.RELEASE.set()  # A's charge answers; A's outcome must not be recorded
    thread.join(WAIT)
    error = outcome.get("error")
    assert isinstance(error, LeaseLost), repr(outcome)
    assert error.code == "lease_lost"
    [charge] = late.record("u")
    assert charge.status == "did_not_happen", "A's outcome never overwrote the person's"
    # A sent under the token of its lock (the chat's lock had 1, the approval's 2); the
    # worker that took over held 3, and sent nothing.
    assert module.TOKENS == [2]


def test_a_connection_lost_before_a_commit_is_sent_again_on_a_new_one(
    tmp_path: Path, pg_url: str
) -> None:
    project = write_project(
        tmp_path, tools_source=TOOLS, tool_names=["charge_card", "get_order"], record=pg_url
    )
    try:
        agent = project.agent(clock=FakeClock())
        module: Any = project.module
        thread, outcome = _in_thread(
            lambda: agent.chat("look up order 4411, then look up order 4412", user="u")
        )
        assert module.INSIDE.wait(WAIT), "the tool never began"
        lose_lock(pg_url)  # the worker's connection ends while the first read is out
        module.RELEASE.set()
        thread.join(WAIT)
        reply = outcome.get("reply")
        assert reply is not None, repr(outcome)  # before: RecordUnavailable, the run in flight
        assert reply.state == "done"
        assert [name for name, _ in module.CALLS] == ["get_order", "get_order"]
        assert [(c.tool, c.status, c.tries) for c in agent.record("u")] == [
            ("get_order", "ran", 1),
            ("get_order", "ran", 1),
        ]
    finally:
        for opened in project.agents:
            opened.close()


# --- real processes on PostgreSQL: the advisory lock dies while A is inside charge_card ------

WORKER = """
import json, sys
from stalwart import Agent, StalwartError

agent = Agent.from_file(sys.argv[1])
try:
    reply = agent.confirm_current("u", "approve")
except StalwartError as error:
    print(json.dumps({"code": str(error.code), "error": str(error)}))
else:
    print(json.dumps({"state": reply.state, "text": reply.text}))
"""

BLOCKING_TOOLS = '''
import time
from pathlib import Path

from stalwart import current_call, tool

HERE = Path(__file__).parent
CALLS = []
FAIL = set()


@tool(writes=True)
def charge_card(order: int) -> dict:
    """Charge the card for an order."""
    with open(HERE / "charges.log", "a") as log:
        log.write(f"{current_call().lease}\\n")
    (HERE / "inside").touch()
    while not (HERE / "release").exists():
        time.sleep(0.01)  # the test ends this worker's connection meanwhile
    return {"order": order, "charge": f"ch-{order}"}
'''


@pytest.mark.postgres
@pytest.mark.timeout(120)
def test_a_worker_process_whose_lock_died_keeps_its_run_until_its_lease_ends_then_is_fenced(
    tmp_path: Path, pg_url: str
) -> None:
    project = write_project(
        tmp_path, tools_source=BLOCKING_TOOLS, tool_names=["charge_card"], record=pg_url
    )
    try:
        agent = project.agent(clock=FakeClock())
        agent.chat("charge the card for order 4411", user="u")
        worker = subprocess.Popen(
            [sys.executable, "-c", WORKER, str(project.yaml)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        deadline = time.monotonic() + WAIT
        while not (tmp_path / "inside").exists():
            assert worker.poll() is None, worker.communicate()
            assert time.monotonic() < deadline, "the tool never began"
            time.sleep(0.01)
        lose_lock(pg_url)  # pg_terminate_backend of A's lock connection

        # A's lease is live (A's heartbeat renews it on its clock): B does not take it.
        now = Agent.from_file(project.yaml, clock=FakeClock(start=time.time()))
        project.agents.append(now)
        reply = now.pending("u")
        assert reply is not None and (reply.state, reply.text) == ("running", texts.BUSY_ELSEWHERE)
        assert dict(now.resume_all())["u"].text == texts.BUSY_ELSEWHERE

        # Past A's lease (A stalled, say), B takes the run up: the person is asked.
        later = Agent.from_file(project.yaml, clock=FakeClock(start=time.time() + 3600))
        project.agents.append(later)
        reply = later.pending("u")
        assert reply is not None
        assert reply.text == "Did charge_card take effect? It was being sent when the run stopped."
        assert later.answer_current("u", "did not happen").state == "rolled_back"

        (tmp_path / "release").touch()  # A's charge answers; A is fenced
        out, err = worker.communicate(timeout=WAIT)
        assert worker.returncode == 0, err
        assert json.loads(out)["code"] == "lease_lost"
        [charge] = later.record("u")
        assert charge.status == "did_not_happen", "A committed nothing"
        # A's token: the chat's lock had 1, A's approval 2.
        assert (tmp_path / "charges.log").read_text().split() == ["2"]
    finally:
        (tmp_path / "release").touch()
        for opened in project.agents:
            opened.close()

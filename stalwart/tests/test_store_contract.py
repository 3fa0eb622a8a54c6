"""The Store contract (record/base.py), run against every backend: SQLite and PostgreSQL.

test_record.py covers the basics through the `store` fixture; this suite covers what
needs a location: reopening, other processes, other store objects, and the lock, down to
several worker processes racing to advance one session.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import closing
from dataclasses import replace
from pathlib import Path

import psycopg
import pytest
from pg_fixtures import BACKENDS

from stalwart.record import CallRow, Changes, MessageRow, RunRow, SessionRow, Store, open_store
from stalwart.record.schema import ADDED_COLUMNS

WAIT = 10.0  # a bound on waits that should end at once; reaching it fails the test


@pytest.fixture(params=BACKENDS)
def location(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "postgres":
        return str(request.getfixturevalue("pg_url"))
    return str(tmp_path / "record.sqlite")


@pytest.fixture
def opened(location: str) -> Iterator[list[Store]]:
    """Every store a test opens on the location, closed after it."""
    stores: list[Store] = []
    yield stores
    for store in stores:
        store.close()


def _open(location: str, opened: list[Store]) -> Store:
    store = open_store(location)
    opened.append(store)
    return store


def _session(name: str = "s1") -> SessionRow:
    return SessionRow(session=name, user="u-17", agent="desk", created=1_800_000_000.25)


def _run(session: str = "s1", number: int = 1) -> RunRow:
    return RunRow(
        run_id=f"{session}#{number}",
        session=session,
        number=number,
        turn="charge order 4411 40.00",
        state="waiting",
        steps=[{"tool": "charge_card", "clause": "charge order 4411", "args": {"order": 4411}}],
        cursor=0,
        question={"kind": "confirm", "text": "Charge 40.00 to order 4411?", "options": ["a"]},
        failure=None,
        reply=None,
        turn_seq=0,
        created=1.5,
        updated=2.5,
    )


def _call(seq: int, session: str = "s1", result: object = None) -> CallRow:
    return CallRow(
        call_id=f"{session}:{seq}",
        run_id=f"{session}#1",
        session=session,
        agent="desk",
        seq=seq,
        step=seq,
        kind="write",
        tool="charge_card",
        args={"order": 4411, "amount": 40.0},
        key="ab" * 32,
        status="ran" if result is not None else "in_flight",
        allowed="allowed",
        result=result,
        error=None,
        undoes=None,
        undone_by=None,
        bindings={"charge": "$result.charge"},
        created=3.0,
        finished=None,
    )


def _message(seq: int, session: str = "s1", rewound: bool = False) -> MessageRow:
    return MessageRow(session, seq, "user", f"message {seq}", None, rewound)


def test_json_values_come_back_equal_with_their_key_order(
    location: str, opened: list[Store]
) -> None:
    result = {
        "zeta": 1,
        "alpha": [1.5, -0.1, 10**15, None, True, "ünïcødé ✓"],
        "mid": {"b": {}, "a": []},
        "big": 2**62,
    }
    store = _open(location, opened)
    store.commit(Changes(sessions=[_session()], runs=[_run()], calls=[_call(1, result=result)]))
    record = store.load("s1")
    assert record is not None
    assert record.calls[0].result == result
    assert list(record.calls[0].result) == ["alpha", "big", "mid", "zeta"]  # canonical order
    assert record.runs[0] == _run()
    assert record.session.created == 1_800_000_000.25


def test_rows_load_in_their_order_and_bools_are_bools(location: str, opened: list[Store]) -> None:
    store = _open(location, opened)
    store.commit(
        Changes(
            sessions=[_session()],
            runs=[_run(number=2), _run(number=1)],
            calls=[_call(seq) for seq in (3, 1, 2)],
            messages=[_message(1, rewound=True), _message(0)],
        )
    )
    record = store.load("s1")
    assert record is not None
    assert [run.number for run in record.runs] == [1, 2]
    assert [call.seq for call in record.calls] == [1, 2, 3]
    assert [(m.seq, m.rewound) for m in record.messages] == [(0, False), (1, True)]
    assert all(type(m.rewound) is bool for m in record.messages)


def test_a_failing_commit_writes_nothing_and_does_not_count(
    location: str, opened: list[Store]
) -> None:
    store = _open(location, opened)
    store.commit(Changes(sessions=[_session()]))
    unstorable = _call(2)
    object.__setattr__(unstorable, "created", object())  # no database can store an object
    with pytest.raises((sqlite3.Error, psycopg.Error)):
        store.commit(Changes(calls=[_call(1), unstorable], messages=[_message(0)]))
    record = store.load("s1")
    assert record is not None
    assert record.calls == () and record.messages == ()
    assert store.commits == 1
    store.commit(Changes(calls=[_call(1)]))  # the store is still usable after the failure
    assert store.commits == 2


def test_the_record_survives_reopening(location: str, opened: list[Store]) -> None:
    first = _open(location, opened)
    first.commit(Changes(sessions=[_session()], calls=[_call(1)]))
    first.close()
    opened.remove(first)
    second = _open(location, opened)
    record = second.load("s1")
    assert record is not None and record.calls == (_call(1),)
    assert second.commits == 0  # the counter counts this object's commits


def test_a_commit_is_seen_by_another_process(location: str, opened: list[Store]) -> None:
    _open(location, opened).commit(Changes(sessions=[_session()], calls=[_call(7)]))
    script = (
        "import sys\n"
        "from stalwart.record import open_store\n"
        "record = open_store(sys.argv[1]).load('s1')\n"
        "print(record.calls[0].seq, record.session.user)\n"
    )
    shown = subprocess.run(
        [sys.executable, "-c", script, location], capture_output=True, text=True, timeout=60
    )
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.split() == ["7", "u-17"]


def test_another_process_commit_is_seen_here(location: str, opened: list[Store]) -> None:
    store = _open(location, opened)
    script = (
        "import sys\n"
        "from stalwart.record import open_store, Changes, SessionRow\n"
        "s = open_store(sys.argv[1])\n"
        "s.commit(Changes(sessions=[SessionRow('s9', 'u-1', 'desk', 1.0)]))\n"
        "s.close()\n"
    )
    subprocess.run([sys.executable, "-c", script, location], check=True, timeout=60)
    record = store.load("s9")
    assert record is not None and record.session.user == "u-1"


def test_sessions_with_runs_in_some_states_are_named_sorted(
    location: str, opened: list[Store]
) -> None:
    store = _open(location, opened)
    rows = [("s3", "rolling_back"), ("s1", "waiting"), ("s2", "done"), ("s1", "rolling_back")]
    store.commit(
        Changes(
            sessions=[_session(name) for name in ("s1", "s2", "s3")],
            runs=[
                replace(_run(session, number), state=state)
                for number, (session, state) in enumerate(rows, 1)
            ],
        )
    )
    assert store.sessions_with_runs_in(["rolling_back", "waiting"]) == ["s1", "s3"]
    assert store.sessions_with_runs_in(["done"]) == ["s2"]
    assert store.sessions_with_runs_in([]) == []
    assert store.sessions_with_runs_in(["stuck"]) == []


@pytest.mark.parametrize(("table", "column", "default"), ADDED_COLUMNS)
def test_a_record_made_before_a_column_was_added_gains_it(
    location: str, opened: list[Store], table: str, column: str, default: int | None
) -> None:
    first = _open(location, opened)
    first.commit(Changes(sessions=[_session()], runs=[_run()], calls=[_call(1)]))
    first.close()
    opened.remove(first)
    _drop_column(location, table, column)  # the record as an older stalwart left it
    store = _open(location, opened)
    if table == "leases":  # the store's own table: a lease taken now names its lock there
        with store.lock("s1"):
            store.commit(Changes(calls=[_call(2)]))
        assert _lease_column(location, column) not in (None, default)
        return
    record = store.load("s1")
    assert record is not None
    row = {"calls": record.calls[0], "sessions": record.session, "runs": record.runs[0]}[table]
    assert getattr(row, column) == default


def _lease_column(location: str, column: str) -> object:
    sql = f'SELECT "{column}" FROM "leases" WHERE "session" = \'s1\''
    if location.startswith("postgresql://"):
        with psycopg.connect(location, autocommit=True) as admin:
            found = admin.execute(sql).fetchone()
    else:
        with closing(sqlite3.connect(location)) as database:
            found = database.execute(sql).fetchone()
    assert found is not None, "no lease was written"
    return found[0]


def _drop_column(location: str, table: str, column: str) -> None:
    if location.startswith("postgresql://"):
        with psycopg.connect(location, autocommit=True) as admin:
            admin.execute(f'ALTER TABLE "{table}" DROP COLUMN "{column}"')
        return
    with closing(sqlite3.connect(location)) as database, database:
        database.execute(f'ALTER TABLE "{table}" DROP COLUMN "{column}"')


def _try_lock_in_thread(store: Store, session: str) -> tuple[threading.Event, threading.Event]:
    """Lock `session` in a new thread; returns (entered, release) events."""
    entered, release = threading.Event(), threading.Event()

    def hold() -> None:
        with store.lock(session):
            entered.set()
            release.wait(WAIT)

    threading.Thread(target=hold, daemon=True).start()
    return entered, release


@pytest.mark.parametrize("second_store", [False, True], ids=["same_store", "second_store"])
def test_the_lock_excludes_a_second_holder(
    location: str, opened: list[Store], second_store: bool
) -> None:
    store = _open(location, opened)
    other = _open(location, opened) if second_store else store
    with store.lock("s1"):
        entered, release = _try_lock_in_thread(other, "s1")
        assert not entered.wait(0.3)  # bounded look: it must still be waiting
    assert entered.wait(WAIT)
    release.set()


def test_locks_of_different_sessions_do_not_wait_for_each_other(
    location: str, opened: list[Store]
) -> None:
    store = _open(location, opened)
    with store.lock("s1"):
        entered, release = _try_lock_in_thread(_open(location, opened), "s2")
        assert entered.wait(WAIT)
        release.set()


def test_a_commit_inside_the_lock_keeps_it(location: str, opened: list[Store]) -> None:
    store = _open(location, opened)
    with store.lock("new-session"):  # a session not yet recorded can be locked
        store.commit(Changes(sessions=[_session("new-session")], calls=[_call(1, "new-session")]))
        entered, release = _try_lock_in_thread(_open(location, opened), "new-session")
        assert not entered.wait(0.3)
        record = store.load("new-session")
        assert record is not None and len(record.calls) == 1
    assert entered.wait(WAIT)
    release.set()


def test_the_lock_holds_across_processes_and_dies_with_its_holder(
    location: str, opened: list[Store]
) -> None:
    store = _open(location, opened)
    script = (
        "import sys, time\n"
        "from stalwart.record import open_store\n"
        "with open_store(sys.argv[1]).lock('s1'):\n"
        "    print('held', flush=True)\n"
        "    time.sleep(120)\n"
    )
    with subprocess.Popen(
        [sys.executable, "-c", script, location], stdout=subprocess.PIPE, text=True
    ) as holder:
        try:
            assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
            entered, release = _try_lock_in_thread(store, "s1")
            assert not entered.wait(0.3)
            holder.kill()  # the lease goes with its holder
            assert entered.wait(WAIT)
            release.set()
        finally:
            holder.kill()


# A worker advances session "s" `rounds` times: under the lock (unless told not to), it
# loads the record, reads the counter (the number of messages) and appends message number
# <counter>, after a pause that widens the window between reading and writing. Two
# workers inside at once would write the same number: an upsert keeps one, a count is lost.
WORKER = """
import sys, time
from contextlib import nullcontext
from stalwart.record import Changes, MessageRow, open_store

url, name, rounds, locked = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4] == "lock"
store = open_store(url)
print("ready", flush=True)
sys.stdin.readline()  # every worker starts at once
for number in range(rounds):
    with store.lock("s") if locked else nullcontext():
        counter = len(store.load("s").messages)
        time.sleep(0.005)
        store.commit(Changes(messages=[MessageRow("s", counter, "user", name, None, False)]))
store.close()
"""


def _race(url: str, workers: int, rounds: int, locked: bool) -> None:
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, url, f"w{n}", str(rounds), "lock" if locked else "-"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for n in range(workers)
    ]
    try:
        for process in processes:
            assert process.stdout is not None and process.stdout.readline().strip() == "ready"
        for process in processes:
            assert process.stdin is not None
            process.stdin.write("go\n")
            process.stdin.close()
        for process in processes:
            assert process.wait(60) == 0
    finally:
        for process in processes:
            process.kill()
            process.wait()
            if process.stdout is not None:
                process.stdout.close()


def test_worker_processes_advance_a_session_one_at_a_time(
    location: str, opened: list[Store]
) -> None:
    store = _open(location, opened)
    store.commit(Changes(sessions=[SessionRow("s", "u-17", "desk", 1.0)]))
    workers, rounds = 4, 12
    _race(location, workers, rounds, locked=True)
    record = store.load("s")
    assert record is not None
    assert [m.seq for m in record.messages] == list(range(workers * rounds))
    for n in range(workers):
        assert sum(m.content == f"w{n}" for m in record.messages) == rounds


def test_without_the_lock_the_same_workers_lose_counts(location: str, opened: list[Store]) -> None:
    # The control: shows the race test above can fail, so its passing means something.
    store = _open(location, opened)
    store.commit(Changes(sessions=[SessionRow("s", "u-17", "desk", 1.0)]))
    workers, rounds = 4, 12
    _race(location, workers, rounds, locked=False)
    record = store.load("s")
    assert record is not None
    assert len(record.messages) < workers * rounds

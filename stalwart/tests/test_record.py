"""The record store: upserts in one transaction, loads in order, locks a session."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

from stalwart.record import CallRow, Changes, MessageRow, RunRow, SessionRow
from stalwart.record.base import Store
from stalwart.record.sqlite import SQLiteStore


def _session(name: str = "s1") -> SessionRow:
    return SessionRow(session=name, user="u-1", agent="desk", created=1.0)


def _run(state: str = "running", session: str = "s1") -> RunRow:
    return RunRow(
        run_id=f"{session}#1",
        session=session,
        number=1,
        turn="charge order 1",
        state=state,
        steps=[{"tool": "charge_card", "args": {"order": 1, "amount": 2.5}, "clause": "x"}],
        cursor=0,
        question=None,
        failure=None,
        reply=None,
        turn_seq=0,
        created=1.0,
        updated=1.0,
    )


def _call(seq: int, status: str = "in_flight", session: str = "s1") -> CallRow:
    return CallRow(
        call_id=f"{session}#1:{seq}",
        run_id=f"{session}#1",
        session=session,
        agent="desk",
        seq=seq,
        step=seq,
        kind="write",
        tool="charge_card",
        args={"order": 1, "amount": 2.5},
        key="k" * 64,
        status=status,
        allowed="rulebook allowed",
        result={"charge": "ch_1", "nested": [1, {"a": None}]} if status == "ran" else None,
        error=None,
        undoes=None,
        undone_by=None,
        bindings=None,
        created=1.0,
        finished=None,
    )


def test_an_unknown_session_loads_as_none(store: Store) -> None:
    assert store.load("nobody") is None


def test_rows_round_trip_and_come_back_in_order(store: Store) -> None:
    store.commit(
        Changes(
            sessions=[_session()],
            runs=[_run()],
            calls=[_call(2), _call(1)],
            messages=[
                MessageRow("s1", 1, "assistant", "done", "s1#1", False),
                MessageRow("s1", 0, "user", "charge order 1", None, False),
            ],
        )
    )
    record = store.load("s1")
    assert record is not None
    assert record.session == _session()
    assert record.runs == (_run(),)
    assert [c.seq for c in record.calls] == [1, 2]
    assert [m.content for m in record.messages] == ["charge order 1", "done"]
    assert record.messages[0].rewound is False


def test_an_upsert_replaces_the_row_whole(store: Store) -> None:
    store.commit(Changes(sessions=[_session()], calls=[_call(1)]))
    store.commit(Changes(calls=[_call(1, status="ran")]))
    record = store.load("s1")
    assert record is not None
    assert len(record.calls) == 1
    assert record.calls[0].status == "ran"
    assert record.calls[0].result == {"charge": "ch_1", "nested": [1, {"a": None}]}


def test_each_commit_counts_once_and_an_empty_one_not_at_all(store: Store) -> None:
    before = store.commits
    store.commit(Changes(sessions=[_session()], runs=[_run()], calls=[_call(1)]))
    store.commit(Changes())
    assert store.commits == before + 1


def test_sessions_are_kept_apart(store: Store) -> None:
    store.commit(Changes(sessions=[_session("a"), _session("b")], calls=[_call(1, session="b")]))
    a, b = store.load("a"), store.load("b")
    assert a is not None and b is not None
    assert a.calls == () and len(b.calls) == 1


def test_a_failing_commit_writes_nothing(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "r.sqlite")
    broken = _session("s1")
    object.__setattr__(broken, "created", object())  # sqlite cannot bind an object
    try:
        store.commit(Changes(calls=[_call(1)], sessions=[broken]))
    except Exception:
        pass
    else:
        raise AssertionError("the commit should have failed")
    assert store.load("s1") is None
    assert store.commits == 0
    store.close()


def test_the_lock_excludes_a_second_holder_in_the_same_process(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "r.sqlite")
    order: list[str] = []
    held = threading.Event()

    def second() -> None:
        held.wait()
        with store.lock("s1"):
            order.append("second")

    thread = threading.Thread(target=second)
    thread.start()
    with store.lock("s1"):
        held.set()
        time.sleep(0.05)  # give the second holder a chance to (wrongly) get in
        order.append("first")
    thread.join(5)
    assert order == ["first", "second"]
    store.close()


def test_the_lock_holds_across_processes_and_dies_with_its_holder(tmp_path: Path) -> None:
    path = tmp_path / "r.sqlite"
    store = SQLiteStore(path)
    script = (
        "import sys, time\n"
        "from stalwart.record.sqlite import SQLiteStore\n"
        "s = SQLiteStore(sys.argv[1])\n"
        "with s.lock('s1'):\n"
        "    print('held', flush=True)\n"
        "    time.sleep(60)\n"
    )
    with subprocess.Popen(
        [sys.executable, "-c", script, str(path)], stdout=subprocess.PIPE, text=True
    ) as holder:
        try:
            assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
            got = threading.Event()

            def take() -> None:
                with store.lock("s1"):
                    got.set()

            taker = threading.Thread(target=take, daemon=True)
            taker.start()
            assert not got.wait(0.3)  # the other process holds it
            holder.kill()  # its lock goes with it
            assert got.wait(10)
        finally:
            holder.kill()
    store.close()


def test_the_record_survives_reopening(tmp_path: Path) -> None:
    path = tmp_path / "r.sqlite"
    first = SQLiteStore(path)
    first.commit(Changes(sessions=[_session()], calls=[_call(1)]))
    first.close()
    second = SQLiteStore(path)
    record = second.load("s1")
    assert record is not None and record.calls[0].tool == "charge_card"
    mode = second._db.execute("PRAGMA journal_mode").fetchone()[0]
    assert mode == "wal"
    second.close()

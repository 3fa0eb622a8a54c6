"""What only the PostgreSQL record does: the wait limit, the fence, many workers starting."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections.abc import Iterator

import psycopg
import pytest

from stalwart import FakeClock, LeaseLost
from stalwart.record import Changes, MessageRow, SessionBusy, SessionRow, open_store
from stalwart.record.postgres import PostgresStore, session_lock_key

pytestmark = pytest.mark.postgres


@pytest.fixture
def pg_store(pg_url: str) -> Iterator[PostgresStore]:
    opened = PostgresStore(pg_url, lock_wait_secs=10)
    yield opened
    opened.close()


def test_a_lock_not_had_in_time_raises_session_busy(pg_url: str, pg_store: PostgresStore) -> None:
    impatient = PostgresStore(pg_url, lock_wait_secs=0.2)
    try:
        with (
            pg_store.lock("s1"),
            pytest.raises(SessionBusy, match="another worker"),
            impatient.lock("s1"),
        ):
            pass  # pragma: no cover - never entered
        with impatient.lock("s1"):  # free again, and the failed wait left nothing behind
            impatient.commit(Changes(sessions=[SessionRow("s1", "u", "desk", 1.0)]))
        assert impatient.load("s1") is not None
    finally:
        impatient.close()


def test_a_holder_whose_connection_is_lost_keeps_its_lease_until_it_is_taken_over(
    pg_url: str, pg_store: PostgresStore
) -> None:
    rival = PostgresStore(pg_url, lock_wait_secs=10)
    clock = FakeClock()
    try:
        with pg_store.lock("s1", clock=clock) as lease:
            # The lease is the holder's from its first commit (before it sends anything).
            pg_store.commit(Changes(sessions=[SessionRow("s1", "holder", "desk", 1.0)]))
            with psycopg.connect(pg_url, autocommit=True) as admin:
                holders = admin.execute(
                    "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted"
                ).fetchall()
                assert len(holders) == 1
                admin.execute("SELECT pg_terminate_backend(%s, 10000)", (holders[0][0],))
            # The advisory lock went with the connection; the lease did not.
            with pytest.raises(SessionBusy), rival.lock("s1", clock=clock):
                pass
            # The holder commits through a new connection: its lease is still its own.
            pg_store.commit(Changes(sessions=[SessionRow("s1", "holder", "desk", 1.0)]))
            late = FakeClock(start=clock.now() + lease.secs + 1)
            with rival.lock("s1", clock=late):  # the lease expired: taken over
                rival.commit(Changes(sessions=[SessionRow("s1", "rival", "desk", 1.0)]))
                with pytest.raises(LeaseLost) as lost:  # stalwart's error, with a code
                    pg_store.commit(Changes(sessions=[SessionRow("s1", "stale", "desk", 1.0)]))
                assert lost.value.code == "lease_lost"
        record = rival.load("s1")
        assert record is not None and record.session.user == "rival"
        with pg_store.lock("s1"):  # the store recovers with a fresh connection
            assert pg_store.load("s1") is not None
    finally:
        rival.close()


def test_workers_starting_at_once_all_create_the_schema(pg_url: str) -> None:
    stores: list[PostgresStore] = []
    failures: list[BaseException] = []

    def start() -> None:
        try:
            stores.append(PostgresStore(pg_url))
        except BaseException as error:  # collected and reported by the assertion below
            failures.append(error)

    threads = [threading.Thread(target=start) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    try:
        assert failures == []
        assert len(stores) == 6
    finally:
        for opened in stores:
            opened.close()


def test_the_record_s_functions_are_made_once_and_replaced_when_they_differ(pg_url: str) -> None:
    """The lock's and the give-back's functions are made with the tables; opening a store
    again leaves them be (every backend would compile a replaced one again), and one whose
    body differs from this version's (an older stalwart's) is replaced."""
    versions = (
        "SELECT p.proname, p.xmin::text FROM pg_proc p WHERE p.proname LIKE 'stalwart\\_%' "
        "ORDER BY 1"
    )
    PostgresStore(pg_url).close()
    with psycopg.connect(pg_url, autocommit=True) as admin:
        made = admin.execute(versions).fetchall()
        assert [name for name, _ in made] == ["stalwart_give_back", "stalwart_lock_and_stamp"]
        PostgresStore(pg_url).close()
        assert admin.execute(versions).fetchall() == made, "opened again: not replaced"
        admin.execute(
            "CREATE OR REPLACE FUNCTION stalwart_give_back(wanted_session text, "
            "wanted_token bigint, wanted_holder text) RETURNS void LANGUAGE plpgsql VOLATILE "
            "AS $$ BEGIN END $$"
        )
        PostgresStore(pg_url).close()
        body = admin.execute(
            "SELECT prosrc FROM pg_proc WHERE proname = 'stalwart_give_back'"
        ).fetchone()
        assert body is not None and "UPDATE" in body[0], "an older body is replaced"


def test_no_index_repeats_a_key_and_one_a_record_made_before_has_is_dropped(pg_url: str) -> None:
    """messages' key leads with its session: an index of the session alone would be one more
    entry written for every message (a record made before has one, and loses it)."""
    indexes = "SELECT indexname FROM pg_indexes WHERE tablename = 'messages' ORDER BY 1"
    PostgresStore(pg_url).close()
    with psycopg.connect(pg_url, autocommit=True) as admin:
        assert admin.execute(indexes).fetchall() == [("messages_pkey",)]
        admin.execute('CREATE INDEX "messages_session" ON "messages" ("session")')
        PostgresStore(pg_url).close()
        assert admin.execute(indexes).fetchall() == [("messages_pkey",)]


def test_the_record_url_chooses_postgres(pg_url: str) -> None:
    opened = open_store(pg_url)
    try:
        assert isinstance(opened, PostgresStore)
    finally:
        opened.close()


def test_loads_and_commits_inside_the_lock_use_the_lock_connection(
    pg_store: PostgresStore,
) -> None:
    pool = pg_store._connections.pool
    # The store's first request may have started a second connection opening in the pool's
    # background (a request that found the pool empty grows it); count only once it has opened.
    deadline = time.monotonic() + 30
    while (stats := pool.get_stats())["pool_available"] != stats["pool_size"]:
        assert time.monotonic() < deadline, f"the pool never settled: {stats}"
        time.sleep(0.01)
    before = pool.get_stats().get("requests_num", 0)
    with pg_store.lock("s1"):
        pg_store.commit(Changes(sessions=[SessionRow("s1", "u", "desk", 1.0)]))
        pg_store.commit(Changes(messages=[MessageRow("s1", 0, "user", "hi", None, False)]))
        assert pg_store.load("s1") is not None
    # one connection served the lock and everything inside it; it went back to the pool
    stats = pool.get_stats()
    assert stats.get("requests_num", 0) - before == 1
    assert stats["pool_available"] == stats["pool_size"]


def test_session_lock_keys_are_signed_64_bit_and_stable() -> None:
    keys = {session_lock_key(f"s{n}") for n in range(1000)}
    assert len(keys) == 1000
    assert all(-(2**63) <= key < 2**63 for key in keys)
    assert session_lock_key("s1") == session_lock_key("s1")


def test_bad_settings_and_a_closed_store_are_refused(pg_url: str) -> None:
    with pytest.raises(ValueError, match="lock_wait_secs"):
        PostgresStore(pg_url, lock_wait_secs=0)
    closed = PostgresStore(pg_url)
    closed.close()
    with pytest.raises(RuntimeError, match="closed"):
        closed.load("s1")


def test_a_failed_load_inside_the_lock_leaves_the_lock_usable(
    pg_url: str, pg_store: PostgresStore
) -> None:
    # Recorded first: under the lock, a session the record has no row for loads as None
    # without a query (the version read with the lock says so).
    pg_store.commit(Changes(sessions=[SessionRow("s1", "u", "desk", 1.0)]))
    with psycopg.connect(pg_url, autocommit=True) as admin, pg_store.lock("s1"):
        admin.execute('ALTER TABLE "messages" RENAME TO "messages_away"')
        with pytest.raises(psycopg.errors.UndefinedTable):
            pg_store.load("s1")
        admin.execute('ALTER TABLE "messages_away" RENAME TO "messages"')
        pg_store.commit(Changes(sessions=[SessionRow("s1", "u", "desk", 1.0)]))
        assert pg_store.load("s1") is not None


def test_without_psycopg_a_postgres_record_says_which_extra_to_install() -> None:
    script = (
        "import sys\n"
        "sys.modules['psycopg'] = None  # as if it were not installed\n"
        "from stalwart.record import open_store\n"
        "open_store('postgresql://postgres@127.0.0.1:1/none')\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 1
    assert "pip install 'stalwart[postgres]'" in done.stderr

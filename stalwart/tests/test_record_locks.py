"""SQLite's session locks live beside the database, and have a wait limit (SessionBusy).

Workers whose temp folders differ (systemd's PrivateTmp, containers sharing a volume)
must still exclude each other: the tests run real processes, each with its own TMPDIR.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import warnings
from pathlib import Path

import pytest

from stalwart import SessionBusy
from stalwart.record.lock_files import LockFiles
from stalwart.record.sqlite import SQLiteStore, lock_folder

HOLD = (
    "import sys, time\n"
    "from stalwart.record.sqlite import SQLiteStore\n"
    "s = SQLiteStore(sys.argv[1])\n"
    "with s.lock('u-17'):\n"
    "    print('held', flush=True)\n"
    "    sys.stdin.readline()\n"  # held until the test says so
)
TAKE = (
    "import sys\n"
    "from stalwart import SessionBusy\n"
    "from stalwart.record.sqlite import SQLiteStore\n"
    "s = SQLiteStore(sys.argv[1], lock_wait_secs=float(sys.argv[2]))\n"
    "try:\n"
    "    with s.lock('u-17'):\n"
    "        print('got it', flush=True)\n"
    "except SessionBusy as busy:\n"
    "    print(busy.code, flush=True)\n"
)


def _env(tmp: Path) -> dict[str, str]:
    tmp.mkdir(exist_ok=True)
    return {**os.environ, "TMPDIR": str(tmp)}


def test_workers_with_different_temp_folders_exclude_each_other(tmp_path: Path) -> None:
    database = tmp_path / "shared" / "record.sqlite"
    database.parent.mkdir()
    SQLiteStore(database).close()
    with subprocess.Popen(
        [sys.executable, "-c", HOLD, str(database)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=_env(tmp_path / "tmp-a"),
    ) as holder:
        try:
            assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
            taker = subprocess.run(
                [sys.executable, "-c", TAKE, str(database), "0.3"],
                capture_output=True,
                text=True,
                env=_env(tmp_path / "tmp-b"),
                timeout=60,
            )
            assert taker.stdout.strip() == "session_busy", taker.stderr
            assert holder.stdin is not None
            holder.stdin.write("release\n")
            holder.stdin.flush()
            holder.wait(30)
        finally:
            holder.kill()
    after = subprocess.run(
        [sys.executable, "-c", TAKE, str(database), "5"],
        capture_output=True,
        text=True,
        env=_env(tmp_path / "tmp-c"),
        timeout=60,
    )
    assert after.stdout.strip() == "got it", after.stderr


def test_the_locks_are_beside_the_database_not_in_the_temp_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path / "elsewhere"))
    database = tmp_path / "record.sqlite"
    store = SQLiteStore(database)
    with store.lock("u-17"):
        pass
    store.close()
    assert lock_folder(str(database)) == str(tmp_path / "record.sqlite.locks")
    assert len(list((tmp_path / "record.sqlite.locks").iterdir())) == 1
    assert not (tmp_path / "elsewhere").exists()


def test_a_lock_held_past_the_wait_limit_raises_session_busy_in_one_process(
    tmp_path: Path,
) -> None:
    store = SQLiteStore(tmp_path / "record.sqlite", lock_wait_secs=0.2)
    held, release = threading.Event(), threading.Event()

    def hold() -> None:
        with store.lock("u-17"):
            held.set()
            release.wait(30)

    holder = threading.Thread(target=hold, daemon=True)
    holder.start()
    assert held.wait(10)
    with pytest.raises(SessionBusy) as busy, store.lock("u-17"):
        pass
    assert busy.value.code == "session_busy"
    release.set()
    holder.join(10)
    with store.lock("u-17"):
        pass
    store.close()


def test_the_wait_limit_must_be_positive(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="lock_wait_secs"):
        SQLiteStore(tmp_path / "record.sqlite", lock_wait_secs=0)


# --- the lock files kept open between calls (record/lock_files.py) --------------------------


def test_a_session_locked_again_reuses_its_file_and_a_store_keeps_a_bounded_number(
    tmp_path: Path,
) -> None:
    open_before = _open_descriptors()
    files = LockFiles(str(tmp_path / "locks"), kept_idle=3)
    first = files.lock("u-17", time.monotonic())
    assert first is not None
    files.unlock(first)
    again = files.lock("u-17", time.monotonic())
    assert again is not None
    assert (again.descriptor, again.identity) == (first.descriptor, first.identity)
    files.unlock(again)
    assert _open_descriptors() == open_before + 1
    for number in range(5):
        held = files.lock(f"u-{number}", time.monotonic())
        assert held is not None
        files.unlock(held)
    assert files.kept() == 3  # u-17, u-0 and u-1 closed, least recently unlocked first
    assert _open_descriptors() == open_before + 3
    files.close()
    assert files.kept() == 0
    assert _open_descriptors() == open_before


def _open_descriptors() -> int:
    return len(os.listdir("/proc/self/fd"))


def test_a_kept_file_swept_away_is_not_locked_instead_of_the_one_made_anew(
    tmp_path: Path,
) -> None:
    database = tmp_path / "record.sqlite"
    store = SQLiteStore(database, lock_wait_secs=0.2)
    with store.lock("u-17"):
        pass  # its file is kept open
    shutil.rmtree(lock_folder(str(database)))
    other = SQLiteStore(database, lock_wait_secs=0.2)
    # The file made anew, held by another worker: not had through the kept one.
    with other.lock("u-17"), pytest.raises(SessionBusy), store.lock("u-17"):
        pass
    with store.lock("u-17"):  # free again: had, on the file the path names now
        assert len(list(Path(lock_folder(str(database))).iterdir())) == 1
    store.close()
    other.close()


def test_a_child_process_after_a_fork_does_not_share_a_kept_file_with_its_parent(
    tmp_path: Path,
) -> None:
    files = LockFiles(str(tmp_path / "locks"))
    held = files.lock("u-17", time.monotonic())
    assert held is not None
    files.unlock(held)  # kept open: a forked child gets a copy of it
    reader, writer = os.pipe()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # a multi-threaded process
        child = os.fork()
    if child == 0:
        try:
            mine = files.lock("u-17", time.monotonic())
            os.write(writer, b"held\n" if mine is not None else b"busy\n")
            time.sleep(60)  # holds it until the parent, done trying, kills it
        finally:
            os._exit(0)
    try:
        assert os.read(reader, 5) == b"held\n"
        assert files.lock("u-17", time.monotonic()) is None  # the child holds it
    finally:
        os.kill(child, signal.SIGKILL)
        os.waitpid(child, 0)
        os.close(reader)
        os.close(writer)
    after = files.lock("u-17", time.monotonic() + 5)
    assert after is not None
    files.unlock(after)
    files.close()

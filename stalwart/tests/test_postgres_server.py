"""The tests' PostgreSQL server: found, started as the right user, stopped, or skipped."""

from __future__ import annotations

import json
import os
import pwd
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest
from pgserver import PostgresServer, PostgresUnavailable, find_bin_dir, start_postgres

pytestmark = pytest.mark.postgres

TESTS = Path(__file__).parent


def test_the_session_server_serves_its_url(pg_server: PostgresServer) -> None:
    assert pg_server.url() == f"postgresql://postgres@127.0.0.1:{pg_server.port}/stalwart_test"
    with psycopg.connect(pg_server.url()) as connection:
        row = connection.execute(
            "SELECT current_setting('server_version_num')::int, current_setting('fsync')"
        ).fetchone()
    assert row is not None
    version, fsync = row
    assert version >= 150000
    assert fsync == "off"  # nothing of a test server outlives the run
    assert pg_server.started_in_secs < 15


def test_as_root_the_server_runs_as_the_postgres_user(pg_server: PostgresServer) -> None:
    owner = pwd.getpwuid(pg_server.data_dir.stat().st_uid).pw_name
    assert owner == ("postgres" if os.geteuid() == 0 else pwd.getpwuid(os.geteuid()).pw_name)


def test_a_durable_server_starts_and_stop_removes_everything() -> None:
    server = start_postgres(durable=True, database="bench")
    url, root = server.url(), server.root
    with psycopg.connect(url) as connection:
        assert connection.execute("SELECT current_setting('fsync')").fetchone() == ("on",)
    # after a suite, every database it made is dropped, also one still connected to
    left_open = psycopg.connect(server.create_database("left_open"))
    server.create_database("another")
    server.drop_databases()
    with pytest.raises(psycopg.OperationalError):  # closed by the drop
        left_open.execute("SELECT 1")
    left_open.close()
    with psycopg.connect(server.url("postgres")) as admin:
        rows = admin.execute("SELECT datname FROM pg_database ORDER BY datname").fetchall()
    assert rows == [("postgres",), ("template0",), ("template1",)]
    assert server.made == []
    server.stop()
    server.stop()  # a second stop does nothing
    assert not root.exists()
    with pytest.raises(psycopg.OperationalError):
        psycopg.connect(url, connect_timeout=2)


def test_a_database_name_is_checked(pg_server: PostgresServer) -> None:
    with pytest.raises(ValueError, match="lower-case"):
        pg_server.create_database('x"; DROP DATABASE stalwart_test; --')


def test_a_chosen_binary_folder_is_the_only_one_tried(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STALWART_PG_BIN", str(tmp_path))
    assert find_bin_dir() is None
    with pytest.raises(PostgresUnavailable, match="no PostgreSQL binaries"):
        start_postgres()


def _pytest_without_postgres(tmp_path: Path, ci: bool) -> subprocess.CompletedProcess[str]:
    (tmp_path / "conftest.py").write_text(
        "from pg_fixtures import pg_server, pg_url, pytest_terminal_summary  # noqa\n"
    )
    (tmp_path / "test_needs_pg.py").write_text("def test_it(pg_url):\n    assert pg_url\n")
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "PYTEST_ADDOPTS")}
    env["PYTHONPATH"] = str(TESTS)
    env["STALWART_PG_BIN"] = str(tmp_path / "nothing-here")
    if ci:
        env["CI"] = "true"
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", str(tmp_path)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_without_a_server_the_tests_skip_and_say_why(tmp_path: Path) -> None:
    done = _pytest_without_postgres(tmp_path, ci=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 skipped" in done.stdout
    assert (
        "PostgreSQL tests skipped. PostgreSQL could not be started: no PostgreSQL binaries"
        in done.stdout
    )


def test_in_ci_without_a_server_the_tests_fail(tmp_path: Path) -> None:
    done = _pytest_without_postgres(tmp_path, ci=True)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "CI is set, so PostgreSQL tests never skip" in done.stdout
    assert "skipped" not in done.stdout


def test_stopping_a_server_that_never_started_only_removes_its_folder(tmp_path: Path) -> None:
    root = tmp_path / "never-started"
    (root / "data").mkdir(parents=True)
    bin_dir = find_bin_dir() or tmp_path
    PostgresServer(bin_dir=bin_dir, root=root, port=1, run_as=None, database="x").stop()
    assert not root.exists()


# Run in a pytest of its own: each test's database, and what the suite left, as lists.
_DROPS_CONFTEST = """
import json
import pathlib

import psycopg
import pytest

from pg_fixtures import pg_server, pg_url, pytest_terminal_summary  # noqa: F401

HERE = pathlib.Path(__file__).parent


def databases(server):
    with psycopg.connect(server.url("postgres")) as admin:
        rows = admin.execute("SELECT datname FROM pg_database ORDER BY datname").fetchall()
    return [name for (name,) in rows]


@pytest.fixture(scope="session", autouse=True)
def after_the_suite(pg_server):
    yield
    (HERE / "after.json").write_text(json.dumps(databases(pg_server)))
"""

_DROPS_TESTS = """
import json

import psycopg

from conftest import HERE, databases

LEFT_OPEN = []


def test_first(pg_url):
    connection = psycopg.connect(pg_url)  # left open, as a test that leaks one leaves it
    connection.execute("CREATE TABLE t (x int)")
    connection.commit()
    LEFT_OPEN.append(connection)
    (HERE / "first.json").write_text(json.dumps(pg_url.rsplit("/", 1)[1]))


def test_second(pg_url, pg_server):
    mine = pg_url.rsplit("/", 1)[1]
    (HERE / "second.json").write_text(json.dumps({"mine": mine, "all": databases(pg_server)}))
"""


def test_each_tests_database_is_dropped_after_it_and_none_is_left_after_the_suite(
    tmp_path: Path, pg_server: PostgresServer
) -> None:
    """pg_url's database is dropped once its test ends (a connection the test left open is
    closed for it), and whatever the suite made is dropped at its end."""
    (tmp_path / "conftest.py").write_text(_DROPS_CONFTEST)
    (tmp_path / "test_drops.py").write_text(_DROPS_TESTS)
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "PYTEST_ADDOPTS")}
    env["PYTHONPATH"] = str(TESTS)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", str(tmp_path)],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 passed" in done.stdout, done.stdout
    first = json.loads((tmp_path / "first.json").read_text())
    during = json.loads((tmp_path / "second.json").read_text())
    # while the second test runs, the first's database is gone (its connection closed)
    assert first not in during["all"]
    assert during["all"] == sorted(
        ["postgres", "stalwart_test", "template0", "template1", during["mine"]]
    )
    # once the tests ended, theirs are gone: only the server's own and the suite's remain
    after = json.loads((tmp_path / "after.json").read_text())
    assert after == ["postgres", "stalwart_test", "template0", "template1"]

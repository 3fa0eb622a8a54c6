"""The database comes and goes: a PostgreSQL server stopped with `pg_ctl stop -m immediate`
and started again while a tool is inside a call.

The run's outcome cannot be recorded while the server is gone: the caller gets stalwart's
`RecordUnavailable` (code `record_unavailable`), never the driver's exception. Once the
server is back, the store's pool hands out no stale connection, and the run is taken up
from the record: the write left in flight is the chapter's question, sent once.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pgserver import (
    START_TIMEOUT_SECS,
    PostgresServer,
    PostgresUnavailable,
    _run,
    start_postgres,
)

from stalwart import FakeClock, RecordUnavailable
from stalwart.record.postgres import PostgresStore

TOOLS = '''
import threading

from stalwart import tool

CALLS = []
FAIL = set()
INSIDE = threading.Event()
RELEASE = threading.Event()


@tool(writes=True)
def charge_card(order: int) -> dict:
    """Charge the card for an order."""
    CALLS.append(("charge_card", {"order": order}))
    INSIDE.set()
    RELEASE.wait(60)  # the test stops and restarts the server meanwhile
    return {"order": order, "charge": f"ch-{order}"}
'''


@pytest.fixture
def own_server() -> Iterator[PostgresServer]:
    """A server of this test's own: it is stopped and started again."""
    try:
        server = start_postgres(durable=True)  # an immediate stop keeps what was committed
    except PostgresUnavailable as why:
        if os.environ.get("CI"):
            pytest.fail(f"{why} (CI is set, so PostgreSQL tests never skip)")
        pytest.skip(str(why))
    with server:
        yield server


def _stop_immediately(server: PostgresServer) -> None:
    _run(server, "pg_ctl", "-D", str(server.data_dir), "-m", "immediate", "-w", "stop")


def _start_again(server: PostgresServer) -> None:
    settings = ["listen_addresses=127.0.0.1", "max_connections=200"]
    options = f"-p {server.port} -k {server.socket_dir} " + " ".join(
        f"-c {setting}" for setting in settings
    )
    _run(server, "pg_ctl", "-D", str(server.data_dir), "-l", str(server.root / "log"),
         "-w", "-t", str(START_TIMEOUT_SECS), "-o", options, "start")  # fmt: skip


@pytest.mark.timeout(180)
def test_a_restart_while_a_tool_is_inside_a_call_loses_nothing_and_raises_ours(
    tmp_path: Path, own_server: PostgresServer
) -> None:
    from conftest import write_project

    url = own_server.url()
    project = write_project(tmp_path, tools_source=TOOLS, tool_names=["charge_card"], record=url)
    store = PostgresStore(url, connect_wait_secs=2)
    agent = project.agent(clock=FakeClock(), store=store)
    module: Any = project.module
    agent.chat("charge the card for order 4411", user="u")
    outcome: dict[str, BaseException] = {}

    def approve() -> None:
        try:
            agent.confirm_current("u", "approve")
        except BaseException as error:  # what the caller gets, checked below
            outcome["error"] = error

    worker = threading.Thread(target=approve)
    worker.start()
    assert module.INSIDE.wait(30), "the tool never began"
    _stop_immediately(own_server)
    module.RELEASE.set()  # the charge is made; its outcome cannot be recorded
    worker.join(60)
    error = outcome.get("error")
    assert isinstance(error, RecordUnavailable), repr(error)
    assert error.code == "record_unavailable"
    with pytest.raises(RecordUnavailable):
        agent.pending("u")  # still down: ours again, not psycopg's

    _start_again(own_server)
    reply = None
    for _ in range(30):  # the pool reconnects in the background, on its own backoff
        try:
            reply = agent.pending("u")  # stale connections are not handed out
            break
        except RecordUnavailable:
            continue
    assert reply is not None and reply.state == "waiting"
    assert reply.text == "Did charge_card take effect? It was being sent when the run stopped."
    assert [name for name, _ in module.CALLS] == ["charge_card"]
    reply = agent.answer_current("u", "happened")
    assert reply.state == "done"
    agent.close()

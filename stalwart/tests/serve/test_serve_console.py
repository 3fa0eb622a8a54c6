"""What `stalwart serve` says, run as a person runs it (real subprocesses, real uvicorn on
127.0.0.1): a port in use is one line and exit 2; at start the address and the agent, then
how many runs left mid-way it resumed; a line per request; and, stopped by SIGTERM while a
write is being sent, what it waits for (issue 28)."""

from __future__ import annotations

import re
import signal
import socket
import subprocess
from pathlib import Path
from typing import Any

import httpx
import pytest

from stalwart.record import open_store
from stalwart.serve.server import _listen
from stalwart.texts import serve as serve_texts

from .serve_support import OPERATOR_ENV, OPERATOR_TOKEN, PASSWORDS, STALWART, Served, write_desk

pytestmark = pytest.mark.acceptance

ENV = {OPERATOR_ENV: OPERATOR_TOKEN}
WAIT = 60

# A write that says when it is being sent, and is held there while the file `hold` exists.
PRESS = '''

import pathlib as _pathlib
import time as _time

_HERE = _pathlib.Path(__file__).parent


@tool(writes=True, irreversible=True)
def press_order(order: int) -> dict[str, object]:
    """Press an order's papers into the archive."""
    (_HERE / "pressing").touch()
    while (_HERE / "hold").exists():
        _time.sleep(0.02)
    return {"order": order, "pressed": True}
'''
PRESS_TURN = "press the papers of order 5"


def until(check: Any, what: str) -> Any:
    import time

    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.02)
    raise AssertionError(f"never: {what}")


def press_in_flight(served: Served, folder: Path, session: str) -> httpx.Client:
    """Sign alice in, send the turn, approve the write (not waiting): it is being sent."""
    http = httpx.Client(base_url=served.url, timeout=WAIT)
    login = http.post("/api/login", json={"user": "alice", "password": PASSWORDS["alice"]})
    headers = {"X-CSRF-Token": login.json()["csrf"]}
    asked = http.post(
        f"/api/sessions/{session}/turns", json={"text": PRESS_TURN}, headers=headers
    ).json()
    assert asked["waiting"][0]["tool"] == "press_order", asked
    body = {"question_id": asked["waiting"][0]["question_id"], "answer": "approve", "wait": False}
    sent = http.post(f"/api/sessions/{session}/answers", json=body, headers=headers)
    assert sent.status_code == 202, sent.text
    until(lambda: (folder / "pressing").exists(), "press_order to be sent")
    return http


def test_a_port_in_use_is_one_clear_line_and_exit_2(tmp_path: Path) -> None:
    desk = write_desk(tmp_path / "desk")
    first = Served(desk.yaml, env=ENV)
    try:
        second = subprocess.run(
            [STALWART, "serve", str(desk.yaml), "--port", str(first.port)],
            capture_output=True, text=True, timeout=WAIT, cwd=desk.folder, check=False,
        )  # fmt: skip
        assert first.process.poll() is None  # the first server still serves
    finally:
        first.stop()
    assert second.returncode == 2, second.stderr
    assert "Traceback" not in second.stderr
    assert second.stdout == ""
    assert second.stderr.splitlines() == [serve_texts.port_in_use("127.0.0.1", first.port)]
    assert f"127.0.0.1:{first.port}" in second.stderr and "--port" in second.stderr


def test_serve_says_what_it_serves_logs_each_request_and_how_many_runs_it_resumed(
    tmp_path: Path,
) -> None:
    desk = write_desk(tmp_path / "desk", more_source=PRESS, more_tools=", press_order")
    (desk.folder / "hold").touch()
    first = Served(desk.yaml, env=ENV)
    try:
        assert "agent 'desk'" in first.line
        assert first.line == serve_texts.served_at(f"{first.url}/", "desk", workers=1)
        first.wait_for(lambda line: line == serve_texts.resumed_at_start([]), "nothing to resume")
        with httpx.Client(base_url=first.url) as http:
            assert http.get("/api/me").status_code == 401
        logged = first.wait_for(lambda line: line.startswith("GET /api/me "), "the request")
        assert re.fullmatch(r"GET /api/me 401 \d+\.\d ms", logged), logged
        press_in_flight(first, desk.folder, "alice~s-left").close()
        posted = r"POST /api/sessions/alice~s-left/answers 202 \d+\.\d ms"
        first.wait_for(lambda line: re.fullmatch(posted, line) is not None, "the answer's POST")
        first.process.kill()  # mid-send: the write is left in flight in the record
        first.process.wait(WAIT)
    finally:
        first.stop()
    (desk.folder / "hold").unlink()

    second = Served(desk.yaml, env=ENV)
    try:
        said = serve_texts.resumed_at_start(["alice~s-left"])
        second.wait_for(lambda line: line == said, "the run it resumed")
        assert said == "Resumed 1 run left mid-way: alice~s-left."
        with httpx.Client(base_url=second.url) as http:
            login = http.post("/api/login", json={"user": "alice", "password": "alice-pw"})
            assert login.status_code == 200
            state = http.get("/api/sessions/alice~s-left").json()
        # a write not retry-safe, left in flight: asked about, never sent again
        assert state["question"]["kind"] == "outcome"
        assert state["question"]["tool"] == "press_order"
    finally:
        second.stop()


def test_sigterm_while_a_write_is_sent_says_what_it_waits_for_and_lets_it_finish(
    tmp_path: Path,
) -> None:
    desk = write_desk(tmp_path / "desk", more_source=PRESS, more_tools=", press_order")
    (desk.folder / "hold").touch()
    served = Served(desk.yaml, env=ENV)
    try:
        press_in_flight(served, desk.folder, "alice~s-term").close()
        served.process.send_signal(signal.SIGTERM)
        sending = serve_texts.sending("press_order", "write")
        said = serve_texts.stopping([("alice~s-term", [sending])])
        served.wait_for(lambda line: line == said, "what the stop waits for")
        assert (
            said
            == "Stopping: waiting for 1 run to finish first: alice~s-term (sending press_order)."
        )
        assert served.process.poll() is None  # it waits for the write, never cuts it
        (desk.folder / "hold").unlink()
        served.process.wait(WAIT)
        served.wait_for(lambda line: line == serve_texts.STOPPED, "that it stopped")
    finally:
        served.stop()
    store = open_store(str(desk.folder / desk.record))
    try:
        record = store.load("alice~s-term")
        assert record is not None
        assert [(c.tool, c.status) for c in record.calls] == [("press_order", "ran")]
        assert record.runs[-1].state == "done"
    finally:
        store.close()


def test_the_socket_listens_before_the_address_is_said() -> None:
    """A client that connects as soon as it reads the address waits for the server, never
    meets a refusal (before: bound, not listening, until uvicorn started: refused)."""
    listening = _listen(socket.AF_INET, "127.0.0.1", 0)
    try:
        port = listening.getsockname()[1]
        with socket.create_connection(("127.0.0.1", port), timeout=2):
            pass
    finally:
        listening.close()

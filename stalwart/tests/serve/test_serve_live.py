"""Progress while a run works, a slow call that blocks no other session, and the hook."""

from __future__ import annotations

import http.server
import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from stalwart.serve import Service, create_app

from .serve_support import FIRST_ORDER, Desk, InstantClock, sign_in, write_desk


def until(check: Any, what: str, tries: int = 400) -> Any:
    """Poll `check()` until it gives something true (bounded; no assertion on time)."""
    for _ in range(tries):
        found = check()
        if found:
            return found
        time.sleep(0.01)
    raise AssertionError(f"never: {what}")


def test_a_slow_call_shows_progress_and_blocks_no_other_session(
    client: TestClient, desk: Desk
) -> None:
    headers = sign_in(client, "alice")
    gate = threading.Event()
    desk.module.GATE.append(gate)
    try:
        sent = client.post(
            "/api/sessions/alice~s-slow/turns",
            json={"text": "weigh the parcel for order 7", "wait": False},
            headers=headers,
        )
        assert sent.status_code == 202
        slow = until(
            lambda: (s := client.get("/api/sessions/alice~s-slow").json())["progress"] and s,
            "the slow call's progress",
        )
        assert slow["progress"] == "running weigh_parcel(order=7)"
        assert slow["busy"] is True
        # another session's turn runs to its reply while the slow call holds its lock
        other = client.post(
            "/api/sessions/alice~s-quick/turns", json={"text": "get order 4411"}, headers=headers
        ).json()
        assert other["state"] == "done"
        assert client.get("/s/alice~s-slow").status_code == 200
        assert "running weigh_parcel(order=7)" in client.get("/s/alice~s-slow").text
    finally:
        gate.set()
    done = until(
        lambda: (s := client.get("/api/sessions/alice~s-slow").json())["busy"] is False and s,
        "the slow run's thread to finish",
    )
    assert (done["state"], done["progress"]) == ("done", None)
    assert done["text"] == 'Done: weigh_parcel returned {"kg":2,"order":7}.'


def test_an_undos_backoff_is_told_try_by_try(client: TestClient, desk: Desk,
                                             service: Service) -> None:  # fmt: skip
    lines: list[str] = []
    service.board.listener = lines.append
    headers = sign_in(client, "alice")
    desk.module.UNDO_FAILS[0] = 2
    reply = client.post(
        "/api/sessions/alice~s-undo/turns",
        json={"text": "book a van for order 9, then provision the account for order 9"},
        headers=headers,
    ).json()
    while reply["waiting"]:
        question = reply["waiting"][0]
        reply = client.post(
            "/api/sessions/alice~s-undo/answers",
            json={"question_id": question["question_id"], "answer": "approve"},
            headers=headers,
        ).json()
    assert reply["state"] == "rolled_back"
    undo_lines = [line for line in lines if line.startswith("undoing")]
    assert undo_lines == [
        "undoing book_van (by unbook_van): try 1 of 4",
        "undoing book_van (by unbook_van): try 2 of 4, next in 1 s",
        "undoing book_van (by unbook_van): try 2 of 4",
        "undoing book_van (by unbook_van): try 3 of 4, next in 2 s",
        "undoing book_van (by unbook_van): try 3 of 4",
    ]
    assert "running provision_account(order=9)" in lines


def test_the_question_callback_is_told_once_per_question(desk: Desk) -> None:
    told: list[dict[str, Any]] = []
    svc = Service(desk.config(), clock=InstantClock(), secret=b"s", on_question=told.append)
    with TestClient(create_app(svc)) as client:
        headers = sign_in(client, "alice")
        reply = client.post(
            "/api/sessions/alice~s-hook/turns", json={"text": FIRST_ORDER}, headers=headers
        ).json()
        client.get("/api/sessions/alice~s-hook")
        assert len(told) == 1
        assert told[0]["text"] == "Run charge_card(order=4411, amount=40.0)?"
        assert told[0]["question_id"] == reply["waiting"][0]["question_id"]
        assert (told[0]["user"], told[0]["url"]) == ("alice", "/s/alice~s-hook")
        client.post(
            "/api/sessions/alice~s-hook/answers",
            json={"question_id": told[0]["question_id"], "answer": "approve"},
            headers=headers,
        )
        assert [t["tool"] for t in told] == ["charge_card", "update_crm"]


@pytest.fixture
def hook_server() -> Iterator[tuple[str, list[dict[str, Any]], threading.Event]]:
    got: list[dict[str, Any]] = []
    arrived = threading.Event()

    class Hook(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (the handler's name is http.server's)
            length = int(self.headers["Content-Length"])
            got.append(json.loads(self.rfile.read(length)))
            self.send_response(204)
            self.end_headers()
            arrived.set()

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Hook)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/hook", got, arrived
    server.shutdown()
    server.server_close()


def test_the_webhook_in_agent_yaml_is_posted_the_question(
    tmp_path: Path, hook_server: tuple[str, list[dict[str, Any]], threading.Event]
) -> None:
    url, got, arrived = hook_server
    desk = write_desk(tmp_path / "hooked", serve=f"  question_hook: {url}\n")
    svc = Service(desk.config(), clock=InstantClock(), secret=b"s")
    with TestClient(create_app(svc)) as client:
        headers = sign_in(client, "bob")
        client.post(
            "/api/sessions/bob~s-web/turns", json={"text": "ship the parcel for order 5"},
            headers=headers,
        )  # fmt: skip
        assert arrived.wait(10)
    assert got[0]["event"] == "question"
    assert got[0]["text"] == "Run ship_parcel(order=5)?"
    assert got[0]["answers"] == ["approve", "skip", "cancel all"]

"""The server logs each request (method, path, status, time taken, on the injected clock),
what it resumed at start, and what a stop waits for, through `logging` (issue 28)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from stalwart import logs
from stalwart.serve import Service, create_app
from stalwart.texts import serve as serve_texts

from .serve_support import Desk, sign_in
from .test_serve_live import until

pytestmark = pytest.mark.unit


class Ticks:
    """A timer that moves a quarter of a second each time it is read."""

    def __init__(self) -> None:
        self.at = 100.0

    def __call__(self) -> float:
        self.at += 0.25
        return self.at


def said(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == logs.SERVE]


@pytest.fixture
def logged(caplog: pytest.LogCaptureFixture) -> Iterator[pytest.LogCaptureFixture]:
    caplog.set_level(logging.INFO, logger=logs.SERVE)
    yield caplog


def test_each_request_is_logged_with_its_method_path_status_and_time(
    service: Service, logged: pytest.LogCaptureFixture
) -> None:
    with TestClient(create_app(service, now=Ticks())) as client:
        assert said(logged) == [serve_texts.resumed_at_start([])]
        assert client.get("/api/me").status_code == 401
        headers = sign_in(client, "alice")
        client.post("/api/sessions/alice~s-1/turns", json={"text": "get order 4411"},
                    headers=headers)  # fmt: skip
        client.get("/nothing/here")
    assert said(logged)[1:] == [
        "GET /api/me 401 250.0 ms",
        "POST /api/login 200 250.0 ms",
        "POST /api/sessions/alice~s-1/turns 200 250.0 ms",
        "GET /nothing/here 404 250.0 ms",
    ]


def test_a_stop_says_which_runs_it_waits_for_and_what_each_sends(
    service: Service, desk: Desk, logged: pytest.LogCaptureFixture
) -> None:
    gate = threading.Event()
    desk.module.GATE.append(gate)
    client = TestClient(create_app(service))
    client.__enter__()
    headers = sign_in(client, "alice")
    sent = client.post("/api/sessions/alice~s-slow/turns",
                       json={"text": "weigh the parcel for order 7", "wait": False},
                       headers=headers)  # fmt: skip
    assert sent.status_code == 202
    until(lambda: service.progress("alice~s-slow"), "the read to be sent")
    stopping = serve_texts.stopping([("alice~s-slow", ["sending weigh_parcel"])])
    stopped = threading.Thread(target=client.__exit__, args=(None, None, None))
    stopped.start()
    try:
        until(lambda: stopping in said(logged), "the stop to say what it waits for")
        assert stopped.is_alive()  # waiting for the call, never cutting it
        assert serve_texts.STOPPED not in said(logged)
    finally:
        gate.set()
        stopped.join(30)
    assert said(logged)[-2:] == [stopping, serve_texts.STOPPED]

"""Fixtures of the interface's tests: a desk project, its Service, a client of its app."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from stalwart.backoff import UNDO_BACKOFF, no_jitter
from stalwart.serve import Service, create_app

from .browser_support import Live
from .serve_support import OPERATOR_ENV, OPERATOR_TOKEN, Desk, InstantClock, write_desk


@pytest.fixture
def desk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Desk:
    monkeypatch.setenv(OPERATOR_ENV, OPERATOR_TOKEN)
    return write_desk(tmp_path / "desk")


@pytest.fixture
def service(desk: Desk) -> Iterator[Service]:
    # the undo's waits are the schedule's ceilings (1, 2, 4 s), not random draws
    svc = Service(desk.config(), clock=InstantClock(), secret=b"test-secret", run_threads=8,
                  poll_secs=0.05, undo_backoff=replace(UNDO_BACKOFF, jitter=no_jitter))  # fmt: skip
    yield svc


@pytest.fixture
def app(service: Service) -> FastAPI:
    return create_app(service)


@pytest.fixture
def client(app: FastAPI) -> Iterator[TestClient]:
    """A client whose context runs the app's start and close."""
    with TestClient(app) as opened:
        yield opened


@pytest.fixture
def other(app: FastAPI, client: TestClient) -> TestClient:
    """A second browser on the same app: cookies of its own."""
    return TestClient(app)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """One headless Chromium per module (Debian's, through Playwright)."""
    from playwright.sync_api import sync_playwright

    from .browser_support import ARGS, chromium

    executable = chromium()
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=executable, args=ARGS)
        yield launched
        launched.close()


@pytest.fixture
def live(service: Service) -> Iterator[Live]:
    from .browser_support import serve_in_thread

    yield from serve_in_thread(service)

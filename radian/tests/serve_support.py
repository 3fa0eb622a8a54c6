"""What the tests of `radian arc serve` share: a fleet on disk, the app served in a thread,
and Debian's chromium for Playwright.

The fleet is real arc files written through the library (ArcStore, commands, claim): plan
"web" (confirmed, a $1.00 budget) with a running attempt whose worker.log has output, a
task failed for good, one waiting to retry, one waiting on a person and one ready; plan
"big" loaded from a file.

Playwright's own browser download cannot work here, so the browser tests launch the system's
`/usr/bin/chromium`. When it is missing and the tests run as root (as CI does) it is
installed with apt-get; elsewhere the browser tests skip and say why, and with `CI` set they
fail instead. The app is served in this process (uvicorn in a thread, on a free port of
127.0.0.1) so the tests inject the status's clock.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from radian.arc import commands
from radian.arc.attempt_result import AttemptResult, ModelErrorRecord
from radian.arc.claims import claim
from radian.arc.clock import FakeClock, format_utc
from radian.arc.config import ArcConfig
from radian.arc.serve.fleet import Fleet
from radian.arc.states import State
from radian.arc.store import ArcStore
from radian.arc.worker.files import AttemptFiles

try:  # the serve extra; `make test-min-radian` installs radian without it
    import uvicorn
    from fastapi.testclient import TestClient

    from radian.arc.serve.app import create_app
except ImportError as missing:  # pragma: no cover - only without the extra
    pytest.skip(f"radian[serve] is not installed: {missing}", allow_module_level=True)

__all__ = ["TestClient"]

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]
# w1's worker.log: 30 lines, so the page shows the last 20 (radian.arc.serve.fleet.TAIL_LINES)
LOG_LINES = [f"step {n}: editing <src/app.py>" for n in range(1, 31)]
EXHAUSTED_REASON = "the worker exited 1 with no Result"


def set_state(store: ArcStore, clock: FakeClock, name: str, state: State, **fields: object) -> None:
    """Move a task by rewriting its file through the store, as another arc command would."""
    task = store.load_task(name)
    task.state = state
    task.updated_at = format_utc(clock.now())
    for key, value in fields.items():
        setattr(task, key, value)
    store.save_task(task)


def write_fleet(root: Path, clock: FakeClock) -> ArcStore:
    store = ArcStore(root)
    config = ArcConfig()
    commands.add_plan(store, "web", max_cost_usd=1.0)
    for name in ("w1", "w2", "w3", "w4", "w5"):
        commands.add_task(store, clock, "web", name, f"Do {name}.\n")
    web = store.load_plan("web")
    web.confirmed = True  # as `radian arc confirm web` does (no worker configured here)
    store.save_plan(web)
    plan_file = root / "big.toml"
    plan_file.write_text('[plan]\nname = "big"\n\n' + "\n".join(
        f'[[task]]\nname = "b{n}"\nbrief = "Do {n}."\n' for n in range(6)))  # fmt: skip
    commands.load_plan_file(store, clock, plan_file)
    # w1 runs: claimed a minute and a half ago, its worker printing
    claimed = claim(store, config, "w1", clock)
    assert claimed is not None
    log = AttemptFiles(claimed[0].attempt_dir).log
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text("".join(f"{line}\n" for line in LOG_LINES))
    clock.advance(90)
    # w2 failed for good, its last attempt's reason recorded
    failed = claim(store, config, "w2", clock)
    assert failed is not None
    store.write_attempt_result("w2", failed[0].attempt_id, AttemptResult(
        task="w2", attempt_id=failed[0].attempt_id, outcome="terminated",
        failure_class="infrastructure",
        reason=EXHAUSTED_REASON, ended_at=format_utc(clock.now()),
        next_state=str(State.EXHAUSTED)))  # fmt: skip
    set_state(store, clock, "w2", State.EXHAUSTED, cost_usd=0.25, total_cost_usd=0.25)
    # w3 waits to retry on the model's window
    waiting = claim(store, config, "w3", clock)
    assert waiting is not None
    store.write_attempt_result("w3", waiting[0].attempt_id, AttemptResult(
        task="w3", attempt_id=waiting[0].attempt_id, outcome="failed", failure_class="model",
        model_wait=True, model_error=ModelErrorRecord(kind="unavailable", message="overloaded"),
        ended_at=format_utc(clock.now()), next_state=str(State.RETRY_WAIT)))  # fmt: skip
    set_state(store, clock, "w3", State.RETRY_WAIT, retry_at="2026-11-30T07:06:30Z",
              cost_usd=0.1, total_cost_usd=0.1)  # fmt: skip
    set_state(store, clock, "w4", State.REWORK_PENDING,
              rework_reason="review_findings: 1 major finding")  # fmt: skip
    return store


@dataclass
class Live:
    """The app served on a free port of 127.0.0.1, in a thread of this process."""

    fleet: Fleet
    url: str


@contextmanager
def serve_in_thread(fleet: Fleet, token: str | None = None) -> Iterator[Live]:
    listening = socket.socket()
    listening.bind(("127.0.0.1", 0))
    listening.listen()  # a client early is kept in the backlog until uvicorn serves it
    port = listening.getsockname()[1]
    config = uvicorn.Config(create_app(fleet, token=token), log_level="warning",
                            lifespan="off", timeout_graceful_shutdown=1)  # fmt: skip
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [listening]}, daemon=True)
    thread.start()
    # Until it serves, however long a loaded machine takes (it went on after 5 s, started or not).
    deadline = time.monotonic() + 60
    while not server.started:
        assert thread.is_alive(), "the server ended before it started"
        assert time.monotonic() < deadline, "the server did not start within 60 s"
        time.sleep(0.01)
    try:
        yield Live(fleet, f"http://127.0.0.1:{port}")
    finally:
        fleet.close()  # as `radian arc serve` does when stopped: the event streams end
        server.should_exit = True
        thread.join(10)
        listening.close()


def _unavailable(reason: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"{reason} (CI is set, so the browser tests never skip)", pytrace=False)
    pytest.skip(reason)


def chromium() -> str:
    """The system's chromium, installed with apt-get if missing and we are root."""
    if os.path.exists(CHROMIUM):
        return CHROMIUM
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        _unavailable(f"{CHROMIUM} is missing (apt-get install chromium, as root)")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for command in (["apt-get", "update"], ["apt-get", "install", "-y", "chromium"]):
        done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
        if done.returncode != 0:
            _unavailable(f"{' '.join(command)} failed: {done.stderr.strip()[-300:]}")
    if not os.path.exists(CHROMIUM):
        _unavailable(f"apt-get installed chromium, yet {CHROMIUM} is missing")
    return CHROMIUM

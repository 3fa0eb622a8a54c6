"""Headless Chromium for the browser tests: Debian's `chromium`, driven by Playwright.

Playwright's own browser download cannot work here, so the tests launch the system's
`/usr/bin/chromium`. When it is missing and the tests run as root (as CI does) it is
installed with apt-get; elsewhere the browser tests skip and say why, and with `CI` set
they fail instead. The app is served in this process (uvicorn in a thread) so the tests
inject time: an undo's backoff waits are recorded, never slept.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import uvicorn

from stalwart.serve import Service, create_app

CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]
SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "images"
UPDATE_SCREENSHOTS = "STALWART_UPDATE_SCREENSHOTS"


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


@dataclass
class Live:
    """The app served on a free loopback port, in a thread of this process."""

    service: Service
    url: str
    server: uvicorn.Server
    thread: threading.Thread


def serve_in_thread(service: Service) -> Iterator[Live]:
    listening = socket.socket()
    listening.bind(("127.0.0.1", 0))
    listening.listen()  # a client early is kept in the backlog until uvicorn serves it
    port = listening.getsockname()[1]
    config = uvicorn.Config(create_app(service), log_level="warning", lifespan="on",
                            timeout_graceful_shutdown=1)  # fmt: skip
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
        yield Live(service, f"http://127.0.0.1:{port}", server, thread)
    finally:
        server.should_exit = True
        thread.join(10)
        listening.close()


def screenshot_path(name: str, folder: Path) -> Path:
    """Where a test's screenshot goes: the docs' images when asked for, else `folder`."""
    if os.environ.get(UPDATE_SCREENSHOTS):
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        return SCREENSHOTS / f"{name}.png"
    return folder / f"{name}.png"


# Screenshots kept for a reviewer (issue 32): every browser test of the desk writes its
# pictures here, at desktop and phone widths; the folder is printed at the end of the run.
ARTEFACTS = "STALWART_ARTEFACTS"
WRITTEN: list[Path] = []


def artefacts_folder() -> Path:
    """`$STALWART_ARTEFACTS`, else stalwart-serve-artefacts in the system's temporary folder."""
    import tempfile

    given = os.environ.get(ARTEFACTS)
    return Path(given) if given else Path(tempfile.gettempdir()) / "stalwart-serve-artefacts"


def artefact(name: str) -> str:
    """Where the screenshot `name` goes (remembered, so the run prints the folder)."""
    folder = artefacts_folder()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.png"
    WRITTEN.append(path)
    return str(path)


# axe-core, pinned in npm-tools/package.json and installed by `make npm-tools`: injected into
# a page by the tests and run there (issue 32); what it finds serious or critical fails them.
NPM_TOOLS = Path(__file__).resolve().parents[3] / ".cache" / "npm-tools"
AXE = Path(os.environ.get("NPM_TOOLS_DIR", NPM_TOOLS)) / "node_modules" / "axe-core" / "axe.min.js"
SERIOUS = ("serious", "critical")


def axe_violations(page: object) -> list[dict[str, object]]:
    """The serious and critical violations axe-core finds in `page` as it stands now: each
    rule's id, impact, help and the first targets it found (a skip without axe-core, saying
    why; a failure under CI)."""
    if not AXE.exists():
        _unavailable(f"{AXE} is missing (make npm-tools installs axe-core)")
    page.add_script_tag(path=str(AXE))  # type: ignore[attr-defined]
    found: list[dict[str, object]] = page.evaluate(  # type: ignore[attr-defined]
        """async () => (await axe.run(document, {resultTypes: ["violations"]})).violations
            .map(v => ({id: v.id, impact: v.impact, help: v.help,
                        targets: v.nodes.slice(0, 5).map(n => n.target.join(" "))}))"""
    )
    return [v for v in found if v.get("impact") in SERIOUS]


def axe_version() -> str:
    import json

    return str(json.loads((AXE.parent / "package.json").read_text())["version"])

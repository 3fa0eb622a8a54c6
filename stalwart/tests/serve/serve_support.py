"""A desk for the interface's tests: chapter 34's shop tools and a few that misbehave on cue,
written into a tmp folder as a real project (agent.yaml, tools module, rulebook, users)."""

from __future__ import annotations

import shutil
import sys
import time
import types
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from fastapi.testclient import TestClient

from stalwart.config import AgentConfig, load_agent
from stalwart.policy.operator_token import write_verifier
from stalwart.serve.users import Users

SHOP = Path(__file__).resolve().parents[2] / "examples" / "shop"
STALWART = str(Path(sys.executable).parent / "stalwart")  # the console script, as installed
OPERATOR_ENV = "STALWART_TEST_OPERATOR_TOKEN"
OPERATOR_TOKEN = "op-secret-7-of-the-serve-tests"
PASSWORDS = {"alice": "alice-pw", "bob": "bob-pw"}

FIRST_ORDER = (
    "charge order 4411 40.00, then update the crm for order 4411, "
    "then provision the account for order 4411"
)
SECOND_ORDER = (
    "charge order 4411 40.00, then send the receipt for order 4411, "
    "then provision the account for order 4411"
)
EXPECTED = (SHOP / "expected_output.txt").read_text().splitlines()
FIRST_REPLY, SECOND_REPLY = EXPECTED[0], EXPECTED[-1]
FIRST_CALLS = [line.split(". ", 1)[1] for line in EXPECTED[2:7]]

# The shop's tools, and: ship_parcel (its answer lost: TimeoutError while SHIP_LOST),
# book_van whose undo fails while UNDO_FAILS > 0, weigh_parcel that waits on GATE.
EXTRA_TOOLS = '''

import threading

SHIP_LOST = [True]
UNDO_FAILS = [0]
GATE: list[threading.Event] = []


@tool(writes=True)
def ship_parcel(order: int) -> dict[str, object]:
    """Ship the parcel of an order."""
    CALLS.append("ship_parcel")
    if SHIP_LOST[0]:
        raise TimeoutError("the carrier did not answer")
    return {"order": order, "shipped": True}


@tool(writes=True, undo="unbook_van")
def book_van(order: int) -> dict[str, object]:
    """Book a van for an order."""
    CALLS.append("book_van")
    return {"order": order, "van": "v-1"}


@tool(writes=True, retry_safe=True)
def unbook_van(order: int) -> dict[str, object]:
    """Cancel the van booking of an order."""
    CALLS.append("unbook_van")
    if UNDO_FAILS[0] > 0:
        UNDO_FAILS[0] -= 1
        raise RuntimeError("the van service is down")
    return {"order": order, "unbooked": True}


@tool
def weigh_parcel(order: int) -> dict[str, object]:
    """Weigh the parcel of an order."""
    CALLS.append("weigh_parcel")
    if GATE:
        GATE[0].wait(30)
    return {"order": order, "kg": 2}
'''

TOOL_NAMES = (
    "get_order, charge_card, refund_card, update_crm, restore_crm, provision_account, "
    "send_receipt, ship_parcel, book_van, unbook_van, weigh_parcel"
)
POLICY = (SHOP / "policy.co").read_text() + "\nunbook_van only after book_van with same order\n"


class InstantClock:
    """Real time for timestamps; a wait is recorded and returns at once (no test sleeps)."""

    def __init__(self) -> None:
        self.slept: list[float] = []

    def now(self) -> float:
        return time.time()

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)


@dataclass
class Desk:
    folder: Path
    module_name: str
    record: str

    @property
    def yaml(self) -> Path:
        return self.folder / "agent.yaml"

    def config(self) -> AgentConfig:
        return load_agent(self.yaml)

    @property
    def module(self) -> types.ModuleType:
        return sys.modules[self.module_name]


def write_desk(
    folder: Path,
    *,
    record: str = "record.sqlite",
    serve: str = "",
    more_source: str = "",
    more_tools: str = "",
) -> Desk:
    """The desk project in `folder`: a tools module no other test shares, and two users.

    `more_source` is added to the tools module, `more_tools` (", name, ...") to the agent's.
    """
    folder.mkdir(parents=True, exist_ok=True)
    name = f"desk_{uuid.uuid4().hex[:12]}"
    source = (SHOP / "shop" / "tools.py").read_text() + EXTRA_TOOLS + more_source
    (folder / f"{name}.py").write_text(source)
    (folder / "policy.co").write_text(POLICY)
    (folder / "agent.yaml").write_text(
        "agents:\n"
        "  desk:\n"
        f"    tools: [{TOOL_NAMES}{more_tools}]\n"
        "    on_unread: refuse\n"
        "tools:\n"
        f"  - python: {name}\n"
        "rulebook: ./policy.co\n"
        f"record: {record}\n"
        "serve:\n"
        "  users: ./users.txt\n"
        f"{serve}"
    )
    write_verifier(folder / "agent.operator-token", OPERATOR_TOKEN)
    users = Users(folder / "users.txt")
    for user, password in PASSWORDS.items():
        users.set(user, password)
    return Desk(folder, name, record)


def copy_shop(folder: Path) -> Path:
    shutil.copytree(SHOP, folder, ignore=shutil.ignore_patterns("*.sqlite*", "__pycache__"))
    return folder / "agent.yaml"


class Served:
    """A `stalwart serve` subprocess, stopped (SIGTERM, then SIGKILL) by `stop`.

    Its first line of stdout says the address it serves; what it logs on stderr (a line per
    request, what it resumed, what a stop waits for) is read as it comes by a thread of its
    own, so a server that logs much never blocks on a full pipe: `lines` holds it, and
    `wait_for` waits for a line."""

    def __init__(self, yaml: Path, *args: str, env: dict[str, str] | None = None) -> None:
        import os
        import subprocess
        import threading

        self.process = subprocess.Popen(
            [STALWART, "serve", str(yaml), "--port", "0", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, **(env or {})},
            cwd=yaml.parent,
        )
        self.lines: list[str] = []
        self._said = threading.Condition()
        self._reader = threading.Thread(target=self._read_stderr, daemon=True)
        self._reader.start()
        assert self.process.stdout is not None
        self.line = self.process.stdout.readline().strip()
        if not self.line.startswith("stalwart serves "):
            self.stop()
            raise AssertionError(f"serve said {self.line!r}; stderr: {self.stderr()}")
        self.url = self.line.split()[2].rstrip("/")
        self.port = int(self.url.rsplit(":", 1)[1])

    def _read_stderr(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            with self._said:
                self.lines.append(line.rstrip("\n"))
                self._said.notify_all()
        with self._said:
            self._said.notify_all()

    def wait_for(self, wanted: Callable[[str], bool], what: str, timeout: float = 60) -> str:
        """The first line of stderr `wanted` takes, waiting up to `timeout` s for it."""
        with self._said:
            found = self._said.wait_for(
                lambda: any(wanted(line) for line in self.lines) or not self._reader.is_alive(),
                timeout,
            )
            matched = [line for line in self.lines if wanted(line)]
        if not found or not matched:
            raise AssertionError(f"serve never said {what}; stderr: {self.stderr()}")
        return matched[0]

    def stderr(self) -> str:
        with self._said:
            return "\n".join(self.lines)

    def stop(self) -> None:
        import subprocess

        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)
        self._reader.join(10)
        for stream in (self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()


def sign_in(client: TestClient, user: str) -> dict[str, str]:
    """Sign `user` in on `client`; the headers its POSTs need (the anti-forgery token)."""
    answer = client.post("/api/login", json={"user": user, "password": PASSWORDS[user]})
    assert answer.status_code == 200, answer.text
    return {"X-CSRF-Token": answer.json()["csrf"]}

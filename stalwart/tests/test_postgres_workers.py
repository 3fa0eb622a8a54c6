"""Chapter 34's failed order on PostgreSQL, each step taken by a different worker process."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from stalwart import Agent
from stalwart.record import open_store

pytestmark = pytest.mark.postgres

SHOP = Path(__file__).resolve().parents[1] / "examples" / "shop" / "agent.yaml"

# One worker: a fresh process with the shop's agent on the shared record; it takes one
# step of the session and says what it saw and which tools it ran itself.
STEP = """
import json, sys
from stalwart import Agent
from stalwart.record import open_store

yaml, url, what, user, text = sys.argv[1:6]
agent = Agent.from_file(yaml, store=open_store(url))
from shop.tools import CALLS
reply = agent.chat(text, user=user) if what == "chat" else agent.confirm_current(user, text)
print(json.dumps({
    "text": reply.text,
    "state": str(reply.state),
    "waiting": [w.tool for w in reply.waiting],
    "calls": list(CALLS),
}))
agent.close()
"""

TURN = (
    "charge order 4411 40.00, then update the crm for order 4411, "
    "then provision the account for order 4411"
)


def _worker(url: str, what: str, text: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-c", STEP, str(SHOP), url, what, "u-17", text],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    shown: dict[str, Any] = json.loads(done.stdout)
    return shown


def test_the_failed_order_goes_on_across_worker_processes(pg_url: str) -> None:
    first = _worker(pg_url, "chat", TURN)
    assert first["waiting"] == ["charge_card"] and first["calls"] == []

    second = _worker(pg_url, "confirm", "approve")
    assert second["waiting"] == ["update_crm"] and second["calls"] == ["charge_card"]

    third = _worker(pg_url, "confirm", "approve")
    assert third["waiting"] == ["provision_account"] and third["calls"] == ["update_crm"]

    fourth = _worker(pg_url, "confirm", "approve")
    assert fourth["calls"] == ["provision_account", "restore_crm", "refund_card"]
    assert fourth["text"] == (
        "This run stopped: provision_account failed (RuntimeError). Undone, latest first: "
        "update_crm (by restore_crm), charge_card (by refund_card)."
    )

    with Agent.from_file(SHOP, store=open_store(pg_url)) as desk:
        record = desk.record("u-17")
        memory = desk.memory("u-17")
    assert [(call.tool, call.kind, call.status) for call in record] == [
        ("charge_card", "write", "ran"),
        ("update_crm", "write", "ran"),
        ("provision_account", "write", "failed"),
        ("restore_crm", "undo", "ran"),
        ("refund_card", "undo", "ran"),
    ]
    assert [message.role for message in memory] == ["user", "assistant"]  # rewound
    assert memory[1].content == fourth["text"]

"""Two `stalwart serve` processes on one PostgreSQL record: either answers any session, one
advances a session at a time, and a SIGKILLed worker's half-done rollback is finished by the
other with no user action."""

from __future__ import annotations

import json
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

from .serve_support import (
    FIRST_ORDER,
    FIRST_REPLY,
    OPERATOR_ENV,
    OPERATOR_TOKEN,
    PASSWORDS,
    Served,
    write_desk,
)

pytestmark = pytest.mark.postgres

# refund_card logs each send (with its key) to a file and, while `hold` exists, never
# returns: the worker sending it is killed there, mid-rollback.
HELD_REFUND = '''

import json as _json
import pathlib as _pathlib
import time as _time

from stalwart import current_call as _current_call

_FOLDER = _pathlib.Path(__file__).parent


def _log(name):
    call = _current_call()
    with open(_FOLDER / "calls.log", "a") as out:
        out.write(_json.dumps([name, call.key if call else None]) + "\\n")


@tool(writes=True, retry_safe=True)
def refund_card(order: int, amount: float) -> dict[str, object]:
    """Give the money of an earlier charge back to its card."""
    _log("refund_card")
    while (_FOLDER / "hold").exists():
        _time.sleep(0.05)
    return {"order": order, "refunded": amount}
'''


def calls(folder: Path) -> list[list[Any]]:
    log = folder / "calls.log"
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def until(check: Any, what: str, tries: int = 600) -> Any:
    for _ in range(tries):
        found = check()
        if found:
            return found
        time.sleep(0.05)
    raise AssertionError(f"never: {what}")


def test_a_killed_workers_rollback_is_finished_by_the_other(tmp_path: Path, pg_url: str) -> None:
    desk = write_desk(tmp_path / "desk", record=pg_url, serve="  resume_every_secs: 0.3\n")
    tools = desk.folder / f"{desk.module_name}.py"
    tools.write_text(tools.read_text() + HELD_REFUND)  # this refund_card replaces the shop's
    env = {OPERATOR_ENV: OPERATOR_TOKEN, "STALWART_SECRET": "shared-by-both-workers"}
    first = Served(desk.yaml, env=env)
    second = Served(desk.yaml, env=env)
    a = httpx.Client(base_url=first.url, timeout=60)
    b = httpx.Client(base_url=second.url, timeout=60)
    try:
        login = a.post("/api/login", json={"user": "alice", "password": PASSWORDS["alice"]})
        headers = {"X-CSRF-Token": login.json()["csrf"]}
        b.cookies = a.cookies  # the same person, on the other worker
        reply = a.post("/api/sessions/alice~s-pg/turns", json={"text": FIRST_ORDER},
                       headers=headers).json()  # fmt: skip
        question = reply["waiting"][0]["question_id"]

        # the same answer sent to both workers at once: exactly one takes it
        def approve(client: httpx.Client) -> httpx.Response:
            return client.post(
                "/api/sessions/alice~s-pg/answers",
                json={"question_id": question, "answer": "approve"},
                headers=headers,
            )

        with ThreadPoolExecutor(2) as pool:
            answers = list(pool.map(approve, (a, b)))
        assert sorted(r.status_code for r in answers) == [200, 409]
        assert [r.json()["code"] for r in answers if r.status_code == 409] == ["stale_answer"]
        reply = next(r.json() for r in answers if r.status_code == 200)
        assert reply["waiting"][0]["tool"] == "update_crm"  # charge_card ran once

        body = {"question_id": reply["waiting"][0]["question_id"], "answer": "approve"}
        reply = b.post("/api/sessions/alice~s-pg/answers", headers=headers, json=body).json()
        (desk.folder / "hold").touch()
        body = {"question_id": reply["waiting"][0]["question_id"], "answer": "approve"}
        sent = a.post(
            "/api/sessions/alice~s-pg/answers", headers=headers, json={**body, "wait": False}
        )
        assert sent.status_code == 202
        until(lambda: calls(desk.folder), "the first worker to send the refund")
        first.process.kill()  # SIGKILL, mid-rollback: the CRM restored, the refund in flight
        first.process.wait(10)
        mid = b.get("/api/sessions/alice~s-pg").json()
        assert mid["state"] == "rolling_back"
        (desk.folder / "hold").unlink()

        # nobody touches the session: the live worker's resumer finishes the rollback
        done = until(
            lambda: (s := b.get("/api/sessions/alice~s-pg").json())["state"] == "rolled_back" and s,
            "the second worker to finish the rollback",
        )
        assert done["text"] == FIRST_REPLY
        refunds = calls(desk.folder)
        assert [name for name, _ in refunds] == ["refund_card", "refund_card"]
        assert refunds[0][1] == refunds[1][1]  # re-sent under the key the first try carried
        record = b.get("/api/sessions/alice~s-pg/record").json()
        refund = next(c for c in record if c["tool"] == "refund_card")
        assert (refund["status"], refund["tries"]) == ("ran", 2)
        assert [c["tool"] for c in record if c["kind"] == "undo"] == ["restore_crm", "refund_card"]
    finally:
        a.close()
        b.close()
        first.stop()
        second.stop()

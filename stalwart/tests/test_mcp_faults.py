"""An MCP server's faults under chapter 34's rules (issue 18): a retry-safe write resent under
its key after the connection dropped, and a server killed mid-call while the process that
sent the call is killed too, the run then resumed by another process.

Against the project's own server (tests/mcp_shop_server.py) over stdio; the calls it
received, with the key each carried in `_meta` and the server's pid, are read from the
JSON-lines file it appends to.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from test_mcp import FACTS, SERVER, McpShop, write_project

from stalwart import Agent, FakeClock

STALWART = str(Path(sys.executable).parent / "stalwart")
RETRY_SAFE = FACTS.replace("{undo: refund_card}", "{undo: refund_card, retry_safe: true}")


def _source() -> str:
    return (
        f"  - mcp:\n"
        f"      command: [{sys.executable}, {SERVER}, stdio]\n"
        "      env: {SHOP_CALLS: $TEST_SHOP_CALLS, SHOP_DIE: $TEST_SHOP_DIE,"
        " SHOP_HANG: $TEST_SHOP_HANG}\n"
    )


@pytest.fixture
def shop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> McpShop:
    calls = tmp_path / "calls.jsonl"
    monkeypatch.setenv("TEST_SHOP_CALLS", str(calls))
    monkeypatch.setenv("TEST_SHOP_DIE", str(tmp_path / "die"))
    monkeypatch.setenv("TEST_SHOP_HANG", str(tmp_path / "hang"))
    return McpShop(tmp_path, calls)


def test_a_retry_safe_write_is_resent_under_its_key_after_the_connection_dropped(
    shop: McpShop,
) -> None:
    (shop.folder / "die").write_text("charge_card")  # it does its work, then its process exits
    with Agent.from_file(write_project(shop.folder, _source(), RETRY_SAFE),
                         clock=FakeClock()) as agent:  # fmt: skip
        asked = agent.chat("charge order 4411 40.00", user="u")
        reply = agent.confirm("u", "approve", question=asked.waiting[0])
        [call] = agent.record("u")
    assert reply.state == "done" and reply.waiting == []
    assert (call.tool, call.status, call.tries) == ("charge_card", "ran", 2)
    first, second = shop.calls
    assert first["tool"] == second["tool"] == "charge_card"
    assert first["key"] == second["key"] == call.key  # resent under the same key
    assert first["pid"] != second["pid"]  # to the server started again


@pytest.mark.parametrize("retry_safe", [True, False], ids=["retry-safe", "not-retry-safe"])
def test_a_server_killed_mid_call_with_its_caller_is_resumed_by_another_process(
    shop: McpShop, retry_safe: bool
) -> None:
    yaml = write_project(shop.folder, _source(), RETRY_SAFE if retry_safe else FACTS)
    (shop.folder / "hang").write_text("charge_card")
    chat = subprocess.Popen(
        [STALWART, "chat", str(yaml), "--user", "u"], cwd=shop.folder, text=True,
        stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        assert chat.stdin is not None and chat.stderr is not None
        chat.stdin.write("charge order 4411 40.00\na")
        chat.stdin.flush()
        for line in chat.stderr:  # the server's stderr is the CLI's: read until it hangs
            if "hanging in charge_card" in line:
                break
        else:
            pytest.fail(f"the chat ended before the call arrived (exit {chat.wait()})")
        [sent] = shop.calls
        os.kill(sent["pid"], signal.SIGKILL)  # the server, mid-call
        chat.kill()  # and the process that sent the call
    finally:
        chat.kill()
        chat.wait(timeout=30)
        for stream in (chat.stdin, chat.stderr):
            if stream is not None:
                stream.close()
    with Agent.from_file(yaml, clock=FakeClock()) as other:  # another process takes it up
        reply = other.pending("u")
        assert reply is not None
        [call] = other.record("u")
        if retry_safe:
            assert reply.state == "done" and reply.waiting == []
            assert (call.status, call.tries) == ("ran", 2)
            first, second = shop.calls
            assert first["key"] == second["key"] == call.key
            assert first["pid"] != second["pid"]
        else:
            assert reply.waiting[0].text == (
                "Did charge_card take effect? It was being sent when the run stopped."
            )
            assert shop.calls == [sent]  # not resent: it is not retry-safe
            done = other.answer("u", "happened", question=reply.waiting[0])
            assert done.state == "done"
            assert other.record("u")[0].status == "happened"

"""Tools from MCP servers under chapter 34's guarantees, against a real server written
with the official SDK (tests/mcp_shop_server.py) over stdio and streamable HTTP.

The calls the server received are read from the JSON-lines file it appends to, with
the idempotency key each carried in `_meta`.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from stalwart import Agent, Reply, texts
from stalwart.errors import ConfigError
from stalwart.tools.mcp import IDEMPOTENCY_META_KEY, McpToolSpec
from stalwart.verify.lints import lint_project

SERVER = Path(__file__).with_name("mcp_shop_server.py")
TOOLS = "[get_order, charge_card, refund_card, update_crm, restore_crm, provision_account]"
FACTS = """\
  - charge_card: {undo: refund_card}
  - update_crm: {undo: restore_crm}
  - provision_account: {irreversible: true}
"""
RULEBOOK = """\
refund_card only after charge_card with same order, amount
restore_crm only after update_crm with same order
"""
FAILED_ORDER = (
    "charge order 4411 40.00, then update the crm for order 4411, "
    "then provision the account for order 4411"
)
FAILED_REPLY = (
    "This run stopped: provision_account failed (McpToolError). "
    "Undone, latest first: update_crm (by restore_crm), charge_card (by refund_card)."
)


@dataclass
class McpShop:
    folder: Path
    calls_file: Path

    @property
    def calls(self) -> list[dict[str, Any]]:
        if not self.calls_file.exists():
            return []
        return [json.loads(line) for line in self.calls_file.read_text().splitlines()]

    @property
    def names(self) -> list[str]:
        return [call["tool"] for call in self.calls]


def write_project(folder: Path, source: str, facts: str = FACTS) -> Path:
    (folder / "policy.co").write_text(RULEBOOK)
    yaml = folder / "agent.yaml"
    yaml.write_text(
        "agents:\n"
        "  desk:\n"
        f"    tools: {TOOLS}\n"
        "tools:\n"
        f"{source}"
        f"{facts}"
        "rulebook: ./policy.co\n"
        "record: record.sqlite\n"
    )
    return yaml


def stdio_source() -> str:
    return (
        f"  - mcp:\n"
        f"      command: [{sys.executable}, {SERVER}, stdio]\n"
        "      env: {SHOP_CALLS: $TEST_SHOP_CALLS, SHOP_DIE: $TEST_SHOP_DIE}\n"
    )


@pytest.fixture
def shop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> McpShop:
    calls = tmp_path / "calls.jsonl"
    monkeypatch.setenv("TEST_SHOP_CALLS", str(calls))
    monkeypatch.setenv("TEST_SHOP_DIE", str(tmp_path / "die"))
    return McpShop(tmp_path, calls)


@pytest.fixture
def desk(shop: McpShop) -> Iterator[Agent]:
    agent = Agent.from_file(write_project(shop.folder, stdio_source()))
    yield agent
    agent.close()


def approve_all(agent: Agent, reply: Reply, user: str = "u") -> Reply:
    while reply.waiting and reply.waiting[0].kind == "confirm":
        reply = agent.confirm_current(user, "approve")
    return reply


def test_the_servers_tools_join_the_catalogue_with_their_schemas_and_hints(desk: Agent) -> None:
    tools = desk.config.tools
    assert list(tools) == [
        "get_order", "charge_card", "refund_card", "update_crm", "restore_crm",
        "provision_account",
    ]  # fmt: skip
    charge = tools["charge_card"]
    assert isinstance(charge, McpToolSpec)
    assert charge.json_schema()["properties"]["amount"]["type"] == "number"
    assert charge.json_schema()["required"] == ["order", "amount"]
    assert charge.summary == "Charge the card on file for an order."
    assert (tools["get_order"].writes, charge.writes, charge.retry_safe) == (False, True, False)
    assert tools["refund_card"].retry_safe  # idempotentHint
    assert charge.undo is not None and charge.undo.tool == "refund_card"
    assert tools["provision_account"].irreversible


def test_a_read_runs_unconfirmed_and_returns_the_servers_result(desk: Agent, shop: McpShop) -> None:
    reply = desk.chat("look up order 4411", user="u")
    assert reply.state == "done"
    assert shop.names == ["get_order"]
    assert shop.calls[0]["args"] == {"order": 4411}


def test_a_write_is_confirmed_with_its_exact_arguments_and_sent_with_its_key(
    desk: Agent, shop: McpShop
) -> None:
    reply = desk.chat("charge order 4411 40.00", user="u")
    waiting = reply.waiting[0]
    assert (waiting.kind, waiting.tool, dict(waiting.args)) == (
        "confirm", "charge_card", {"order": 4411, "amount": 40.0},
    )  # fmt: skip
    assert waiting.text == "Run charge_card(order=4411, amount=40.0)?"
    assert shop.calls == []  # nothing is sent before the person approves
    reply = desk.confirm_current("u", "approve")
    assert reply.state == "done"
    (call,) = shop.calls
    assert call["args"] == {"order": 4411, "amount": 40.0}
    (charge,) = desk.record("u")
    assert (charge.tool, charge.status) == ("charge_card", "ran")
    assert charge.key is not None and len(charge.key) == 64
    assert call["key"] == charge.key  # the record's, in _meta


def test_the_chapters_failed_order_is_undone_last_first_by_the_undos_agent_yaml_declares(
    desk: Agent, shop: McpShop
) -> None:
    reply = approve_all(desk, desk.chat(FAILED_ORDER, user="u-17"), "u-17")
    assert reply.text == FAILED_REPLY
    assert shop.names == [
        "charge_card", "update_crm", "provision_account", "restore_crm", "refund_card",
    ]  # fmt: skip
    by_tool = {call["tool"]: call for call in shop.calls}
    assert by_tool["restore_crm"]["args"] == {"order": 4411, "previous_status": "unpaid"}
    assert by_tool["refund_card"]["args"] == {"order": 4411, "amount": 40.0}
    assert all(call["key"] for call in shop.calls)  # every write carried its key


def test_a_tool_whose_result_says_is_error_is_a_tool_failure(desk: Agent, shop: McpShop) -> None:
    reply = approve_all(desk, desk.chat("provision the account for order 4411", user="u"))
    assert reply.text == (
        "This run stopped: provision_account failed (McpToolError). "
        "Nothing had been written, so nothing needed undoing."
    )
    (provision,) = desk.record("u")
    assert (provision.tool, provision.status) == ("provision_account", "failed")
    assert shop.names == ["provision_account"]  # sent once: a failure, not in doubt


def test_a_destructive_hint_is_said_in_the_confirmation(desk: Agent) -> None:
    reply = desk.chat("update the crm for order 4411", user="u")
    assert reply.waiting[0].text == (
        "Run update_crm(order=4411)?\nIts MCP server says this tool may destroy or overwrite data."
    )


def test_a_write_whose_connection_dies_mid_call_is_asked_about_and_the_server_restarted(
    desk: Agent, shop: McpShop
) -> None:
    (shop.folder / "die").touch()  # charge_card does its work, then its process exits
    reply = approve_all(desk, desk.chat("charge order 4411 40.00", user="u"))
    waiting = reply.waiting[0]
    assert waiting.kind == "outcome"
    assert waiting.text.startswith("Did charge_card take effect? The call was sent and no answer")
    assert shop.names == ["charge_card"]  # not resent: it is not retry-safe
    reply = desk.answer_current("u", "happened")
    assert reply.state == "done"

    reply = desk.chat("look up order 4411", user="u")  # the next call starts it again
    assert reply.state == "done"
    first, second = shop.calls
    assert second["tool"] == "get_order" and second["pid"] != first["pid"]


def test_the_lints_say_what_comes_from_a_servers_hint_alone(shop: McpShop) -> None:
    facts = (
        FACTS.replace(
            "{undo: refund_card}",
            "{undo: {tool: refund_card, args: {order: $args.order, amount: $args.amount.value}}}",
        )
        + "  - restore_crm: {retry_safe: true}\n"
    )
    agent = Agent.from_file(write_project(shop.folder, stdio_source(), facts))
    try:
        found = [str(lint) for lint in lint_project(agent.config.project)]
    finally:
        agent.close()
    assert (
        "refund_card: retry_safe_from_hint: " + texts.EXTRA_LINT_TEXTS["retry_safe_from_hint"]
        in found
    )
    assert "get_order: read_from_hint: " + texts.EXTRA_LINT_TEXTS["read_from_hint"] in found
    assert not any(line.startswith("restore_crm: retry_safe_from_hint") for line in found)
    assert (
        "charge_card: binding_not_in_schema: amount <- $args.amount.value, which its schema "
        "does not have"
    ) in found


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        (
            "  - mcp: {command: [python3, x.py], env: {K: $TEST_NOT_SET_ANYWHERE}}\n",
            "tools[0].mcp.env.K: $TEST_NOT_SET_ANYWHERE is not set in the environment",
        ),
        (
            "  - mcp: {command: [/nonexistent/mcp-server]}\n",
            "tools[0].mcp: the MCP server '/nonexistent/mcp-server' cannot be started or reached",
        ),
        (
            "  - mcp: {url: http://127.0.0.1:9/mcp, command: [x]}\n",
            "tools[0].mcp: expected either command:",
        ),
        ("  - mcp: {url: ftp://x}\n", "tools[0].mcp.url: expected an http:// or https:// URL"),
    ],
)
def test_a_bad_mcp_entry_is_a_config_error_naming_file_key_and_line(
    shop: McpShop, source: str, expected: str
) -> None:
    yaml = write_project(shop.folder, source, facts="")
    with pytest.raises(ConfigError) as raised:
        Agent.from_file(yaml)
    assert str(raised.value).startswith(f"{yaml}:5:")  # file, line, column
    assert expected in str(raised.value)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def http_server(shop: McpShop) -> Iterator[str]:
    port = _free_port()
    env = {**os.environ, "SHOP_CALLS": str(shop.calls_file)}
    process = subprocess.Popen(
        [sys.executable, str(SERVER), "http", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        while True:  # until it listens (its start-up, not a timed wait)
            if process.poll() is not None:
                pytest.fail("the MCP test server exited before it listened")
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", port)) == 0:
                    break
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(timeout=30)


def test_a_server_over_streamable_http_runs_the_chapters_failed_order(
    shop: McpShop, http_server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TEST_SHOP_TOKEN", "t-1")
    source = (
        f"  - mcp: {{url: {http_server}, headers: {{Authorization: Bearer $TEST_SHOP_TOKEN}}}}\n"
    )
    agent = Agent.from_file(write_project(shop.folder, source))
    try:
        assert desk_read(agent) == "done"
        reply = approve_all(agent, agent.chat(FAILED_ORDER, user="u-17"), "u-17")
    finally:
        agent.close()
    assert reply.text == FAILED_REPLY
    assert shop.names == [
        "get_order", "charge_card", "update_crm", "provision_account", "restore_crm",
        "refund_card",
    ]  # fmt: skip
    assert IDEMPOTENCY_META_KEY == "io.stalwart/idempotency-key"
    assert all(call["key"] for call in shop.calls[1:])


def desk_read(agent: Agent) -> str:
    return agent.chat("look up order 4411", user="reader").state

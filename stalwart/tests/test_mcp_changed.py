"""A server that lists its tools differently between starts (issue 18): what was seen
first is kept beside agent.yaml, and lint and verify say what changed, with a code.

The project's own server (tests/mcp_shop_server.py) over stdio; `SHOP_VARIANT=changed` is
the same server after an update: get_order is no longer a read and takes a new field,
refund_card is no longer idempotent.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from test_mcp import SERVER, write_project

from stalwart import Agent, texts
from stalwart.config import load_project
from stalwart.tools.mcp_seen import seen_path
from stalwart.verify import verify_project
from stalwart.verify.lints import lint_project

STALWART = str(Path(sys.executable).parent / "stalwart")


def _source() -> str:
    return (
        f"  - mcp:\n"
        f"      command: [{sys.executable}, {SERVER}, stdio]\n"
        "      env: {SHOP_CALLS: $TEST_SHOP_CALLS, SHOP_VARIANT: $TEST_SHOP_VARIANT}\n"
    )


@pytest.fixture
def yaml(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("TEST_SHOP_CALLS", str(tmp_path / "calls.jsonl"))
    monkeypatch.setenv("TEST_SHOP_VARIANT", "first")
    return write_project(tmp_path, _source())


def _changed_lints(yaml: Path) -> list[str]:
    project = load_project(yaml)
    try:
        return [str(lint) for lint in lint_project(project) if lint.name == "mcp_tool_changed"]
    finally:
        project.close()


def test_what_a_server_listed_first_is_kept_and_a_change_is_linted_and_verified(
    yaml: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert _changed_lints(yaml) == []  # first start: written down, nothing to say
    seen = json.loads(seen_path(yaml).read_text())
    [tools] = seen["servers"].values()
    assert tools["get_order"]["annotations"]["readOnlyHint"] is True
    assert tools["refund_card"]["annotations"]["idempotentHint"] is True
    assert _changed_lints(yaml) == []  # the same server again: nothing changed

    monkeypatch.setenv("TEST_SHOP_VARIANT", "changed")
    file = str(seen_path(yaml))
    template = texts.EXTRA_LINT_TEXTS["mcp_tool_changed"]
    assert _changed_lints(yaml) == [
        "get_order: mcp_tool_changed: "
        + template.format(
            changes="readOnlyHint true -> false; its input schema; its output schema", file=file
        ),
        "refund_card: mcp_tool_changed: "
        + template.format(changes="idempotentHint true -> (none)", file=file),
    ]
    # What was seen first stays: the change is said on every start until accepted.
    assert json.loads(seen_path(yaml).read_text()) == seen
    with Agent.from_file(yaml) as agent:
        report = verify_project(agent.config.project)
    changed = [f for f in report.findings if f.code == "QG015"]
    assert [f.tool for f in changed] == ["get_order", "refund_card"]
    assert changed[0].text == (
        "get_order is an MCP tool its server lists differently from when it was first seen "
        "(readOnlyHint true -> false; its input schema; its output schema)"
    )

    # The CLI says so too, in a subprocess, and verify fails on it.
    linted = subprocess.run([STALWART, "lint", str(yaml)], capture_output=True, text=True,
                            timeout=120)  # fmt: skip
    assert linted.returncode == 0, linted.stderr
    assert "get_order: mcp_tool_changed: its MCP server lists it differently" in linted.stdout
    verified = subprocess.run([STALWART, "verify", str(yaml)], capture_output=True, text=True,
                              timeout=120)  # fmt: skip
    assert verified.returncode == 1
    assert "QG015" in verified.stdout

    # Accepting the change: its entry deleted, the server's new word is what was seen.
    seen_path(yaml).unlink()
    assert _changed_lints(yaml) == []
    assert _changed_lints(yaml) == []

"""`stalwart lint`: through Click's runner, and once as the installed command."""

from __future__ import annotations

import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from click.testing import CliRunner

from stalwart.cli import main

pytestmark = pytest.mark.acceptance

REPO = Path(__file__).resolve().parents[2]
SHOP_YAML = REPO / "stalwart" / "examples" / "shop" / "agent.yaml"
SHOP_LINTS = [
    "charge_card: write_not_retry_safe: "
    "a write with no idempotency, so an ambiguous failure goes to a person",
    "update_crm: write_not_retry_safe: "
    "a write with no idempotency, so an ambiguous failure goes to a person",
    "provision_account: write_not_retry_safe: "
    "a write with no idempotency, so an ambiguous failure goes to a person",
    "send_receipt: write_not_retry_safe: "
    "a write with no idempotency, so an ambiguous failure goes to a person",
]


def test_lint_prints_the_shops_lints_and_exits_0() -> None:
    result = CliRunner().invoke(main, ["lint", str(SHOP_YAML)])
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == SHOP_LINTS
    assert result.stderr == ""


def test_lint_of_a_bad_file_exits_2_with_the_error_on_stderr(tmp_path: Path) -> None:
    path = tmp_path / "agent.yaml"
    path.write_text("agents:\n  desk:\n    on_unread: ask\n")
    result = CliRunner().invoke(main, ["lint", str(path)])
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr == (
        f"{path}:3:16: agents.desk.on_unread: expected 'refuse' or 'model', got 'ask'\n"
    )


def test_lint_of_one_agent_of_several(tmp_path: Path) -> None:
    module = f"cli_tools_{uuid.uuid4().hex[:10]}"
    (tmp_path / f"{module}.py").write_text(
        "from stalwart import tool\n\n"
        "@tool(writes=True, undo='unwrite', retry_safe=True)\n"
        "def write(order: int) -> None:\n    pass\n\n"
        "@tool(writes=True, retry_safe=True)\n"
        "def unwrite(order: int) -> None:\n    pass\n"
    )
    path = tmp_path / "agent.yaml"
    path.write_text(
        "agents:\n  desk: {tools: [write, unwrite]}\n  sales: {tools: [write]}\n"
        f"tools:\n  - python: {module}\n"
    )
    try:
        everyone = CliRunner().invoke(main, ["lint", str(path)])
        desk = CliRunner().invoke(main, ["lint", str(path), "--agent", "desk"])
        nobody = CliRunner().invoke(main, ["lint", str(path), "--agent", "billing"])
    finally:
        sys.modules.pop(module, None)
        sys.path[:] = [p for p in sys.path if p != str(tmp_path)]
    assert (everyone.exit_code, everyone.stdout) == (
        0,
        "sales/write: compensation_out_of_reach: agent 'sales' can call it but not 'unwrite', "
        "which undoes it, so a run of that agent cannot undo it\n",
    )
    assert (desk.exit_code, desk.stdout) == (0, "")
    assert nobody.exit_code == 2
    assert "no agent named 'billing'; the file has: desk, sales" in nobody.stderr


def test_the_installed_command_lints_the_shop() -> None:
    command = Path(sys.executable).parent / "stalwart"
    done = subprocess.run(
        [str(command), "lint", "stalwart/examples/shop/agent.yaml"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.splitlines() == SHOP_LINTS

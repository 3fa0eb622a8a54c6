"""The pinned npm CLIs are installed and run (npm_tools.py); the helper skips or fails as told."""

from __future__ import annotations

import subprocess
from pathlib import Path

import npm_tools
import pytest
from npm_tools import PACKAGES, find_cli, npm_cli


@pytest.mark.parametrize(
    ("bin_name", "checked", "printed"),
    [
        ("claude", "2.1.332", "2.1.332 (Claude Code)"),
        ("codex", "0.171.0", "codex-cli 0.171.0"),
    ],
)
def test_the_pinned_cli_runs_and_prints_its_version(
    bin_name: str, checked: str, printed: str
) -> None:
    cli = npm_cli(bin_name, checked=checked)
    done = subprocess.run(
        [str(cli.path), "--version"], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.strip() == printed


def test_a_missing_cli_skips_with_the_reason(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(npm_tools, "NPM_TOOLS_DIR", tmp_path)
    monkeypatch.delenv("CI", raising=False)
    reason = find_cli("codex")
    assert isinstance(reason, str)
    assert PACKAGES["codex"] in reason or "node is not on PATH" in reason
    with pytest.raises(pytest.skip.Exception, match="make npm-tools"):
        npm_cli("codex", checked="0.171.0")


def test_a_missing_cli_fails_under_ci(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(npm_tools, "NPM_TOOLS_DIR", tmp_path)
    monkeypatch.setenv("CI", "1")
    with pytest.raises(pytest.fail.Exception, match="CI is set"):
        npm_cli("codex", checked="0.171.0")


def test_another_version_than_the_checked_one_is_not_run_unread(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("CI", raising=False)
    found = find_cli("claude")
    if isinstance(found, str):
        pytest.skip(found)
    with pytest.raises(pytest.skip.Exception, match="checked against 0.0.1"):
        npm_cli("claude", checked="0.0.1")

"""The real agent CLIs from npm, for tests: `make npm-tools` installs them once into
<repo>/.cache/npm-tools (pinned by npm-tools/package-lock.json).

`npm_cli(bin_name, checked=...)` returns the CLI's path and installed version, or skips the
test saying why (no node, not installed, another version than the one the test was checked
against). With env `CI` set it fails instead: CI must run the real CLIs, not skip them.

Each test names the version it was checked against (`checked=`); a version bump in the lock
therefore shows every test that has to be looked at again, instead of passing unread.
The same file works for any product: copy it and change nothing but REPO_ROOT if the tests sit
at another depth.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
NPM_TOOLS_DIR = Path(os.environ.get("NPM_TOOLS_DIR", REPO_ROOT / ".cache" / "npm-tools"))

# bin name -> npm package that ships it (as pinned in npm-tools/package.json).
PACKAGES = {
    "claude": "@anthropic-ai/claude-code",
    "codex": "@openai/codex",
    "claude-agent-acp": "@zed-industries/claude-agent-acp",
    "mcp-server-memory": "@modelcontextprotocol/server-memory",
}


@dataclass(frozen=True)
class NpmCli:
    name: str
    path: Path
    version: str
    package: str


def unavailable(reason: str) -> None:
    """Skip, or fail under CI, where a real CLI cannot be had."""
    if os.environ.get("CI"):
        pytest.fail(f"{reason} (CI is set, so this fails instead of skipping)")
    pytest.skip(reason)


def find_cli(bin_name: str) -> NpmCli | str:
    """The installed CLI, or the reason it cannot be used."""
    package = PACKAGES[bin_name]
    if shutil.which("node") is None:
        return f"{bin_name}: node is not on PATH (install Node.js, then `make npm-tools`)"
    path = NPM_TOOLS_DIR / "node_modules" / ".bin" / bin_name
    manifest = NPM_TOOLS_DIR / "node_modules" / package / "package.json"
    if not path.exists() or not manifest.exists():
        return f"{bin_name}: {package} is not installed in {NPM_TOOLS_DIR} (run `make npm-tools`)"
    version = str(json.loads(manifest.read_text())["version"])
    return NpmCli(name=bin_name, path=path, version=version, package=package)


def npm_cli(bin_name: str, *, checked: str) -> NpmCli:
    """The CLI this test runs; `checked` is the version the test was last checked against."""
    found = find_cli(bin_name)
    if isinstance(found, str):
        unavailable(found)
        raise AssertionError("unreachable")  # pytest.skip/fail raise
    if found.version != checked:
        unavailable(
            f"{bin_name}: installed {found.package}@{found.version}, but this test was checked "
            f"against {checked}; run it against the new version and update `checked`"
        )
    return found

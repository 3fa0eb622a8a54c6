"""The outputs captured from the real CLIs (cli_fixtures/<cli>/<version>/, written by
capture_claude_fixtures.py and capture_codex_fixtures.py), for the adapters' unit tests."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).resolve().parent / "cli_fixtures"


@dataclass(frozen=True)
class Captured:
    stdout: str
    stderr: str
    now: datetime  # the capture's time: reset times in the output are relative to it
    manifest: dict[str, Any]


def captured(cli: str, version: str, case: str) -> Captured:
    folder = FIXTURES / cli / version
    manifest = json.loads((folder / "manifest.json").read_text())
    stderr_path = folder / f"{case}.stderr"
    return Captured(
        stdout=(folder / f"{case}.stdout").read_text(),
        stderr=stderr_path.read_text() if stderr_path.exists() else "",
        now=datetime.fromtimestamp(manifest["captured_at"], UTC),
        manifest=manifest,
    )

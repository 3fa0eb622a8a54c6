"""What capture_claude_fixtures.py and capture_codex_fixtures.py share: a real CLI run in a
scratch git repository against a stand-in, its output kept under
cli_fixtures/<cli>/<version>/ with a manifest (the version, the capture time that reset times
are relative to, each case's arguments and exit code)."""

from __future__ import annotations

import json
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from npm_tools import NpmCli

FIXTURES = Path(__file__).resolve().parent / "cli_fixtures"


@dataclass
class Capture:
    cli: NpmCli
    out: Path  # cli_fixtures/<folder>/<version>
    home: Path  # the CLI's home, kept across runs
    project: Path  # a git repository the CLI runs in
    reset_at: int  # the reset time the usage-limit cases give
    cases: dict[str, Any]  # the manifest's cases, by name

    def run(self, argv: list[str], env: dict[str, str], *, check: bool = False) -> Any:
        """The CLI run once with `argv` in the project (a subprocess.CompletedProcess)."""
        return subprocess.run(
            [str(self.cli.path), *argv],
            cwd=self.project,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            stdin=subprocess.DEVNULL,
            check=check,
        )

    def keep(self, name: str, done: Any, **facts: Any) -> None:
        """A run's stdout and stderr as <name>.stdout/.stderr, and its entry in the manifest."""
        (self.out / f"{name}.stdout").write_text(done.stdout)
        (self.out / f"{name}.stderr").write_text(done.stderr)
        self.cases[name] = {**facts, "exit_code": done.returncode}
        print(name, done.returncode)


@contextmanager
def capturing(cli: NpmCli, folder: str, reset_after: Callable[[int], int]) -> Iterator[Capture]:
    """A capture of `cli` into cli_fixtures/<folder>/<version>/; the manifest is written when
    the block ends without an error. `reset_after(captured_at)` is the cases' reset time."""
    out = FIXTURES / folder / cli.version
    out.mkdir(parents=True, exist_ok=True)
    captured_at = int(time.time())
    reset_at = reset_after(captured_at)
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        project = root / "project"
        project.mkdir()
        subprocess.run(["git", "init", "-q", str(project)], check=True)
        capture = Capture(cli, out, root / "home", project, reset_at, {})
        yield capture
    manifest = {
        "cli": cli.package,
        "version": cli.version,
        "captured_at": captured_at,
        "reset_at": reset_at,
        "cases": capture.cases,
    }
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")

"""The `stalwart` command run in a subprocess: on a real pseudo-terminal, or with no terminal.

`on_terminal` forks the command onto a new pty (its controlling terminal, so getpass reads
it), types `lines` as prompts appear, and returns the exit code and everything the
terminal showed. `Terminal` keeps a program on a pty for a conversation (`stalwart chat`):
`expect` a text, `send` keys. `without_terminal` runs it with pipes only (stdin not a tty).
"""

from __future__ import annotations

import os
import pty
import select
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

STALWART = shutil.which("stalwart", path=str(Path(sys.executable).parent)) or "stalwart"


@dataclass(frozen=True)
class Ran:
    code: int
    shown: str  # everything the terminal showed (with a terminal), or stdout
    stderr: str = ""


def _environment(env: Mapping[str, str] | None) -> dict[str, str]:
    merged = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    merged.update(env or {})
    return merged


def on_terminal(
    args: Sequence[str],
    lines: Sequence[str] = (),
    *,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    timeout: float = 60.0,
) -> Ran:
    """Run `stalwart *args` on a new pty; each of `lines` is typed after output appears."""
    environment = _environment(env)
    argv = [STALWART, *args]
    pid, fd = pty.fork()
    if pid == 0:  # the child: the pty is its controlling terminal and its stdio
        try:
            if cwd is not None:
                os.chdir(cwd)
            os.execve(argv[0], argv, environment)
        finally:
            os._exit(127)
    shown = b""
    pending = list(lines)
    try:
        while True:
            ready, _, _ = select.select([fd], [], [], timeout)
            if not ready:
                raise TimeoutError(f"the command showed nothing more: {shown!r}")
            try:
                chunk = os.read(fd, 4096)
            except OSError:  # EIO: the child closed the terminal
                break
            if not chunk:
                break
            shown += chunk
            if pending and chunk.rstrip().endswith(b":"):
                os.write(fd, pending.pop(0).encode("utf-8", "surrogateescape") + b"\r")
    finally:
        _, status = os.waitpid(pid, 0)
        os.close(fd)
    return Ran(os.waitstatus_to_exitcode(status), shown.decode("utf-8", "replace"))


def without_terminal(
    args: Sequence[str],
    stdin: bytes = b"",
    *,
    env: Mapping[str, str | bytes] | None = None,
    cwd: Path | None = None,
) -> Ran:
    """Run `stalwart *args` with pipes for stdin, stdout and stderr (no terminal at all)."""
    environment: dict[bytes, bytes] = {
        k.encode(): v.encode("utf-8", "surrogateescape") for k, v in _environment(None).items()
    }
    for key, value in (env or {}).items():
        environment[key.encode()] = value if isinstance(value, bytes) else value.encode()
    done = subprocess.run(
        [STALWART, *args],
        input=stdin,
        capture_output=True,
        env=environment,
        cwd=cwd,
        timeout=60,
        check=False,
        start_new_session=True,  # no controlling terminal to fall back on
    )
    return Ran(done.returncode, done.stdout.decode(), done.stderr.decode())


class Terminal:
    """A program on a pty: `expect` reads until a text shows (bounded), `send` types."""

    def __init__(self, *command: str, cwd: Path, env: Mapping[str, str] | None = None) -> None:
        self.master, slave = os.openpty()
        self.process = subprocess.Popen(
            command, stdin=slave, stdout=slave, stderr=slave, cwd=cwd, close_fds=True,
            env={**_environment(env), "TERM": "xterm"},
        )  # fmt: skip
        os.close(slave)
        self.seen = ""

    def expect(self, text: str, limit_secs: float = 30.0) -> str:
        while text not in self.seen:
            ready, _, _ = select.select([self.master], [], [], limit_secs)
            if not ready:
                raise AssertionError(f"never saw {text!r}; the screen:\n{self.seen}")
            try:
                chunk = os.read(self.master, 4096).decode("utf-8", "replace")
            except OSError:  # the program ended
                raise AssertionError(f"ended before {text!r}; the screen:\n{self.seen}") from None
            self.seen += chunk.replace("\r\n", "\n")
        before, _, after = self.seen.partition(text)
        self.seen = after
        return before

    def send(self, keys: str) -> None:
        os.write(self.master, keys.encode("utf-8"))

    def close(self) -> int:
        try:
            return self.process.wait(20)
        finally:
            os.close(self.master)

"""The `stalwart` command run in a subprocess: on a real pseudo-terminal, or with no terminal.

`on_terminal` forks the command onto a new pty (its controlling terminal, so getpass reads
it), types `lines` as prompts appear, and returns the exit code and everything the
terminal showed. `Terminal` keeps a program on a pty for a conversation (`stalwart chat`):
`expect` a text, `send` keys. `without_terminal` runs it with pipes only (stdin not a tty),
and `Piped` keeps it on pipes for a conversation, as `Terminal` does on a pty.
"""

from __future__ import annotations

import codecs
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


class _Conversation:
    """A program read until a text shows (`expect`, bounded) and typed to (`send`)."""

    def __init__(self, process: subprocess.Popen[bytes], read: int, write: int) -> None:
        self.process, self._read, self._write = process, read, write
        # a character may arrive split across two reads
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self.seen = ""
        self._closed = False

    def expect(self, text: str, limit_secs: float = 30.0) -> str:
        """Read until `text` shows; what showed before it (everything up to it is consumed)."""
        while text not in self.seen:
            ready, _, _ = select.select([self._read], [], [], limit_secs)
            if not ready:
                raise AssertionError(f"never saw {text!r}; the screen:\n{self.seen}")
            try:
                read = os.read(self._read, 4096)
            except OSError:  # the program ended (a pty says EIO)
                read = b""
            if not read:
                raise AssertionError(f"ended before {text!r}; the screen:\n{self.seen}")
            self.seen += self._decoder.decode(read).replace("\r\n", "\n")
        before, _, after = self.seen.partition(text)
        self.seen = after
        return before

    def send(self, keys: str) -> None:
        os.write(self._write, keys.encode("utf-8"))

    def close(self) -> int:
        """Wait for the program to end (killed past 20 s); its exit code, again if asked again."""
        if not self._closed:
            self._closed = True
            try:
                self._finish()
            finally:
                if self.process.poll() is None:
                    self.process.kill()
                    self.process.wait()
                self._release()
        return self.process.returncode

    def _finish(self) -> None:
        self.process.wait(20)

    def _release(self) -> None:
        """Close what the test holds of the program's stdio."""


class Terminal(_Conversation):
    """A program on a pty, its controlling terminal's stdio."""

    def __init__(self, *command: str, cwd: Path, env: Mapping[str, str] | None = None) -> None:
        master, slave = os.openpty()
        process = subprocess.Popen(
            command, stdin=slave, stdout=slave, stderr=slave, cwd=cwd, close_fds=True,
            env={**_environment(env), "TERM": "xterm"},
        )  # fmt: skip
        os.close(slave)
        super().__init__(process, master, master)
        self.master = master

    def _release(self) -> None:
        os.close(self.master)


class Piped(_Conversation):
    """A program with pipes only (stdin not a tty, no controlling terminal), its stderr
    interleaved with its stdout as a screen would show them."""

    def __init__(self, *command: str, cwd: Path, env: Mapping[str, str] | None = None) -> None:
        process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            cwd=cwd, env=_environment(env), start_new_session=True,
        )  # fmt: skip
        assert process.stdin is not None and process.stdout is not None
        super().__init__(process, process.stdout.fileno(), process.stdin.fileno())

    def _finish(self) -> None:
        """End stdin (EOF) and keep what is left of the output in `seen`."""
        rest, _ = self.process.communicate(timeout=20)  # closes stdin first
        self.seen += self._decoder.decode(rest, final=True)

    def _release(self) -> None:
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None:
                stream.close()


@dataclass(frozen=True)
class Screen:
    """Where a test runs `stalwart`: on a terminal (a pty, which echoes what is typed and
    shows stderr among stdout) or with pipes only (stdin not a tty, stderr apart)."""

    terminal: bool

    def __str__(self) -> str:
        return "terminal" if self.terminal else "pipes"

    def run(self, args: Sequence[str], *, cwd: Path) -> Ran:
        return on_terminal(args, cwd=cwd) if self.terminal else without_terminal(args, cwd=cwd)

    def errors(self, ran: Ran) -> str:
        """Where a command's errors show: on the terminal, or on stderr."""
        return ran.shown if self.terminal else ran.stderr

    def conversation(self, *args: str, cwd: Path) -> Terminal | Piped:
        """`stalwart *args` kept for a conversation, here."""
        return (Terminal if self.terminal else Piped)(STALWART, *args, cwd=cwd)


SCREENS = (Screen(terminal=True), Screen(terminal=False))

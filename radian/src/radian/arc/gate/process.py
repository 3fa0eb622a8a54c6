"""Run one outside command for a gate stage: its own process group, a timeout, a log file.

Every stage (commands, mutation, review, integration) runs programs the same way, so a slow
or hung program is killed whole (its children too) and a Ctrl-C of `radian arc run` stops it
without waiting for the timeout.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

# How often a waiting stage looks at the stop event; short, so Ctrl-C feels immediate.
_POLL_SECS = 0.05
# How long a program gets to exit after SIGTERM before SIGKILL.
_TERM_GRACE_SECS = 2.0


@dataclass(frozen=True)
class ProcessOutcome:
    exit_code: int | None  # None: killed for the timeout or for a stop
    timed_out: bool
    stopped: bool
    output: str  # what the program printed (stdout and stderr interleaved)
    seconds: float


class StopRequested(Exception):
    """The gate was asked to stop (Ctrl-C of `radian arc run`); no verdict is written."""


def run_program(
    argv: Sequence[str] | str,
    *,
    cwd: Path,
    timeout_secs: float,
    log_path: Path,
    stop: threading.Event | None = None,
    env: Mapping[str, str] | None = None,
    header: str | None = None,
    stdout_path: Path | None = None,
) -> ProcessOutcome:
    """Run `argv` (a shell line when a str) in `cwd`, append its output to `log_path`.

    With `stdout_path`, standard output goes to that file alone (a reviewer's JSON) and
    only standard error to the log; `output` is then the standard output.
    The timeout is real elapsed time: it bounds a program, it is not a backoff.
    """
    log_path.parent.mkdir(parents=True, exist_ok=True)
    full_env = dict(os.environ if env is None else env)
    started = time.monotonic()
    with log_path.open("ab") as log, contextlib.ExitStack() as files:
        if header:
            log.write(header.encode() + b"\n")
            log.flush()
        start_offset = log.tell()
        stdout = files.enter_context(stdout_path.open("wb")) if stdout_path else log
        process = subprocess.Popen(
            argv,
            shell=isinstance(argv, str),
            cwd=cwd,
            env=full_env,
            stdin=subprocess.DEVNULL,
            stdout=stdout,
            stderr=log if stdout_path else subprocess.STDOUT,
            start_new_session=True,
        )
        timed_out = stopped = False
        while True:
            try:
                exit_code: int | None = process.wait(timeout=_POLL_SECS)
                break
            except subprocess.TimeoutExpired:
                pass
            if stop is not None and stop.is_set():
                stopped = True
            elif time.monotonic() - started >= timeout_secs:
                timed_out = True
            if stopped or timed_out:
                _kill_group(process)
                exit_code = None
                break
    if stdout_path:
        output = stdout_path.read_bytes().decode(errors="replace")
    else:
        output = log_path.read_bytes()[start_offset:].decode(errors="replace")
    return ProcessOutcome(
        exit_code=exit_code,
        timed_out=timed_out,
        stopped=stopped,
        output=output,
        seconds=time.monotonic() - started,
    )


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    for sig, grace in ((signal.SIGTERM, _TERM_GRACE_SECS), (signal.SIGKILL, None)):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            break
        try:
            process.wait(timeout=grace)
            # The leader is gone; its children may not be. SIGKILL the rest of the group.
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            break
        except subprocess.TimeoutExpired:
            continue
    process.wait()

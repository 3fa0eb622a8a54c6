"""The `commands` stage: shell commands in the task's tree, in order, each with a timeout."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path

from radian.arc.config import CommandConfig
from radian.arc.gate import texts
from radian.arc.gate.process import StopRequested, run_program
from radian.arc.gate.stage import StageResult, failed, passed
from radian.arc.gate.verdict import COMMAND_FAILED, TIMEOUT


def run_commands(
    commands: Sequence[CommandConfig],
    *,
    cwd: Path,
    log_path: Path,
    stop: threading.Event,
) -> StageResult:
    """Run each command with `sh -c` in `cwd`; the first that fails or times out fails all."""
    for command in commands:
        outcome = run_program(
            command.run,
            cwd=cwd,
            timeout_secs=command.timeout_secs,
            log_path=log_path,
            stop=stop,
            header=f"$ {command.run}",
        )
        if outcome.stopped:
            raise StopRequested(command.run)
        if outcome.timed_out:
            return failed(
                TIMEOUT,
                texts.command_timed_out(command.run, command.timeout_secs),
                command=command.run,
            )
        if outcome.exit_code != 0:
            return failed(
                COMMAND_FAILED,
                texts.command_failed(command.run, outcome.exit_code),
                command=command.run,
            )
    return passed(texts.commands_passed(len(commands)))

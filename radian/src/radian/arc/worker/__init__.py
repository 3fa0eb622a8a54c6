"""The command worker: its Result formats, exec_args, the wrapper and the attempt.

radian/docs/worker.md describes the formats, the placeholders, the environment, the
wrapper's exit codes and the delivery check.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from radian.arc.worker.command import validate_exec_args
from radian.arc.worker.delivery import Delivery
from radian.arc.worker.result import ModelError, WorkerResult, parse_result

if TYPE_CHECKING:
    from radian.arc.worker.attempt import (
        AttemptEnd,
        AttemptSpec,
        ended_attempt,
        kill_attempt,
        live_wrapper,
        run_attempt,
        stop_attempt,
        watch_attempt,
    )

__all__ = [
    "AttemptEnd",
    "AttemptSpec",
    "Delivery",
    "ModelError",
    "WorkerResult",
    "ended_attempt",
    "kill_attempt",
    "live_wrapper",
    "parse_result",
    "run_attempt",
    "stop_attempt",
    "validate_exec_args",
    "watch_attempt",
]

_FROM_ATTEMPT = (
    "AttemptEnd",
    "AttemptSpec",
    "ended_attempt",
    "kill_attempt",
    "live_wrapper",
    "run_attempt",
    "stop_attempt",
    "watch_attempt",
)


def __getattr__(name: str) -> Any:
    # The attempt module imports the config models (pydantic). The wrapper, started once per
    # attempt, imports this package too, and loading them would more than double its start-up.
    if name in _FROM_ATTEMPT:
        from radian.arc.worker import attempt

        return getattr(attempt, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

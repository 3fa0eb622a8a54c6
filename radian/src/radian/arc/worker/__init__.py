"""The command worker: its Result formats, exec_args, the wrapper and the attempt.

radian/docs/worker.md describes the formats, the placeholders, the environment, the
wrapper's exit codes and the delivery check.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

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
    from radian.arc.worker.command import validate_exec_args
    from radian.arc.worker.delivery import Delivery
    from radian.arc.worker.result import ModelError, WorkerResult, parse_result

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

# public name -> the module that defines it. Loaded on first use: the wrapper, started once
# per attempt, imports this package too, and needs none of them (the attempt module imports
# the config models, pydantic; the Result formats import zoneinfo and re).
_EXPORTS: dict[str, str] = {
    **dict.fromkeys(
        (
            "AttemptEnd",
            "AttemptSpec",
            "ended_attempt",
            "kill_attempt",
            "live_wrapper",
            "run_attempt",
            "stop_attempt",
            "watch_attempt",
        ),
        "radian.arc.worker.attempt",
    ),  # fmt: skip
    "validate_exec_args": "radian.arc.worker.command",
    "Delivery": "radian.arc.worker.delivery",
    "ModelError": "radian.arc.worker.result",
    "WorkerResult": "radian.arc.worker.result",
    "parse_result": "radian.arc.worker.result",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)

"""The command worker: its Result formats, exec_args, the wrapper and the attempt.

radian/docs/worker.md describes the formats, the placeholders, the environment, the
wrapper's exit codes and the delivery check.
"""

from radian.arc.worker.attempt import AttemptEnd, AttemptSpec, run_attempt, stop_attempt
from radian.arc.worker.command import validate_exec_args
from radian.arc.worker.delivery import Delivery
from radian.arc.worker.result import ModelError, WorkerResult, parse_result

__all__ = [
    "AttemptEnd",
    "AttemptSpec",
    "Delivery",
    "ModelError",
    "WorkerResult",
    "parse_result",
    "run_attempt",
    "stop_attempt",
    "validate_exec_args",
]

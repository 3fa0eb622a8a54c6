"""The command worker: its Result formats, exec_args, the wrapper and the attempt."""

from radian.arc.worker.command import validate_exec_args
from radian.arc.worker.result import ModelError, WorkerResult, parse_result

__all__ = [
    "ModelError",
    "WorkerResult",
    "parse_result",
    "validate_exec_args",
]

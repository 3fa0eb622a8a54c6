"""The worker's Result, read by the adapter of its format (radian.arc.worker.formats)."""

from __future__ import annotations

from datetime import datetime

from radian.arc.worker.formats import (
    CostScope,
    ModelError,
    WorkerResult,
    parse_output,
    session_seen,
)

__all__ = ["CostScope", "ModelError", "WorkerResult", "parse_result", "session_seen"]


def parse_result(
    output: str, *, now: datetime | None = None, stderr: str = ""
) -> WorkerResult | None:
    """The worker's Result from everything it printed on stdout (and stderr, where a worker
    says only there that it lost its session); None when it printed none."""
    return parse_output(output, stderr, now=now)

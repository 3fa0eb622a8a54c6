"""When a waiting task may run again: the retry backoff and the model waits (pure functions)."""

from __future__ import annotations

from datetime import datetime, timedelta

RETRY_FIRST_SECS = 10.0
RETRY_CAP_SECS = 5 * 60.0
MODEL_WAIT_FIRST_SECS = 5 * 60.0
MODEL_WAIT_CAP_SECS = 60 * 60.0


def retry_backoff_secs(retry_number: int) -> float:
    """The wait before retry `retry_number` (1 for the first): 10 s, doubled, capped at 5 min."""
    if retry_number < 1:
        raise ValueError("retry_number starts at 1")
    doubled = RETRY_FIRST_SECS * 2.0 ** min(retry_number - 1, 32)
    return min(doubled, RETRY_CAP_SECS)


def model_wait_secs(wait_number: int, retry_after_secs: float | None) -> float:
    """The wait for model wait `wait_number` in a row (1 for the first).

    5 min, doubled for each further one, capped at 60 min; a longer retry_after_secs from the
    model error is used instead, still capped at 60 min.
    """
    if wait_number < 1:
        raise ValueError("wait_number starts at 1")
    step = min(MODEL_WAIT_FIRST_SECS * 2.0 ** min(wait_number - 1, 32), MODEL_WAIT_CAP_SECS)
    if retry_after_secs is not None and retry_after_secs > step:
        return min(retry_after_secs, MODEL_WAIT_CAP_SECS)
    return step


def due_at(now: datetime, wait_secs: float) -> datetime:
    return now + timedelta(seconds=wait_secs)

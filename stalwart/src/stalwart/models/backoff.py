"""Backoff for model calls: rate limits, overload and lost connections, with a cap.

The official clients' own retries are off (max_retries=0), so this is the one policy,
and it waits on the injected clock: a test with a FakeClock sees every wait and never
sleeps. A wait is drawn by the one `stalwart.backoff.Backoff` (full jitter, its random
source injected), unless the provider's retry-after says how long.
"""

from __future__ import annotations

import email.utils
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TypeVar

from .. import logs, texts
from ..backoff import Backoff
from ..clock import Clock
from ..errors import (
    ModelRequestRejected,
    ModelTimedOut,
    ModelUnavailable,
    ProviderFailure,
    ProviderTimeout,
)

T = TypeVar("T")

log = logging.getLogger(logs.MODEL)

# Tries that may end in a timeout, the first included: a reply slower than the timeout may
# still be billed, so a timeout is tried once more at most, whatever `max_attempts` says.
TIMEOUT_TRIES = 2

# 408 timeout, 409 conflict (lock contention), 429 rate limit, 5xx server trouble,
# 529 Anthropic's "overloaded". The same set the official clients retry by default.
RETRYABLE_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504, 529})


@dataclass(frozen=True)
class BackoffPolicy:
    """How often and how long to wait before calling a model again.

    `backoff` is the one `stalwart.backoff.Backoff` (4 attempts, the first included; waits
    drawn with full jitter up to 1, 2, 4, ... seconds, capped at 30). A retry-after is
    honoured exactly, unless it asks for more than `max_retry_after`: then the call gives
    up at once rather than hold a person's turn that long.
    """

    backoff: Backoff = field(default_factory=Backoff)
    max_retry_after: float = 60.0
    retry_statuses: frozenset[int] = field(default=RETRYABLE_STATUSES)

    def __post_init__(self) -> None:
        if not self.max_retry_after >= 0:
            raise ValueError(f"max_retry_after must be 0 or more; got {self.max_retry_after!r}")

    @property
    def max_attempts(self) -> int:
        """Calls made at most, the first included."""
        return self.backoff.tries

    def is_retryable(self, status: int | None) -> bool:
        return status is None or status in self.retry_statuses

    def wait(self, attempt: int, retry_after: float | None) -> float | None:
        """Seconds to wait after failed attempt number `attempt` (1-based); None: give up."""
        if retry_after is not None:
            return max(0.0, retry_after) if retry_after <= self.max_retry_after else None
        return self.backoff.wait(attempt)


def retry_after_seconds(headers: Mapping[str, str], now: float) -> float | None:
    """The wait a response asks for: `retry-after-ms`, else `retry-after` in seconds or as
    an HTTP date (measured from `now`). None when it asks for none or cannot be read."""
    lowered = {k.lower(): v for k, v in headers.items()}
    milliseconds = _number(lowered.get("retry-after-ms"))
    if milliseconds is not None:
        return milliseconds / 1000
    value = lowered.get("retry-after")
    seconds = _number(value)
    if seconds is not None or value is None:
        return seconds
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:  # an HTTP date is GMT; a date without a zone is read as such
        return None
    return when.timestamp() - now


def _number(text: str | None) -> float | None:
    if text is None:
        return None
    try:
        value = float(text)
    except ValueError:
        return None
    return value if value == value and abs(value) != float("inf") else None


def call_with_backoff(
    send: Callable[[], T], policy: BackoffPolicy, clock: Clock, selector: str
) -> T:
    """Call `send` until it returns, a failure cannot be cured by waiting, or the cap.

    A timeout counts against its own cap too (`TIMEOUT_TRIES`): the second is
    `ModelTimedOut`, however many attempts the policy has left.
    """
    attempt = timeouts = 0
    while True:
        attempt += 1
        try:
            return send()
        except ProviderFailure as failure:
            if isinstance(failure, ProviderTimeout):
                timeouts += 1
                if timeouts >= TIMEOUT_TRIES:
                    raise ModelTimedOut(
                        selector,
                        f"no answer within {failure.timeout:g} s, {timeouts} times",
                        attempts=attempt,
                        timeout=failure.timeout,
                    ) from failure
            if not policy.is_retryable(failure.status):
                assert failure.status is not None  # a lost connection is always retryable
                raise ModelRequestRejected(
                    selector, f"refused the request ({failure})", status=failure.status
                ) from failure
            asked = retry_after_seconds(failure.headers, clock.now())
            wait = policy.wait(attempt, asked)
            if wait is None:
                raise ModelUnavailable(
                    selector,
                    f"asked to wait {asked:g} s, more than the {policy.max_retry_after:g} s "
                    f"allowed ({failure})",
                    attempts=attempt,
                    last_status=failure.status,
                ) from failure
            if attempt >= policy.max_attempts:
                raise ModelUnavailable(
                    selector,
                    f"unavailable after {attempt} attempt(s); last: {failure}",
                    attempts=attempt,
                    last_status=failure.status,
                ) from failure
            log.info(texts.MODEL_WAIT, selector, failure, attempt, policy.max_attempts, wait)
            clock.sleep(wait)

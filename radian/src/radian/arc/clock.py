"""Time, injected: every timestamp and every wait in arc goes through a Clock.

Tests pass a `FakeClock`, whose `sleep` moves time forward at once, so no test waits for a
backoff. The demo uses an `OffsetClock` (RADIAN_ARC_FAKE_NOW) so a retry due in ten seconds
or a model wait of five minutes can be reached without waiting for it.
"""

from __future__ import annotations

import os
import threading
import time
from datetime import UTC, datetime, timedelta
from typing import Protocol

FAKE_NOW_ENV = "RADIAN_ARC_FAKE_NOW"
# Every UTC time a person reads or a file stores: 2026-11-30T07:15:00Z.
UTC_FORMAT = "%Y-%m-%dT%H:%M:%SZ"


class Clock(Protocol):
    def now(self) -> datetime:
        """The current time, timezone-aware UTC."""
        ...

    def sleep(self, seconds: float) -> None: ...


class SystemClock:
    """The real clock."""

    def now(self) -> datetime:
        return datetime.now(UTC)

    def sleep(self, seconds: float) -> None:
        if seconds > 0:
            time.sleep(seconds)


class FakeClock:
    """A clock that only moves when told to; `sleep` records the wait and advances at once."""

    def __init__(self, start: datetime | None = None) -> None:
        self._now = start or datetime(2026, 11, 30, 7, 0, 0, tzinfo=UTC)
        self._guard = threading.Lock()
        self.slept: list[float] = []

    def now(self) -> datetime:
        with self._guard:
            return self._now

    def sleep(self, seconds: float) -> None:
        with self._guard:
            self.slept.append(seconds)
            self._now += timedelta(seconds=max(0.0, seconds))

    def advance(self, seconds: float) -> None:
        with self._guard:
            self._now += timedelta(seconds=seconds)


class OffsetClock:
    """Real time shifted so that it reads `start` when created; sleeps are real."""

    def __init__(self, start: datetime) -> None:
        self._offset = start - datetime.now(UTC)

    def now(self) -> datetime:
        return datetime.now(UTC) + self._offset

    def sleep(self, seconds: float) -> None:
        if seconds > 0:
            time.sleep(seconds)


def clock_from_environment() -> Clock:
    """The CLI's clock: the system clock, or an OffsetClock when RADIAN_ARC_FAKE_NOW is set."""
    fake_now = os.environ.get(FAKE_NOW_ENV)
    if not fake_now:
        return SystemClock()
    return OffsetClock(parse_utc(fake_now))


def format_utc(moment: datetime) -> str:
    """`moment` as the UTC text arc stores and prints, truncated to the second."""
    return moment.astimezone(UTC).strftime(UTC_FORMAT)


def format_utc_ceil(moment: datetime) -> str:
    """`moment` rounded up to the second, so a due time written to a file is never early."""
    moment = moment.astimezone(UTC)
    whole = moment.replace(microsecond=0)
    if whole < moment:
        whole += timedelta(seconds=1)
    return whole.strftime(UTC_FORMAT)


def parse_utc(text: str) -> datetime:
    """Read an ISO 8601 time; one without a zone is taken as UTC."""
    moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)

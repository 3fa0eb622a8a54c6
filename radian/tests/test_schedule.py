from __future__ import annotations

import pytest

from radian.arc.schedule import model_wait_secs, retry_backoff_secs

pytestmark = pytest.mark.unit


def test_retry_backoff_is_10_seconds_doubled_and_capped_at_5_minutes() -> None:
    waits = [retry_backoff_secs(n) for n in range(1, 9)]
    assert waits == [10, 20, 40, 80, 160, 300, 300, 300]
    assert retry_backoff_secs(10_000) == 300


def test_model_wait_is_5_minutes_doubled_and_capped_at_60_minutes() -> None:
    waits = [model_wait_secs(n, None) for n in range(1, 7)]
    assert waits == [300, 600, 1200, 2400, 3600, 3600]


def test_a_longer_retry_after_is_used_still_capped_at_60_minutes() -> None:
    assert model_wait_secs(1, 900) == 900
    assert model_wait_secs(1, 120) == 300  # shorter than the step: the step
    assert model_wait_secs(2, 601) == 601
    assert model_wait_secs(1, 10_000) == 3600


def test_numbers_start_at_one() -> None:
    with pytest.raises(ValueError):
        retry_backoff_secs(0)
    with pytest.raises(ValueError):
        model_wait_secs(0, None)

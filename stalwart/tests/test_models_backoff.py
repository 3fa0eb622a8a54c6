"""The backoff policy for model calls: waits, retry-after, the cap, what is not retried."""

from __future__ import annotations

from datetime import UTC, datetime
from email.utils import format_datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from stalwart.backoff import Backoff, no_jitter
from stalwart.clock import FakeClock
from stalwart.errors import ModelRequestRejected, ModelUnavailable, ProviderFailure
from stalwart.models.backoff import (
    BackoffPolicy,
    call_with_backoff,
    retry_after_seconds,
)

pytestmark = pytest.mark.unit


def test_without_retry_after_the_wait_doubles_up_to_the_cap() -> None:
    policy = BackoffPolicy(Backoff(base=1.0, factor=2.0, cap=5.0, retries=5, jitter=no_jitter))

    assert [policy.wait(n, None) for n in range(1, 6)] == [1.0, 2.0, 4.0, 5.0, 5.0]


def test_a_retry_after_is_honoured_exactly_up_to_the_longest_allowed() -> None:
    policy = BackoffPolicy(Backoff(cap=5.0), max_retry_after=60.0)

    assert policy.wait(1, 45.0) == 45.0
    assert policy.wait(3, 0.25) == 0.25
    assert policy.wait(1, -3.0) == 0.0
    assert policy.wait(1, 61.0) is None


@pytest.mark.parametrize(
    ("headers", "seconds"),
    [
        ({"retry-after": "7"}, 7.0),
        ({"Retry-After": "1.5"}, 1.5),
        ({"retry-after-ms": "250", "retry-after": "9"}, 0.25),
        ({"retry-after-ms": "soon", "retry-after": "9"}, 9.0),
        ({"retry-after": "soon"}, None),
        ({"retry-after": "nan"}, None),
        ({}, None),
    ],
)
def test_retry_after_headers_are_read(headers: dict[str, str], seconds: float | None) -> None:
    assert retry_after_seconds(headers, now=0.0) == seconds


def test_retry_after_as_an_http_date_counts_from_the_clocks_now() -> None:
    now = datetime(2027, 1, 1, 12, 0, 0, tzinfo=UTC).timestamp()
    later = format_datetime(datetime(2027, 1, 1, 12, 0, 30, tzinfo=UTC), usegmt=True)

    assert retry_after_seconds({"retry-after": later}, now=now) == 30.0


def test_a_bad_policy_is_refused() -> None:
    with pytest.raises(ValueError, match="retries"):
        BackoffPolicy(Backoff(retries=-1))
    with pytest.raises(ValueError, match="factor"):
        BackoffPolicy(Backoff(factor=0.5))
    with pytest.raises(ValueError, match="max_retry_after"):
        BackoffPolicy(max_retry_after=-1.0)


def test_the_default_policy_makes_four_attempts_with_full_jitter() -> None:
    drawn: list[tuple[float, float]] = []

    def jitter(low: float, high: float) -> float:
        drawn.append((low, high))
        return high / 2

    policy = BackoffPolicy(Backoff(jitter=jitter))
    assert policy.max_attempts == BackoffPolicy().max_attempts == 4
    assert [policy.wait(n, None) for n in (1, 2, 3)] == [0.5, 1.0, 2.0]
    assert drawn == [(0.0, 1.0), (0.0, 2.0), (0.0, 4.0)]


class Script:
    """Raises the scripted failures in turn, then answers."""

    def __init__(self, failures: list[ProviderFailure]) -> None:
        self.failures = list(failures)
        self.calls = 0

    def __call__(self) -> str:
        self.calls += 1
        if self.failures:
            raise self.failures.pop(0)
        return "answer"


def test_a_status_outside_the_retry_set_is_rejected_at_once() -> None:
    clock = FakeClock()
    send = Script([ProviderFailure(404, "model not found")])

    with pytest.raises(ModelRequestRejected, match="HTTP 404: model not found") as caught:
        call_with_backoff(send, BackoffPolicy(), clock, "openai:gpt-nope")

    assert caught.value.status == 404
    assert (send.calls, clock.slept) == (1, [])


def test_the_retry_set_is_the_policys_to_choose() -> None:
    clock = FakeClock()
    send = Script([ProviderFailure(503, "busy")])

    with pytest.raises(ModelRequestRejected):
        call_with_backoff(send, BackoffPolicy(retry_statuses=frozenset({429})), clock, "a:b")


failures = st.lists(
    st.builds(
        ProviderFailure,
        status=st.sampled_from([None, 408, 429, 500, 503, 529, 400, 401]),
        message=st.just("failed"),
        headers=st.one_of(
            st.just({}),
            st.builds(lambda s: {"retry-after": str(s)}, st.integers(min_value=0, max_value=90)),
        ),
    ),
    max_size=6,
)


@given(failures=failures, max_attempts=st.integers(min_value=1, max_value=5))
def test_any_run_of_failures_ends_in_an_answer_or_one_clear_error_within_the_cap(
    failures: list[ProviderFailure], max_attempts: int
) -> None:
    policy = BackoffPolicy(Backoff(cap=10.0, retries=max_attempts - 1), max_retry_after=60.0)
    clock = FakeClock()
    send = Script(failures)

    try:
        result = call_with_backoff(send, policy, clock, "anthropic:m")
    except ModelRequestRejected as rejected:
        assert rejected.status == failures[send.calls - 1].status
    except ModelUnavailable as unavailable:
        assert unavailable.attempts == send.calls
        assert unavailable.last_status == failures[send.calls - 1].status
    else:
        assert result == "answer"
        assert send.calls == len(failures) + 1

    assert send.calls <= max_attempts
    assert len(clock.slept) == send.calls - 1  # one wait between two calls, never after
    assert all(0 <= wait <= 60.0 for wait in clock.slept)

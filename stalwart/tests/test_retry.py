"""The call's verdict, the undo's backoff, the error's text (what is in doubt: test_doubt.py)."""

from __future__ import annotations

import math
import random
from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from stalwart._engine.retry import (
    CALL_RETRIES,
    ERROR_TEXT_LIMIT,
    AfterFailure,
    after_call_failure,
    render_error,
    send_undo,
)
from stalwart.backoff import UNDO_BACKOFF, Backoff, no_jitter
from stalwart.clock import FakeClock
from stalwart.errors import UndoGaveUp

pytestmark = pytest.mark.unit

# The call's verdict, as a table: (writes, retry_safe, in doubt) -> verdict on a first try.
VERDICTS = [
    (False, False, True, AfterFailure.RETRY),
    (False, False, False, AfterFailure.FAIL),
    (True, True, True, AfterFailure.RETRY),
    (True, True, False, AfterFailure.FAIL),
    (True, False, True, AfterFailure.ASK),
    (True, False, False, AfterFailure.FAIL),
]


@pytest.mark.parametrize(("writes", "retry_safe", "doubtful", "verdict"), VERDICTS)
def test_the_verdict_on_a_first_failure(
    writes: bool, retry_safe: bool, doubtful: bool, verdict: AfterFailure
) -> None:
    error = TimeoutError() if doubtful else RuntimeError("down")
    assert after_call_failure(writes=writes, retry_safe=retry_safe, error=error, tries=1) is verdict


@given(tries=st.integers(min_value=1, max_value=50), writes=st.booleans())
def test_a_call_in_doubt_gets_at_most_two_more_tries(tries: int, writes: bool) -> None:
    verdict = after_call_failure(writes=writes, retry_safe=True, error=TimeoutError(), tries=tries)
    past_retries = AfterFailure.ASK if writes else AfterFailure.FAIL
    assert verdict is (AfterFailure.RETRY if tries <= CALL_RETRIES else past_retries)


def test_a_call_is_sent_three_times_in_all_when_every_try_times_out() -> None:
    sent = 0
    while True:
        sent += 1
        verdict = after_call_failure(
            writes=False, retry_safe=False, error=TimeoutError(), tries=sent
        )
        if verdict is not AfterFailure.RETRY:
            break
    assert sent == 3
    assert verdict is AfterFailure.FAIL


def test_tries_counts_from_one() -> None:
    with pytest.raises(ValueError, match="tries counts from 1"):
        after_call_failure(writes=False, retry_safe=False, error=TimeoutError(), tries=0)


def test_the_default_undo_schedule_waits_one_two_four_seconds() -> None:
    backoff = UNDO_BACKOFF
    assert backoff.tries == 4
    assert [backoff.ceiling(n) for n in (1, 2, 3)] == [1.0, 2.0, 4.0]
    assert list(replace(backoff, jitter=no_jitter).waits()) == [1.0, 2.0, 4.0]
    assert [backoff.gives_up_after(n) for n in (1, 2, 3, 4)] == [False, False, False, True]


@given(
    base=st.floats(min_value=0, max_value=60, allow_nan=False),
    factor=st.floats(min_value=1, max_value=10, allow_nan=False),
    retries=st.integers(min_value=0, max_value=8),
)
def test_each_wait_is_at_least_the_last(base: float, factor: float, retries: int) -> None:
    backoff = Backoff(base=base, factor=factor, cap=math.inf, retries=retries, jitter=no_jitter)
    waits = list(backoff.waits())
    assert len(waits) == retries
    assert all(later >= earlier for earlier, later in zip(waits, waits[1:], strict=False))
    assert all(backoff.wait(n) == base * factor ** (n - 1) for n in range(1, retries + 1))


@given(
    base=st.floats(min_value=0, max_value=60, allow_nan=False),
    cap=st.floats(min_value=0, max_value=120, allow_nan=False),
    seed=st.integers(min_value=0, max_value=2**32),
    try_number=st.integers(min_value=1, max_value=60),
)
def test_full_jitter_draws_between_zero_and_the_capped_ceiling(
    base: float, cap: float, seed: int, try_number: int
) -> None:
    backoff = Backoff(base=base, cap=cap, jitter=random.Random(seed).uniform)
    assert backoff.ceiling(try_number) == min(cap, base * 2.0 ** (try_number - 1))
    wait = backoff.wait(try_number)
    assert 0.0 <= wait <= backoff.ceiling(try_number)
    # the same random source gives the same wait: a test's schedule is repeatable
    assert Backoff(base=base, cap=cap, jitter=random.Random(seed).uniform).wait(try_number) == wait


def test_a_ceiling_long_past_the_cap_is_the_cap() -> None:
    assert Backoff(cap=30.0).ceiling(5000) == 30.0
    assert Backoff(base=0.0).ceiling(5000) == 0.0


@pytest.mark.parametrize(
    "bad",
    [
        {"base": -1.0},
        {"factor": 0.5},
        {"retries": -1},
        {"retries": 1.5},
        {"base": float("nan")},
    ],
)
def test_a_bad_schedule_is_refused(bad: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        Backoff(**bad)  # type: ignore[arg-type]


def test_a_bad_try_number_is_refused() -> None:
    with pytest.raises(ValueError, match="counts from 1"):
        UNDO_BACKOFF.wait(0)
    with pytest.raises(ValueError, match="counts from 1"):
        UNDO_BACKOFF.gives_up_after(True)


def test_send_undo_waits_on_the_clock_and_gives_up_after_four_tries() -> None:
    clock = FakeClock()
    started = clock.now()
    tries: list[tuple[int, float]] = []

    def refund(try_number: int) -> str:
        tries.append((try_number, clock.now() - started))
        raise RuntimeError("refund service down")

    with pytest.raises(UndoGaveUp) as gave_up:
        send_undo(refund, replace(UNDO_BACKOFF, jitter=no_jitter), clock)
    assert tries == [(1, 0.0), (2, 1.0), (3, 3.0), (4, 7.0)]
    assert clock.slept == [1.0, 2.0, 4.0]
    assert gave_up.value.tries == 4
    assert isinstance(gave_up.value.__cause__, RuntimeError)
    assert str(gave_up.value) == "failed after 4 tries (RuntimeError: refund service down)"


def test_send_undo_returns_what_the_first_good_try_returns() -> None:
    clock = FakeClock()
    answers = iter([RuntimeError("down"), TimeoutError(), "refunded"])

    def refund(try_number: int) -> str:
        answer = next(answers)
        if isinstance(answer, BaseException):
            raise answer
        return f"{answer} on try {try_number}"

    assert (
        send_undo(refund, Backoff(base=0.5, factor=3, jitter=no_jitter), clock)
        == "refunded on try 3"
    )
    assert clock.slept == [0.5, 1.5]


def test_render_error_names_the_class_and_the_message() -> None:
    assert render_error(RuntimeError("refund service down")) == "RuntimeError: refund service down"
    assert render_error(RuntimeError()) == "RuntimeError"
    assert render_error(ValueError("line one\n  line two\t")) == "ValueError: line one line two"


def test_render_error_cuts_a_long_message() -> None:
    text = render_error(RuntimeError("x" * 500))
    assert len(text) == ERROR_TEXT_LIMIT
    assert text.startswith("RuntimeError: xxx")
    assert text.endswith("x…")


def test_render_error_survives_an_unprintable_error() -> None:
    class Unprintable(Exception):
        def __str__(self) -> str:
            raise RuntimeError("no")

    assert render_error(Unprintable()) == "Unprintable"


@given(st.text())
def test_render_error_is_always_one_bounded_line(message: str) -> None:
    text = render_error(RuntimeError(message))
    assert "\n" not in text and "\r" not in text
    assert 0 < len(text) <= ERROR_TEXT_LIMIT
    assert text.startswith("RuntimeError")

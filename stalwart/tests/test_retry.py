"""What leaves an effect in doubt, the call's verdict, the undo's backoff, the error's text."""

from __future__ import annotations

import socket
import subprocess
import sys
import types

import pytest
from hypothesis import given
from hypothesis import strategies as st

from stalwart._engine.retry import (
    CALL_RETRIES,
    ERROR_TEXT_LIMIT,
    AfterFailure,
    UndoBackoff,
    after_call_failure,
    in_doubt,
    in_doubt_classes,
    render_error,
    send_undo,
)
from stalwart.clock import FakeClock
from stalwart.errors import Ambiguous, StalwartError, UndoGaveUp

DOUBTFUL = [
    TimeoutError("read timed out"),  # socket.timeout and asyncio.TimeoutError are this class
    ConnectionResetError(104, "Connection reset by peer"),
    ConnectionAbortedError(),
    BrokenPipeError(32, "Broken pipe"),
    Ambiguous("the gateway does not know"),
]
DEFINITE = [
    ConnectionRefusedError(111, "Connection refused"),
    RuntimeError("provisioning service down"),
    ValueError("bad amount"),
    OSError("disk full"),
    ConnectionError("generic"),
    StalwartError("ours"),
    KeyError("order"),
]


@pytest.mark.parametrize("error", DOUBTFUL, ids=lambda e: type(e).__name__)
def test_these_failures_leave_the_effect_in_doubt(error: BaseException) -> None:
    assert in_doubt(error)


@pytest.mark.parametrize("error", DEFINITE, ids=lambda e: type(e).__name__)
def test_these_failures_are_definite(error: BaseException) -> None:
    assert not in_doubt(error)


def test_ambiguous_is_a_stalwart_error_with_a_code() -> None:
    assert issubclass(Ambiguous, StalwartError)
    assert Ambiguous.code == "ambiguous"


def _raised_from(outer: Exception, cause: BaseException) -> Exception:
    try:
        raise outer from cause
    except Exception as caught:
        return caught


def _raised_while_handling(outer: Exception, first: BaseException) -> Exception:
    try:
        try:
            raise first
        except BaseException:
            raise outer  # noqa: B904 - the implicit __context__ is the point
    except Exception as caught:
        return caught


def test_a_wrapped_timeout_is_in_doubt_through_its_explicit_cause() -> None:
    error = _raised_from(RuntimeError("refund failed"), TimeoutError())
    assert in_doubt(error)
    deeper = _raised_from(ValueError("outer"), _raised_from(RuntimeError("mid"), Ambiguous()))
    assert in_doubt(deeper)


def test_an_error_raised_while_handling_a_timeout_is_not_in_doubt() -> None:
    assert not in_doubt(_raised_while_handling(ValueError("card declined"), TimeoutError()))


def test_the_outermost_deciding_error_wins() -> None:
    assert not in_doubt(_raised_from(ConnectionRefusedError(), TimeoutError()))
    assert in_doubt(_raised_from(TimeoutError(), ConnectionRefusedError()))


UNDECIDED = (RuntimeError, ValueError, KeyError, OSError, StalwartError)


@given(
    inner=st.sampled_from(DOUBTFUL + DEFINITE),
    wrappers=st.lists(st.sampled_from(UNDECIDED), max_size=4),
)
def test_wrapping_with_errors_that_decide_nothing_keeps_the_verdict(
    inner: BaseException, wrappers: list[type[Exception]]
) -> None:
    error: BaseException = inner
    for wrapper in wrappers:
        error = _raised_from(wrapper("wrapped"), error)
    assert in_doubt(error) == in_doubt(inner)


def test_a_cycle_in_the_cause_chain_ends() -> None:
    first, second = RuntimeError("a"), RuntimeError("b")
    first.__cause__, second.__cause__ = second, first
    assert not in_doubt(first)


def test_a_real_socket_timeout_is_in_doubt() -> None:
    # A listening socket that never answers: the read times out as a real client's would.
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        with socket.create_connection(server.getsockname(), timeout=0.05) as client:
            client.sendall(b"charge")
            with pytest.raises(OSError) as caught:
                client.recv(1)
    assert in_doubt(caught.value)


def test_a_real_refused_connection_is_not_in_doubt() -> None:
    with socket.socket() as placeholder:
        placeholder.bind(("127.0.0.1", 0))
        port = placeholder.getsockname()[1]
    with pytest.raises(OSError) as caught:
        socket.create_connection(("127.0.0.1", port), timeout=1)
    assert isinstance(caught.value, ConnectionRefusedError)
    assert not in_doubt(caught.value)


def test_httpx_errors_when_httpx_is_installed() -> None:
    httpx = pytest.importorskip("httpx")
    request = httpx.Request("POST", "http://127.0.0.1/charge")
    assert in_doubt(httpx.ReadTimeout("slow", request=request))
    assert in_doubt(httpx.ConnectTimeout("slow", request=request))
    assert in_doubt(httpx.RemoteProtocolError("closed mid-answer", request=request))
    assert not in_doubt(httpx.ConnectError("refused", request=request))
    assert not in_doubt(httpx.HTTPStatusError("500", request=request, response=httpx.Response(500)))


def test_httpx2_errors_when_httpx2_is_installed() -> None:
    httpx2 = pytest.importorskip("httpx2")
    request = httpx2.Request("POST", "http://127.0.0.1/charge")
    assert in_doubt(httpx2.ReadTimeout("slow", request=request))
    assert in_doubt(httpx2.RemoteProtocolError("closed mid-answer", request=request))
    assert not in_doubt(httpx2.ConnectError("refused", request=request))


def test_a_library_error_is_found_by_its_module_once_imported(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A stand-in module under the library's name: what in_doubt relies on is only that an
    # imported library's error classes are found in sys.modules by their names.
    library = types.ModuleType("requests")

    class Timeout(OSError):
        pass

    library.Timeout = Timeout  # type: ignore[attr-defined]
    assert not in_doubt(Timeout())  # before the "import"
    monkeypatch.setitem(sys.modules, "requests", library)
    assert in_doubt(Timeout())
    assert Timeout in in_doubt_classes()


def test_requests_timeouts_when_requests_is_installed() -> None:
    requests = pytest.importorskip("requests")
    assert in_doubt(requests.exceptions.ReadTimeout())
    assert in_doubt(requests.exceptions.ConnectTimeout())
    assert not in_doubt(requests.exceptions.HTTPError())


def test_in_doubt_imports_no_http_library() -> None:
    code = (
        "import sys\n"
        "from stalwart._engine.retry import in_doubt\n"
        "in_doubt(TimeoutError())\n"
        "print(sorted(m for m in ('httpx', 'httpx2', 'requests') if m in sys.modules))\n"
    )
    shown = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert shown.stdout.strip() == "[]"


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
    backoff = UndoBackoff()
    assert backoff.tries == 4
    assert list(backoff.waits()) == [1.0, 2.0, 4.0]
    assert [backoff.gives_up_after(n) for n in (1, 2, 3, 4)] == [False, False, False, True]


@given(
    base=st.floats(min_value=0, max_value=60, allow_nan=False),
    factor=st.floats(min_value=1, max_value=10, allow_nan=False),
    retries=st.integers(min_value=0, max_value=8),
)
def test_each_wait_is_at_least_the_last(base: float, factor: float, retries: int) -> None:
    backoff = UndoBackoff(base_secs=base, factor=factor, retries=retries)
    waits = list(backoff.waits())
    assert len(waits) == retries
    assert all(later >= earlier for earlier, later in zip(waits, waits[1:], strict=False))
    assert all(backoff.wait(n) == base * factor ** (n - 1) for n in range(1, retries + 1))


@pytest.mark.parametrize(
    "bad",
    [
        {"base_secs": -1.0},
        {"factor": 0.5},
        {"retries": -1},
        {"retries": 1.5},
        {"base_secs": float("nan")},
    ],
)
def test_a_bad_schedule_is_refused(bad: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        UndoBackoff(**bad)  # type: ignore[arg-type]


def test_a_bad_try_number_is_refused() -> None:
    with pytest.raises(ValueError, match="counts from 1"):
        UndoBackoff().wait(0)
    with pytest.raises(ValueError, match="counts from 1"):
        UndoBackoff().gives_up_after(True)


def test_send_undo_waits_on_the_clock_and_gives_up_after_four_tries() -> None:
    clock = FakeClock()
    started = clock.now()
    tries: list[tuple[int, float]] = []

    def refund(try_number: int) -> str:
        tries.append((try_number, clock.now() - started))
        raise RuntimeError("refund service down")

    with pytest.raises(UndoGaveUp) as gave_up:
        send_undo(refund, UndoBackoff(), clock)
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

    assert send_undo(refund, UndoBackoff(base_secs=0.5, factor=3), clock) == "refunded on try 3"
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

"""The two retry schedules, and how a failed call's error is rendered.

What counts as an effect in doubt is `doubt.py`'s to say.

The schedules:

- a call (a read, or a write with `retry_safe=True`) whose failure is in doubt is tried
  again under the same key, at most `CALL_RETRIES` (two) more times, at once; a write
  still in doubt after that goes to a person, as one not retry-safe does at once
  (`after_call_failure`);
- an undo that raises, in doubt or not, is tried again under its own key `UNDO_BACKOFF.retries`
  (three) more times, waiting up to `base * factor ** (n - 1)` seconds after its n-th try
  (`stalwart.backoff.UNDO_BACKOFF`, full jitter: 1, 2 and 4 seconds at most).

`render_error` gives the `<error>` in "Undoing <tool> failed after <tries> tries
(<error>).": the error's class name, a colon and its message (`RuntimeError: refund
service down`), or the class name alone when the message is empty; whitespace runs,
newlines included, become one space, and a text longer than `ERROR_TEXT_LIMIT` (200)
characters is cut to that length, its last character an ellipsis (`…`).
"""

from __future__ import annotations

import enum
import logging
from collections.abc import Callable
from typing import TypeVar

from stalwart import logs, texts
from stalwart.backoff import UNDO_BACKOFF, Backoff
from stalwart.clock import Clock, SystemClock
from stalwart.errors import UndoGaveUp
from stalwart.record.schema import readable_text

from .doubt import in_doubt

CALL_RETRIES = 2
ERROR_TEXT_LIMIT = 200

T = TypeVar("T")

log = logging.getLogger(logs.RUN)


class AfterFailure(enum.Enum):
    """What a run does with a call that raised."""

    RETRY = "retry"  # send it again, under the same key
    ASK = "ask"  # a write of unknown outcome: a person says whether it happened
    FAIL = "fail"  # the call failed: the run fails


# The verdict on a failed call, as a table: (may it be sent again?, is its effect in
# doubt?) -> what the run does while retries remain. A read or a retry-safe write may be
# sent again; any other write may not. Past its retries, RETRY becomes `PAST_RETRIES`.
VERDICTS: dict[tuple[bool, bool], AfterFailure] = {
    (True, True): AfterFailure.RETRY,
    (False, True): AfterFailure.ASK,
    (True, False): AfterFailure.FAIL,
    (False, False): AfterFailure.FAIL,
}
# A call still in doubt after its last retry: a read has failed; whether a write took
# effect is still unknown, so a person is asked. Keyed by "is it a write?".
PAST_RETRIES: dict[bool, AfterFailure] = {False: AfterFailure.FAIL, True: AfterFailure.ASK}


def after_call_failure(
    *, writes: bool, retry_safe: bool, error: BaseException, tries: int
) -> AfterFailure:
    """The verdict (`VERDICTS`) on a call that raised on its `tries`-th try (1 for the first).

    A read or a retry-safe write in doubt is retried while retries remain; a write that is
    not retry-safe and in doubt is asked about, and so is a retry-safe write still in
    doubt past its retries; a read past its retries, and every failure not in doubt, fails.
    """
    if isinstance(tries, bool) or not isinstance(tries, int) or tries < 1:
        raise ValueError(f"tries counts from 1; got {tries!r}")
    verdict = VERDICTS[(not writes or retry_safe, in_doubt(error))]
    if verdict is AfterFailure.RETRY and tries > CALL_RETRIES:
        return PAST_RETRIES[writes]
    return verdict


def send_undo(
    send: Callable[[int], T],
    backoff: Backoff | None = None,
    clock: Clock | None = None,
    *,
    done: int = 0,
) -> T:
    """Call `send(try_number)` until it returns, waiting on the clock between failures.

    `send` is given the try's number so it can record the try before it sends. `done`
    counts the tries of this round already made (by a process that stopped before the
    round was over): the round goes on from there, after the wait that was cut short,
    and does not start again. After the last try fails, `UndoGaveUp` is raised from the
    last error.
    """
    schedule = backoff or UNDO_BACKOFF
    waiter = clock or SystemClock()
    if isinstance(done, bool) or not isinstance(done, int) or not 0 <= done < schedule.tries:
        raise ValueError(f"done must be 0 to {schedule.tries - 1}; got {done!r}")
    if done:
        waiter.sleep(schedule.wait(done))
    try_number = done + 1
    while True:
        try:
            return send(try_number)
        except Exception as error:
            if schedule.gives_up_after(try_number):
                raise UndoGaveUp(try_number, error, render_error(error)) from error
            wait = schedule.wait(try_number)
            log.info(texts.UNDO_WAIT, try_number, schedule.tries, render_error(error), wait)
            waiter.sleep(wait)
            try_number += 1


def error_message(error: BaseException) -> str:
    """An error's own text, as the record can keep it: "" when its `__str__` raises; a
    lone surrogate or a NUL replaced (`schema.readable_text`)."""
    try:
        return readable_text(str(error))
    except Exception:
        return ""


def render_error(error: BaseException) -> str:
    """One line naming an error: `RuntimeError: refund service down` (see the module)."""
    name = type(error).__name__
    try:
        message = " ".join(readable_text(str(error)).split())
    except Exception:  # an error whose __str__ itself fails still gets named
        message = ""
    text = f"{name}: {message}" if message else name
    if len(text) > ERROR_TEXT_LIMIT:
        text = text[: ERROR_TEXT_LIMIT - 1] + "…"
    return text

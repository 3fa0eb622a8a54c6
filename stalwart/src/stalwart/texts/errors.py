"""The messages of errors a caller gets: a bad answer, a misplaced turn, a session
that is not there."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

# --- errors a caller gets for a bad answer or a misplaced turn ---


def nothing_waiting(session: str) -> str:
    return f"Nothing in session {session!r} waits for an answer."


def not_an_answer(answer: str, answers: Sequence[str]) -> str:
    return f"{answer!r} is not an answer to this question; the answers are: {', '.join(answers)}."


def not_a_confirmation(kind: str) -> str:
    return f"The question waiting is of kind {kind!r}, not a confirmation; use answer()."


def question_gone(asked: str, waiting: Any) -> str:
    """A stale answer: `asked` the id it named; `waiting` the Waiting now asked, or None."""
    now = f"Waiting now: {waiting.text!r} (id {waiting.id})." if waiting else "Nothing waits now."
    return f"The question answered ({asked}) no longer waits; nothing was changed. {now}"


def question_not_named(question: object) -> str:
    return (
        f"An answer names the question it answers: question= takes the Waiting shown, or its "
        f"id; got {question!r}."
    )


def not_your_session(user: str, session: str) -> str:
    return f"User {user!r} cannot act on session {session!r}: another user started it."


def question_pending(session: str, question: str) -> str:
    return f"Session {session!r} waits for an answer first: {question}"


def record_unavailable(detail: str) -> str:
    """The record's database cannot be reached; `detail` is the driver's one line."""
    return f"The record cannot be reached now ({detail}); nothing was sent that it does not hold."


# Where a run stands when another worker holds its session now (pending, stalwart resume).
BUSY_ELSEWHERE = "Another worker is advancing this session now; nothing was changed here."


def no_session(session: str) -> str:
    return f"Session {session!r} has no record for this agent."


def rewind_refused(session: str, remaining: int) -> str:
    return (
        f"Session {session!r} cannot be rewound: {remaining} step(s) still need undoing "
        "(rewind_with_pending_compensation)."
    )


def lease_held(session: str, holder: str, left: float) -> str:
    """SessionBusy: the lock was free, but another worker's lease on the session is live
    (its lock ended while it went on: a dropped connection, a database restart)."""
    return (
        f"session {session!r} is being advanced by another worker ({holder}), whose lease "
        f"runs {max(left, 0.0):.0f}s more unless renewed"
    )


def lease_lost(session: str, token: int) -> str:
    """LeaseLost: a commit whose fencing token is no longer the session's lease."""
    return (
        f"session {session!r}: this worker's lease (token {token}) ended and another worker "
        "holds the session now; nothing was written"
    )

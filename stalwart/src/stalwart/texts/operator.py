"""The operator's texts (the token itself is never part of any text)."""

from __future__ import annotations

# --- the operator (the token itself is never part of any text) ---


def operator_not_configured(path: str) -> str:
    return (
        f"No operator token is set: there is no verifier at {path} "
        "(stalwart operator-token set writes one); nothing was changed."
    )


def operator_verifier_unreadable(path: str, detail: object) -> str:
    return f"The operator token's verifier at {path} cannot be read ({detail}); nothing changed."


def operator_token_wrong() -> str:
    return "The operator token is wrong or missing; nothing was changed."


def operator_token_env_unset(env: str) -> str:
    return f"The variable {env} holds no operator token here; nothing was changed."


def operator_token_empty() -> str:
    return "An operator token cannot be empty; nothing was changed."


def operator_token_unencodable() -> str:
    return (
        "The operator token has characters that cannot be encoded as UTF-8 (such as a lone "
        "surrogate); nothing was changed."
    )


def operator_token_spaces() -> str:
    return "An operator token cannot start or end with a space; nothing was changed."


def operator_token_length(least: int, most: int) -> str:
    return f"An operator token has from {least} to {most} characters; nothing was changed."


def operator_tokens_differ() -> str:
    return "The two tokens differ; nothing was changed."


def operator_token_set(path: str) -> str:
    return f"The operator token is set: its verifier is in {path}; the token is kept nowhere."


def operator_token_env_gone() -> str:
    return (
        "operator_token_env is no longer read: an operator token is checked against its "
        "verifier (operator_token: names the file; run stalwart operator-token set)"
    )


def operator_nothing_to_undo(session: str) -> str:
    return f"Session {session!r} has no run to undo."


def operator_nothing_left(session: str, run: str) -> str:
    return f"Run {run} of session {session!r} has no write left to undo; nothing was changed."


def operator_nothing_to_end(session: str) -> str:
    return f"Session {session!r} has no run to end."


def operator_run_ended(session: str, run: str, state: str) -> str:
    return f"Session {session!r}'s run {run} has ended already ({state}); nothing was changed."


def operator_ended_left_to_person(session: str, run: str) -> str:
    """An operator's undo of a run an operator ended: its reply told a person to undo what
    it left by hand, so undoing it here could undo it twice."""
    return (
        f"Run {run} of session {session!r} was ended by an operator, and what it left was "
        "handed to a person to undo by hand; nothing was changed."
    )


# Said after the operator's reply when a worker that hangs held the session, and the
# ending took it once that worker's lease had expired (`Store.take_over`).
OPERATOR_TOOK_SESSION = (
    "The worker holding this session had stopped renewing its lease (it hangs, or was "
    "stopped): the session was taken from it once the lease expired, and nothing that "
    "worker writes from now on is recorded."
)


def by_hand_not_left(session: str, run: str, state: str) -> str:
    """`Agent.undone_by_hand` of a run that left nothing to a person."""
    return (
        f"Run {run} of session {session!r} is {state}: only an abandoned rollback or an "
        "operator's ending leaves writes to be undone by hand; nothing was changed."
    )


def by_hand_no_such_write(session: str, run: str, call: str) -> str:
    """`Agent.undone_by_hand` of a call that is no write its run left to a person (none
    of the run's, not a write, not taken effect, or undone already)."""
    return (
        f"Run {run} of session {session!r} has no write {call!r} left to be undone by hand; "
        "nothing was changed."
    )


def operator_run_busy(session: str, run: str, state: str, question: str) -> str:
    return (
        f"Session {session!r}'s run {run} is {state} and waits for an answer first: "
        f"{question} Nothing was changed."
    )

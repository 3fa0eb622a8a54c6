"""A run's reply: done, unread, or stopped with what its rollback did (chapter 34,
"The failed order")."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .._engine.keys import canonical_json
from .questions import undo_maybe_done, visible

# --- a run that ends well ---


def done_reply(outcomes: Sequence[tuple[str, Any, str]]) -> str:
    """What each step returned, briefly: (tool, result, status) in the order they came.

    status "declined": the person skipped it; "happened": no answer came back and a
    person said it took effect; anything else: it returned `result`.
    """
    if not outcomes:
        return "Done: there was nothing to run."
    return "Done: " + "; ".join(_outcome(*outcome) for outcome in outcomes) + "."


def _outcome(tool: str, result: Any, status: str) -> str:
    if status == "declined":
        return f"{tool} was skipped"
    if status == "happened":
        return f"{tool} took effect, a person said (no answer came back)"
    return f"{tool} returned {brief(result)}"


def brief(result: Any, limit: int = 120) -> str:
    """A value, shortened, with the characters that do not show as themselves escaped."""
    text = visible(_json_or_repr(result))
    return text if len(text) <= limit else text[: limit - 1] + "…"


# --- a turn nothing could be read from (on_unread: refuse) ---


def unread_reply(clause: str | None, reason: str | None) -> str:
    """Which clause could not be read; nothing ran and no model was called."""
    said = f'I could not read "{visible(clause)}"' if clause else "I could not read this turn"
    because = f" ({visible(reason)})" if reason else ""
    return f"{said}{because}, so nothing ran."


# --- a run that stopped (chapter 34, "The failed order") ---


def failed_because(tool: str, error_type: str) -> str:
    return f"{tool} failed ({error_type})"


def cancelled_because(tool: str) -> str:
    return f"you cancelled it at {tool}"


def refused_because(tool: str, reason: str) -> str:
    """`reason` as the check gives it: a clause about the call (rulebook.REFUSAL_TEXTS)."""
    return f"the check refused {tool}, because {reason}"


def did_not_happen_because(tool: str) -> str:
    return f"you said {tool} did not take effect"


def operator_because() -> str:
    return "an operator undid it"


def operator_ended_because(by: str | None, reason: str, earlier: str | None) -> str:
    """An operator ended the run (`earlier`: why it was failing before, if it was)."""
    who = f"{visible(by)}, an operator," if by else "an operator"
    ended = f"{who} ended it ({visible(reason)})"
    return ended if earlier is None else f"{earlier}, and then {ended}"


# What a call found in flight when an operator ended its run is recorded as (a read, an
# ask of a model: it changed nothing).
ENDED_IN_FLIGHT = "the run was ended by an operator while this call was in flight"


def stopped_reply(
    cause: str,
    undone: Sequence[tuple[str, str | None]],
    not_undoable: Sequence[str],
    not_undone: Sequence[tuple[str, str]],
    abandoned: Sequence[str] = (),
    maybe_done: Sequence[str] = (),
    *,
    left: Sequence[str] = (),
    in_doubt: Sequence[str] = (),
    not_run: str | None = None,
) -> str:
    """The one reply of a failed run, once its rollback is over.

    `undone` is (write, undo) latest first, the undo None when a person undid it by
    hand; `not_undoable` the irreversible writes (and writes that declare no undo), left
    in place; `not_undone` (write, reason) for an undo the check refused or could not
    bind, never sent; `abandoned` the writes still to undo when a person abandoned the
    rollback, latest first; `maybe_done` the undos among those whose earlier try got no
    answer, so may have taken effect (said after the list, so nobody undoes twice).

    When an operator ended the run (`_engine/ending.py`): `not_run` the step that waited
    for its confirmation, never run; `in_doubt` the writes whose outcome nobody knows, for
    a person to check; `left` the writes still to undo, left for a person to undo by hand.
    """
    text = f"This run stopped: {cause}."
    if not_run:
        text += f" {not_run}, which waited for your confirmation, was not run."
    if undone:
        listed = ", ".join(f"{write} (by {undo or 'hand'})" for write, undo in undone)
        text += f" Undone, latest first: {listed}."
    if not_undoable:
        text += f" Not undoable, and left as they are: {', '.join(not_undoable)}."
    if not_undone:
        listed = ", ".join(f"{write} ({reason})" for write, reason in not_undone)
        text += f" Not undone, and still to be undone by hand: {listed}."
    if abandoned:
        listed = ", ".join(abandoned)
        text += f" The rollback was abandoned; still to be undone by hand: {listed}."
    for tool in in_doubt:
        text += f" Nobody knows whether {tool} took effect: that is for you to check by hand."
    if left:
        text += f" Still to be undone by hand: {', '.join(left)}."
    if maybe_done:
        text += " " + " ".join(undo_maybe_done(undo) for undo in maybe_done)
    if not (undone or not_undoable or not_undone or abandoned or left or in_doubt):
        text += " Nothing had been written, so nothing needed undoing."
    return text


def stuck_reply(cause: str, question: str) -> str:
    """A rollback that stopped at an undo (chapter 34, "An undo that fails"): why the run
    stopped, then the stuck question."""
    return f"This run stopped: {cause}. {question}"


def _json_or_repr(value: Any) -> str:
    """The value's canonical JSON, rendered once; its repr when it has none."""
    try:
        return canonical_json(value)
    except TypeError:
        return repr(value)

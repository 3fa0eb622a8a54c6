"""A run's reply: done, unread, or stopped with what its rollback did (chapter 34,
"The failed order")."""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import Any, TypeVar

from ..codec import canonical_text
from ..errors import Unencodable
from .questions import call_text, shown_args, undo_maybe_done, visible
from .selector import how_to_read

_K = TypeVar("_K", bound=Hashable)

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
    how = how_to_read(reason)
    then = f" {how}" if how else ""
    return f"{said}{because}, so nothing ran.{then}"


# --- which call a reply means ---


def call_labels(calls: Sequence[tuple[_K, str, Mapping[str, Any], int]]) -> dict[_K, str]:
    """How a reply names each call of a run: (key, tool, args, step) -> key: name.

    A tool called once in the run is named alone, as the chapter prints it. Calls of one
    tool are named with the arguments that tell them apart: in the order given (the tool's
    parameters), an argument is named for all of them when its value parts calls the ones
    before it left alike (`pay_bill(bill=8)`, `pay_bill(bill=9)`). Calls that no argument
    tells apart are named with their step too (`pay_bill(bill=7) at step 2`). The args are
    given typed, in the tool's order, as `call_text` shows them.
    """
    by_tool: dict[str, list[tuple[_K, Mapping[str, Any], int]]] = {}
    for key, tool, args, step in calls:
        by_tool.setdefault(tool, []).append((key, args, step))
    if len(by_tool) == len(calls):  # every tool called once: each named alone
        return {key: tool for key, tool, _, _ in calls}
    labels: dict[_K, str] = {}
    for tool, group in by_tool.items():
        if len(group) == 1:
            labels[group[0][0]] = tool
            continue
        shown = [dict(shown_args(args)) for _, args, _ in group]
        names = list(dict.fromkeys(name for each in shown for name in each))
        kept: list[str] = []
        parts = 1  # before any argument is named, the calls are all alike
        for name in names:
            tried = len({tuple(each.get(n) for n in [*kept, name]) for each in shown})
            if tried > parts:
                kept.append(name)
                parts = tried
        named = [
            call_text(tool, {name: args[name] for name in _order(args, kept)}) if kept else tool
            for _, args, _ in group
        ]
        for (key, _, step), label in zip(group, named, strict=True):
            labels[key] = label if named.count(label) == 1 else f"{label} at step {step}"
    return labels


def _order(args: Mapping[str, Any], kept: Sequence[str]) -> list[str]:
    """The kept names a call has, in its own order (the tool's parameters)."""
    names = set(kept)
    return [name for name in args if visible(name) in names]


# What a tool said when it failed, under the reply (the reply's sentence names its error's
# class only): at most this many characters.
DETAIL_LIMIT = 300


def tool_said(tool: str, message: str) -> str | None:
    """The line under a stopped run's reply: the failed tool's own message, on one line,
    with the characters that do not show escaped, and cut to `DETAIL_LIMIT`; None when
    it said nothing."""
    said = " ".join(message.split())
    if not said:
        return None
    text = f"{tool} said: {visible(said)}"
    return text if len(text) <= DETAIL_LIMIT else text[: DETAIL_LIMIT - 1] + "…"


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
        return canonical_text(value)
    except (Unencodable, TypeError):  # TypeError: keys equal as text, values unordered
        return repr(value)

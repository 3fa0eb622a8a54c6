"""The questions a run waits on: confirmations, outcomes in doubt, failed undos, and
the answers each takes (chapter 34; chapter 35 for the answers)."""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from ..codec import canonical_json
from ..errors import Unencodable

# --- confirmations (chapter 34, "Irreversible steps"; chapter 35 for the answers) ---

APPROVE = "approve"
SKIP = "skip"
CANCEL_ALL = "cancel all"
CONFIRM_ANSWERS: tuple[str, ...] = (APPROVE, SKIP, CANCEL_ALL)

# --- a write nobody knows the outcome of (chapter 34, "An outcome nobody knows") ---

HAPPENED = "happened"
DID_NOT_HAPPEN = "did not happen"
OUTCOME_ANSWERS: tuple[str, ...] = (HAPPENED, DID_NOT_HAPPEN)

# --- an undo that failed every try (chapter 34, "An undo that fails") ---

RETRY = "retry"
DONE_BY_HAND = "done by hand"
ABANDON = "abandon"
UNDO_ANSWERS: tuple[str, ...] = (RETRY, DONE_BY_HAND, ABANDON)

IRREVERSIBLE_WARNING = "Nothing can undo this step once it runs."
IRREVERSIBLE_IN_ATOMIC_RUN = "Nothing undoes this step, and the steps after it cannot undo it."
# Under the confirmation of an MCP tool whose server hints it is destructive (its word).
DESTRUCTIVE_HINT = "Its MCP server says this tool may destroy or overwrite data."


def call_text(tool: str, args: Mapping[str, Any]) -> str:
    """A call as a person reads it: charge_card(order=4411, amount=40.0).

    Each value shows what the tool will receive: a float parameter's 40.00 is the float
    40.0; a Decimal keeps the digits it was written with (40.00). Characters that do not
    show as themselves are shown escaped (`visible`).
    """
    # `shown_args`'s pairs, joined as they are made (one list, no generator over them).
    shown = ", ".join([f"{visible(name)}={_value_shown(value)}" for name, value in args.items()])
    return f"{visible(tool)}({shown})"


def shown_args(args: Mapping[str, Any]) -> list[tuple[str, str]]:
    """A call's arguments as `call_text` shows them, (name, value) in the order given: the
    one rendering of a call, also in the interface's argument tables.

    Give them in the order of the tool's parameters, typed as it declares them (as
    `ToolSpec.typed` gives them back from the record), so a call reads the same in its
    question, the table under it, a progress line, the record and a reply.
    """
    return [(visible(name), _value_shown(value)) for name, value in args.items()]


def shown_value(value: Any) -> str:
    """One argument's value as `call_text` shows it."""
    return _value_shown(value)


def _value_shown(value: Any) -> str:
    if isinstance(value, Decimal) and value.is_finite():
        return str(value)
    try:
        return visible(canonical_json(value))
    except Unencodable:  # a model's NaN: shown as Python writes it, never sent
        return visible(repr(value))


# Unicode categories whose characters do not show as themselves: format characters (the
# bidirectional overrides and isolates U+202A-U+202E and U+2066-U+2069, the marks U+200E,
# U+200F and U+061C, the zero-width U+200B-U+200D, U+2060 and U+FEFF, the tags), controls,
# line and paragraph separators, private use, surrogates and unassigned code points.
_HIDDEN = frozenset({"Cf", "Cc", "Zl", "Zp", "Co", "Cs", "Cn"})


def visible(text: str) -> str:
    """`text` with every character that does not show as itself written as its escape
    (`\\u202e`), so what a person reads is what runs: an argument cannot be made to look
    like another (a right-to-left override reversing what follows, a zero-width space
    splitting a name). Inside JSON the escape is unambiguous, since a backslash is shown
    doubled. ASCII text is returned as it is."""
    if text.isascii() and text.isprintable():
        return text
    return "".join(_escaped(char) for char in text)


def _escaped(char: str) -> str:
    if char == "\n" or unicodedata.category(char) not in _HIDDEN:
        return char
    code = ord(char)
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def confirm_question(
    tool: str,
    args: Mapping[str, Any],
    *,
    irreversible: bool,
    in_atomic_run: bool,
    sources: Mapping[str, str] | None = None,
    destructive: bool = False,
) -> str:
    """The confirmation a write waits on; an irreversible one carries its warning under it,
    a destructive MCP tool its server's hint.

    `sources`, for a step a model chose, says where each argument came from, on a line of
    its own under the question.
    """
    question = f"Run {call_text(tool, args)}?"
    if irreversible and in_atomic_run:
        question += f" {IRREVERSIBLE_IN_ATOMIC_RUN}"
    if sources:
        question += f"\n{provenance_line(sources)}"
    if destructive:
        question += f"\n{DESTRUCTIVE_HINT}"
    if irreversible:
        question += f"\n{IRREVERSIBLE_WARNING}"
    return question


def outcome_question(tool: str, *, stopped: bool) -> str:
    """Did a write in doubt take effect? `stopped`: its process stopped mid-send."""
    why = (
        "It was being sent when the run stopped."
        if stopped
        else "The call was sent and no answer came back."
    )
    return f"Did {tool} take effect? {why}"


def undo_question(
    write: str, tries: int, error: str, remaining: int, *, maybe_done: str | None = None
) -> str:
    """The question of a stuck run (chapter 34, "An undo that fails"); `error` as
    `retry.render_error` renders it.

    `write` is the write being undone, as "Undoing <write> was not sent" names it too (the
    chapter's "undoing the writes below it"); the undo sent for it, whose tries are counted,
    is the question's call. `maybe_done` names that undo when an earlier try of it got no
    answer (it failed in doubt, or was being sent when the run stopped), so it may have
    taken effect already; a person who undoes the write by hand must look first.
    """
    doubt = f" {undo_maybe_done(maybe_done)}" if maybe_done else ""
    return (
        f"Undoing {write} failed after {tries} tries ({error}).{doubt} "
        f"{remaining} step(s) still need undoing."
    )


def undo_maybe_done(undo_tool: str) -> str:
    return f"An earlier try of {undo_tool} got no answer, so it may have taken effect."


def undo_not_sent_question(write_tool: str, undo_tool: str, why: str, remaining: int) -> str:
    """The question of a rollback stopped at an undo the check refused or could not bind:
    undoing the writes below it first would undo them out of order."""
    return (
        f"Undoing {write_tool} was not sent: {why}. The rollback stopped there, before "
        f"the writes below it. {remaining} step(s) still need undoing."
    )


# What a stuck run's reply gives as the last error of an undo whose only try was cut off.
UNDO_CUT_OFF = "it was being sent when the run stopped"


# Where an argument's value came from, as a confirmation shows it.
SOURCE_TURN = "turn"
SOURCE_MODEL = "model"


def source_step(step: int, tool: str) -> str:
    """The source of a value found in an earlier step's result: step 1 (get_order)."""
    return f"step {step} ({tool})"


def source_shown(source: str) -> str:
    """A source as a person reads it."""
    if source == SOURCE_TURN:
        return "your turn"
    if source == SOURCE_MODEL:
        return "the model alone"
    return source


def provenance_line(sources: Mapping[str, str]) -> str:
    """Under a confirmation of a step a model chose: where each argument came from."""
    listed = ", ".join(f"{name} from {source_shown(source)}" for name, source in sources.items())
    return f"Where the arguments came from: {listed}."

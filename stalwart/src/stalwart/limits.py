"""The input stalwart takes, bounded, and refused past its bounds the same on every backend.

A turn, a user's name and a session's name come from whoever can reach the agent: each is
checked before the selector reads it or the record sees it, so an oversized turn cannot
hold a session's lock for seconds, a 5,000-digit number cannot reach `int()`, and a NUL or
a lone surrogate is refused here rather than by one backend's driver and stored by the
other's. Every refusal is an `InputRefused` (code `input_refused`) and changes nothing.
The limits are documented in docs/security.md.
"""

from __future__ import annotations

import re

from . import texts
from .errors import InputRefused

MAX_TURN_CHARS = 10_000  # a person's turn; longer is a document, not an instruction
MAX_STEPS_PER_TURN = 25  # the steps one turn may be read into, each confirmed by a person
MAX_NUMBER_DIGITS = 30  # the digits of one number in a turn (28 are a Decimal's precision)
MAX_NAME_CHARS = 200  # a user's or a session's name (and an operator's)
MAX_REASON_CHARS = 2_000  # why an operator ended a run: said in its reply

# C0 controls other than tab, newline and carriage return, and DEL: NUL is refused by
# PostgreSQL's text type and kept by SQLite's, the others are invisible in every view.
_CONTROLS = frozenset(chr(c) for c in [*range(0x00, 0x09), 0x0B, 0x0C, *range(0x0E, 0x20), 0x7F])
# The first of them, or of the lone surrogates, found by one search in C (a turn's every
# character was looked at in Python, some 1,700 bytecodes a turn).
_REFUSED = re.compile("[" + "".join(sorted(_CONTROLS)) + "\ud800-\udfff]")


def check_text(what: str, value: object, *, max_chars: int) -> str:
    """`value` if it is a text stalwart can take as `what`; else `InputRefused`."""
    if not isinstance(value, str):
        raise InputRefused(texts.input_not_text(what, value))
    if len(value) > max_chars:
        raise InputRefused(texts.input_too_long(what, len(value), max_chars))
    refused = _REFUSED.search(value)
    if refused is not None:
        raise InputRefused(texts.input_bad_character(what, refused.group(), refused.start()))
    return value


def check_name(what: str, value: object) -> str:
    """A user's or a session's name: a non-empty text within `MAX_NAME_CHARS`."""
    name = check_text(what, value, max_chars=MAX_NAME_CHARS)
    if not name.strip():
        raise InputRefused(texts.input_empty(what))
    return name


def check_reason(reason: object) -> str:
    """Why an operator ends a run: a non-empty text within `MAX_REASON_CHARS`."""
    reason = check_text("an operator's reason", reason, max_chars=MAX_REASON_CHARS)
    if not reason.strip():
        raise InputRefused(texts.input_empty("an operator's reason"))
    return reason


def check_answer_reason(reason: object) -> str | None:
    """Why a person skipped or cancelled: None for none (or only spaces), else a text
    within `MAX_REASON_CHARS`, stripped."""
    if reason is None:
        return None
    given = check_text("an answer's reason", reason, max_chars=MAX_REASON_CHARS).strip()
    return given or None


def check_turn(turn: object) -> str:
    turn = check_text("a turn", turn, max_chars=MAX_TURN_CHARS)
    if not turn.strip():
        raise InputRefused(texts.input_empty("a turn"))
    return turn


def check_number(text: str) -> None:
    """A number token of a turn: refused past `MAX_NUMBER_DIGITS` digits."""
    if len(text) <= MAX_NUMBER_DIGITS:
        return
    digits = sum(char.isdigit() for char in text)
    if digits > MAX_NUMBER_DIGITS:
        raise InputRefused(texts.number_too_long(text, digits, MAX_NUMBER_DIGITS))


def check_steps(count: int) -> None:
    if count > MAX_STEPS_PER_TURN:
        raise InputRefused(texts.too_many_steps(count, MAX_STEPS_PER_TURN))

"""The rulebook's refusals (policy/rulebook.py), the check's reasons and what it
allowed."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .replies import brief

# --- the rulebook's refusals (policy/rulebook.py) ---

# Every reason a refusal can give, in one place. A reason is a clause about the refused
# call ("it", "its <arg>") that never names the tool, so the sentences built on it name
# the tool once: "charge_card is refused: <reason>." and, in a run's reply, "the check
# refused charge_card, because <reason>". `{where}` is "line <n> of <file>".
REFUSAL_TEXTS: Mapping[str, str] = {
    "order": (
        "{where} allows it only after {earlier}, and this session has no {earlier} "
        "that ran and was not undone"
    ),
    "order_same": (
        "{where} allows it only after {earlier} with the same {fields}, and this session "
        "has no {earlier} with {values} that ran and was not undone"
    ),
    "cap_arg": "its {arg} is {value}, and {where} allows {bound} {limit}",
    "cap_total": (
        "its {arg} would total {total} in this session, and {where} allows a total of "
        "{bound} {limit} per session"
    ),
    "cap_calls": (
        "this would be its call {count} in this session, and {where} allows {bound} "
        "{limit} per session"
    ),
    "source": "its {arg} came from {source}, and {where} requires it to come from {allowed}",
    "not_a_number": "its {arg} is {value!r}, not a number, and {where} caps it",
}

# Where an argument may come from, as a refusal names it (`require ... from turn`).
SOURCE_KINDS: Mapping[str, str] = {"turn": "the turn", "step": "an earlier step"}

# A comparison as a refusal says it: "allows at most 500".
BOUNDS: Mapping[str, str] = {
    "<=": "at most",
    "<": "less than",
    ">=": "at least",
    ">": "more than",
}

# --- why the check refused a call: a reason is a clause about the call that does not
# name the tool, so each sentence built on it names the tool once ---


def refusal_sentence(tool: str, reason: str) -> str:
    """A refusal on its own, as the record keeps it and the model reads it."""
    return f"{tool} is refused: {reason}."


NOT_IN_CATALOGUE = "it is not one of this agent's tools"


def missing_argument_reason(argument: str) -> str:
    return f"it needs {argument}, and the call leaves it out"


def unknown_argument_reason(argument: str) -> str:
    return f"it takes no argument {argument}"


def wrong_type_reason(argument: str, value: Any, expected: str) -> str:
    return f"its {argument} is {brief(value, limit=60)}, not {expected}"


# --- what the check allowed (recorded before the send) ---


def allowed_call(tool: str) -> str:
    return f"{tool}: allowed by the rulebook"


def allowed_undo(undo: str, write: str, step: int, sources: Mapping[str, str]) -> str:
    bound = ", ".join(f"{name} <- {source}" for name, source in sources.items()) or "no arguments"
    return f"{undo} undoes {write} (step {step}): bound {bound}; allowed by the rulebook"


def unkeyable_reason(problem: str) -> str:
    """A refusal's clause for arguments with no stable form, so no idempotency key."""
    return f"its arguments have no stable form for an idempotency key ({problem})"

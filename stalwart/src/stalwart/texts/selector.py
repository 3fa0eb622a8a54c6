"""Why the selector did not read a clause (selector/core.py)."""

from __future__ import annotations

from collections.abc import Sequence

# --- why the selector did not read a clause (selector/core.py) ---

NOT_ENGLISH = "the turn is not English; it reads as Portuguese, which is not read yet"
NOTHING_SAID = "the turn says nothing"
NO_TOOL_MATCHES = "no tool matches"
_COUNT_WORDS = {2: "two", 3: "three", 4: "four", 5: "five"}


def tools_match_equally(tools: Sequence[str]) -> str:
    count = _COUNT_WORDS.get(len(tools), str(len(tools)))
    return f"{count} tools match equally: {', '.join(tools)}"


def required_not_given(argument: str, tool: str) -> str:
    return f"required argument {argument} of {tool} is not given"


def value_could_be(value: str, arguments: Sequence[str], tool: str) -> str:
    return f"{value} could be {' or '.join(arguments)} of {tool}"


def value_unclear(argument: str, values: Sequence[str], tool: str) -> str:
    return f"the value of {argument} of {tool} is unclear: {' or '.join(values)}"


def no_argument_for(value: str, tool: str) -> str:
    return f"{tool} has no argument for {value}"

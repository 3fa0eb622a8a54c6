"""The selector's cost is linear in the turn's length, shown without timing anything.

- The work of reading a turn, counted as the Python events it makes (calls, lines,
  returns: the same count on any machine), grows with the turn's length and no faster,
  for turns of many clauses, quoted strings and separators, stop words, names and
  competing values.
- Splitting a turn is the plain definition (every separator outside a quoted string),
  done in one scan; the English separator never starts a match where one starting
  earlier would have been found (inside a run of spaces), so no run is scanned twice.
- The shape memo (`selector/memo.py`) changes no reading: a turn read after one of the
  same shape reads as it does with the memo emptied.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from types import FrameType
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from selector_toolsets import shop_specs
from test_selector_properties import (
    PROPERTY_SETTINGS,
    TOOL_SETS,
    Call,
    noisy_turns,
    written_turns,
)

from stalwart.selector import read_turn
from stalwart.selector.english import GRAMMAR
from stalwart.selector.tokens import QUOTED, split_clauses
from stalwart.selector.vocabulary import vocabulary_memo
from stalwart.tools import ToolSpec

SHOP = shop_specs()


def events(turn: str, tools: list[ToolSpec]) -> int:
    """The Python events reading `turn` makes, once its tools' words are known."""
    vocabulary_memo(tools, GRAMMAR)[1].clear()
    read_turn(turn, tools)  # the tools' words, the stems' cache
    vocabulary_memo(tools, GRAMMAR)[1].clear()
    count = 0

    def trace(frame: FrameType, event: str, arg: Any) -> Callable[..., Any]:
        nonlocal count
        count += 1
        return trace

    sys.settrace(trace)
    try:
        read_turn(turn, tools)
    finally:
        sys.settrace(None)
    return count


FAMILIES: dict[str, Callable[[int], str]] = {
    "clauses with quoted strings": lambda k: ", then ".join(
        ['charge order 4411 40.00 card "a, then b"'] * k
    ),
    "clauses": lambda k: ", then ".join(["charge order 4411 40.00"] * k),
    "stop words": lambda k: "charge order 4411 40.00 " + "the " * k,
    "names and values": lambda k: "charge " + "order 4411 " * k,
    "competing values": lambda k: "charge " + " ".join(f"order {i} amount" for i in range(k)),
    "quoted strings": lambda k: "charge order 4411 " + "'x' " * k,
    "spaces": lambda k: "charge order 4411" + " " * (40 * k) + "40.00",
    "separators only": lambda k: "then ; " * k,
    "a negation at the end": lambda k: "charge order 4411 40.00 " + "the " * k + "not",
    "fillers before a question": lambda k: "so " * k + "should I charge order 4411 40.00",
    "a question mark after quoted strings": lambda k: "charge order 4411 " + "'x?' " * k + "?",
    "clauses with a hedge in the last": lambda k: "charge order 4411 40.00, but " * k + "maybe",
    "a reverser at the end": lambda k: "charge order 4411 40.00 " + "the " * k + "cancel",
    "a qualifier at the end": lambda k: "charge order 4411 40.00 " + "the " * k + "tomorrow",
}


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_four_times_the_turn_is_at_most_about_four_times_the_work(family: str) -> None:
    make = FAMILIES[family]
    short, long = events(make(40), SHOP), events(make(160), SHOP)
    # Linear work gives 4 and a fixed part makes it less; 13 was measured for quoted
    # strings among separators before the one-scan split (the square of the length).
    assert long <= 4.5 * short, f"{family}: {short} events, then {long} for 4x the turn"


def test_a_separator_never_starts_inside_a_run_of_spaces() -> None:
    separator = GRAMMAR.clause_separator
    for text in ("x   then y", "x ,  then y", "x   and then y", "x,   then y", "x  ,  but y"):
        found = separator.search(text)
        assert found is not None
        for inside in range(found.start() + 1, found.end()):
            if text[inside - 1] in " ,":
                assert separator.match(text, inside) is None, (text, inside)


_PLAIN_SEPARATOR = re.compile(r",?\s*\band\s+then\b|,?\s*\bthen\b|,?\s*\bbut\b|;", re.IGNORECASE)


def plainly_split(turn: str) -> list[tuple[str, int]]:
    """The definition: split on every separator that does not start in a quoted string."""
    quoted = [match.span() for match in QUOTED.finditer(turn)]
    clauses: list[tuple[str, int]] = []
    start = 0
    for separator in _PLAIN_SEPARATOR.finditer(turn):
        if any(left <= separator.start() < right for left, right in quoted):
            continue
        clauses.append((turn[start : separator.start()], start))
        start = separator.end()
    clauses.append((turn[start:], start))
    kept = [(text, offset) for text, offset in clauses if text.strip()]
    return [(text.strip(), offset + text.index(text.strip())) for text, offset in kept]


_PIECES = st.sampled_from(
    [
        *(" ", "  ", ",", ";", "then", "Then", "and", "and then", "but", "But", "x"),
        *("'", '"', "it's", "4411", "\t", "?"),
    ]
)


@PROPERTY_SETTINGS
@given(turn=st.lists(_PIECES, max_size=16).map("".join))
def test_the_one_scan_split_is_the_plain_definition(turn: str) -> None:
    assert split_clauses(turn, GRAMMAR) == plainly_split(turn)


_DIGITS = str.maketrans("0123456789", "1234567890")


def same_shape(turn: str) -> str:
    """The turn with every digit moved on by one: other values, the same shape (kinds and
    which values are equal are kept)."""
    return turn.translate(_DIGITS)


def read_after_one_of_its_shape(turn: str, tools: list[ToolSpec]) -> tuple[Any, Any]:
    memo = vocabulary_memo(tools, GRAMMAR)[1]
    memo.clear()
    read_turn(turn, tools)
    warm = read_turn(same_shape(turn), tools)
    memo.clear()
    return warm, read_turn(same_shape(turn), tools)


@PROPERTY_SETTINGS
@given(tool_set=st.sampled_from(sorted(TOOL_SETS)), turn=noisy_turns())
def test_the_memo_changes_no_reading_of_any_turn(tool_set: str, turn: str) -> None:
    warm, cold = read_after_one_of_its_shape(turn, TOOL_SETS[tool_set])
    assert warm == cold


@PROPERTY_SETTINGS
@given(written=written_turns())
def test_the_memo_changes_no_reading_of_a_written_turn(
    written: tuple[str, list[ToolSpec], list[Call]],
) -> None:
    turn, tools, _ = written
    warm, cold = read_after_one_of_its_shape(turn, tools)
    assert warm == cold
    assert warm.read


def test_the_shops_turn_of_another_order_is_read_from_the_memo() -> None:
    memo = vocabulary_memo(SHOP, GRAMMAR)[1]
    memo.clear()
    read_turn("charge order 4411 40.00, then update the crm for order 4411", SHOP)
    assert len(memo) == 2
    reading = read_turn("charge order 17 5.50, then update the crm for order 17", SHOP)
    assert len(memo) == 2
    assert [(s.tool, s.args) for s in reading.steps] == [
        ("charge_card", {"order": 17, "amount": 5.5}),
        ("update_crm", {"order": 17}),
    ]

"""Where each argument of a step came from: the person's turn, an earlier step, or the model.

A step the selector read takes every value from the turn. A step a model chose may take
a value from anywhere, so each argument is traced when the model's answer is recorded:

- "turn" when the value is written in the person's turn: a number by value (`40`,
  `40.0` and `"40.00"` are one amount, as the selector reads numbers), any other value
  by its text, as a whole token or quoted span, ignoring case;
- "step <n> (<tool>)" when it equals a value in what an earlier step of this run
  returned (the latest such step), the model having read that result;
- "model" otherwise: the model wrote it alone.

The turn wins over a step: a value the person said is theirs, wherever else it shows.
The rulebook can require an argument's source (`require charge_card.amount from turn`).

The turn is read with the grammars of the agent's languages (given by the caller): this
module knows no language, so a Portuguese "40,00" is forty, not four thousand, for an
agent that reads Portuguese (agent.yaml `languages: [english, portuguese]`). Each grammar
reads the turn's numbers its own way, and a number is the turn's when every grammar that
reads it as a number reads it as the same amount: "40,00" is forty (English reads no
number there), "40.00" is forty (Portuguese reads none), and a number two grammars would
read as two amounts is none of the turn's (the grammars here refuse such a number
themselves: "1.250").
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from .. import texts
from ..selector.grammar import Grammar
from ..selector.tokens import Kind, split_clauses, tokenize


@dataclass(frozen=True)
class SeenResult:
    """What an earlier step of the run returned, as the model read it."""

    step: int
    tool: str
    result: Any


def all_from_turn(args: Mapping[str, Any]) -> dict[str, str]:
    """The sources of a step the selector read: every value is a span of the turn."""
    return {name: texts.SOURCE_TURN for name in args}


def sources_of(
    args: Mapping[str, Any],
    turn: str,
    seen: Sequence[SeenResult],
    grammars: Grammar | Sequence[Grammar],
) -> dict[str, str]:
    """Where each argument's value came from (see the module's rules); the turn is read
    with `grammars`, the agent's languages (one grammar, or several)."""
    in_turn = _TurnValues(turn, (grammars,) if isinstance(grammars, Grammar) else grammars)
    sources: dict[str, str] = {}
    for name, value in args.items():
        if in_turn.has(value):
            sources[name] = texts.SOURCE_TURN
            continue
        found = next(
            (s for s in reversed(seen) if any(_same(value, leaf) for leaf in _leaves(s.result))),
            None,
        )
        sources[name] = (
            texts.source_step(found.step, found.tool) if found is not None else texts.SOURCE_MODEL
        )
    return sources


class _TurnValues:
    """The values a turn says: its numbers, and its text for any other value."""

    def __init__(self, turn: str, grammars: Sequence[Grammar]) -> None:
        self.turn = turn
        # Each number as written (where it starts, its text), with every amount a grammar
        # reads it as: one amount is the turn's, two are none.
        read: dict[tuple[int, str], set[Decimal]] = {}
        for grammar in grammars:
            for clause, offset in split_clauses(turn, grammar):
                for token in tokenize(clause, offset, grammar):
                    if token.kind in (Kind.INTEGER, Kind.DECIMAL):
                        number = grammar.number(token.text)
                        if number is not None:
                            read.setdefault((token.start, token.text), set()).add(number)
        self.numbers: set[Decimal] = {
            amount for amounts in read.values() if len(amounts) == 1 for amount in amounts
        }

    def has(self, value: Any) -> bool:
        if isinstance(value, bool) or value is None:
            return False
        number = _number(value)
        if number is not None:
            return number in self.numbers
        if not isinstance(value, str) or not value.strip():
            return False
        spaced = r"\s+".join(re.escape(part) for part in value.split())
        return re.search(rf"(?<!\w){spaced}(?!\w)", self.turn, re.IGNORECASE) is not None


def _leaves(value: Any) -> Iterator[Any]:
    if isinstance(value, Mapping):
        for item in value.values():
            yield from _leaves(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _leaves(item)
    else:
        yield value


def _same(value: Any, leaf: Any) -> bool:
    if isinstance(value, bool) or isinstance(leaf, bool):
        return value is leaf
    left, right = _number(value), _number(leaf)
    if left is not None and right is not None:
        return left == right
    if isinstance(value, str) and isinstance(leaf, str):
        return value.strip().casefold() == leaf.strip().casefold() and bool(value.strip())
    return False


def _number(value: Any) -> Decimal | None:
    if isinstance(value, bool) or not isinstance(value, int | float | str | Decimal):
        return None
    text = str(value).strip().replace(",", "") if isinstance(value, str) else str(value)
    if isinstance(value, str) and not re.fullmatch(r"[-+]?\d+(\.\d+)?", text):
        return None
    try:
        number = Decimal(text)
    except InvalidOperation:
        return None
    return number if number.is_finite() else None

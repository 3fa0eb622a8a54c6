"""A turn cut into clauses, and a clause into tokens, as a grammar says.

A token is a word, an integer, a decimal, a quoted string (its text is what stands
between the quotes) or another token with digits or signs that is no number
(``2026-12-01``, ``B-12``). Punctuation around a token is not part of it, nor is a
number mark before a number ("#4411", "$40.00"). Every token's text is a span of the
turn, at `Token.start`: that is why a value bound from a token is always in the turn.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum

from .grammar import Grammar


class Kind(Enum):
    WORD = "word"
    INTEGER = "integer"
    DECIMAL = "decimal"
    QUOTED = "quoted"
    OTHER = "other"  # a token with digits or signs that is no number: 2026-12-01, B-12


VALUE_KINDS = frozenset({Kind.INTEGER, Kind.DECIMAL, Kind.QUOTED, Kind.OTHER})

# A single quote opens a string only where a word does not go on through it ("it's").
QUOTED = re.compile(r"\"(?P<double>[^\"]*)\"|(?<!\w)'(?P<single>[^']*)'(?!\w)")
_CHUNK = re.compile(rf"{QUOTED.pattern}|\S+")
_WORD = re.compile(r"[^\W\d_]+(?:[-_'’][^\W\d_]+)*")
_WORD_PARTS = re.compile(r"[^\W\d_]+")
_LEADING = "(["
_TRAILING = ".,;:!?)]"


@dataclass(frozen=True)
class Token:
    kind: Kind
    text: str  # the value as written: for a quoted string, what is between the quotes
    start: int  # where `text` starts in the turn

    @property
    def lower(self) -> str:
        return self.text.lower()


def split_clauses(turn: str, grammar: Grammar) -> list[tuple[str, int]]:
    """The turn's non-empty clauses, each with where it starts in the turn."""
    quoted = [match.span() for match in QUOTED.finditer(turn)]
    clauses: list[tuple[str, int]] = []
    start = 0
    for separator in grammar.clause_separator.finditer(turn):
        if any(left <= separator.start() < right for left, right in quoted):
            continue
        clauses.append((turn[start : separator.start()], start))
        start = separator.end()
    clauses.append((turn[start:], start))
    found: list[tuple[str, int]] = []
    for text, offset in clauses:
        stripped = text.strip()
        if stripped:
            found.append((stripped, offset + text.index(stripped)))
    return found


def tokenize(clause: str, offset: int, grammar: Grammar) -> list[Token]:
    """Cut a clause into tokens; `offset` is where the clause starts in the turn."""
    tokens: list[Token] = []
    for chunk in _CHUNK.finditer(clause):
        text, start = chunk.group(), offset + chunk.start()
        if chunk.lastgroup is not None:
            tokens.append(Token(Kind.QUOTED, text[1:-1], start + 1))
            continue
        stripped = text.lstrip(_LEADING)
        start += len(text) - len(stripped)
        stripped = stripped.rstrip(_TRAILING)
        if not stripped:
            continue
        unmarked = stripped.lstrip(grammar.number_marks)
        if grammar.decimal.fullmatch(unmarked):
            tokens.append(Token(Kind.DECIMAL, unmarked, start + len(stripped) - len(unmarked)))
        elif grammar.integer.fullmatch(unmarked):
            tokens.append(Token(Kind.INTEGER, unmarked, start + len(stripped) - len(unmarked)))
        elif _WORD.fullmatch(stripped):
            tokens.append(Token(Kind.WORD, stripped, start))
        else:
            tokens.append(Token(Kind.OTHER, stripped, start))
    return tokens


def word_parts(text: str) -> list[str]:
    """The runs of letters in a text, lower-cased: "check-in" gives ["check", "in"]."""
    return _WORD_PARTS.findall(text.lower())

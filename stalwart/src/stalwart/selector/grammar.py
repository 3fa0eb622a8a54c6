"""What a language supplies to the selector: a `Grammar`.

A grammar is data: how a turn splits into clauses, which words carry nothing, which
snowballstemmer algorithm stems its words, how it writes integers, decimals and yes/no.
`english.py` holds the English one; the core (`core.py`) reads any of them the same way.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from decimal import Decimal

import snowballstemmer


@dataclass(frozen=True)
class Grammar:
    """What one language says about clauses, words and numbers; see `english.py`."""

    language: str  # a snowballstemmer algorithm name
    # Every attempt to match it must be bounded by the text it matches (no attempt may
    # start inside a run it could have started before), so splitting a turn is linear.
    clause_separator: re.Pattern[str]
    stop_words: frozenset[str]
    true_words: frozenset[str]
    false_words: frozenset[str]
    integer: re.Pattern[str]  # numbers are written with digits: a word of letters is none
    decimal: re.Pattern[str]
    number_marks: str = ""  # characters allowed before a number and not part of it
    decimal_point: str = "."  # how `decimal` writes the point ("40,00" in Portuguese)

    def stem(self, word: str) -> str:
        return _stem(self.language, word.lower())

    def number(self, text: str) -> Decimal | None:
        """The value of a number as this language writes it, or None if `text` is none."""
        if self.integer.fullmatch(text):
            return Decimal(text)
        if self.decimal.fullmatch(text):
            return Decimal(text.replace(self.decimal_point, "."))
        return None


@functools.lru_cache(maxsize=8192)
def _stem(language: str, word: str) -> str:
    # A stemmer object keeps state while it works, so each call takes its own.
    return str(snowballstemmer.stemmer(language).stemWord(word))

"""What a language supplies to the selector: a `Grammar`.

A grammar is data: how a turn splits into clauses, which words carry nothing, which
snowballstemmer algorithm stems its words, how it writes integers, decimals and yes/no,
and which words make a clause no plain request (`Moods`: its negators, conditions,
questions and hedges). `english.py` holds the English one; the core (`core.py`, `mood.py`)
reads any of them the same way.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from enum import Enum

import snowballstemmer


class Mood(Enum):
    """What makes a clause no plain request, and never a step (`mood.py`)."""

    NEGATED = "negated"  # "don't charge ...": the person said not to
    CONDITIONAL = "conditional"  # "if ...", "... unless ...": it hangs on what is not known
    QUESTION = "question"  # "should I ...?": it asks, it does not ask for
    HEDGED = "hedged"  # "maybe ...": the person is not sure
    # "cancel the transfer ...", "unbook the room ...": it asks for the opposite of what
    # the tool it names does, so that tool is not its step (read once the tool is known)
    OPPOSITE = "opposite"
    # "I already charged order 4411": it tells what was done, in the past, and asks nothing
    # (read once the tool is known: a word of its name in a past form)
    REPORTED = "reported"
    CHOICE = "choice"  # "day monday or tuesday": it leaves a choice the step cannot make

    __hash__ = object.__hash__  # by identity, as `Kind`: members are singletons


Phrase = tuple[str, ...]  # lower-case words, as a clause says them one after another


@dataclass(frozen=True)
class Moods:
    """The words a language marks a clause's mood with, as data (`mood.py` reads them).

    Each phrase is words one after another ("do not", "only if"); a clause says it when
    its words say it, whole words only, case aside ("knot" says no "not"). Quoted strings
    are values and say none.
    """

    negators: frozenset[str] = frozenset()  # anywhere in a clause: "not", "do not"
    negating_endings: frozenset[str] = frozenset()  # a word ending so: "n't"
    conditionals: frozenset[str] = frozenset()  # anywhere: "if", "unless", "only if"
    questions: frozenset[str] = frozenset()  # anywhere: "whether"
    hedges: frozenset[str] = frozenset()  # anywhere: "maybe", "perhaps"
    choices: frozenset[str] = frozenset()  # anywhere: "or", "either"
    question_openers: frozenset[str] = frozenset()  # at a clause's start: "should i", "what"
    fillers: frozenset[str] = frozenset()  # may stand before an opener: "so", "ok"
    question_marks: str = ""  # a character that makes its clause a question: "?"
    # Phrases that say a mood's word and set no mood: "as soon as possible".
    plain: frozenset[str] = frozenset()
    # Words that ask for the opposite of what a tool does ("cancel", "undo", "take back"),
    # unless they are the words of that tool's own name ("cancel" for cancel_booking).
    reversers: frozenset[str] = frozenset()
    # Words that ask for it unless they are the tool's own words, of its name or of its
    # docstring ("back" for refund_card: "Give the money ... back").
    weak_reversers: frozenset[str] = frozenset()
    # A word made of one of these and a word of the tool's name ("unbook" for book_room)
    # asks for the opposite of that tool, unless the word itself is in its name.
    negating_prefixes: frozenset[str] = frozenset()
    # A word of the tool's name in a past form tells what was done ("charged", "sent"):
    # regular pasts by their endings, others as "<past> <base>" ("sent send").
    past_endings: frozenset[str] = frozenset()
    past_forms: frozenset[str] = frozenset()
    # Words that say when, how often or how much ("tomorrow", "weekly", "half"): a step
    # cannot take them unless they are a value, a parameter's name or the tool's own words.
    qualifiers: frozenset[str] = frozenset()
    # The phrases by their first word, longest first, with their mood (None: a plain
    # phrase), made from the above.
    anywhere: Mapping[str, tuple[tuple[Phrase, Mood | None], ...]] = field(
        init=False, repr=False, compare=False
    )
    opening: Mapping[str, tuple[tuple[Phrase, Mood | None], ...]] = field(
        init=False, repr=False, compare=False
    )
    reversing: Mapping[str, tuple[tuple[Phrase, Mood | None], ...]] = field(
        init=False, repr=False, compare=False
    )
    pasts: Mapping[str, str] = field(init=False, repr=False, compare=False)  # past -> base
    # Every word a phrase of either starts with: a clause saying none, and no negating
    # ending, sets no mood by its words (`mood.py` looks no further).
    starts: frozenset[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        anywhere = (
            (self.negators, Mood.NEGATED),
            (self.conditionals, Mood.CONDITIONAL),
            (self.questions, Mood.QUESTION),
            (self.hedges, Mood.HEDGED),
            (self.choices, Mood.CHOICE),
            (self.plain, None),
        )
        object.__setattr__(self, "anywhere", _by_first_word(anywhere))
        object.__setattr__(
            self, "opening", _by_first_word([(self.question_openers, Mood.QUESTION)])
        )
        object.__setattr__(self, "reversing", _by_first_word([(self.reversers, Mood.OPPOSITE)]))
        object.__setattr__(self, "starts", frozenset(self.anywhere) | frozenset(self.opening))
        pasts = {past: base for past, base in (pair.split() for pair in self.past_forms)}
        object.__setattr__(self, "pasts", pasts)


def _by_first_word(
    groups: Iterable[tuple[frozenset[str], Mood | None]],
) -> dict[str, tuple[tuple[Phrase, Mood | None], ...]]:
    found: dict[str, list[tuple[Phrase, Mood | None]]] = {}
    for phrases, mood in groups:
        for text in phrases:
            phrase = tuple(text.lower().split())
            found.setdefault(phrase[0], []).append((phrase, mood))
    return {
        word: tuple(sorted(entries, key=lambda entry: -len(entry[0])))
        for word, entries in found.items()
    }


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
    number_prefixes: tuple[str, ...] = ()  # and texts, before the marks ("R$" of "R$25,00")
    decimal_point: str = "."  # how `decimal` writes the point ("40,00" in Portuguese)
    thousands_separator: str = ""  # between groups of three digits ("1,250.00"), if any
    # A number written so that it is two amounts ("1,250": 1250 here, 1.25 where a comma
    # is the decimal point) is read as neither; the two are `number_readings`.
    ambiguous_number: re.Pattern[str] | None = None
    # Digits and marks that look like a number and are none here ("40,00" in English).
    malformed_number: re.Pattern[str] | None = None
    number_hint: str = ""  # how this language writes a number, said when one is malformed
    # What makes a clause no plain request: never a step (`mood.py`).
    moods: Moods = field(default_factory=Moods)
    # Role words: a word of these that a tool's docstring puts before a parameter's name,
    # with articles between ("from the source account"), names that parameter in a turn
    # ("from alice"). Nothing else ties a preposition to a parameter (`vocabulary.py`).
    role_words: frozenset[str] = frozenset()
    articles: frozenset[str] = frozenset()
    # Words that may follow an amount and say nothing more of it ("25.00 USD", "40 dollars").
    currency_words: frozenset[str] = frozenset()
    # Whether a stem is compared with its accents taken off, so a word typed without them
    # is the same word ("cartao" is "cartão" in Portuguese; English has none to fold).
    fold_accents: bool = False
    # The stems of the moods' qualifiers, made once (`mood.py` compares stems).
    qualifier_stems: frozenset[str] = field(init=False, repr=False, compare=False)
    # A number mark or prefix written apart from its number ("€ 25,00", "R$ 25,00",
    # "25,00 €"): no token when a number stands right before or after it (`tokens.py`).
    signs: frozenset[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        stems = frozenset(self.stem(word) for word in self.moods.qualifiers)
        object.__setattr__(self, "qualifier_stems", stems)
        signs = frozenset(self.number_marks) | frozenset(self.number_prefixes)
        object.__setattr__(self, "signs", signs)

    def stem(self, word: str) -> str:
        return _stem(self.language, word.lower(), self.fold_accents)

    def number(self, text: str) -> Decimal | None:
        """The value of a number as this language writes it, or None if `text` is none."""
        if self.ambiguous_number is not None and self.ambiguous_number.fullmatch(text):
            return None
        if self.integer.fullmatch(text) or self.decimal.fullmatch(text):
            return Decimal(self.plain_number(text))
        return None

    def plain_number(self, text: str) -> str:
        """A number of this language as Python writes it: "1,250.00" is "1250.00"."""
        separator, point = self.thousands_separator, self.decimal_point
        if (not separator or separator not in text) and point == ".":
            return text  # most numbers: as written
        if point in text and self.decimal.fullmatch(text):
            whole, _, part = text.rpartition(point)
            return f"{whole.replace(separator, '') if separator else whole}.{part}"
        return text.replace(separator, "") if separator else text

    def number_readings(self, text: str) -> tuple[str, str]:
        """The two amounts an ambiguous number could be: this language's, then the other's
        ("1,250": 1250 or 1.250; "1.250": 1.250 or 1250)."""
        separator = next(mark for mark in ",." if mark in text)
        whole, _, part = text.partition(separator)
        joined, pointed = whole + part, f"{whole}.{part}"
        return (joined, pointed) if separator == self.thousands_separator else (pointed, joined)


@functools.lru_cache(maxsize=8192)
def _stem(language: str, word: str, fold_accents: bool = False) -> str:
    # A stemmer object keeps state while it works, so each call takes its own.
    stem = str(snowballstemmer.stemmer(language).stemWord(word))
    if not fold_accents:
        return stem
    decomposed = unicodedata.normalize("NFD", stem)
    return "".join(char for char in decomposed if not unicodedata.combining(char))

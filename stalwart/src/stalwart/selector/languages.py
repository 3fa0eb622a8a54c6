"""Which language a turn is read in: exactly one of the agent's (agent.yaml `languages:`).

An agent reads English alone unless its agent.yaml says otherwise (``languages: [english,
portuguese]``). Then, before any clause is read, the turn's words tell its language:

- English marks: the English grammar's stop words and "then" ("the", "for", "to", ...);
- Portuguese marks: Portuguese function words that are not English words ("o", "da",
  "para", "depois", "e", ...), or, when the turn has no English mark, a word with a
  Portuguese diacritic ("cartão"; "set room café to 21" is English: "to");
- words both languages write alike ("a", "as", "me", "via") and quoted strings (values)
  mark neither;
- with no such word, a yes or a no ("urgent yes" is English; "sim" Portuguese), or a
  number only one of them writes so ("40.00" and "1,250.00" are English, "40,00" and
  "1.250,00" Portuguese) tells it.

A turn with marks of one language only is read in that language, if the agent reads it,
and refused if not. A turn with marks of both is mixed, and refused with the first word
of each. A turn with no mark at all ("freeze card 4411") is read in every language of the
agent: it is read only when each reads it as the same steps, and refused as unclear
otherwise, so a word one language reads as a mood and the other does not ("never") can
never be run by the other.

An agent that reads English alone keeps the rule it always had (`portuguese.py`): a turn
that reads as Portuguese is not read, and nothing else changes.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Final

from stalwart import texts

from . import english, portuguese
from .grammar import Grammar

LANGUAGES: Final[Mapping[str, Grammar]] = {
    "english": english.GRAMMAR,
    "portuguese": portuguese.GRAMMAR,
}
DEFAULT: Final = ("english",)

_ENGLISH_MARKS = english.STOP_WORDS | {"then"}
_SHARED = frozenset({"a", "as", "me", "via"})
_ENGLISH_ONLY_MARKS = _ENGLISH_MARKS - _SHARED


def grammars(languages: Sequence[str]) -> tuple[Grammar, ...]:
    """The grammars of these languages, in order; ValueError for one not known."""
    unknown = [name for name in languages if name not in LANGUAGES]
    if unknown or not languages:
        raise ValueError(texts.languages_unknown(list(languages), list(LANGUAGES)))
    return tuple(LANGUAGES[name] for name in languages)


def language_of(turn: str, languages: Sequence[str]) -> Grammar | str | None:
    """The grammar the turn is read in; a reason it is not read; or None when its words
    mark no language and each of the agent's must read it (see the module's docstring)."""
    if tuple(languages) == DEFAULT:
        if portuguese.reads_as_portuguese(turn, _ENGLISH_MARKS):
            return texts.NOT_ENGLISH
        return english.GRAMMAR
    words = portuguese.words_of(turn)
    said_english = next((w for w in words if w in _ENGLISH_ONLY_MARKS), None)
    said_portuguese = next((w for w in words if w in portuguese.FUNCTION_WORDS), None)
    if said_english is not None and said_portuguese is not None:
        return texts.turn_mixes_languages(said_english, said_portuguese)
    if said_english is None and said_portuguese is None:
        said_portuguese = next((w for w in words if not portuguese.DIACRITICS.isdisjoint(w)), None)
    if said_english is not None:
        said = "english"
    elif said_portuguese is not None:
        said = "portuguese"
    else:
        told = _told_by_values(turn, words)
        if told is None:
            return None if len(languages) > 1 else LANGUAGES[languages[0]]
        said = told
    if said not in languages:
        return texts.turn_in_a_language_not_read(said, list(languages))
    return LANGUAGES[said]


_NUMBER = re.compile(r"[0-9][0-9.,]*[0-9]")
_YES_NO = {
    "english": (english.GRAMMAR.true_words | english.GRAMMAR.false_words) - _ENGLISH_MARKS,
    "portuguese": portuguese.GRAMMAR.true_words | portuguese.GRAMMAR.false_words,
}


def _told_by_values(turn: str, words: Sequence[str]) -> str | None:
    """The one language a turn's yes/no words or numbers are written in, if they say one."""
    told: set[str] = set()
    for language, said in _YES_NO.items():
        if not said.isdisjoint(words):
            told.add(language)
    for number in _NUMBER.findall(turn):
        in_english = english.GRAMMAR.number(number) is not None
        in_portuguese = portuguese.GRAMMAR.number(number) is not None
        if in_english != in_portuguese:
            told.add("english" if in_english else "portuguese")
    return told.pop() if len(told) == 1 else None

"""Portuguese: the selector's next grammar, not shipped yet.

Until it ships, a turn written in Portuguese is not read as anything: not as
Portuguese, and not as English either, where its few shared words ("crm", a number)
could otherwise match a tool. This module only recognises such a turn.

How a turn is recognised
    Its words are counted against two lists. Portuguese marks are Portuguese function
    words that are not English words ("o", "da", "para", "depois", "e", ...) and any
    word with a Portuguese diacritic (ã, õ, ç, á, é, ...). English marks are the English
    grammar's stop words and "then", less the words both languages have ("a", "as").
    A turn with at least one Portuguese function word and more Portuguese marks than
    English marks is Portuguese.

    "cobrar o pedido 4411 40,00, depois atualizar o crm" has three Portuguese marks and
    no English one. "charge order 4411 40.00, then update the crm" has none and two
    English ones. "set room café to 21 degrees" names a café in English: it has no
    Portuguese function word. Quoted strings are values, not the turn's language, and
    are not counted.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from .tokens import QUOTED, has_quote

_FUNCTION_WORDS_TEXT = """
    o os da das dos na nas ao aos pelo pela pelos pelas numa
    um uma uns umas e ou em para com sem por que depois então entao também tambem
    mais já não nao seu sua seus suas meu minha meus minhas este esta isto esse essa
    isso aquele aquela
"""
FUNCTION_WORDS = frozenset(_FUNCTION_WORDS_TEXT.split())

DIACRITICS = frozenset("ãõçáéíóúâêôàü")
SHARED_WORDS = frozenset({"a", "as"})

_WORDS = re.compile(r"[^\W\d_]+(?:[-'’][^\W\d_]+)*")  # "e-mail" is one word, not "e"


def marks(words: Iterable[str]) -> int:
    """How many of these (lower-case) words mark a turn as Portuguese."""
    return sum(1 for w in words if w in FUNCTION_WORDS or not DIACRITICS.isdisjoint(w))


def reads_as_portuguese(turn: str, english_words: frozenset[str]) -> bool:
    """Whether the turn reads as Portuguese rather than as English (`english_words`)."""
    # A quoted string is a value, a name or a title, not the language of the turn.
    lowered = turn.lower()
    words = _WORDS.findall(QUOTED.sub(" ", lowered) if has_quote(lowered) else lowered)
    if FUNCTION_WORDS.isdisjoint(words):
        return False
    english_marks = english_words - SHARED_WORDS
    return marks(words) > sum(1 for w in words if w in english_marks)

"""The English grammar: how an English turn is cut into clauses and into words.

What this module decides (the shared core, `core.py`, does the rest):

Clauses
    A turn splits into clauses on ``, then``, ``then``, ``and then``, ``, and then`` and
    ``;`` -- case-insensitive, whole words only, never inside a quoted string. A bare
    ``and`` does not split: "charge order 4411 and refund it" is one clause, and that
    clause names two tools, so it is not read.

Stop words
    Words such as "the", "for", "at", "a", "please" carry nothing: they never name a
    tool, never become a value, and may stand between a parameter's name and a number
    ("amount of 40.00"). They are still read as part of a parameter's name
    ("check in" names ``check_in``).

Stemmer
    snowballstemmer's English stemmer, so "nights" meets ``nights`` and ``night``, and
    "charges" meets ``charge_card``.

Number forms
    An integer is digits with an optional sign (``4411``, ``-3``); a decimal is digits,
    a point and digits (``40.00``). ``#``, ``$``, ``€`` or ``£`` may stand before a
    number ("order #4411", "$40.00") and is not part of it. A comma never makes a
    decimal ("40,00" is not an English number), and thousands separators are not read.

Yes and no
    A ``bool`` parameter takes ``yes``/``true``/``on`` or ``no``/``false``/``off``
    next to its name ("express yes", "no express").
"""

from __future__ import annotations

import re

from .grammar import Grammar

# The comma and spaces before "then" belong to the separator. A match may begin on spaces
# only where no space or comma stands before them: the match starting one earlier would
# have been found first anyway, and without the look-behind every space of a long run of
# them began an attempt that scanned the rest of the run (the square of its length).
_BEFORE = r"(?:,|(?<![\s,]))\s*"
CLAUSE_SEPARATOR = re.compile(rf"{_BEFORE}\band\s+then\b|{_BEFORE}\bthen\b|;", re.IGNORECASE)

_STOP_WORDS_TEXT = """
    a an the this that these those it its it's my our your their his her me us i we you
    for at to of on in into onto from by with about as per via
    is are be please kindly can could would will should just now also and or
    some any all there here up
"""
STOP_WORDS = frozenset(_STOP_WORDS_TEXT.split())

GRAMMAR = Grammar(
    language="english",
    clause_separator=CLAUSE_SEPARATOR,
    stop_words=STOP_WORDS,
    true_words=frozenset({"yes", "true", "on"}),
    false_words=frozenset({"no", "false", "off"}),
    # ASCII digits only: "４４１１" (fullwidth) or "٤٤" (Arabic-Indic) is no number, so a
    # value a person reads as 4411 is never run as one unless it is written as one.
    integer=re.compile(r"[+-]?[0-9]+"),
    decimal=re.compile(r"[+-]?[0-9]+\.[0-9]+"),
    number_marks="#$€£",
)

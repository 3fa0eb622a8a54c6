"""What the selector's core knows of a tool: the stems of its name, of its docstring's
first paragraph, of its declared phrases and of its parameters' names, with each
parameter's type; worked out once per tool set and kept, since an agent reads every turn
over the same tools.

Declared phrases (``@tool(phrases=["send money"])``, or ``phrases:`` under the tool's name
in agent.yaml) are a tool's words beside its name's: a clause that says one in full (its
words in order, stop words aside, stemmed: "send the money", "sends money") counts its
words as name words, as if they were the tool's name; and such a clause names a tool
whose name has an undoing word ("give money back" for reverse_transfer) without that word.
A phrase's words said apart are not its phrase and count for nothing. Their words are the
tool's own, too, for its moods ("take back" is no reverser of the tool it is a phrase of).

A phrase may name parameters between braces ("send {amount} from {payer} to {payee}"):
the role word of the grammar right before each ("from", "to"; "de", "para") names that
parameter in a turn, as a role word of the docstring does, and the words before the first
``{parameter}``, less that role word, are the phrase ("send"). A word that is the role of
two parameters, by the docstring or by phrases, names neither (`phrase_parts`, `_with_roles`).
"""

from __future__ import annotations

import threading
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from stalwart.tools import IDEMPOTENCY_KEY_PARAM, Param, ToolSpec
from stalwart.tools.spec import PLACEHOLDER

from .grammar import Grammar, Phrase
from .memo import ShapeMemo
from .tokens import word_parts


@dataclass(frozen=True)
class ParamWords:
    """What the core reads of one parameter: its name's stems and its value's type."""

    param: Param
    kind: Any  # the type its value is converted to: the hint less Optional (str for Any)
    stems: tuple[str, ...]  # the stems of its name's words: check_in gives check, in
    joined: str  # the name as one lower-case word: "check_in" (said "check_in", "check-in")
    # Role words that name it, from the tool's docstring: "from" for source in "Move money
    # from the source account ..." (`Grammar.role_words`).
    roles: frozenset[str] = frozenset()

    @property
    def name(self) -> str:
        return self.param.name

    @staticmethod
    def of(param: Param, grammar: Grammar) -> ParamWords:
        base = param.base_type
        return ParamWords(
            param=param,
            kind=str if base is Any else base,
            stems=tuple(grammar.stem(part) for part in _name_parts(param.name)),
            joined=param.name.lower(),
        )


@dataclass(frozen=True)
class ToolWords:
    """A tool's stemmed vocabulary: its name's words, its docstring summary's words, and
    its parameters' names and types. Worked out once per tool set (`vocabulary`)."""

    spec: ToolSpec
    name_stems: frozenset[str]
    doc_stems: frozenset[str]
    params: tuple[ParamWords, ...]  # as declared, less idempotency_key
    by_length: tuple[ParamWords, ...]  # longest names first: the order names are sought in
    has_int: bool  # whether any parameter takes an int
    # Tools with equal signatures bind a clause's values the same way (`Binding`).
    signature: Hashable
    # Its name and its parameters' names as words ("do not disturb"), those that say a
    # word of the grammar's moods: said in full, they are the tool's words (`mood.py`).
    phrases: tuple[Phrase, ...]
    # Its name's words as written, lower-case: "charge", "card" (a word of the name said
    # as the name writes it is never a reverser or a past form: ``feed_cat``'s "feed").
    name_words: frozenset[str]
    # The stems of its name's words that ask for an undoing ("reverse" of
    # reverse_transfer): a clause that says none of them does not name the tool, so a
    # tool and its undo never tie, nor is the undo read from "transfer ..." (`core.py`),
    # unless it says one of the tool's phrases in full.
    must_say: frozenset[str]
    # Its declared phrases, each as the stems of all its words ("top up": top, up), and
    # as those less stop words ("top"): a clause that says all of the first in order
    # counts the second as name words (`core.py`).
    phrase_words: tuple[tuple[str, ...], ...]
    phrase_stems: tuple[tuple[str, ...], ...]
    # Its name's stems and every phrase's: the words that are the tool's own (`mood.py`).
    own_stems: frozenset[str]

    @staticmethod
    def of(spec: ToolSpec, grammar: Grammar) -> ToolWords:
        read_phrases = [phrase_parts(phrase, grammar) for phrase in spec.phrases]
        params = _with_roles(
            tuple(
                ParamWords.of(p, grammar) for p in spec.params if p.name != IDEMPOTENCY_KEY_PARAM
            ),
            spec.summary,
            grammar,
            [role for _, roles in read_phrases for role in roles],
        )
        name_stems = _content_stems(spec.name, grammar)
        doc_stems = _content_stems(spec.summary, grammar)
        phrase_words = [words for words, _ in read_phrases if words]
        # A phrase of stop words alone ("up") names nothing and is left out.
        phrased = [w for w in phrase_words if any(x not in grammar.stop_words for x in w)]
        phrase_stems = tuple(
            tuple(grammar.stem(w) for w in words if w not in grammar.stop_words)
            for words in phrased
        )
        said_in_phrases = frozenset(stem for stems in phrase_stems for stem in stems)
        return ToolWords(
            spec=spec,
            name_stems=name_stems,
            doc_stems=doc_stems,
            params=params,
            by_length=tuple(sorted(params, key=lambda p: -len(p.stems))),
            has_int=any(p.kind is int for p in params),
            signature=_signature(spec, params),
            phrases=(
                *_mood_phrases([spec.name, *(p.name for p in params)], grammar),
                *(tuple(words) for words in phrase_words),
            ),
            name_words=frozenset(_name_parts(spec.name)).union(*phrase_words),
            must_say=_undoing_stems(spec.name, grammar),
            phrase_words=tuple(tuple(grammar.stem(w) for w in words) for words in phrased),
            phrase_stems=phrase_stems,
            own_stems=name_stems | said_in_phrases,
            stems=name_stems | doc_stems | said_in_phrases,
        )

    # Every stem that can vote for the tool: a clause saying none cannot match it.
    stems: frozenset[str]


def _signature(spec: ToolSpec, params: tuple[ParamWords, ...]) -> Hashable:
    """What binding a clause's values reads of a tool: its parameters' names, types and
    whether each is required, in order."""
    signature = tuple((p.name, p.kind, p.param.required, p.roles) for p in params)
    try:
        hash(signature)
    except TypeError:  # a hint that cannot be hashed: the tool shares its binding with none
        return ("tool", id(spec))
    return signature


def phrase_parts(phrase: str, grammar: Grammar) -> tuple[list[str], list[tuple[str, str]]]:
    """A declared phrase's words that name its tool, and its role words.

    "send money from {source} to {target}": the words before the first ``{parameter}``
    name the tool ("send money"), less a role word and articles right before it; each
    ``{parameter}`` with a role word of the grammar before it (articles between: "from
    the {source}") gives the parameter that role word ("from": source, "to": target). A
    ``{parameter}`` after any other word ("send {amount}") only shows where its value
    stands: it ties no word to it. Other words after the first ``{parameter}`` name
    nothing.
    """
    pieces = PLACEHOLDER.split(phrase)  # text, parameter, text, parameter, ..., text
    naming = word_parts(pieces[0])
    roles: list[tuple[str, str]] = []
    for index in range(1, len(pieces), 2):
        before = word_parts(pieces[index - 1])
        while before and before[-1] in grammar.articles:
            before.pop()
        if before and before[-1] in grammar.role_words:
            roles.append((before[-1], pieces[index]))
    if len(pieces) > 1:
        while naming and naming[-1] in grammar.articles:
            naming.pop()
        if naming and naming[-1] in grammar.role_words:
            naming.pop()
    return naming, roles


def _with_roles(
    params: tuple[ParamWords, ...],
    summary: str,
    grammar: Grammar,
    declared: Sequence[tuple[str, str]] = (),
) -> tuple[ParamWords, ...]:
    """Each parameter with the role words its tool's docstring puts before its name and
    those its declared phrases put before it (`_phrase_of`), less a word put before two
    parameters (it names neither: "from" is never read as two parameters' role)."""
    words = word_parts(summary)
    roles: dict[str, set[str]] = {p.name: set() for p in params}
    for word, name in declared:
        if name in roles:
            roles[name].add(word)
    for param in params:
        parts = _name_parts(param.name)
        for index, word in enumerate(words):
            if word not in grammar.role_words:
                continue
            after = index + 1
            while after < len(words) and words[after] in grammar.articles:
                after += 1
            end = after + len(parts)
            # "in a doctor's schedule": the doctor owns the schedule, "in" is not its role.
            if words[after:end] == parts and (end >= len(words) or words[end] != "s"):
                roles[param.name].add(word)
    shared = [word for named in roles.values() for word in named]
    return tuple(
        replace(p, roles=frozenset(w for w in roles[p.name] if shared.count(w) == 1))
        for p in params
    )


def _undoing_stems(name: str, grammar: Grammar) -> frozenset[str]:
    reversers = {phrase for phrase in grammar.moods.reversers if " " not in phrase}
    return frozenset(grammar.stem(word) for word in _name_parts(name) if word in reversers)


def _mood_phrases(names: Sequence[str], grammar: Grammar) -> tuple[Phrase, ...]:
    moods = grammar.moods
    starts = moods.anywhere.keys() | moods.opening.keys()
    found: list[Phrase] = []
    for name in names:
        phrase = tuple(_name_parts(name))
        if any(
            word in starts or any(word.endswith(e) for e in moods.negating_endings)
            for word in phrase
        ):
            found.append(phrase)
    return tuple(found)


def _content_stems(text: str, grammar: Grammar) -> frozenset[str]:
    words = word_parts(text)
    return frozenset(grammar.stem(w) for w in words if w not in grammar.stop_words)


_VOCABULARY_CACHE_SIZE = 64
_Known = tuple[tuple[ToolSpec, ...], Grammar, tuple[ToolWords, ...], ShapeMemo]
_vocabularies: dict[tuple[int, ...], _Known] = {}
_vocabularies_guard = threading.Lock()


def vocabulary(tools: Sequence[ToolSpec], grammar: Grammar) -> tuple[ToolWords, ...]:
    """The words of these tools (first of each name), worked out once per tool set."""
    return vocabulary_memo(tools, grammar)[0]


def vocabulary_memo(
    tools: Sequence[ToolSpec], grammar: Grammar
) -> tuple[tuple[ToolWords, ...], ShapeMemo]:
    """The words of these tools (first of each name), worked out once per tool set.

    An agent reads every turn over the same tools, and stemming their names, docstrings
    and parameters again for each turn was most of the selector's time. The specs and
    the grammar are frozen, so the words are keyed by their identity; each entry holds
    the objects it is keyed by, so no identity is reused while the entry lives.
    """
    unique = _unique(tools)
    key = (id(grammar), *map(id, unique))
    with _vocabularies_guard:
        known = _vocabularies.get(key)
    if known is not None:
        return known[2], known[3]
    words = tuple(ToolWords.of(spec, grammar) for spec in unique)
    memo = ShapeMemo()
    with _vocabularies_guard:
        if len(_vocabularies) >= _VOCABULARY_CACHE_SIZE:
            del _vocabularies[next(iter(_vocabularies))]  # the oldest tool set
        _vocabularies[key] = (tuple(unique), grammar, words, memo)
    return words, memo


def _name_parts(name: str) -> list[str]:
    return [part for part in name.lower().split("_") if part]


def _unique(tools: Sequence[ToolSpec]) -> list[ToolSpec]:
    seen: dict[str, ToolSpec] = {}
    for spec in tools:
        seen.setdefault(spec.name, spec)
    return list(seen.values())

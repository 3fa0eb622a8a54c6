"""The selector's core: match each clause of a turn to one tool and bind its arguments.

The core knows no language. A `Grammar` (one per language: `english.py`) says how a
turn splits into clauses, which words carry nothing, how words are stemmed, and how
numbers and yes/no are written. The core is a grammar over the agent's own tools: it
reads a tool's name, its docstring's first paragraph and its parameters, and nothing
written for one tool set.

Reading one clause
    The clause is cut into tokens (`tokens.py`): words, integers, decimals, quoted
    strings ("..." or '...', the value is what stands between the quotes) and other
    tokens (``2026-12-01``, ``B-12``). Every tool in the catalogue is then tried as the
    reading of the clause, in three steps.

1. Arguments, by name. A parameter is named by the words of its name (``check_in`` is
   "check in" or "check_in"; stems, so "nights" names ``night`` too). Its value stands
   next to the name, after it ("order 4411") or before it ("3 nights"); stop words may
   stand between a name and a number, a yes/no or a quoted string ("amount of 40.00").
   A ``str`` value without quotes is the one token right after the name ("hotel
   Aurora"); a value of several words must be quoted. Values are given so that as many
   named parameters as possible get one: in "2 guests 3 nights" the 3 stands next to
   both names, but only it can be the nights. When two such ways give a parameter
   different values ("guests 3 nights"), the clause is not read. The same value said
   twice ("order 4411 ... for order 4411") is one value.

2. Arguments, by type, for the values left: a decimal goes to the one ``float`` or
   ``Decimal`` parameter left; an integer to the one ``int`` parameter left (or, for a
   tool with no ``int`` parameter at all, to the one ``float``/``Decimal`` left); a
   quoted string to the one ``str`` parameter left. Two parameters of the value's type
   left make the clause unread. Unquoted words are never bound by type.

   A value that no parameter takes (a number, a quoted string, a token such as
   ``B-12``) makes the clause unread: the person said something the call would drop.
   A required parameter left unbound makes the clause unread; an optional one keeps its
   default. ``bool`` values are bound by name only. Parameters of other types (lists,
   mappings) are never bound from a turn.

3. The tool's score. The words left once the arguments took theirs (stop words aside)
   vote, and the score compares, in this order:

   - name words: how many distinct stems of the tool's name (split on ``_``) the
     clause says;
   - parameter names: how many of the tool's parameters were named in the clause and
     bound;
   - docstring words: how many distinct stems of the docstring's first paragraph the
     clause says.

   So "charge" picks ``charge_card`` over a refund whose docstring mentions a charge,
   and "cancel booking B-12" reads as ``cancel_booking(booking='B-12')`` rather than as
   a tool named ``book_room``. Words a tool reads as its own argument names or values
   do not vote for it as name or docstring words. A tool must be named by at least one
   name or docstring word to match at all: naming only a parameter ("order 4411")
   names no tool.

The clause is read as the tool with the highest score. No tool matching, or two or
more tools sharing the highest score, makes the clause unread; so does a problem in
the chosen tool's arguments (reported as the reason). A turn is read only when every
clause is read; otherwise its reading has no steps and names the first clause that
could not be read.

Every value bound is the text of the turn: a string is a span of it, a number is a
number written in it, converted to the parameter's type hint.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from functools import partial
from typing import Any

from stalwart.texts import (
    NO_TOOL_MATCHES,
    NOTHING_SAID,
    no_argument_for,
    required_not_given,
    tools_match_equally,
    value_could_be,
    value_unclear,
)
from stalwart.tools import IDEMPOTENCY_KEY_PARAM, Param, ToolSpec

from .grammar import Grammar
from .tokens import VALUE_KINDS, Kind, Token, split_clauses, tokenize, word_parts

# --- the turn's results ---


@dataclass(frozen=True)
class Step:
    """One tool call read from one clause."""

    tool: str  # the ToolSpec name
    args: dict[str, Any]  # bound arguments, converted to the parameter's type hint
    clause: str  # the clause text as written in the turn


@dataclass(frozen=True)
class Reading:
    """What a turn was read as: every clause's step, or the first clause not read."""

    steps: tuple[Step, ...]
    unread_clause: str | None = None
    reason: str | None = None

    @property
    def read(self) -> bool:
        """True when every clause was read."""
        return self.reason is None


# --- what the core knows of a tool ---


@dataclass(frozen=True)
class ParamWords:
    """What the core reads of one parameter: its name's stems and its value's type."""

    param: Param
    kind: Any  # the type its value is converted to: the hint less Optional (str for Any)
    stems: tuple[str, ...]  # the stems of its name's words: check_in gives check, in
    joined: str  # the name as one lower-case word: "check_in" (said "check_in", "check-in")

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
    # Tools with equal signatures bind a clause's values the same way (`_Binding`).
    signature: Hashable

    @staticmethod
    def of(spec: ToolSpec, grammar: Grammar) -> ToolWords:
        params = tuple(
            ParamWords.of(p, grammar) for p in spec.params if p.name != IDEMPOTENCY_KEY_PARAM
        )
        return ToolWords(
            spec=spec,
            name_stems=_content_stems(spec.name, grammar),
            doc_stems=_content_stems(spec.summary, grammar),
            params=params,
            by_length=tuple(sorted(params, key=lambda p: -len(p.stems))),
            has_int=any(p.kind is int for p in params),
            signature=_signature(spec, params),
        )

    @property
    def stems(self) -> frozenset[str]:
        """Every stem that can vote for the tool: a clause saying none cannot match it."""
        return self.name_stems | self.doc_stems


def _signature(spec: ToolSpec, params: tuple[ParamWords, ...]) -> Hashable:
    """What binding a clause's values reads of a tool: its parameters' names, types and
    whether each is required, in order."""
    signature = tuple((p.name, p.kind, p.param.required) for p in params)
    try:
        hash(signature)
    except TypeError:  # a hint that cannot be hashed: the tool shares its binding with none
        return ("tool", id(spec))
    return signature


def _content_stems(text: str, grammar: Grammar) -> frozenset[str]:
    words = word_parts(text)
    return frozenset(grammar.stem(w) for w in words if w not in grammar.stop_words)


_VOCABULARY_CACHE_SIZE = 64
_vocabularies: dict[tuple[int, ...], tuple[tuple[ToolSpec, ...], Grammar, tuple[ToolWords, ...]]]
_vocabularies = {}
_vocabularies_guard = threading.Lock()


def vocabulary(tools: Sequence[ToolSpec], grammar: Grammar) -> tuple[ToolWords, ...]:
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
        return known[2]
    words = tuple(ToolWords.of(spec, grammar) for spec in unique)
    with _vocabularies_guard:
        if len(_vocabularies) >= _VOCABULARY_CACHE_SIZE:
            del _vocabularies[next(iter(_vocabularies))]  # the oldest tool set
        _vocabularies[key] = (tuple(unique), grammar, words)
    return words


# --- argument types ---


def _fits(token: Token, kind: Any, grammar: Grammar) -> bool:
    """Whether this token can be the value of a parameter of this type."""
    if kind is bool:
        return token.kind is Kind.WORD and (
            token.lower in grammar.true_words or token.lower in grammar.false_words
        )
    if kind is int:
        return token.kind is Kind.INTEGER
    if kind in (float, Decimal):
        return token.kind in (Kind.INTEGER, Kind.DECIMAL)
    if kind is str:
        return token.kind is not Kind.WORD or token.lower not in grammar.stop_words
    return False


def _convert(token: Token, kind: Any, grammar: Grammar) -> Any:
    if kind is bool:
        return token.lower in grammar.true_words
    if kind is int:
        return int(token.text)
    if kind is float:
        return float(token.text)
    if kind is Decimal:
        return Decimal(token.text)
    return token.text


# --- a clause, cut once for every tool it is read as ---


@dataclass(frozen=True)
class _Clause:
    tokens: list[Token]
    joined: tuple[str | None, ...]  # each word lower-case, "-" as "_"; None for other tokens
    stems: tuple[str | None, ...]  # each word's stem; None for other tokens
    said: tuple[frozenset[str], ...]  # the stems each token votes with (none: stop words)
    all_said: frozenset[str]  # every stem any token votes with
    # Where each word is, by its joined form and by its stem: where a name may start.
    where: dict[str, set[int]]

    @staticmethod
    def of(tokens: list[Token], grammar: Grammar) -> _Clause:
        words = [token.kind is Kind.WORD for token in tokens]
        joined = tuple(
            token.lower.replace("-", "_") if word else None
            for token, word in zip(tokens, words, strict=True)
        )
        stems = tuple(
            grammar.stem(token.lower) if word else None
            for token, word in zip(tokens, words, strict=True)
        )
        where: dict[str, set[int]] = {}
        for position, (form, stem) in enumerate(zip(joined, stems, strict=True)):
            if form is not None and stem is not None:
                where.setdefault(form, set()).add(position)
                where.setdefault(stem, set()).add(position)
        said = tuple(
            frozenset(
                grammar.stem(part)
                for part in word_parts(token.text)
                if part not in grammar.stop_words
            )
            if word and token.lower not in grammar.stop_words
            else frozenset()
            for token, word in zip(tokens, words, strict=True)
        )
        return _Clause(
            tokens=tokens,
            joined=joined,
            stems=stems,
            said=said,
            all_said=frozenset().union(*said),
            where=where,
        )


# --- reading a clause as one tool ---


@dataclass(frozen=True)
class _Mention:
    """Where a parameter's name is said: token positions [first, last]."""

    param: ParamWords
    first: int
    last: int


@dataclass
class _Binding:
    """A clause's values given to a tool's parameters. It depends on the parameters only
    (`ToolWords.signature`), so tools declaring the same ones share one per clause."""

    args: dict[str, Any] = field(default_factory=dict)
    used: set[int] = field(default_factory=set)  # token positions taken by arguments
    named: int = 0  # parameters bound by their name
    problem: Callable[[str], str] | None = None  # given the tool's name, why it cannot be


@dataclass(frozen=True)
class _ToolReading:
    tool: ToolWords
    args: dict[str, Any]
    problem: str | None
    score: tuple[int, int, int]

    @property
    def matches(self) -> bool:
        name_words, _, doc_words = self.score
        return name_words + doc_words > 0


def _mentions(clause: _Clause, tool: ToolWords) -> list[_Mention]:
    """Every place a parameter's name is said, longest names first, never overlapping."""
    taken: set[int] = set()
    found: list[_Mention] = []
    count = len(clause.tokens)
    for param in tool.by_length:
        parts = param.stems
        # Only a word said as the whole name, or stemmed as its first word, can start it.
        said_as_name = clause.where.get(param.joined, set())
        starts = said_as_name | clause.where.get(parts[0], set()) if parts else range(count)
        for index in sorted(starts):
            joined = clause.joined[index]
            if index in taken or joined is None:
                continue
            if joined == param.joined:
                found.append(_Mention(param, index, index))
                taken.add(index)
                continue
            span = range(index, index + len(parts))
            if span.stop > count or any(i in taken for i in span):
                continue
            # A stem is None for a token that is no word, and no part is None.
            if all(clause.stems[i] == part for i, part in zip(span, parts, strict=True)):
                found.append(_Mention(param, span.start, span.stop - 1))
                taken.update(span)
    return found


def _name_parts(name: str) -> list[str]:
    return [part for part in name.lower().split("_") if part]


def _candidates(
    mention: _Mention, tokens: Sequence[Token], names: set[int], grammar: Grammar
) -> list[int]:
    """Positions of the tokens that may be this mention's value, after it then before it."""
    kind = mention.param.kind
    textual = kind is str
    found: list[int] = []
    for position, step in ((mention.last + 1, 1), (mention.first - 1, -1)):
        while 0 <= position < len(tokens) and position not in names:
            token = tokens[position]
            adjacent = position in (mention.last + 1, mention.first - 1)
            if _fits(token, kind, grammar):
                # An unquoted string is taken only right after its name.
                if not textual or token.kind is Kind.QUOTED or (step == 1 and adjacent):
                    found.append(position)
                break
            if token.kind is Kind.WORD and token.lower in grammar.stop_words:
                position += step
                continue
            break
    return found


def _bind_by_name(binding: _Binding, tool: ToolWords, clause: _Clause, grammar: Grammar) -> None:
    """Give each named parameter one of the values next to its name.

    Every way of giving the named parameters distinct tokens, as many as can be given
    (a largest bipartite matching), must give each parameter the same value, by its
    text; otherwise the clause is unclear. Binding a value takes every saying of it
    next to the parameter's name, and the names said next to them, so none votes.
    """
    tokens = clause.tokens
    mentions = _mentions(clause, tool)
    if not mentions:
        return
    names = {i for m in mentions for i in range(m.first, m.last + 1)}
    offers: dict[str, dict[int, list[_Mention]]] = {}  # parameter -> position -> mentions
    for mention in mentions:
        offered = offers.setdefault(mention.param.name, {})
        for position in _candidates(mention, tokens, names, grammar):
            offered.setdefault(position, []).append(mention)
    candidates = {name: set(offered) for name, offered in offers.items() if offered}
    if not candidates:
        return
    outcomes = _outcomes(candidates, tokens)
    for name in candidates:
        texts = [text for text in outcomes[name] if text is not None]
        if len(texts) > 1:
            binding.problem = partial(value_unclear, name, texts)
            return
        if None in outcomes[name] and texts:
            rivals = [
                other for other in candidates if other != name and texts[0] in outcomes[other]
            ]
            binding.problem = partial(value_could_be, texts[0], [name, *rivals])
            return
    kinds = {p.name: p.kind for p in tool.params}
    for name, offered in offers.items():
        texts = [text for text in outcomes.get(name, []) if text is not None]
        if not texts:
            continue
        sayings = [position for position in sorted(offered) if tokens[position].text == texts[0]]
        binding.args[name] = _convert(tokens[sayings[0]], kinds[name], grammar)
        binding.named += 1
        for position in sayings:
            binding.used.add(position)
            for mention in offered[position]:
                binding.used.update(range(mention.first, mention.last + 1))


def _outcomes(
    candidates: dict[str, set[int]], tokens: Sequence[Token]
) -> dict[str, list[str | None]]:
    """For each parameter, the values (None: no value) it has in some largest assignment.

    An assignment gives parameters distinct positions among their candidates; the
    largest ones bind the most parameters. Values are listed in the turn's order.
    """
    if _disjoint(candidates.values()):
        # No two parameters compete for a position: each has every value it is offered,
        # and never none (the general case below gives the same, much more slowly).
        return {
            name: list(dict.fromkeys(tokens[position].text for position in sorted(positions)))
            for name, positions in candidates.items()
        }
    most = _largest_assignment(candidates)
    found: dict[str, list[str | None]] = {}
    for name, positions in candidates.items():
        rest = {other: c for other, c in candidates.items() if other != name}
        values: list[str | None] = []
        if _largest_assignment(rest) == most:
            values.append(None)
        for position in sorted(positions):
            text = tokens[position].text
            if text in values:
                continue
            without = {other: c - {position} for other, c in rest.items()}
            if 1 + _largest_assignment(without) == most:
                values.append(text)
        found[name] = values
    return found


def _disjoint(sets: Iterable[set[int]]) -> bool:
    seen: set[int] = set()
    for positions in sets:
        if not seen.isdisjoint(positions):
            return False
        seen |= positions
    return True


def _largest_assignment(candidates: dict[str, set[int]]) -> int:
    """How many parameters can be given distinct positions (a bipartite matching)."""
    holder: dict[int, str] = {}

    def place(name: str, seen: set[int]) -> bool:
        for position in sorted(candidates[name]):
            if position in seen:
                continue
            seen.add(position)
            if position not in holder or place(holder[position], seen):
                holder[position] = name
                return True
        return False

    return sum(1 for name in candidates if place(name, set()))


def _bind_by_type(
    binding: _Binding, tool: ToolWords, tokens: Sequence[Token], grammar: Grammar
) -> None:
    params = tool.params
    for position, token in enumerate(tokens):
        if position in binding.used or token.kind not in VALUE_KINDS:
            continue
        left = [p for p in params if p.name not in binding.args]
        if token.kind is Kind.DECIMAL:
            takers = [p for p in left if p.kind in (float, Decimal)]
        elif token.kind is Kind.INTEGER:
            takers = [p for p in left if p.kind is int]
            if not tool.has_int:
                takers = [p for p in left if p.kind in (float, Decimal)]
        elif token.kind is Kind.QUOTED:
            takers = [p for p in left if p.kind is str]
        else:
            takers = []
        if len(takers) > 1:
            binding.problem = partial(value_could_be, token.text, [p.name for p in takers])
            return
        if not takers:
            binding.problem = partial(no_argument_for, token.text)
            return
        binding.args[takers[0].name] = _convert(token, takers[0].kind, grammar)
        binding.used.add(position)


def _bind(tool: ToolWords, clause: _Clause, grammar: Grammar) -> _Binding:
    """Steps 1 and 2: the clause's values given to the tool's parameters, by name then
    by type, and a required parameter left without one."""
    binding = _Binding()
    _bind_by_name(binding, tool, clause, grammar)
    if binding.problem is None:
        _bind_by_type(binding, tool, clause.tokens, grammar)
    if binding.problem is None:
        missing = [p.name for p in tool.params if p.param.required and p.name not in binding.args]
        if missing:
            binding.problem = partial(required_not_given, missing[0])
    # Keep the arguments in the order the tool declares them.
    binding.args = {p.name: binding.args[p.name] for p in tool.params if p.name in binding.args}
    return binding


def _read_as(tool: ToolWords, clause: _Clause, binding: _Binding) -> _ToolReading:
    """Step 3: the tool's score, from the words the binding left."""
    said = frozenset().union(
        *(stems for position, stems in enumerate(clause.said) if position not in binding.used)
    )
    return _ToolReading(
        tool=tool,
        args=binding.args,
        problem=None if binding.problem is None else binding.problem(tool.spec.name),
        score=(len(said & tool.name_stems), binding.named, len(said & tool.doc_stems)),
    )


def read_clause(
    clause: str, offset: int, tools: Sequence[ToolWords], grammar: Grammar
) -> Step | str:
    """The clause's step, or the reason it cannot be read."""
    cut = _Clause.of(tokenize(clause, offset, grammar), grammar)
    bindings: dict[Hashable, _Binding] = {}
    readings: list[_ToolReading] = []
    for tool in tools:
        if tool.stems.isdisjoint(cut.all_said):
            continue  # it cannot match: the clause says none of its name or docstring words
        binding = bindings.get(tool.signature)
        if binding is None:
            binding = bindings[tool.signature] = _bind(tool, cut, grammar)
        reading = _read_as(tool, cut, binding)
        if reading.matches:
            readings.append(reading)
    if not readings:
        return NO_TOOL_MATCHES
    best = max(r.score for r in readings)
    top = [r for r in readings if r.score == best]
    if len(top) > 1:
        return tools_match_equally([r.tool.spec.name for r in top])
    chosen = top[0]
    if chosen.problem is not None:
        return chosen.problem
    return Step(tool=chosen.tool.spec.name, args=dict(chosen.args), clause=clause)


def read(turn: str, tools: Sequence[ToolSpec], grammar: Grammar) -> Reading:
    """Read every clause of the turn with this grammar over these tools."""
    words = vocabulary(tools, grammar)
    clauses = split_clauses(turn, grammar)
    if not clauses:
        return Reading(steps=(), unread_clause=turn.strip(), reason=NOTHING_SAID)
    steps: list[Step] = []
    for clause, offset in clauses:
        outcome = read_clause(clause, offset, words, grammar)
        if isinstance(outcome, str):
            return Reading(steps=(), unread_clause=clause, reason=outcome)
        steps.append(outcome)
    return Reading(steps=tuple(steps))


def _unique(tools: Sequence[ToolSpec]) -> list[ToolSpec]:
    seen: dict[str, ToolSpec] = {}
    for spec in tools:
        seen.setdefault(spec.name, spec)
    return list(seen.values())

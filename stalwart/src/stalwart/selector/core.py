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
        name_stems = _content_stems(spec.name, grammar)
        doc_stems = _content_stems(spec.summary, grammar)
        return ToolWords(
            spec=spec,
            name_stems=name_stems,
            doc_stems=doc_stems,
            params=params,
            by_length=tuple(sorted(params, key=lambda p: -len(p.stems))),
            has_int=any(p.kind is int for p in params),
            signature=_signature(spec, params),
            stems=name_stems | doc_stems,
        )

    # Every stem that can vote for the tool: a clause saying none cannot match it.
    stems: frozenset[str]


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
_Known = tuple[tuple[ToolSpec, ...], Grammar, tuple[ToolWords, ...], "ShapeMemo"]
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
        joined: list[str | None] = []
        stems: list[str | None] = []
        said: list[frozenset[str]] = []
        where: dict[str, set[int]] = {}
        stop_words, stem, nothing = grammar.stop_words, grammar.stem, frozenset[str]()
        for position, token in enumerate(tokens):
            if token.kind is not Kind.WORD:
                joined.append(None)
                stems.append(None)
                said.append(nothing)
                continue
            form, its_stem = token.lower.replace("-", "_"), stem(token.lower)
            joined.append(form)
            stems.append(its_stem)
            where.setdefault(form, set()).add(position)
            where.setdefault(its_stem, set()).add(position)
            if token.lower in stop_words:
                said.append(nothing)
            else:
                parts = word_parts(token.text)
                said.append(frozenset(stem(part) for part in parts if part not in stop_words))
        return _Clause(
            tokens=tokens,
            joined=tuple(joined),
            stems=tuple(stems),
            said=tuple(said),
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
    at: dict[str, int] = field(default_factory=dict)  # the token each argument was read from
    used: set[int] = field(default_factory=set)  # token positions taken by arguments
    named: int = 0  # parameters bound by their name
    problem: Callable[[str], str] | None = None  # given the tool's name, why it cannot be


@dataclass(frozen=True)
class _ToolReading:
    tool: ToolWords
    args: dict[str, Any]
    at: dict[str, int]
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
        binding.at[name] = sayings[0]
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
        binding.at[takers[0].name] = position
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
    binding.at = {name: binding.at[name] for name in binding.args}
    return binding


def _read_as(tool: ToolWords, clause: _Clause, binding: _Binding) -> _ToolReading:
    """Step 3: the tool's score, from the words the binding left."""
    said = frozenset().union(
        *(stems for position, stems in enumerate(clause.said) if position not in binding.used)
    )
    return _ToolReading(
        tool=tool,
        args=binding.args,
        at=binding.at,
        problem=None if binding.problem is None else binding.problem(tool.spec.name),
        score=(len(said & tool.name_stems), binding.named, len(said & tool.doc_stems)),
    )


def read_clause(
    clause: str,
    offset: int,
    tools: Sequence[ToolWords],
    grammar: Grammar,
    memo: ShapeMemo | None = None,
) -> Step | str:
    """The clause's step, or the reason it cannot be read.

    With a `memo` (one per tool set, `vocabulary_memo`), a clause of a shape read before
    takes the same tool and the same tokens as arguments without reading again.
    """
    tokens = tokenize(clause, offset, grammar)
    shape = _shape(tokens) if memo is not None else None
    if memo is not None and shape is not None:
        known = memo.get(shape)
        if known is not None:
            tool, at = known
            args = {name: _convert(tokens[position], kind, grammar) for name, position, kind in at}
            return Step(tool=tool, args=args, clause=clause)
    outcome = _read_tokens(tokens, tools, grammar)
    if isinstance(outcome, str):
        return outcome
    kinds = {p.name: p.kind for p in outcome.tool.params}
    if memo is not None and shape is not None:
        memo.put(
            shape,
            (outcome.tool.spec.name, tuple((n, at, kinds[n]) for n, at in outcome.at.items())),
        )
    return Step(tool=outcome.tool.spec.name, args=dict(outcome.args), clause=clause)


def _read_tokens(
    tokens: list[Token], tools: Sequence[ToolWords], grammar: Grammar
) -> _ToolReading | str:
    """The clause's reading, or the reason it cannot be read.

    A tool's score is at most what the whole clause says of it (`_ceiling`), so tools are
    read highest ceiling first, and one whose ceiling is below the best score read so far
    is not bound at all: it could not be the reading nor tie with it. The result is the
    one reading every tool gives; only the work is less.
    """
    cut = _Clause.of(tokens, grammar)
    hopeful = [
        (_ceiling(tool, cut), order, tool)
        for order, tool in enumerate(tools)
        if not tool.stems.isdisjoint(cut.all_said)  # else no word of the clause names it
    ]
    hopeful.sort(key=lambda entry: (entry[0], -entry[1]), reverse=True)
    bindings: dict[Hashable, _Binding] = {}
    best: tuple[int, int, int] | None = None
    top: list[tuple[int, _ToolReading]] = []
    for ceiling, order, tool in hopeful:
        if best is not None and ceiling < best:
            break
        binding = bindings.get(tool.signature)
        if binding is None:
            binding = bindings[tool.signature] = _bind(tool, cut, grammar)
        reading = _read_as(tool, cut, binding)
        if not reading.matches:
            continue
        if best is None or reading.score > best:
            best, top = reading.score, [(order, reading)]
        elif reading.score == best:
            top.append((order, reading))
    if not top:
        return NO_TOOL_MATCHES
    if len(top) > 1:
        return tools_match_equally([r.tool.spec.name for _, r in sorted(top, key=_first)])
    chosen = top[0][1]
    if chosen.problem is not None:
        return chosen.problem
    return chosen


# What a clause's reading depends on: each token's kind, each word as lower-case text, and
# which tokens have the same text (a value said twice is one value). Each value's own text
# is only converted at the end, so clauses of one shape read as one tool with their values
# taken from the same positions ("charge order 4411 40.00" as "charge order 17 5.00").
Shape = tuple[tuple[Kind, str | None, int], ...]
MemoEntry = tuple[str, tuple[tuple[str, int, Any], ...]]  # tool, (param, position, type)


def _shape(tokens: Sequence[Token]) -> Shape | None:
    if len(tokens) > _MEMO_MAX_TOKENS:
        return None  # a long clause is rarely said twice: not kept
    first: dict[str, int] = {}
    return tuple(
        (
            token.kind,
            token.lower if token.kind is Kind.WORD else None,
            first.setdefault(token.text, position),
        )
        for position, token in enumerate(tokens)
    )


_MEMO_MAX_TOKENS = 32
_MEMO_SIZE = 2048


class ShapeMemo:
    """The readings of clause shapes read before over one tool set, the oldest forgotten
    first; only clauses that were read (a reason names the clause's own values)."""

    def __init__(self, size: int = _MEMO_SIZE) -> None:
        self._size = size
        self._entries: dict[Shape, MemoEntry] = {}
        self._guard = threading.Lock()

    def get(self, shape: Shape) -> MemoEntry | None:
        return self._entries.get(shape)

    def put(self, shape: Shape, entry: MemoEntry) -> None:
        with self._guard:
            if len(self._entries) >= self._size:
                del self._entries[next(iter(self._entries))]
            self._entries[shape] = entry

    def clear(self) -> None:
        with self._guard:
            self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)


def _ceiling(tool: ToolWords, clause: _Clause) -> tuple[int, int, int]:
    """The highest score the clause could give the tool: every word it says votes, and
    every parameter whose name's first word it says is bound by name."""
    where = clause.where
    named = sum(1 for p in tool.params if not p.stems or p.joined in where or p.stems[0] in where)
    said = clause.all_said
    return (len(said & tool.name_stems), named, len(said & tool.doc_stems))


def _first(entry: tuple[int, _ToolReading]) -> int:
    return entry[0]


def read(turn: str, tools: Sequence[ToolSpec], grammar: Grammar) -> Reading:
    """Read every clause of the turn with this grammar over these tools."""
    words, memo = vocabulary_memo(tools, grammar)
    clauses = split_clauses(turn, grammar)
    if not clauses:
        return Reading(steps=(), unread_clause=turn.strip(), reason=NOTHING_SAID)
    steps: list[Step] = []
    for clause, offset in clauses:
        outcome = read_clause(clause, offset, words, grammar, memo)
        if isinstance(outcome, str):
            return Reading(steps=(), unread_clause=clause, reason=outcome)
        steps.append(outcome)
    return Reading(steps=tuple(steps))


def _unique(tools: Sequence[ToolSpec]) -> list[ToolSpec]:
    seen: dict[str, ToolSpec] = {}
    for spec in tools:
        seen.setdefault(spec.name, spec)
    return list(seen.values())

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

from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from stalwart.tools import IDEMPOTENCY_KEY_PARAM, Param, ToolSpec

from .grammar import Grammar
from .tokens import VALUE_KINDS, Kind, Token, split_clauses, tokenize, word_parts

# --- why a clause is not read: every reason a person may read, in one place ---

NOT_ENGLISH = "the turn is not English; it reads as Portuguese, which is not read yet"
NOTHING_SAID = "the turn says nothing"
NO_TOOL_MATCHES = "no tool matches"
_COUNT_WORDS = {2: "two", 3: "three", 4: "four", 5: "five"}


def tools_match_equally(tools: Sequence[str]) -> str:
    count = _COUNT_WORDS.get(len(tools), str(len(tools)))
    return f"{count} tools match equally: {', '.join(tools)}"


def required_not_given(argument: str, tool: str) -> str:
    return f"required argument {argument} of {tool} is not given"


def value_could_be(value: str, arguments: Sequence[str], tool: str) -> str:
    return f"{value} could be {' or '.join(arguments)} of {tool}"


def value_unclear(argument: str, values: Sequence[str], tool: str) -> str:
    return f"the value of {argument} of {tool} is unclear: {' or '.join(values)}"


def no_argument_for(value: str, tool: str) -> str:
    return f"{tool} has no argument for {value}"


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
class ToolWords:
    """A tool's stemmed vocabulary: its name's words and its docstring summary's words."""

    spec: ToolSpec
    name_stems: frozenset[str]
    doc_stems: frozenset[str]
    params: tuple[Param, ...]

    @staticmethod
    def of(spec: ToolSpec, grammar: Grammar) -> ToolWords:
        return ToolWords(
            spec=spec,
            name_stems=_content_stems(spec.name, grammar),
            doc_stems=_content_stems(spec.summary, grammar),
            params=tuple(p for p in spec.params if p.name != IDEMPOTENCY_KEY_PARAM),
        )


def _content_stems(text: str, grammar: Grammar) -> frozenset[str]:
    words = word_parts(text)
    return frozenset(grammar.stem(w) for w in words if w not in grammar.stop_words)


# --- argument types ---


def _type_of(param: Param) -> Any:
    base = param.base_type
    return str if base is Any else base


def _fits(token: Token, param: Param, grammar: Grammar) -> bool:
    """Whether this token can be the value of this parameter (type only)."""
    kind = _type_of(param)
    if kind is bool:
        return token.kind is Kind.WORD and token.lower in grammar.true_words | grammar.false_words
    if kind is int:
        return token.kind is Kind.INTEGER
    if kind in (float, Decimal):
        return token.kind in (Kind.INTEGER, Kind.DECIMAL)
    if kind is str:
        return token.kind is not Kind.WORD or token.lower not in grammar.stop_words
    return False


def _convert(token: Token, param: Param, grammar: Grammar) -> Any:
    kind = _type_of(param)
    if kind is bool:
        return token.lower in grammar.true_words
    if kind is int:
        return int(token.text)
    if kind is float:
        return float(token.text)
    if kind is Decimal:
        return Decimal(token.text)
    return token.text


# --- reading a clause as one tool ---


@dataclass(frozen=True)
class _Mention:
    """Where a parameter's name is said: token positions [first, last]."""

    param: Param
    first: int
    last: int


@dataclass
class _ToolReading:
    tool: ToolWords
    args: dict[str, Any] = field(default_factory=dict)
    used: set[int] = field(default_factory=set)  # token positions taken by arguments
    named: int = 0  # parameters bound by their name
    problem: str | None = None
    score: tuple[int, int, int] = (0, 0, 0)

    @property
    def matches(self) -> bool:
        name_words, _, doc_words = self.score
        return name_words + doc_words > 0


def _mentions(tokens: Sequence[Token], params: Sequence[Param], grammar: Grammar) -> list[_Mention]:
    """Every place a parameter's name is said, longest names first, never overlapping."""
    taken: set[int] = set()
    found: list[_Mention] = []
    by_length = sorted(params, key=lambda p: -len(_name_parts(p.name)))
    for param in by_length:
        parts = [grammar.stem(part) for part in _name_parts(param.name)]
        joined = param.name.lower()
        for index, token in enumerate(tokens):
            if index in taken or token.kind is not Kind.WORD:
                continue
            if token.lower.replace("-", "_") == joined:
                found.append(_Mention(param, index, index))
                taken.add(index)
                continue
            span = range(index, index + len(parts))
            if span.stop > len(tokens) or any(i in taken for i in span):
                continue
            if all(
                tokens[i].kind is Kind.WORD and grammar.stem(tokens[i].lower) == part
                for i, part in zip(span, parts, strict=True)
            ):
                found.append(_Mention(param, span.start, span.stop - 1))
                taken.update(span)
    return found


def _name_parts(name: str) -> list[str]:
    return [part for part in name.lower().split("_") if part]


def _candidates(
    mention: _Mention, tokens: Sequence[Token], names: set[int], grammar: Grammar
) -> list[int]:
    """Positions of the tokens that may be this mention's value, after it then before it."""
    param = mention.param
    textual = _type_of(param) is str
    found: list[int] = []
    for position, step in ((mention.last + 1, 1), (mention.first - 1, -1)):
        while 0 <= position < len(tokens) and position not in names:
            token = tokens[position]
            adjacent = position in (mention.last + 1, mention.first - 1)
            if _fits(token, param, grammar):
                # An unquoted string is taken only right after its name.
                if not textual or token.kind is Kind.QUOTED or (step == 1 and adjacent):
                    found.append(position)
                break
            if token.kind is Kind.WORD and token.lower in grammar.stop_words:
                position += step
                continue
            break
    return found


def _bind_by_name(reading: _ToolReading, tokens: Sequence[Token], grammar: Grammar) -> None:
    """Give each named parameter one of the values next to its name.

    Every way of giving the named parameters distinct tokens, as many as can be given
    (a largest bipartite matching), must give each parameter the same value, by its
    text; otherwise the clause is unclear. Binding a value takes every saying of it
    next to the parameter's name, and the names said next to them, so none votes.
    """
    mentions = _mentions(tokens, reading.tool.params, grammar)
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
    tool = reading.tool.spec.name
    for name in candidates:
        texts = [text for text in outcomes[name] if text is not None]
        if len(texts) > 1:
            reading.problem = value_unclear(name, texts, tool)
            return
        if None in outcomes[name] and texts:
            rivals = [
                other for other in candidates if other != name and texts[0] in outcomes[other]
            ]
            reading.problem = value_could_be(texts[0], [name, *rivals], tool)
            return
    params = {p.name: p for p in reading.tool.params}
    for name, offered in offers.items():
        texts = [text for text in outcomes.get(name, []) if text is not None]
        if not texts:
            continue
        sayings = [position for position in sorted(offered) if tokens[position].text == texts[0]]
        reading.args[name] = _convert(tokens[sayings[0]], params[name], grammar)
        reading.named += 1
        for position in sayings:
            reading.used.add(position)
            for mention in offered[position]:
                reading.used.update(range(mention.first, mention.last + 1))


def _outcomes(
    candidates: dict[str, set[int]], tokens: Sequence[Token]
) -> dict[str, list[str | None]]:
    """For each parameter, the values (None: no value) it has in some largest assignment.

    An assignment gives parameters distinct positions among their candidates; the
    largest ones bind the most parameters. Values are listed in the turn's order.
    """
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


def _bind_by_type(reading: _ToolReading, tokens: Sequence[Token], grammar: Grammar) -> None:
    tool = reading.tool.spec.name
    params = reading.tool.params
    has_int = any(_type_of(p) is int for p in params)
    for position, token in enumerate(tokens):
        if position in reading.used or token.kind not in VALUE_KINDS:
            continue
        left = [p for p in params if p.name not in reading.args]
        if token.kind is Kind.DECIMAL:
            takers = [p for p in left if _type_of(p) in (float, Decimal)]
        elif token.kind is Kind.INTEGER:
            takers = [p for p in left if _type_of(p) is int]
            if not has_int:
                takers = [p for p in left if _type_of(p) in (float, Decimal)]
        elif token.kind is Kind.QUOTED:
            takers = [p for p in left if _type_of(p) is str]
        else:
            takers = []
        if len(takers) > 1:
            reading.problem = value_could_be(token.text, [p.name for p in takers], tool)
            return
        if not takers:
            reading.problem = no_argument_for(token.text, tool)
            return
        reading.args[takers[0].name] = _convert(token, takers[0], grammar)
        reading.used.add(position)


def _read_as(tool: ToolWords, tokens: Sequence[Token], grammar: Grammar) -> _ToolReading:
    reading = _ToolReading(tool)
    _bind_by_name(reading, tokens, grammar)
    if reading.problem is None:
        _bind_by_type(reading, tokens, grammar)
    if reading.problem is None:
        missing = [p.name for p in tool.params if p.required and p.name not in reading.args]
        if missing:
            reading.problem = required_not_given(missing[0], tool.spec.name)
    said = {
        grammar.stem(part)
        for position, token in enumerate(tokens)
        if position not in reading.used
        and token.kind is Kind.WORD
        and token.lower not in grammar.stop_words
        for part in word_parts(token.text)
        if part not in grammar.stop_words
    }
    reading.score = (len(said & tool.name_stems), reading.named, len(said & tool.doc_stems))
    # Keep the arguments in the order the tool declares them.
    reading.args = {p.name: reading.args[p.name] for p in tool.params if p.name in reading.args}
    return reading


def read_clause(
    clause: str, offset: int, tools: Sequence[ToolWords], grammar: Grammar
) -> Step | str:
    """The clause's step, or the reason it cannot be read."""
    tokens = tokenize(clause, offset, grammar)
    readings = [r for r in (_read_as(tool, tokens, grammar) for tool in tools) if r.matches]
    if not readings:
        return NO_TOOL_MATCHES
    best = max(r.score for r in readings)
    top = [r for r in readings if r.score == best]
    if len(top) > 1:
        return tools_match_equally([r.tool.spec.name for r in top])
    chosen = top[0]
    if chosen.problem is not None:
        return chosen.problem
    return Step(tool=chosen.tool.spec.name, args=chosen.args, clause=clause)


def read(turn: str, tools: Sequence[ToolSpec], grammar: Grammar) -> Reading:
    """Read every clause of the turn with this grammar over these tools."""
    vocabulary = [ToolWords.of(spec, grammar) for spec in _unique(tools)]
    clauses = split_clauses(turn, grammar)
    if not clauses:
        return Reading(steps=(), unread_clause=turn.strip(), reason=NOTHING_SAID)
    steps: list[Step] = []
    for clause, offset in clauses:
        outcome = read_clause(clause, offset, vocabulary, grammar)
        if isinstance(outcome, str):
            return Reading(steps=(), unread_clause=clause, reason=outcome)
        steps.append(outcome)
    return Reading(steps=tuple(steps))


def _unique(tools: Sequence[ToolSpec]) -> list[ToolSpec]:
    seen: dict[str, ToolSpec] = {}
    for spec in tools:
        seen.setdefault(spec.name, spec)
    return list(seen.values())

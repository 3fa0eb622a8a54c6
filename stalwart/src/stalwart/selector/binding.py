"""Steps 1 and 2 of reading a clause as one tool (see `core.py`): the clause's values given
to the tool's parameters, by name, then by type, each converted to its parameter's type;
a yes/no named without one is a problem, and a number bound by type notes the word after
it, for the tool to say whether that word counts it (`core.py`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from functools import partial
from typing import Any

from stalwart.texts import (
    no_argument_for,
    required_not_given,
    value_could_be,
    value_unclear,
    yes_or_no_not_given,
)

from .grammar import Grammar
from .tokens import VALUE_KINDS, Kind, Token, word_parts
from .vocabulary import ParamWords, ToolWords

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


def convert(token: Token, kind: Any, grammar: Grammar) -> Any:
    if kind is bool:
        return token.lower in grammar.true_words
    if kind is int:
        return int(grammar.plain_number(token.text))
    if kind is float:
        return float(grammar.plain_number(token.text))
    if kind is Decimal:
        return Decimal(grammar.plain_number(token.text))
    return token.text


# --- a clause, cut once for every tool it is read as ---


@dataclass(frozen=True)
class Clause:
    tokens: list[Token]
    joined: tuple[str | None, ...]  # each word lower-case, "-" as "_"; None for other tokens
    stems: tuple[str | None, ...]  # each word's stem; None for other tokens
    said: tuple[frozenset[str], ...]  # the stems each token votes with (none: stop words)
    all_said: frozenset[str]  # every stem any token votes with
    # Where each word is, by its joined form and by its stem: where a name may start.
    where: dict[str, set[int]]

    @staticmethod
    def of(tokens: list[Token], grammar: Grammar) -> Clause:
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
        return Clause(
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
    role: bool = False  # a role word of the parameter ("from" for source), not its name


@dataclass
class Binding:
    """A clause's values given to a tool's parameters. It depends on the parameters only
    (`ToolWords.signature`), so tools declaring the same ones share one per clause."""

    args: dict[str, Any] = field(default_factory=dict)
    at: dict[str, int] = field(default_factory=dict)  # the token each argument was read from
    used: set[int] = field(default_factory=set)  # token positions taken by arguments
    named: int = 0  # parameters bound by their name
    problem: Callable[[str], str] | None = None  # given the tool's name, why it cannot be
    # Numbers bound by type with a word right after them that may say what they count
    # ("2 months"): (position of the number, position of the word). Whether the word is
    # the tool's own ("40.00 back") is for the tool to say (`core.py`), not the binding.
    counted: list[tuple[int, int]] = field(default_factory=list)
    # For each argument bound by its name, where its name (or role word) was said:
    # [first, last]; with its value's position (`at`), what `explain` shows.
    said_by_name: dict[str, tuple[int, int]] = field(default_factory=dict)


def _mentions(clause: Clause, tool: ToolWords) -> list[_Mention]:
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
    # A role word names a parameter only when its name is not said: "from source alice"
    # is named by "source", and its "from" is then one more stop word.
    said = {mention.param.name for mention in found}
    for param in tool.params:
        if param.name in said:
            continue
        for role in param.roles:
            for index in sorted(clause.where.get(role, ())):
                if index not in taken and clause.joined[index] == role:
                    found.append(_Mention(param, index, index, role=True))
                    taken.add(index)
    return found


def _candidates(
    mention: _Mention, tokens: Sequence[Token], names: set[int], grammar: Grammar
) -> list[int]:
    """Positions of the tokens that may be this mention's value, after it then before it
    (a role word's: after it only, see `_certain_after_role`)."""
    kind = mention.param.kind
    textual = kind is str
    found: list[int] = []
    ways = (
        ((mention.last + 1, 1),)
        if mention.role
        else ((mention.last + 1, 1), (mention.first - 1, -1))
    )
    for position, step in ways:
        while 0 <= position < len(tokens) and position not in names:
            token = tokens[position]
            adjacent = position in (mention.last + 1, mention.first - 1)
            if _fits(token, kind, grammar):
                # An unquoted string is taken only right after its name.
                near = not textual or token.kind is Kind.QUOTED or (step == 1 and adjacent)
                role = mention.role
                if near and (
                    not role or _certain_after_role(tokens, position, names, kind, grammar)
                ):
                    found.append(position)
                break
            if token.kind is Kind.WORD and token.lower in grammar.stop_words:
                position += step
                continue
            break
    return found


def _certain_after_role(
    tokens: Sequence[Token], position: int, names: set[int], kind: Any, grammar: Grammar
) -> bool:
    """Whether the token a role word offers is certainly the whole value: a quoted string;
    a number, for a parameter that takes one (a number after "at" is no hotel's name); or
    one word, no possessive ("alice's"), that nothing but a stop word, a name, a value or
    the end follows ("with Dr Silva": "Dr" is not certainly the doctor)."""
    token = tokens[position]
    if token.kind is Kind.QUOTED:
        return True
    if token.kind is Kind.INTEGER or token.kind is Kind.DECIMAL:
        return kind is not str
    if token.kind is Kind.WORD and token.lower.endswith(("'s", "\u2019s")):
        return False
    after = position + 1
    if after >= len(tokens) or after in names:
        return True
    following = tokens[after]
    return following.kind is not Kind.WORD or following.lower in grammar.stop_words


def _bind_by_name(
    binding: Binding, tool: ToolWords, clause: Clause, grammar: Grammar
) -> list[_Mention]:
    """Give each named parameter one of the values next to its name.

    Every way of giving the named parameters distinct tokens, as many as can be given
    (a largest bipartite matching), must give each parameter the same value, by its
    text; otherwise the clause is unclear. Binding a value takes every saying of it
    next to the parameter's name, and the names said next to them, so none votes.
    """
    tokens = clause.tokens
    mentions = _mentions(clause, tool)
    if not mentions:
        return mentions
    # Where names are said: a value is never looked for past one. A role word is a stop
    # word too, and another name's value may stand beyond it ("eco of yes").
    names = {i for m in mentions if not m.role for i in range(m.first, m.last + 1)}
    offers: dict[str, dict[int, list[_Mention]]] = {}  # parameter -> position -> mentions
    for mention in mentions:
        offered = offers.setdefault(mention.param.name, {})
        for position in _candidates(mention, tokens, names, grammar):
            offered.setdefault(position, []).append(mention)
    candidates = {name: set(offered) for name, offered in offers.items() if offered}
    if not candidates:
        return mentions
    outcomes = _outcomes(candidates, tokens)
    for name in candidates:
        texts = [text for text in outcomes[name] if text is not None]
        if len(texts) > 1:
            binding.problem = partial(value_unclear, name, texts)
            return mentions
        if None in outcomes[name] and texts:
            rivals = [
                other for other in candidates if other != name and texts[0] in outcomes[other]
            ]
            binding.problem = partial(value_could_be, texts[0], [name, *rivals])
            return mentions
    kinds = {p.name: p.kind for p in tool.params}
    for name, offered in offers.items():
        texts = [text for text in outcomes.get(name, []) if text is not None]
        if not texts:
            continue
        sayings = [position for position in sorted(offered) if tokens[position].text == texts[0]]
        binding.args[name] = convert(tokens[sayings[0]], kinds[name], grammar)
        binding.at[name] = sayings[0]
        # A role word binds, and is weaker than a name: only a name counts in the score.
        here = offered[sayings[0]]
        for mention in here:
            if not mention.role:
                binding.named += 1
                break
        binding.said_by_name[name] = (here[0].first, here[0].last)
        for position in sayings:
            binding.used.add(position)
            for mention in offered[position]:
                binding.used.update(range(mention.first, mention.last + 1))
    return mentions


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


def _bind_by_type(binding: Binding, tool: ToolWords, clause: Clause, grammar: Grammar) -> None:
    params, tokens = tool.params, clause.tokens
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
        binding.args[takers[0].name] = convert(token, takers[0].kind, grammar)
        binding.at[takers[0].name] = position
        binding.used.add(position)
        after = position + 1
        if token.kind in (Kind.INTEGER, Kind.DECIMAL) and _may_count(clause, after, grammar):
            binding.counted.append((position, after))


def _may_count(clause: Clause, position: int, grammar: Grammar) -> bool:
    """Whether the token at `position` is a word that may say what the number before it
    counts: a word that carries something ("months"; not "for", not "dollars")."""
    if position >= len(clause.tokens) or clause.said[position] == frozenset():
        return False  # the end, no word, or a stop word
    return clause.tokens[position].lower not in grammar.currency_words


def _named_yes_or_no(binding: Binding, mentions: Sequence[_Mention]) -> None:
    """A yes/no parameter named with no yes or no next to it ("remind patient 17
    urgently") is not left to its default, which could be the opposite of what was said."""
    for mention in mentions:
        param = mention.param
        if param.kind is bool and param.name not in binding.args:
            binding.problem = partial(yes_or_no_not_given, param.name)
            return


def bind(tool: ToolWords, clause: Clause, grammar: Grammar) -> Binding:
    """Steps 1 and 2: the clause's values given to the tool's parameters, by name then
    by type, and a required parameter left without one."""
    binding = Binding()
    mentions = _bind_by_name(binding, tool, clause, grammar)
    if binding.problem is None:
        _named_yes_or_no(binding, mentions)
    if binding.problem is None:
        _bind_by_type(binding, tool, clause, grammar)
    if binding.problem is None:
        missing = [p.name for p in tool.params if p.param.required and p.name not in binding.args]
        if missing:
            binding.problem = partial(required_not_given, missing[0])
    # Keep the arguments in the order the tool declares them.
    binding.args = {p.name: binding.args[p.name] for p in tool.params if p.name in binding.args}
    binding.at = {name: binding.at[name] for name in binding.args}
    return binding

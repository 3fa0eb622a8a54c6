"""The rulebook: a small line-based policy file, its parser, and the rules as data.

One rule per line; `#` starts a comment that runs to the end of the line; blank lines
and comment-only lines are ignored, so an empty file is a valid rulebook that allows
everything. A rule is one of:

    <tool> only after <earlier> [with same <arg>[, <arg>...]]
        An order rule: a call of <tool> is allowed only if this session already has a
        call of <earlier> that ran and was not undone, and (with `with same`) whose
        named arguments equal this call's arguments of the same names.

    cap <tool>.<arg> <op> <number>
        A cap on one argument: the call's value of <arg> must satisfy the comparison.
        A call that leaves <arg> out (an optional argument) is not capped.

    cap <tool>.<arg> total <op> <number> per session
        A cap on a sum: the values of <arg> over every earlier call of <tool> that ran
        in this session, plus this call's, must satisfy the comparison.

    cap <tool> calls <op> <number> per session
        A cap on a count: the earlier calls of <tool> that ran in this session, plus
        this one, must satisfy the comparison.

    require <tool>.<arg> from <source> [or <source>...]
        A rule on provenance: the value of <arg> must come from one of the sources,
        `turn` (the person's turn said it) or `step` (an earlier step of this run
        returned it); a value the model wrote alone is refused. A call that leaves
        <arg> out is not checked.

<op> is one of `<=`, `<`, `>=`, `>`. Caps count every call that ran, undone or not:
the record is never rewound, so a charge that was refunded still counts. Order rules
need a call that ran and was *not* undone, so a refund cannot follow a charge that was
already refunded. Rules are checked in file order and the first that refuses a call
gives the reason the person reads.

Numbers are read as decimals, so `cap charge_card.amount <= 500.00` compares exactly.
A parse error is a `ConfigError` naming the file, the line and the column.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any, Literal

from stalwart import texts
from stalwart.errors import ConfigError
from stalwart.record.history import PastCall as PastCall  # the record's own type, read here

Comparison = Literal["<=", "<", ">=", ">"]

COMPARISONS: Mapping[str, Callable[[Decimal, Decimal], bool]] = {
    "<=": lambda value, limit: value <= limit,
    "<": lambda value, limit: value < limit,
    ">=": lambda value, limit: value >= limit,
    ">": lambda value, limit: value > limit,
}


# Where a value may come from, as a `require` rule names it, and as a person reads it.


@dataclass(frozen=True)
class Reference:
    """A name a rule mentions, where it stands, so a loader can check it exists."""

    kind: Literal["tool", "arg"]
    tool: str
    name: str  # the tool's name, or the argument's
    line: int
    column: int


@dataclass(frozen=True)
class OrderRule:
    tool: str
    earlier: str
    same: tuple[str, ...]
    line: int
    references: tuple[Reference, ...] = field(default=(), repr=False, compare=False)

    def refusal(
        self, tool: str, args: Mapping[str, Any], history: Sequence[PastCall], where: str
    ) -> str | None:
        if tool != self.tool:
            return None
        for past in history:
            if past.tool != self.earlier or not past.ran or past.undone:
                continue
            if all(_same_value(past.args.get(f), args.get(f)) for f in self.same):
                return None
        if not self.same:
            return texts.REFUSAL_TEXTS["order"].format(earlier=self.earlier, where=where)
        return texts.REFUSAL_TEXTS["order_same"].format(
            earlier=self.earlier,
            fields=" and ".join(self.same),
            values=" and ".join(f"{f} {_shown(args.get(f))}" for f in self.same),
            where=where,
        )


@dataclass(frozen=True)
class _ArgumentLimit:
    """A cap on one argument of one tool: `cap <tool>.<arg> <op> <limit>`, on each call's
    value (`ArgumentCap`) or on the session's total (`TotalCap`)."""

    tool: str
    arg: str
    op: Comparison
    limit: Decimal
    line: int
    references: tuple[Reference, ...] = field(default=(), repr=False, compare=False)

    def _value(self, args: Mapping[str, Any], where: str) -> Decimal | str:
        """The argument's value as a number, or the refusal of a value that is none."""
        value = _number(args[self.arg])
        if value is None:
            return texts.REFUSAL_TEXTS["not_a_number"].format(
                arg=self.arg, value=args[self.arg], where=where
            )
        return value


class ArgumentCap(_ArgumentLimit):
    def refusal(
        self, tool: str, args: Mapping[str, Any], history: Sequence[PastCall], where: str
    ) -> str | None:
        if tool != self.tool or args.get(self.arg) is None:
            return None
        value = self._value(args, where)
        if isinstance(value, str):
            return value
        if COMPARISONS[self.op](value, self.limit):
            return None
        return texts.REFUSAL_TEXTS["cap_arg"].format(
            arg=self.arg, value=_shown(args[self.arg]), bound=texts.BOUNDS[self.op],
            limit=self.limit, where=where,
        )  # fmt: skip


class TotalCap(_ArgumentLimit):
    def refusal(
        self, tool: str, args: Mapping[str, Any], history: Sequence[PastCall], where: str
    ) -> str | None:
        if tool != self.tool:
            return None
        total = Decimal(0)
        for values in [*(p.args for p in history if p.tool == tool and p.ran), args]:
            if values.get(self.arg) is None:
                continue
            value = self._value(values, where)
            if isinstance(value, str):
                return value
            total += value
        if COMPARISONS[self.op](total, self.limit):
            return None
        return texts.REFUSAL_TEXTS["cap_total"].format(
            arg=self.arg, total=total, bound=texts.BOUNDS[self.op], limit=self.limit, where=where
        )


@dataclass(frozen=True)
class CallsCap:
    tool: str
    op: Comparison
    limit: Decimal
    line: int
    references: tuple[Reference, ...] = field(default=(), repr=False, compare=False)

    def refusal(
        self, tool: str, args: Mapping[str, Any], history: Sequence[PastCall], where: str
    ) -> str | None:
        if tool != self.tool:
            return None
        count = 1 + sum(1 for past in history if past.tool == tool and past.ran)
        if COMPARISONS[self.op](Decimal(count), self.limit):
            return None
        return texts.REFUSAL_TEXTS["cap_calls"].format(
            count=count, bound=texts.BOUNDS[self.op], limit=self.limit, where=where
        )


@dataclass(frozen=True)
class SourceRule:
    """`require <tool>.<arg> from turn [or step]`: where an argument's value may come from.

    A source is recorded per argument as "turn", "step <n> (<tool>)" or "model"; a
    source not given at all counts as "model", the one the rule never allows.
    """

    tool: str
    arg: str
    allowed: tuple[str, ...]  # of SOURCE_KINDS in texts.py
    line: int
    references: tuple[Reference, ...] = field(default=(), repr=False, compare=False)

    def refusal(
        self, tool: str, args: Mapping[str, Any], sources: Mapping[str, str] | None, where: str
    ) -> str | None:
        if tool != self.tool or args.get(self.arg) is None:
            return None
        source = (sources or {}).get(self.arg, "model")
        if source.split(" ", 1)[0] in self.allowed:
            return None
        shown = "the model alone" if source == "model" else source
        return texts.REFUSAL_TEXTS["source"].format(
            arg=self.arg, source=shown,
            allowed=" or ".join(texts.SOURCE_KINDS[kind] for kind in self.allowed), where=where,
        )  # fmt: skip


Rule = OrderRule | ArgumentCap | TotalCap | CallsCap | SourceRule


@dataclass(frozen=True)
class Rulebook:
    """The parsed policy: its rules in file order."""

    source: Path | None
    rules: tuple[Rule, ...] = ()
    # The rules of each tool, in file order, each with the place a refusal by it names
    # ("line 7 of policy.co"), made once: every step is checked, and a rule of another
    # tool allows every call (each rule's `refusal` returns None for another tool).
    _placed: Mapping[str, tuple[tuple[Rule, str], ...]] = field(
        init=False, repr=False, compare=False, default_factory=dict
    )

    def __post_init__(self) -> None:
        name = self.source.name if self.source is not None else "the rulebook"
        placed: dict[str, tuple[tuple[Rule, str], ...]] = {}
        for rule in self.rules:
            placed[rule.tool] = (*placed.get(rule.tool, ()), (rule, f"line {rule.line} of {name}"))
        object.__setattr__(self, "_placed", placed)

    def refusal(
        self,
        tool: str,
        args: Mapping[str, Any],
        history: Sequence[PastCall],
        sources: Mapping[str, str] | None = None,
    ) -> str | None:
        """None when the rules allow the call, else the reason the first rule that refuses
        it gives (a clause about the call, naming the file and line; see texts.REFUSAL_TEXTS).

        `sources` says where each argument's value came from ("turn", "step <n>
        (<tool>)" or "model"); only `require` rules read it.
        """
        for rule, where in self._placed.get(tool, ()):
            if isinstance(rule, SourceRule):
                sentence = rule.refusal(tool, args, sources, where)
            else:
                sentence = rule.refusal(tool, args, history, where)
            if sentence is not None:
                return sentence
        return None

    def references(self) -> Iterator[Reference]:
        """Every tool and argument name the rules mention."""
        for rule in self.rules:
            yield from rule.references


def load_rulebook(path: Path) -> Rulebook:
    """Read and parse a rulebook file (ConfigError if it cannot be read or parsed)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as error:
        raise ConfigError(str(path), "", f"cannot read the rulebook: {error.strerror}") from error
    parsed = parse_rulebook(text, str(path))
    return Rulebook(source=Path(path), rules=parsed.rules)


def parse_rulebook(text: str, source: str = "<rulebook>") -> Rulebook:
    """Parse a rulebook's text; a ConfigError with line and column if a line is wrong."""
    rules = [
        _parse_line(tokens, source, number)
        for number, line in enumerate(text.splitlines(), 1)
        if (tokens := _tokenize(line, source, number))
    ]
    path = None if source.startswith("<") else Path(source)
    return Rulebook(source=path, rules=tuple(rules))


# --- the parser -----------------------------------------------------------------------

_TOKEN = re.compile(
    r"(?P<space>\s+)|(?P<comment>#.*)|(?P<number>-?\d+(?:\.\d+)?(?![A-Za-z_]))"
    r"|(?P<name>[A-Za-z_][A-Za-z0-9_]*)|(?P<op><=|>=|<|>)|(?P<punct>[.,])"
)


@dataclass(frozen=True)
class _Token:
    kind: str  # "number", "name", "op", "punct", "end"
    text: str
    column: int  # 1-based


def _tokenize(line: str, source: str, number: int) -> list[_Token]:
    tokens: list[_Token] = []
    position = 0
    while position < len(line):
        match = _TOKEN.match(line, position)
        if match is None:
            raise ConfigError(
                source, "", f"unexpected character {line[position]!r}", number, position + 1
            )
        kind = match.lastgroup or ""
        if kind not in ("space", "comment"):
            tokens.append(_Token(kind, match.group(), position + 1))
        position = match.end()
    if tokens:
        tokens.append(_Token("end", "end of line", len(line.split("#", 1)[0].rstrip()) + 1))
    return tokens


class _Reader:
    """Walks one line's tokens; every `expect` failure is a ConfigError at the token."""

    def __init__(self, tokens: list[_Token], source: str, line: int) -> None:
        self.tokens = tokens
        self.position = 0
        self.source = source
        self.line = line

    @property
    def next(self) -> _Token:
        return self.tokens[self.position]

    def fail(self, expected: str, token: _Token | None = None) -> ConfigError:
        token = token or self.next
        got = "the end of the line" if token.kind == "end" else repr(token.text)
        return ConfigError(self.source, "", f"expected {expected}, got {got}", self.line,
                           token.column)  # fmt: skip

    def take(self, kind: str, expected: str, text: str | None = None) -> _Token:
        token = self.next
        if token.kind != kind or (text is not None and token.text != text):
            raise self.fail(expected)
        self.position += 1
        return token

    def word(self, text: str) -> _Token:
        return self.take("name", f"'{text}'", text)

    def at(self, text: str) -> bool:
        return self.next.kind == "name" and self.next.text == text

    def end(self) -> None:
        self.take("end", "the end of the line")

    def comparison(self) -> Comparison:
        return self.take("op", "one of <=, <, >=, >").text  # type: ignore[return-value]

    def number(self) -> Decimal:
        return Decimal(self.take("number", "a number").text)


def _parse_line(tokens: list[_Token], source: str, line: int) -> Rule:
    reader = _Reader(tokens, source, line)
    if reader.at("cap") and tokens[1].text != "only":
        reader.position += 1
        return _parse_cap(reader)
    if reader.at("require") and tokens[1].text != "only":
        reader.position += 1
        return _parse_require(reader)
    return _parse_order(reader)


def _parse_require(reader: _Reader) -> SourceRule:
    tool = reader.take("name", "a tool name")
    reader.take("punct", "'.' and an argument name", ".")
    arg = reader.take("name", "an argument name")
    references = (
        _tool_ref(tool, reader.line),
        Reference("arg", tool.text, arg.text, reader.line, arg.column),
    )
    reader.word("from")
    allowed: list[str] = []
    while True:
        token = reader.next
        if token.kind != "name" or token.text not in texts.SOURCE_KINDS:
            raise reader.fail("'turn' or 'step'")
        reader.position += 1
        if token.text not in allowed:
            allowed.append(token.text)
        if not reader.at("or"):
            break
        reader.position += 1
    reader.end()
    return SourceRule(tool.text, arg.text, tuple(allowed), reader.line, references)


def _parse_order(reader: _Reader) -> OrderRule:
    tool = reader.take("name", "a tool name, 'cap' or 'require'")
    reader.word("only")
    reader.word("after")
    earlier = reader.take("name", "the name of the tool that must come first")
    references = [_tool_ref(tool, reader.line), _tool_ref(earlier, reader.line)]
    same: list[str] = []
    if reader.next.kind != "end":
        reader.word("with")
        reader.word("same")
        while True:
            argument = reader.take("name", "an argument name")
            same.append(argument.text)
            for owner in (tool.text, earlier.text):
                references.append(
                    Reference("arg", owner, argument.text, reader.line, argument.column)
                )
            if reader.next.text != ",":
                break
            reader.position += 1
    reader.end()
    return OrderRule(tool.text, earlier.text, tuple(same), reader.line, tuple(references))


def _parse_cap(reader: _Reader) -> ArgumentCap | TotalCap | CallsCap:
    tool = reader.take("name", "a tool name")
    references = [_tool_ref(tool, reader.line)]
    if reader.at("calls"):
        reader.position += 1
        op, limit = reader.comparison(), reader.number()
        if limit != limit.to_integral_value():
            raise reader.fail("a whole number of calls", reader.tokens[reader.position - 1])
        _per_session(reader)
        return CallsCap(tool.text, op, limit, reader.line, tuple(references))
    reader.take("punct", "'.' and an argument name, or 'calls'", ".")
    arg = reader.take("name", "an argument name")
    references.append(Reference("arg", tool.text, arg.text, reader.line, arg.column))
    if reader.at("total"):
        reader.position += 1
        op, limit = reader.comparison(), reader.number()
        _per_session(reader)
        return TotalCap(tool.text, arg.text, op, limit, reader.line, tuple(references))
    op, limit = reader.comparison(), reader.number()
    reader.end()
    return ArgumentCap(tool.text, arg.text, op, limit, reader.line, tuple(references))


def _per_session(reader: _Reader) -> None:
    reader.word("per")
    reader.word("session")
    reader.end()


def _tool_ref(token: _Token, line: int) -> Reference:
    return Reference("tool", token.text, token.text, line, token.column)


# --- values ---------------------------------------------------------------------------


def _number(value: Any) -> Decimal | None:
    if isinstance(value, bool):
        return None
    try:
        number = Decimal(str(value).strip())
    except InvalidOperation:
        return None
    return number if number.is_finite() else None


def _same_value(left: Any, right: Any) -> bool:
    # Arguments come back from the record as JSON, so 4411 and "4411" are one order.
    if left == right:
        return True
    left_number, right_number = _number(left), _number(right)
    if left_number is not None and right_number is not None:
        return left_number == right_number
    return str(left) == str(right)


def _shown(value: Any) -> str:
    return repr(value) if isinstance(value, str) else str(value)

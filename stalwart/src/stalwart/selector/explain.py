"""How a turn is read, step by step, and why a clause is not (issue 29, point 3).

``explain(turn, tools, grammar)`` reads the turn as `read` does, and says more: every
clause, read on its own (a clause after one that is not read is still shown), with the
tool it is read as and each argument with the words of the turn it came from, by name
("order 4411") or by type ("40.00"); or the reason it is not read. Its `reading` is the
turn's own `Reading`, the one an agent acts on: a clause shown as read is not run when
another clause of the turn is not (a turn is read whole or not at all).

It runs nothing, asks nothing and writes nothing: it reads the tools' specs and the
turn, and no record. Nothing read here is kept in the shape memo (`memo.py`), so
explaining a turn changes no later reading.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Literal

from stalwart import texts
from stalwart.texts import clause_not_a_request
from stalwart.tools import ToolSpec

from .core import Reading, read, read_tokens
from .grammar import Grammar
from .mood import mood_of
from .tokens import Kind, Token, split_clauses, tokenize
from .vocabulary import vocabulary

By = Literal["name", "type"]


@dataclass(frozen=True)
class ArgumentRead:
    """One argument of a clause's step: its value and the words of the turn it came from."""

    name: str
    value: Any  # converted to the parameter's type hint, as the step carries it
    words: str  # as the turn writes them: "order 4411", "amount of 40.00", "'Dune'"
    by: By  # "name": said next to its parameter's name; "type": the one parameter of its type


@dataclass(frozen=True)
class ClauseRead:
    """One clause of the turn, as read on its own: its tool and arguments, or why not."""

    clause: str  # as written in the turn
    start: int  # where it starts in the turn
    tool: str | None = None
    arguments: tuple[ArgumentRead, ...] = ()
    reason: str | None = None  # why it is not read (then `tool` is None)

    @property
    def read(self) -> bool:
        return self.reason is None


@dataclass(frozen=True)
class Explanation:
    """A turn explained: each clause, and the turn's own reading (what would run)."""

    turn: str
    clauses: tuple[ClauseRead, ...]
    reading: Reading

    def to_json(self) -> dict[str, Any]:
        """Plain JSON: numbers the step carries as Decimal are their exact text."""
        return {
            "turn": self.turn,
            "read": self.reading.read,
            "unread_clause": self.reading.unread_clause,
            "reason": self.reading.reason,
            "clauses": [
                {
                    "clause": clause.clause,
                    "start": clause.start,
                    "read": clause.read,
                    "tool": clause.tool,
                    "arguments": [
                        {
                            "name": argument.name,
                            "value": _json_value(argument.value),
                            "words": argument.words,
                            "by": argument.by,
                        }
                        for argument in clause.arguments
                    ],
                    "reason": clause.reason,
                }
                for clause in self.clauses
            ],
            "steps": [
                {"tool": step.tool, "args": {k: _json_value(v) for k, v in step.args.items()}}
                for step in self.reading.steps
            ],
        }

    def clause_lines(self) -> list[str]:
        """Each clause as `stalwart explain` prints it: its tool and each argument with its
        words, or why it is not read (what the web page shows under a turn refused)."""
        lines: list[str] = []
        for number, clause in enumerate(self.clauses, 1):
            if clause.tool is None:
                reason = clause.reason or ""
                lines.append(texts.explained_unread_clause(number, clause.clause, reason))
                continue
            lines.append(texts.explained_clause(number, clause.clause, clause.tool))
            for argument in clause.arguments:
                value, words = str(argument.value), argument.words
                lines.append(texts.explained_argument(argument.name, value, words, argument.by))
        return lines

    def lines(self) -> list[str]:
        """What `stalwart explain` prints: each clause, then what the turn reads as."""
        reading = self.reading
        if reading.read:
            last = texts.explained_read(len(reading.steps))
        else:
            last = texts.explained_unread(reading.unread_clause, reading.reason or "")
        return [*self.clause_lines(), last]


def _json_value(value: Any) -> Any:
    return str(value) if isinstance(value, Decimal) else value


def explain(turn: str, tools: Sequence[ToolSpec], grammar: Grammar) -> Explanation:
    """The turn explained clause by clause with this grammar over these tools."""
    reading = read(turn, tools, grammar)
    words = vocabulary(tools, grammar)
    clauses: list[ClauseRead] = []
    for clause, offset in split_clauses(turn, grammar):
        tokens = tokenize(clause, offset, grammar)
        found = mood_of(clause, offset, tokens, grammar.moods, words)
        if found is not None:
            reason = clause_not_a_request(found.mood.value, found.words)
            clauses.append(ClauseRead(clause, offset, reason=reason))
            continue
        outcome = read_tokens(clause, offset, tokens, words, grammar)
        if isinstance(outcome, str):
            clauses.append(ClauseRead(clause, offset, reason=outcome))
            continue
        by_name = outcome.binding.said_by_name
        arguments = []
        for name, value in outcome.args.items():
            at = outcome.at[name]
            first, last = by_name.get(name, (at, at))
            first, last = min(first, at), max(last, at)
            said: By = "name" if name in by_name else "type"
            arguments.append(ArgumentRead(name, value, _span(turn, tokens, first, last), said))
        clauses.append(
            ClauseRead(clause, offset, tool=outcome.tool.spec.name, arguments=tuple(arguments))
        )
    return Explanation(turn=turn, clauses=tuple(clauses), reading=reading)


def explained_unread(turn: str, reason: str) -> Explanation:
    """A turn not read as a whole, before any clause (not its language): no clause shown."""
    return Explanation(
        turn=turn, clauses=(), reading=Reading(steps=(), unread_clause=turn.strip(), reason=reason)
    )


def _span(turn: str, tokens: Sequence[Token], first: int, last: int) -> str:
    """Tokens [first, last] as the turn writes them, quotes around a quoted string kept."""
    start = tokens[first].start - (1 if tokens[first].kind is Kind.QUOTED else 0)
    end = tokens[last].start + len(tokens[last].text)
    end += 1 if tokens[last].kind is Kind.QUOTED else 0
    return turn[start:end]

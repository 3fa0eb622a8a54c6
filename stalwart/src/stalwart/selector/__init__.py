"""The selector: reads a person's turn into steps, with no model.

``read_turn(turn, tools)`` reads an English turn over the agent's own tools::

    read_turn("charge order 4411 40.00, then update the crm for order 4411", tools)
    # Reading(steps=(Step("charge_card", {"order": 4411, "amount": 40.0}, ...),
    #                Step("update_crm", {"order": 4411}, ...)))

It is a grammar over the tools, not a table: a clause names a tool by the words of its
name and its docstring's first paragraph, and gives its arguments by parameter name
("order 4411", "3 nights") or, for what is left, by type ("40.00" to the one float
parameter). How clauses, words and numbers are written is the language's grammar
(`english.py`); how a clause meets a tool is shared (`core.py`, which explains the
score and every rule of binding).

What a tool author should know
    - Name a tool with words a person would say: ``charge_card``, ``cancel_booking``.
      Its name's words weigh most; its docstring's first paragraph breaks ties.
    - Name parameters with the words a person puts next to a value: ``order``,
      ``nights``, ``check_in`` (said "check in").
    - A value is a number, a yes/no, one token after the parameter's name, or a quoted
      string. Several words make one value only between quotes.
    - A parameter named ``idempotency_key`` is the runtime's and is never read from a turn.
    - Give a tool the phrasings people use, with role words for its parameters:
      ``@tool(phrases=["send {amount} from {payer} to {payee}"])`` makes "from alice" the
      payer and "to bob" the payee (`vocabulary.py`).

A turn is read only if every clause is: a clause that matches no tool, or two tools
equally, or leaves a required argument unbound, or says a value no argument takes,
makes the whole turn unread, and the `Reading` names that clause and why.

Never the opposite of what was said: a clause that is negated ("don't", "never", "no need
to"), conditional ("if", "unless", "when"), a question ("should I ...", any clause with a
question mark), hedged ("maybe", "perhaps") or leaves a choice ("or") is never a step, nor
is one that asks for the opposite of its tool ("cancel the transfer"), tells it was done
("I already charged") or says when or how much in a word the step would drop ("next
friday", "half") (`mood.py`). A turn with such a clause is refused whole, even when its
other clauses are plain ("freeze card 4411, but don't send the statement"): the safer
choice, since running its plain half acts on a turn not understood in full. The reason
names the clause and the words: 'it says not to: "don't"'. With `on_unread: model` the
turn goes to the model, as any turn not read does.

How a turn is read, clause by clause, each argument with the words it came from, and
each clause not read with its reason: ``explain_turn(turn, tools)`` (`explain.py`), also
``stalwart explain agent.yaml "turn"``. It runs nothing.

Languages: an agent reads English unless its agent.yaml says ``languages: [english,
portuguese]`` (``read_turn(turn, tools, languages)``): each turn is then read in exactly
one of them, told by its words, and a mixed or unclear one is refused (`languages.py`;
the Portuguese grammar is `portuguese.py`). With English alone, a turn written in
Portuguese is not read as anything.
"""

from __future__ import annotations

from collections.abc import Sequence

from stalwart.tools import ToolSpec

from ..texts import LANGUAGE_UNCLEAR, MOOD_REASONS
from . import english
from .core import Reading, Step, read
from .explain import ArgumentRead, ClauseRead, Explanation, explain, explained_unread
from .grammar import Grammar
from .languages import DEFAULT, LANGUAGES, grammars, language_of

__all__ = [
    "DEFAULT",
    "GRAMMAR",
    "LANGUAGES",
    "ArgumentRead",
    "ClauseRead",
    "Explanation",
    "Grammar",
    "Reading",
    "Step",
    "explain_turn",
    "grammars",
    "read_turn",
]

# The language `read_turn` reads by default: the grammar an agent reads its turns with.
GRAMMAR = english.GRAMMAR


def read_turn(turn: str, tools: Sequence[ToolSpec], languages: Sequence[str] = DEFAULT) -> Reading:
    """Read a turn into steps over these tools, in one of `languages` (English alone by
    default); see the module's docstring."""
    grammar = language_of(turn, languages)
    if isinstance(grammar, str):
        return Reading(steps=(), unread_clause=turn.strip(), reason=grammar)
    if grammar is not None:
        return read(turn, tools, grammar)
    return _read_in_each(turn, tools, languages)[0]


def explain_turn(
    turn: str, tools: Sequence[ToolSpec], languages: Sequence[str] = DEFAULT
) -> Explanation:
    """How `read_turn` reads the turn, clause by clause (`explain.py`); runs nothing."""
    grammar = language_of(turn, languages)
    if isinstance(grammar, str):
        return explained_unread(turn, grammar)
    if grammar is None:
        reading, grammar = _read_in_each(turn, tools, languages)
        if grammar is None:
            return explained_unread(turn, reading.reason or "")
    return explain(turn, tools, grammar)


_MOOD_REASONS = tuple(MOOD_REASONS.values())


def _read_in_each(
    turn: str, tools: Sequence[ToolSpec], languages: Sequence[str]
) -> tuple[Reading, Grammar | None]:
    """A turn whose words mark no language, read in each of the agent's: its reading when
    all agree (the same steps, or none), with the grammar it is that of; else not read,
    with a reason a language gives for its mood ("never" in English), or as unclear."""
    each = [(read(turn, tools, grammar), grammar) for grammar in grammars(languages)]
    first = each[0]
    if all(_same(reading, first[0]) for reading, _ in each):
        return first
    for reading, grammar in each:
        if reading.reason is not None and reading.reason.startswith(_MOOD_REASONS):
            return reading, grammar
    return Reading(steps=(), unread_clause=turn.strip(), reason=LANGUAGE_UNCLEAR), None


def _same(reading: Reading, other: Reading) -> bool:
    """One reading: the same steps, or both not read (the first one's reason is said)."""
    if not reading.read or not other.read:
        return not reading.read and not other.read
    return [(s.tool, s.args) for s in reading.steps] == [(s.tool, s.args) for s in other.steps]

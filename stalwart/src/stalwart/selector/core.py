"""The selector's core: match each clause of a turn to one tool and bind its arguments.

The core knows no language. A `Grammar` (one per language: `english.py`) says how a
turn splits into clauses, which words carry nothing, how words are stemmed, and how
numbers and yes/no are written. The core is a grammar over the agent's own tools: it
reads a tool's name, its docstring's first paragraph and its parameters, and nothing
written for one tool set.

A turn's mood first
    Before any clause is read as a tool, every clause's mood is read (`mood.py`, from
    the grammar's negators, conditions, question words, hedges and choices): a clause
    that is negated, conditional, a question, hedged or leaves a choice is never a step,
    and a turn with one is not read at all, even when its other clauses are plain; its
    reason names that clause and the words that set its mood ('it says not to: "don't"').
    Once a clause's tool is chosen (step 3), a clause that asks for the opposite of that
    tool ("cancel the transfer ..."), tells it was done ("I already charged ...") or says
    when, how often or how much in a word the step would drop ("... next friday") is
    not read either.

Reading one clause
    The clause is cut into tokens (`tokens.py`): words, integers, decimals, quoted
    strings ("..." or '...', the value is what stands between the quotes) and other
    tokens (``2026-12-01``, ``B-12``). Every tool in the catalogue is then tried as the
    reading of the clause, in three steps.

1. Arguments, by name. A parameter is named by the words of its name (``check_in`` is
   "check in" or "check_in"; stems, so "nights" names ``night`` too), or by a role word
   its tool's docstring puts before its name ("from" in "Move money from the source
   account ...": see `english.py`) or one of its declared phrases puts before it ("from"
   in "send {amount} from {payer}": `vocabulary.py`), whose value is the token right
   after it. A name
   counts in the score below; a role word binds, and does not count. Its value stands
   next to the name, after it ("order 4411") or before it ("3 nights"); stop words may
   stand between a name and a number, a yes/no or a quoted string ("amount of 40.00").
   A ``str`` value without quotes is the one token right after the name ("hotel
   Aurora"); a value of several words must be quoted. Values are given so that as many
   named parameters as possible get one: in "2 guests 3 nights" the 3 stands next to
   both names, but only it can be the nights. When two such ways give a parameter
   different values ("guests 3 nights"), the clause is not read. The same value said
   twice ("order 4411 ... for order 4411") is one value. A ``bool`` parameter named
   with no yes or no next to it ("remind patient 17 urgently") makes the clause unread:
   its default could be the opposite of what was said.

2. Arguments, by type, for the values left: a decimal goes to the one ``float`` or
   ``Decimal`` parameter left; an integer to the one ``int`` parameter left (or, for a
   tool with no ``int`` parameter at all, to the one ``float``/``Decimal`` left); a
   quoted string to the one ``str`` parameter left. Two parameters of the value's type
   left make the clause unread. Unquoted words are never bound by type. A number bound
   by type whose next word may say what it counts ("for 2 months") is bound only when
   that word is the tool's own (a word of its name or docstring: "40.00 back"), a
   parameter's name, or a currency word of the grammar ("40.00 USD"): "refill
   prescription 88 for 2 months" is not 2 days.

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

   A tool's declared phrases (``@tool(phrases=["send money"])``, agent.yaml's
   ``phrases:``) are its name's words too, when the clause says one in full: all its
   words in order, with only stop words between ("send the money"); a phrase's words
   said apart count for nothing (`vocabulary.py`).

   A tool whose name has an undoing word ("reverse" of ``reverse_transfer``, see
   `english.py`'s reversers) is a reading only of a clause that says that word: so
   "transfer 25.00 ..." reaches ``transfer`` and never ties with its undo, and "reverse
   the transfer ..." reaches ``reverse_transfer``, as does a clause saying one of its
   declared phrases ("claw back ...").

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

The parts: `vocabulary.py` (what the core knows of a tool, worked out once per tool set),
`mood.py` (a clause's mood), `binding.py` (steps 1 and 2), this module (step 3, and a turn
clause by clause), `memo.py` (a clause of a shape read before, read again without binding).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any

from stalwart.steps import PlannedStep
from stalwart.texts import (
    NO_TOOL_MATCHES,
    NOTHING_SAID,
    clause_not_a_request,
    clause_opposite,
    no_argument_for,
    number_not_read,
    number_two_ways,
    number_with_a_word,
    tools_match_equally,
)
from stalwart.tools import ToolSpec

from .binding import Binding, Clause, bind, convert
from .grammar import Grammar, Mood
from .memo import MemoEntry, Shape, ShapeMemo, shape_of
from .mood import for_tool, mood_of, qualifier_of, trailing_word
from .tokens import Kind, Token, split_clauses, tokenize
from .vocabulary import ToolWords, vocabulary_memo

# --- the turn's results ---


# One tool call read from one clause: the run's planned step, its clause the clause's
# text as written in the turn (the model loop makes the same type of a model's call).
Step = PlannedStep


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


@dataclass(frozen=True)
class ToolReading:
    """A clause read as one tool: its arguments, the binding they came from, its score."""

    tool: ToolWords
    args: dict[str, Any]
    at: dict[str, int]
    problem: str | None
    score: tuple[int, int, int]
    binding: Binding

    @property
    def matches(self) -> bool:
        name_words, _, doc_words = self.score
        return name_words + doc_words > 0


def _read_as(tool: ToolWords, clause: Clause, binding: Binding) -> ToolReading:
    """Step 3: the tool's score, from the words the binding left; the words of a phrase of
    the tool said in full count as its name's."""
    said = frozenset().union(
        *(stems for position, stems in enumerate(clause.said) if position not in binding.used)
    )
    named = tool.name_stems
    if tool.phrase_stems:
        named = named | phrases_said(tool, clause)
    return ToolReading(
        tool=tool,
        args=binding.args,
        at=binding.at,
        problem=_problem(tool, clause, binding),
        score=(len(said & named), binding.named, len(said & tool.doc_stems)),
        binding=binding,
    )


def phrases_said(tool: ToolWords, clause: Clause) -> frozenset[str]:
    """The stems of each of the tool's declared phrases the clause says in full: all its
    words in order, the clause's stop words between them aside ("send the money" says
    "send money"; "top 40.00" does not say "top up")."""
    if not tool.phrase_stems:
        return frozenset()
    stems, said, tokens = clause.stems, clause.said, clause.tokens
    found: set[str] = set()
    for words, content in zip(tool.phrase_words, tool.phrase_stems, strict=True):
        if not clause.all_said.issuperset(content):
            continue
        for start, first in enumerate(stems):
            if first == words[0] and _says_from(words, stems, said, tokens, start):
                found.update(content)
                break
    return frozenset(found)


def _says_from(
    words: tuple[str, ...],
    stems: tuple[str | None, ...],
    said: tuple[frozenset[str], ...],
    tokens: Sequence[Token],
    start: int,
) -> bool:
    """Whether the phrase's words are said from token `start` on, in order, with only the
    clause's stop words (words that vote for nothing) between them."""
    wanted, at = 1, start + 1
    while wanted < len(words) and at < len(stems):
        if stems[at] == words[wanted]:
            wanted += 1
        elif said[at] or tokens[at].kind is not Kind.WORD:
            return False  # a word that says something, or a value: the phrase is broken
        at += 1
    return wanted == len(words)


def _problem(tool: ToolWords, clause: Clause, binding: Binding) -> str | None:
    """Why the tool cannot be the clause's reading: its binding's problem, or a number
    bound by type whose next word may say what it counts and is no word of the tool nor
    a parameter's name ("refill prescription 88 for 2 months": 2 is no count of days)."""
    if binding.problem is not None:
        return binding.problem(tool.spec.name)
    for number, word in binding.counted:
        if word in binding.used or not clause.said[word].isdisjoint(tool.stems):
            continue  # a parameter's name ("21.5 eco yes"), or the tool's word ("40.00 back")
        if any(not clause.said[word].isdisjoint(p.stems) for p in tool.params):
            continue
        tokens = clause.tokens
        return number_with_a_word(tokens[number].text, tokens[word].text, tool.spec.name)
    return None


def read_clause(
    clause: str,
    offset: int,
    tokens: list[Token],
    tools: Sequence[ToolWords],
    grammar: Grammar,
    memo: ShapeMemo | None = None,
    shape: Shape | None = None,
    known: MemoEntry | None = None,
) -> Step | str:
    """The clause's step, or the reason it cannot be read.

    With a `memo` (one per tool set, `vocabulary_memo`), a clause of a shape read before
    (`known`, the memo's entry for its `shape`) takes the same tool and the same tokens
    as arguments without reading again.
    """
    if known is not None:
        tool, at = known
        args = {name: convert(tokens[position], kind, grammar) for name, position, kind in at}
        return Step(tool=tool, args=args, clause=clause)
    outcome = read_tokens(clause, offset, tokens, tools, grammar)
    if isinstance(outcome, str):
        return outcome
    kinds = {p.name: p.kind for p in outcome.tool.params}
    if memo is not None and shape is not None:
        memo.put(
            shape,
            (outcome.tool.spec.name, tuple((n, at, kinds[n]) for n, at in outcome.at.items())),
        )
    return Step(tool=outcome.tool.spec.name, args=dict(outcome.args), clause=clause)


def read_tokens(
    clause: str, offset: int, tokens: list[Token], tools: Sequence[ToolWords], grammar: Grammar
) -> ToolReading | str:
    """The clause's reading, or the reason it cannot be read.

    A tool's score is at most what the whole clause says of it (`_ceiling`), so tools are
    read highest ceiling first, and one whose ceiling is below the best score read so far
    is not bound at all: it could not be the reading nor tie with it. The result is the
    one reading every tool gives; only the work is less.
    """
    for token in tokens:
        if token.kind is Kind.UNCLEAR:
            return _unclear_number(token.text, grammar)
    cut = Clause.of(tokens, grammar)
    said = cut.all_said
    hopeful = [
        (_ceiling(tool, cut), order, tool)
        for order, tool in enumerate(tools)
        # else no word of the clause names it, or it does not say the tool's undoing word
        # (nor one of its phrases, which names it without that word)
        if not tool.stems.isdisjoint(said) and (tool.must_say <= said or phrases_said(tool, cut))
    ]
    hopeful.sort(key=lambda entry: (entry[0], -entry[1]), reverse=True)
    bindings: dict[Hashable, Binding] = {}
    best: tuple[int, int, int] | None = None
    top: list[tuple[int, ToolReading]] = []
    for ceiling, order, tool in hopeful:
        if best is not None and ceiling < best:
            break
        binding = bindings.get(tool.signature)
        if binding is None:
            binding = bindings[tool.signature] = bind(tool, cut, grammar)
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
    name = chosen.tool.spec.name
    found = for_tool(clause, offset, cut, chosen.tool, grammar.moods, grammar)
    if found is not None and found.mood is Mood.OPPOSITE:
        return clause_opposite(name, found.words)
    if found is not None:
        return clause_not_a_request(found.mood.value, found.words)
    if chosen.problem is not None:
        return chosen.problem
    qualifier = qualifier_of(cut, chosen.binding.used, chosen.tool, grammar)
    if qualifier is not None:
        return no_argument_for(f'"{qualifier}"', name)
    trailing = trailing_word(cut, chosen.binding, chosen.tool)
    if trailing is not None:
        return no_argument_for(f'"{trailing}"', name)
    return chosen


def _unclear_number(text: str, grammar: Grammar) -> str:
    """Why digits and marks are read as no number: two amounts, or none."""
    if grammar.ambiguous_number is not None and grammar.ambiguous_number.fullmatch(text):
        first, second = grammar.number_readings(text)
        return number_two_ways(text, first, second)
    return number_not_read(text, grammar.number_hint)


def _ceiling(tool: ToolWords, clause: Clause) -> tuple[int, int, int]:
    """The highest score the clause could give the tool: every word it says votes, and
    every parameter whose name's first word it says is bound by name."""
    where = clause.where
    named = sum(1 for p in tool.params if not p.stems or p.joined in where or p.stems[0] in where)
    said = clause.all_said
    return (len(said & tool.own_stems), named, len(said & tool.doc_stems))


def _first(entry: tuple[int, ToolReading]) -> int:
    return entry[0]


def read(turn: str, tools: Sequence[ToolSpec], grammar: Grammar) -> Reading:
    """Read every clause of the turn with this grammar over these tools: first every
    clause's mood (`mood.py`), then each clause as a tool."""
    words, memo = vocabulary_memo(tools, grammar)
    clauses = split_clauses(turn, grammar)
    if not clauses:
        return Reading(steps=(), unread_clause=turn.strip(), reason=NOTHING_SAID)
    cut: list[tuple[str, int, list[Token], Shape | None, MemoEntry | None]] = []
    for clause, offset in clauses:
        tokens = tokenize(clause, offset, grammar)
        shape = shape_of(tokens)
        known = memo.get(shape) if shape is not None else None
        found = mood_of(
            clause, offset, tokens, grammar.moods, words, words_known_plain=known is not None
        )
        if found is not None:
            reason = clause_not_a_request(found.mood.value, found.words)
            return Reading(steps=(), unread_clause=clause, reason=reason)
        cut.append((clause, offset, tokens, shape, known))
    steps: list[Step] = []
    for clause, offset, tokens, shape, known in cut:
        outcome = read_clause(clause, offset, tokens, words, grammar, memo, shape, known)
        if isinstance(outcome, str):
            return Reading(steps=(), unread_clause=clause, reason=outcome)
        steps.append(outcome)
    return Reading(steps=tuple(steps))

"""A clause's mood: a plain request, or one that is never a step.

A step is only ever read from a plain request. A clause that says not to ("don't charge
order 4411"), that hangs on a condition ("if the balance is low, transfer ..."), that
asks ("should I freeze card 4411?"), that is not sure ("maybe send the statement") or
that leaves a choice ("day monday or tuesday") is never a step, whichever tool its other
words name: the core (`core.py`) reads every clause's mood before it reads any clause as
a tool, and a turn with one such clause is not read at all, its reason naming the clause
and the words that set its mood.

Two more are read once the clause's tool is chosen, since they depend on that tool: a
clause that asks for the opposite of what the tool does ("cancel the transfer ...",
"unbook the room ...": `for_tool`) and one that tells that it was done ("I already
charged order 4411"). A word that says when, how often or how much, that the step would
drop ("transfer ... next friday", "charge half of 40.00": `qualifier_of`), makes the
clause unread too: the step would run now, once and whole.

How the mood is read
    The words are the language's, declared as data in its grammar (`Grammar.moods`, a
    `Moods`: English's are in `english.py`); this module knows no language. It reads
    the clause's tokens (`tokens.py`) left to right:

    - a phrase of the grammar's negators, conditionals, question words, hedges or
      choices, anywhere in the clause ("do not", "unless", "whether", "perhaps", "or"),
      or a word with a negating ending ("shouldn't");
    - a question opener at the clause's start, after any fillers ("should I ...",
      "so, what ...", "is card 4411 ..."): only there, since "should" or "is" elsewhere
      asks nothing;
    - a question mark anywhere outside a quoted string.

    The first found sets the mood; of two phrases starting at one word, the longer
    ("not sure" is hedged; "not" alone is negated). A plain phrase of the grammar says
    such a word and sets no mood ("as soon as possible").

Scope
    A mood's scope is the clause it stands in, and all of it: the clause is the unit a
    step is read from, and a negation or a condition anywhere in it bears on that step
    ("transfer 25.00 ... unless the balance is low"). Clauses are cut by the grammar's
    separators ("then", ";", "but"), so in "freeze card 4411, but don't send the
    statement" the negation's clause is "don't send the statement", and it is that
    clause the reason names.

    A turn with such a clause is refused whole, even when its other clauses are plain:
    the person who wrote "freeze card 4411, but don't send the statement" gave the turn
    as one, and running only its plain half would act on a turn the selector has just
    said it did not understand in full. The reply names the clause and why; with
    `on_unread: model` the turn goes to the model, as any turn not read does.

What is no mood word
    Words are matched whole, so a value or a word that only contains one is none
    ("knot", "Notley"; "cannot" is one, as "can not"). A quoted string is a value and
    says nothing here ("check schedule doctor 'Not Available'"). A tool's or a
    parameter's own name said in full is the tool's ("set do not disturb" for a tool
    named ``do_not_disturb``; "cancel booking B-12" for ``cancel_booking``). Any other
    mood word is read as one, also where a value could stand: a value that is such a
    word is written between quotes.

The work is one pass over the clause's tokens, each looked up in a table of phrases by
their first word; a clause read before (`memo.py`: its shape holds every word) is known
plain, so only its question mark is looked for. The checks made once the tool is chosen
run only for a clause read anew, one pass each.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence, Set
from dataclasses import dataclass

from .binding import Binding, Clause
from .grammar import Grammar, Mood, Moods, Phrase
from .tokens import QUOTED, Kind, Token, has_quote
from .vocabulary import ToolWords


@dataclass(frozen=True)
class MoodFound:
    """Why a clause is no plain request: its mood, and the words that set it as written."""

    mood: Mood
    words: str


def mood_of(
    clause: str,
    offset: int,
    tokens: Sequence[Token],
    moods: Moods,
    tools: Sequence[ToolWords],
    *,
    words_known_plain: bool = False,
) -> MoodFound | None:
    """The clause's mood, or None for a plain request; see the module's docstring.

    `offset` is where the clause starts in the turn (its tokens' `start` are in the
    turn). `words_known_plain`: a clause of this shape was read before (`memo.py`), so
    its words set no mood and only a question mark is looked for.
    """
    if not words_known_plain and _may_say(clause, tokens, moods):
        found = _said(clause, offset, tokens, moods, tools)
        if found is not None:
            return found
    at = question_mark(clause, moods.question_marks)
    if at >= 0:
        return MoodFound(Mood.QUESTION, clause[at])
    return None


def _may_say(clause: str, tokens: Sequence[Token], moods: Moods) -> bool:
    """Whether the clause's words may set a mood: one of them starts a phrase, or one
    may have a negating ending, or a curly apostrophe stands in one ("don’t"). Made of
    set and substring look-ups, so a plain clause read anew costs little more."""
    lowered = clause.lower()
    if "\u2019" in lowered or any(ending in lowered for ending in moods.negating_endings):
        return True
    word = Kind.WORD
    return not moods.starts.isdisjoint([t.lower for t in tokens if t.kind is word])


def _said(
    clause: str,
    offset: int,
    tokens: Sequence[Token],
    moods: Moods,
    tools: Sequence[ToolWords],
) -> MoodFound | None:
    words = [_word(token) for token in tokens]
    opener = 0
    while opener < len(words) and words[opener] in moods.fillers:
        opener += 1
    anywhere, opening, endings = moods.anywhere, moods.opening, moods.negating_endings
    past = 0  # the words before it are a plain phrase's ("as soon as possible")
    for position, word in enumerate(words):
        if word is None or position < past:
            continue
        found = _longest(words, position, anywhere)
        if position == opener:
            found = _longer(_longest(words, position, opening), found)
        if found is None and any(word.endswith(e) and word != e for e in endings):
            found = ((word,), Mood.NEGATED)
        if found is None:
            continue
        phrase, mood = found
        if mood is None:
            past = position + len(phrase)
            continue
        if _in_a_name(words, position, len(phrase), tools):
            continue
        return MoodFound(mood, _written(clause, offset, tokens, position, len(phrase)))
    return None


def _written(clause: str, offset: int, tokens: Sequence[Token], first: int, count: int) -> str:
    """Tokens [first, first + count) as the clause writes them, with what stands between."""
    last = tokens[first + count - 1]
    return clause[tokens[first].start - offset : last.start + len(last.text) - offset]


def for_tool(
    clause: str, offset: int, cut: Clause, tool: ToolWords, moods: Moods, grammar: Grammar
) -> MoodFound | None:
    """What the clause says of the tool chosen for it that makes it no step of that tool:
    it asks for the opposite of what the tool does, or tells that it was done; or None.

    A reverser ("cancel", "undo", "take back") asks for the opposite unless each of its
    words is a word of the tool's own name ("cancel" for ``cancel_booking``); a weak one
    ("back") unless it is a word of the tool's name or docstring; so does a
    word made of a negating prefix and a word of the tool's name, unless the word itself
    is in the name ("unbook" for ``book_room``, not "unpaint" for ``unpaint_fence``). A
    word of the tool's name in a past form ("charged", "transferred", "sent") tells what
    was done. Read once the clause's tool is chosen: "cancel the transfer" is no transfer,
    whichever tool a desk has for cancelling. Quoted strings are values and say none.
    """
    # A word of the tool's name or of a phrase declared for it is its own ("take back").
    name, reversing, stems = tool.own_stems, moods.reversing, cut.stems
    prefixes, endings = tuple(moods.negating_prefixes), tuple(moods.past_endings)
    own = tool.name_words
    kind = Kind.WORD
    words = [token.lower if token.kind is kind else None for token in cut.tokens]
    for position, word in enumerate(words):
        if word is None or word in own:
            continue  # no word, or a word of the tool's name as its name writes it
        if word in reversing:
            found = _longest(words, position, reversing)
            if found is not None:
                phrase = found[0]
                if not all(stem in name for stem in stems[position : position + len(phrase)]):
                    words_said = _written(clause, offset, cut.tokens, position, len(phrase))
                    return MoodFound(Mood.OPPOSITE, words_said)
                continue
        if word in moods.weak_reversers and stems[position] not in tool.stems:
            return MoodFound(Mood.OPPOSITE, _written(clause, offset, cut.tokens, position, 1))
        base = moods.pasts.get(word)
        if (base is not None and grammar.stem(base) in name) or (
            endings and word.endswith(endings) and stems[position] in name
        ):
            return MoodFound(Mood.REPORTED, _written(clause, offset, cut.tokens, position, 1))
        if prefixes and word.startswith(prefixes) and stems[position] not in name:
            for prefix in prefixes:
                rest = word[len(prefix) :]
                if word.startswith(prefix) and len(rest) >= 3 and grammar.stem(rest) in name:
                    words_said = _written(clause, offset, cut.tokens, position, 1)
                    return MoodFound(Mood.OPPOSITE, words_said)
    return None


def qualifier_of(cut: Clause, used: Set[int], tool: ToolWords, grammar: Grammar) -> str | None:
    """A word that says when, how often or how much ("tomorrow", "weekly", "half") and
    that the step would drop: no value, no parameter's name, no word of the tool's name
    or docstring. The step would run now, once, whole: not what was said."""
    qualifiers = grammar.qualifier_stems
    if not qualifiers or qualifiers.isdisjoint(cut.all_said):
        return None
    params = frozenset().union(*(p.stems for p in tool.params))
    for position, said in enumerate(cut.said):
        if position in used or said.isdisjoint(qualifiers):
            continue
        if said.isdisjoint(tool.stems) and said.isdisjoint(params):
            return cut.tokens[position].text
    return None


def trailing_word(cut: Clause, binding: Binding, tool: ToolWords) -> str | None:
    """A word right after an unquoted text value that no argument took and that is no
    stop word, no parameter's name and no word of the tool's: the value may go on into it
    ("biller City Water 40.10" is not certainly biller "City"). Quoting the value says where
    it ends."""
    params = frozenset().union(*(p.stems for p in tool.params))
    for param in tool.params:
        at = binding.at.get(param.name)
        if param.kind is not str or at is None or cut.tokens[at].kind is not Kind.WORD:
            continue
        after = at + 1
        if after >= len(cut.tokens) or after in binding.used:
            continue
        said = cut.said[after]
        if said and said.isdisjoint(tool.stems) and said.isdisjoint(params):
            return cut.tokens[after].text
    return None


def _word(token: Token) -> str | None:
    """A word as the moods' phrases write it: lower-case, with a straight apostrophe."""
    if token.kind is not Kind.WORD:
        return None
    return token.lower.replace("\u2019", "'")


_Entry = tuple[Phrase, Mood | None]


def _longest(
    words: Sequence[str | None], position: int, table: Mapping[str, tuple[_Entry, ...]]
) -> _Entry | None:
    """The longest phrase of the table the words say from `position` on."""
    word = words[position]
    for phrase, mood in table.get(word, ()) if word is not None else ():
        if tuple(words[position : position + len(phrase)]) == phrase:
            return phrase, mood
    return None


def _longer(first: _Entry | None, second: _Entry | None) -> _Entry | None:
    """The longer of two phrases found at one word; `first` on a tie."""
    if first is None or (second is not None and len(second[0]) > len(first[0])):
        return second
    return first


def _in_a_name(
    words: Sequence[str | None], position: int, length: int, tools: Sequence[ToolWords]
) -> bool:
    """Whether words [position, position + length) stand inside a tool's or a parameter's
    name said in full ("do not disturb" for ``do_not_disturb``): then they are its words."""
    for tool in tools:
        for name in tool.phrases:
            if len(name) < length:
                continue
            for first in range(max(0, position + length - len(name)), position + 1):
                if tuple(words[first : first + len(name)]) == name:
                    return True
    return False


def question_mark(clause: str, marks: str) -> int:
    """Where the clause's first question mark outside a quoted string is, or -1."""
    found = [at for at in map(clause.find, marks) if at >= 0]  # most clauses: none
    if not found:
        return -1
    if has_quote(clause):  # a quoted string is a value: blanked, so positions hold
        text = QUOTED.sub(lambda quoted: " " * len(quoted.group()), clause)
        found = [at for at in map(text.find, marks) if at >= 0]
    return min(found) if found else -1

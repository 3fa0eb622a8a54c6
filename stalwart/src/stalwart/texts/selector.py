"""Why the selector did not read a clause (selector/core.py)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from .questions import visible

# --- why the selector did not read a clause (selector/core.py) ---

# Said for an agent that reads English alone (the default), as before Portuguese shipped:
# a verify turns file keeps it (QG201 compares), so it is kept word for word.
NOT_ENGLISH = "the turn is not English; it reads as Portuguese, which is not read yet"
# What that agent's owner can do about it, said after the reason in the reply and in
# `stalwart explain` (never inside the reason: that would change what QG201 compares).
READ_PORTUGUESE_HOW = (
    "To have Portuguese read, add it to the agent's languages in agent.yaml: "
    "languages: [english, portuguese]."
)


def how_to_read(reason: str | None) -> str | None:
    """The guidance said after a reason, if it has any: how to have Portuguese read."""
    return READ_PORTUGUESE_HOW if reason == NOT_ENGLISH else None


# A turn whose words mark no language, read differently (or not at all) in some of the
# agent's languages (selector/languages.py).
LANGUAGE_UNCLEAR = (
    "the turn says no word that tells its language, and is not read as the same steps "
    "in each of the agent's languages"
)


def turn_mixes_languages(english_word: str, portuguese_word: str) -> str:
    return f'the turn mixes English ("{english_word}") and Portuguese ("{portuguese_word}")'


def turn_in_a_language_not_read(language: str, languages: Sequence[str]) -> str:
    return (
        f"the turn reads as {language.capitalize()}, which this agent does not read "
        f"(languages: {', '.join(languages)})"
    )


def languages_unknown(languages: Sequence[str], known: Sequence[str]) -> str:
    return (
        f"languages must be one or more of {', '.join(known)}; got {', '.join(languages) or 'none'}"
    )


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


def yes_or_no_not_given(argument: str, tool: str) -> str:
    """A yes/no parameter named with no yes or no next to it ("remind patient 17
    urgently"): its default could be the opposite of what was meant."""
    return f"{argument} of {tool} is named without a yes or no"


def number_with_a_word(number: str, word: str, tool: str) -> str:
    """A number bound by type while the word after it says what it counts ("2 months")."""
    return f"{tool} has no argument for {number} {word}"


def number_two_ways(number: str, first: str, second: str) -> str:
    """A number two languages write differently ("1,250"): read as neither."""
    return f"{number} could be {first} or {second}, so it is read as neither"


def number_not_read(number: str, hint: str) -> str:
    """Digits and marks that are no number as the turn's language writes them ("40,00")."""
    return f"{number} is not read as a number: {hint}" if hint else f"{number} is not a number"


# --- a clause that is no plain request (selector/mood.py): never a step ---

# Each reason is followed by the words of the clause that set its mood, as written:
# 'it says not to: "don't"', and in a reply: I could not read "don't send the statement
# for account alice" (it says not to: "don't"), so nothing ran. "opposite" names the tool
# too: 'it asks for the opposite of transfer: "cancel"'.
MOOD_REASONS: Mapping[str, str] = {
    "negated": "it says not to",
    "conditional": "it sets a condition",
    "question": "it asks a question",
    "hedged": "it is not certain",
    "opposite": "it asks for the opposite of",
    "reported": "it tells what was done",
    "choice": "it leaves a choice",
}


def clause_not_a_request(mood: str, words: str) -> str:
    return f'{MOOD_REASONS[mood]}: "{words}"'


def clause_opposite(tool: str, words: str) -> str:
    return f'{MOOD_REASONS["opposite"]} {tool}: "{words}"'


# --- `stalwart explain agent.yaml "turn"` (selector/explain.py): how a turn is read ---


def explained_clause(number: int, clause: str, tool: str) -> str:
    return f'{number}. "{visible(clause)}" reads as {tool}'


def explained_argument(name: str, value: str, words: str, by: str) -> str:
    return f'   {name} = {visible(value)}, from "{visible(words)}" (by {by})'


def explained_unread_clause(number: int, clause: str, reason: str) -> str:
    return f'{number}. "{visible(clause)}" is not read: {visible(reason)}'


def explained_read(steps: int) -> str:
    counted = "1 step" if steps == 1 else f"{steps} steps"
    return f"The turn reads as {counted}. Nothing was run."


def explained_unread(clause: str | None, reason: str) -> str:
    said = f' "{visible(clause)}"' if clause else ""
    how = how_to_read(reason)
    then = f" {how}" if how else ""
    return f"The turn is not read:{said} ({visible(reason)}). Nothing would run.{then}"

"""The English grammar: how an English turn is cut into clauses and into words.

What this module decides (the shared core, `core.py`, does the rest):

Clauses
    A turn splits into clauses on ``, then``, ``then``, ``and then``, ``, and then``,
    ``;``, ``, but`` and ``but`` -- case-insensitive, whole words only, never inside a
    quoted string. A bare ``and`` does not split: "charge order 4411 and refund it" is
    one clause, and that clause names two tools, so it is not read. "but" splits so that
    a negation after it is read in its own clause ("freeze card 4411, but don't send the
    statement": the clause refused is "don't send the statement").

Moods
    A clause that is negated, conditional, a question or hedged is never a step
    (`mood.py` reads them; the words are here, as data):

    - negators, anywhere: "not", "never", "don't"/"do not", "no need to", "without",
      "instead of", "hold off", ... and any word ending in "n't" ("shouldn't");
    - conditions, anywhere: "if", "unless", "when", "whenever", "only if", "in case",
      "as long as", "provided", "until", ...;
    - questions: "whether" or "what if" anywhere; at a clause's start (after fillers
      such as "so", "ok", "well") a question word ("what", "why", "how", "which", ...),
      or a verb before its subject ("should I", "do we", "is it", "can I", "has", ...);
      and a question mark anywhere outside quotes. "Can you ..." and "could you ..."
      with no question mark are requests, as people write them;
    - hedges, anywhere: "maybe", "perhaps", "possibly", "probably", "might", "may",
      "I think", "I guess", "not sure", ...;
    - the opposite of a tool, read once the clause's tool is known: a reverser
      ("cancel", "stop", "undo", "reverse", "refuse", "take back", ...) that is no word
      of that tool's name ("cancel the transfer ..." is no transfer; "cancel booking
      B-12" is cancel_booking), or a word of its name with "un", "dis" or "de" before it
      ("unbook the room ..." is no book_room).

    - choices, anywhere: "or", "either" ("day monday or tuesday");
    - what was done, read once the tool is known: a word of its name in a past form
      ("charged", "transferred", "sent", "paid");
    - when, how often, how much, read once the tool is known: "tomorrow", "next",
      "every", "weekly", "twice", "half", a weekday, a month, "week", ... unless it is a
      value, a parameter's name or the tool's own word ("day friday", "60 days").

    A few phrases say such a word and set no mood ("as soon as possible").

Stop words
    Words such as "the", "for", "at", "a", "please" carry nothing: they never name a
    tool, never become a value, and may stand between a parameter's name and a number
    ("amount of 40.00"). They are still read as part of a parameter's name
    ("check in" names ``check_in``).

Stemmer
    snowballstemmer's English stemmer, so "nights" meets ``nights`` and ``night``, and
    "charges" meets ``charge_card``.

Number forms
    An integer is digits with an optional sign (``4411``, ``-3``); a decimal is digits,
    a point and digits (``40.00``). A comma may separate thousands ("1,250.00",
    "1,250,000"). ``#``, ``$``, ``€`` or ``£`` may stand before a number ("order #4411",
    "$40.00") and is not part of it, nor is a currency word after it ("25.00 USD"). A
    comma never makes a decimal: "40,00" is not read, and says why. A number that is two
    amounts is read as neither: "1,250" (1250 here, 1.25 where a comma is the decimal
    point) and "1.250" (1.25 here, 1250 there); "1,250.00" and "0.125" are one each.

Role words
    A preposition the tool's docstring puts before a parameter's name ("Move money from
    the source account to the target account") names that parameter in a turn: "transfer
    25.00 from alice to bob" is source alice, target bob. Only the docstring ties them,
    so "from" and "to" are never swapped; a word the docstring ties to two parameters
    names neither. A value a role word gives is the one token right after it, and only
    when nothing but a stop word, a name or a number follows ("with Dr Silva" gives no
    doctor: "Dr" or "Dr Silva"?), and never a possessive ("alice's").

Yes and no
    A ``bool`` parameter takes ``yes``/``true``/``on`` or ``no``/``false``/``off``
    next to its name ("express yes", "no express").
"""

from __future__ import annotations

import re

from .grammar import Grammar, Moods

# The comma and spaces before "then" belong to the separator. A match may begin on spaces
# only where no space or comma stands before them: the match starting one earlier would
# have been found first anyway, and without the look-behind every space of a long run of
# them began an attempt that scanned the rest of the run (the square of its length).
_BEFORE = r"(?:,|(?<![\s,]))\s*"
# The words share one look-behind and one ``\b`` before them: one attempt per position,
# not one per word (a third word as its own alternative cost a sixth of a turn).
CLAUSE_SEPARATOR = re.compile(rf"{_BEFORE}\b(?:and\s+then|then|but)\b|;", re.IGNORECASE)

_STOP_WORDS_TEXT = """
    a an the this that these those it its it's my our your their his her me us i we you
    for at to of on in into onto from by with about as per via
    is are be please kindly can could would will should just now also and or
    some any all there here up
"""
STOP_WORDS = frozenset(_STOP_WORDS_TEXT.split())

# --- moods (`mood.py`): phrases, lower-case, words one after another ---


def _phrases(text: str) -> frozenset[str]:
    """One phrase a line."""
    return frozenset(line.strip() for line in text.strip().splitlines())


NEGATORS = _phrases("""
    not
    never
    nor
    neither
    don't
    dont
    do not
    does not
    doesnt
    did not
    didnt
    cant
    can not
    cannot
    wont
    will not
    should not
    shouldnt
    must not
    mustnt
    no need
    no need to
    no longer
    without
    instead of
    rather than
    except
    avoid
    refrain
    hold off
    forget
""")
NEGATING_ENDINGS = frozenset({"n't"})  # "shouldn't", "won't", "isn't": "n’t" is read as "n't"
CONDITIONALS = _phrases("""
    if
    unless
    when
    whenever
    only if
    in case
    as long as
    as soon as
    provided
    providing
    assuming
    supposing
    until
    otherwise
    or else
""")
QUESTIONS = _phrases("""
    whether
    what if
""")
HEDGES = _phrases("""
    maybe
    perhaps
    possibly
    probably
    might
    may
    i think
    i guess
    i suppose
    i wonder
    not sure
    unsure
""")
CHOICES = _phrases("""
    or
    either
""")
# Phrases that say a mood's word and set no mood.
PLAIN = _phrases("""
    as soon as possible
    as soon as you can
""")
# Words that ask for the opposite of what the tool a clause names does, unless they are
# its name's own words ("cancel" for cancel_booking): "cancel the transfer ...".
REVERSERS = _phrases("""
    cancel
    stop
    undo
    reverse
    revert
    revoke
    retract
    withdraw
    void
    halt
    abort
    remove
    delete
    refuse
    decline
    reject
    call off
    take back
    roll back
    back out
""")
# "back" asks for the opposite of a tool that does not itself give back: "give the 25.00
# of the transfer back" is no transfer; "give the 40.00 back" is refund_card's own word.
WEAK_REVERSERS = frozenset({"back"})
# "unbook", "undim", "disallow", "deactivate": a word of the tool's name made its opposite.
NEGATING_PREFIXES = frozenset({"un", "dis", "de"})
# A word of the tool's name in a past form tells what was done: "charged", "sent".
PAST_ENDINGS = frozenset({"ed"})
PAST_FORMS = _phrases("""
    sent send
    paid pay
    froze freeze
    frozen freeze
    gave give
    given give
    took take
    taken take
    made make
    did do
    done do
    bought buy
    sold sell
    wrote write
    written write
    told tell
    kept keep
    left leave
    lent lend
    spent spend
    brought bring
    began begin
    begun begin
    ran run
    chose choose
    chosen choose
    got get
    gotten get
    held hold
    found find
    shown show
    threw throw
    thrown throw
    withdrew withdraw
    withdrawn withdraw
""")
# Words that say when, how often or how much: a step runs now, once and whole, so a clause
# that says one the step cannot take (not a value, a parameter's name or the tool's own
# word) is not read: "transfer 25.00 ... next friday", "charge half of 40.00".
_QUALIFIERS_TEXT = """
    tomorrow tonight yesterday later next every each daily weekly monthly yearly annually
    hourly twice thrice half quarter double triple minus plus partially partial
    minute hour day week fortnight month year weekend morning afternoon evening
    monday tuesday wednesday thursday friday saturday sunday
    january february march april june july august september october november december
"""
QUALIFIERS = frozenset(_QUALIFIERS_TEXT.split())
_QUESTION_WORDS = "what what's whats why how which who whom whose where"
_VERBS_BEFORE_A_SUBJECT = "is are am was were does did has had"  # never begin a request
_VERBS_BEFORE_I_OR_WE = "do have should shall can could may must would will might"
_SUBJECTS = "i we it this that there"  # not "you": "could you ..." is a request
_WHEN_ASKING = "when can, when is, when are, when will, when do, when does, when did"
QUESTION_OPENERS = frozenset(
    [
        *_QUESTION_WORDS.split(),
        *_VERBS_BEFORE_A_SUBJECT.split(),
        *(
            f"{verb} {subject}"
            for verb in _VERBS_BEFORE_I_OR_WE.split()
            for subject in _SUBJECTS.split()
        ),
        *(phrase.strip() for phrase in _WHEN_ASKING.split(",")),
    ]
)
FILLERS = frozenset({"so", "ok", "okay", "well", "hey", "hi", "and", "also", "now", "um", "oh"})

# Words that may follow an amount and add nothing to it ("40 cents" is not 40, so not here).
_CURRENCY_WORDS = frozenset(
    ["usd", "eur", "gbp", "dollar", "dollars", "euro", "euros", "pound", "pounds", "bucks"]
)

MOODS = Moods(
    negators=NEGATORS,
    negating_endings=NEGATING_ENDINGS,
    conditionals=CONDITIONALS,
    questions=QUESTIONS,
    hedges=HEDGES,
    question_openers=QUESTION_OPENERS,
    fillers=FILLERS,
    question_marks="?",
    plain=PLAIN,
    reversers=REVERSERS,
    weak_reversers=WEAK_REVERSERS,
    negating_prefixes=NEGATING_PREFIXES,
    choices=CHOICES,
    past_endings=PAST_ENDINGS,
    past_forms=PAST_FORMS,
    qualifiers=QUALIFIERS,
)

# Digits, or groups of three after the first with a comma between ("1,250,000").
_WHOLE = r"[+-]?(?:[0-9]{1,3}(?:,[0-9]{3})+|[0-9]+)"

GRAMMAR = Grammar(
    language="english",
    clause_separator=CLAUSE_SEPARATOR,
    stop_words=STOP_WORDS,
    true_words=frozenset({"yes", "true", "on"}),
    false_words=frozenset({"no", "false", "off"}),
    # ASCII digits only: "４４１１" (fullwidth) or "٤٤" (Arabic-Indic) is no number, so a
    # value a person reads as 4411 is never run as one unless it is written as one.
    integer=re.compile(_WHOLE),
    decimal=re.compile(rf"{_WHOLE}\.[0-9]+"),
    number_marks="#$€£",
    thousands_separator=",",
    # "1,250" (one group, no point) is 1250 here and 1.25 where a comma is the point;
    # "1.250" is 1.25 here and 1250 there. "0.125" and "1,250.00" are one amount each.
    ambiguous_number=re.compile(r"[+-]?[1-9][0-9]{0,2}[,.][0-9]{3}"),
    # Digits with a comma that are no number here: "40,00", "1.250,00" (a version or an
    # address, "1.2.3", "10.0.0.1", has no comma and stays a value).
    malformed_number=re.compile(r"[+-]?[0-9]+(?:[.,][0-9]+)*,[0-9]+(?:[.,][0-9]+)*"),
    number_hint="a comma only separates thousands, as in 1,250.00",
    moods=MOODS,
    role_words=frozenset(
        ["from", "to", "for", "with", "on", "at", "by", "into", "onto", "in", "of", "via"]
    ),
    articles=frozenset(["the", "a", "an", "its", "their", "his", "her", "my", "your", "our"]),
    currency_words=_CURRENCY_WORDS,
)

"""The tokenizer reads each chunk of a clause once per grammar and keeps what it read
(`tokens.py`): a desk's turns are mostly the same words again. What it keeps must never
change a token, so every clause here is cut twice (the second time from what was kept)
and both are held equal to the tokenizer that reads every chunk anew, below."""

from __future__ import annotations

import dataclasses
import re
from decimal import Decimal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stalwart import limits
from stalwart.errors import InputRefused
from stalwart.selector import tokens
from stalwart.selector.english import GRAMMAR as ENGLISH
from stalwart.selector.grammar import Grammar
from stalwart.selector.tokens import Kind, Token, tokenize

pytestmark = pytest.mark.unit

# A second grammar, writing decimals with a comma, thousands with a point and "R$" before
# an amount: what the English one read must not be what this one is given.
COMMA = dataclasses.replace(
    ENGLISH,
    integer=re.compile(r"[+-]?(?:[0-9]{1,3}(?:\.[0-9]{3})+|[0-9]+)"),
    decimal=re.compile(r"[+-]?(?:[0-9]{1,3}(?:\.[0-9]{3})+|[0-9]+),[0-9]+"),
    number_marks="R$",
    decimal_point=",",
    thousands_separator=".",
    malformed_number=re.compile(r"[+-]?[0-9]+(?:[.,][0-9]+)+"),
)


def reading_anew(clause: str, offset: int, grammar: Grammar) -> list[Token]:
    """The tokenizer as it was before it kept anything: every chunk read from scratch."""
    found: list[Token] = []
    quoted = tokens.has_quote(clause)
    for chunk in (tokens._CHUNK if quoted else tokens._NON_SPACE).finditer(clause):
        text, start = chunk.group(), offset + chunk.start()
        if quoted and chunk.lastgroup is not None:
            inner = text[1:-1]
            found.append(Token(Kind.QUOTED, inner, start + 1, inner.lower()))
            continue
        stripped = text.lstrip(tokens._LEADING)
        start += len(text) - len(stripped)
        stripped = stripped.rstrip(tokens._TRAILING)
        if not stripped:
            continue
        if tokens._WORD.fullmatch(stripped):
            found.append(Token(Kind.WORD, stripped, start, stripped.lower()))
            continue
        unmarked = stripped.lstrip(grammar.number_marks)
        at = start + len(stripped) - len(unmarked)
        ambiguous, malformed = grammar.ambiguous_number, grammar.malformed_number
        if ambiguous is not None and ambiguous.fullmatch(unmarked):
            found.append(Token(Kind.UNCLEAR, unmarked, at, unmarked.lower()))
        elif grammar.decimal.fullmatch(unmarked):
            limits.check_number(unmarked)
            found.append(Token(Kind.DECIMAL, unmarked, at, unmarked.lower()))
        elif grammar.integer.fullmatch(unmarked):
            limits.check_number(unmarked)
            found.append(Token(Kind.INTEGER, unmarked, at, unmarked.lower()))
        elif malformed is not None and malformed.fullmatch(unmarked):
            found.append(Token(Kind.UNCLEAR, unmarked, at, unmarked.lower()))
        else:
            found.append(Token(Kind.OTHER, stripped, start, stripped.lower()))
    # A sign written apart from a number beside it ("$ 40.00", "40,00 R$") is the number's.
    signs = set(grammar.number_marks) | set(grammar.number_prefixes)
    numbers = (Kind.INTEGER, Kind.DECIMAL, Kind.UNCLEAR)
    return [
        token
        for index, token in enumerate(found)
        if not (
            token.kind is Kind.OTHER
            and token.text in signs
            and any(
                0 <= beside < len(found) and found[beside].kind in numbers
                for beside in (index - 1, index + 1)
            )
        )
    ]


# Words, numbers both ways, number marks, punctuation on either side, quotes, accents.
PIECES = st.sampled_from(
    ["charge", "Order", "crm", "it's", "check-in", "B-12", "2026-12-01", "4411", "40.00",
     "40,00", "#4411", "$40.00", "R$40,00", "(4411)", "[crm]", "order,", "40.", "40,",
     "end.", "...", "(", "'x'", '"a b"', "ação", "-3", "+7", "1e5", "x1", "1,250.00",
     "1.250,00", "1,250", "1.250", "0.125", "12,5", "1,250,000", "$1,250.50"]
)  # fmt: skip
CLAUSES = st.lists(
    st.tuples(PIECES | st.text("ab1.,;:!?()[]#$-'\" ", max_size=6), st.sampled_from([" ", "  "])),
    max_size=12,
).map(lambda parts: "".join(piece + space for piece, space in parts))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(clause=CLAUSES, offset=st.integers(0, 50), comma=st.booleans())
def test_a_clause_is_cut_as_reading_every_chunk_anew_would(
    clause: str, offset: int, comma: bool
) -> None:
    grammar = COMMA if comma else ENGLISH
    expected = reading_anew(clause, offset, grammar)
    assert tokenize(clause, offset, grammar) == expected  # read, or some chunks kept
    assert tokenize(clause, offset, grammar) == expected  # every chunk kept


def test_a_chunk_is_read_by_the_grammar_it_was_read_with() -> None:
    # "40,00" is a decimal written with a comma and no number in English: kept apart.
    english = tokenize("pay 40,00", 0, ENGLISH)
    comma = tokenize("pay 40,00", 0, COMMA)
    assert english[-1].kind is Kind.UNCLEAR
    assert comma[-1].kind is Kind.DECIMAL
    assert tokenize("pay 40,00", 0, ENGLISH)[-1].kind is Kind.UNCLEAR
    # "1,250.00" is 1250.00 in English; "1.250,00" is in the comma grammar; each is no
    # number in the other.
    assert [t.kind for t in tokenize("1,250.00 1.250,00", 0, ENGLISH)] == [
        Kind.DECIMAL,
        Kind.UNCLEAR,
    ]
    assert [t.kind for t in tokenize("1,250.00 1.250,00", 0, COMMA)] == [
        Kind.UNCLEAR,
        Kind.DECIMAL,
    ]
    assert (ENGLISH.number("1,250.00"), COMMA.number("1.250,00")) == (
        Decimal("1250.00"),
        Decimal("1250.00"),
    )


def test_a_refused_number_is_refused_every_time() -> None:
    long = "9" * (limits.MAX_NUMBER_DIGITS + 1)
    for _ in range(2):  # nothing kept of it: the second reading refuses it again
        with pytest.raises(InputRefused):
            tokenize(f"charge order {long}", 0, ENGLISH)


def test_what_is_kept_is_bounded() -> None:
    for number in range(tokens.CHUNKS_KEPT + 10):
        tokenize(f"order {number}", 0, ENGLISH)
    assert 0 < len(tokens._reads_of(ENGLISH)) <= tokens.CHUNKS_KEPT

"""A turn cut into clauses, and a clause into tokens, as a grammar says.

A token is a word, an integer, a decimal, a quoted string (its text is what stands
between the quotes) or another token with digits or signs that is no number
(``2026-12-01``, ``B-12``). Punctuation around a token is not part of it, nor is a
number mark before a number ("#4411", "$40.00"), nor a sign written apart from the number
beside it ("€ 25,00", "R$ 25,00", "25,00 €": a sign with no number beside it stays a
token, which no argument takes). Every token's text is a span of the
turn, at `Token.start`: that is why a value bound from a token is always in the turn.
"""

from __future__ import annotations

import re
from enum import Enum
from typing import Final, NamedTuple

from .. import limits
from .grammar import Grammar


class Kind(Enum):
    WORD = "word"
    INTEGER = "integer"
    DECIMAL = "decimal"
    QUOTED = "quoted"
    OTHER = "other"  # a token with digits or signs that is no number: 2026-12-01, B-12
    # digits and marks the grammar does not read as one number: "1,250" (two amounts),
    # "40,00" in English (no number); a clause saying one is not read (`core.py`)
    UNCLEAR = "unclear"

    # Hashed by identity, in C: a clause's shape (`memo.py`) is a key of its tokens' kinds,
    # and Enum's own hash is a Python call per token. Members are singletons, compared by
    # identity, so the two agree.
    __hash__ = object.__hash__


VALUE_KINDS = frozenset({Kind.INTEGER, Kind.DECIMAL, Kind.QUOTED, Kind.OTHER})

# A single quote opens a string only where a word does not go on through it ("it's").
QUOTED = re.compile(r"\"(?P<double>[^\"]*)\"|(?<!\w)'(?P<single>[^']*)'(?!\w)")
_CHUNK = re.compile(rf"{QUOTED.pattern}|\S+")
_NON_SPACE = re.compile(r"\S+")  # `_CHUNK` where no quote mark is: the same chunks
_WORD = re.compile(r"[^\W\d_]+(?:[-_'’][^\W\d_]+)*")
_WORD_PARTS = re.compile(r"[^\W\d_]+")
_LEADING = "(["
_TRAILING = ".,;:!?)]"


class Token(NamedTuple):
    # A tuple, not a frozen dataclass: a turn makes a token per word, and a frozen
    # dataclass sets each field through object.__setattr__.
    kind: Kind
    text: str  # the value as written: for a quoted string, what is between the quotes
    start: int  # where `text` starts in the turn
    lower: str  # `text` lower-cased, made once: every tool the clause is read as asks


def split_clauses(turn: str, grammar: Grammar) -> list[tuple[str, int]]:
    """The turn's non-empty clauses, each with where it starts in the turn.

    One scan, left to right, over quoted strings and separators together: a quoted string
    is stepped over whole, so a separator inside it is never seen, and no separator is
    compared with every quoted string (that made a turn of many of both cost the square
    of its length). The work is linear in the turn's length, given a separator pattern
    whose every match attempt is bounded (see `Grammar.clause_separator`).
    """
    # A turn with no quote mark has no quoted string to step over: its separators alone
    # are scanned for (the pattern of both tries every quote at every position).
    quoted = has_quote(turn)
    scan = _scanner(grammar.clause_separator) if quoted else grammar.clause_separator
    clauses: list[tuple[str, int]] = []
    start = 0
    for found in scan.finditer(turn):
        if quoted and found.lastgroup != "separator":
            continue  # a quoted string, stepped over
        clauses.append((turn[start : found.start()], start))
        start = found.end()
    clauses.append((turn[start:], start))
    kept: list[tuple[str, int]] = []
    for text, offset in clauses:
        stripped = text.lstrip()
        if stripped:
            kept.append((stripped.rstrip(), offset + len(text) - len(stripped)))
    return kept


# By the separator's identity: hashing a compiled pattern hashes its whole program, which
# cost more than the scan of a short turn. Each entry keeps its separator alive.
_scanners: dict[int, tuple[re.Pattern[str], re.Pattern[str]]] = {}


def _scanner(separator: re.Pattern[str]) -> re.Pattern[str]:
    """Quoted strings or a separator, whichever starts first (a quoted string on a tie)."""
    known = _scanners.get(id(separator))
    if known is not None and known[0] is separator:
        return known[1]
    scan = re.compile(f"{QUOTED.pattern}|(?P<separator>{separator.pattern})", separator.flags)
    if len(_scanners) >= 16:
        _scanners.clear()
    _scanners[id(separator)] = (separator, scan)
    return scan


# A Token made straight from its fields' tuple, in C: `Token(...)` goes through the
# NamedTuple's own Python `__new__`, once per word of every turn.
_new = tuple.__new__


# What a chunk of a clause (a run of non-space, no quote mark in it) is, by its text:
# (kind, the token's text, where it starts in the chunk, lower-cased), or `_PUNCTUATION`
# when it is only that. A desk's turns are mostly the same words again, so each chunk is
# read once, not once per turn. Per grammar (its numbers and marks), bounded.
_Read = tuple[Kind, str, int, str]
_PUNCTUATION: Final[_Read] = (Kind.OTHER, "", -1, "")  # no token
_chunk_reads: dict[int, tuple[Grammar, dict[str, _Read]]] = {}
CHUNKS_KEPT = 4096


def tokenize(clause: str, offset: int, grammar: Grammar) -> list[Token]:
    """Cut a clause into tokens; `offset` is where the clause starts in the turn."""
    tokens: list[Token] = []
    append = tokens.append
    known = _reads_of(grammar)
    quoted = has_quote(clause)
    signs, apart = grammar.signs, False
    for chunk in (_CHUNK if quoted else _NON_SPACE).finditer(clause):
        text = chunk.group()
        if quoted and chunk.lastgroup is not None:
            inner = text[1:-1]
            start = offset + chunk.start() + 1
            append(_new(Token, (Kind.QUOTED, inner, start, inner.lower())))
            continue
        read = known.get(text)
        if read is None:
            read = _read_chunk(text, grammar)  # raises, and keeps nothing, for a refused number
            if len(known) >= CHUNKS_KEPT:
                known.clear()
            known[text] = read
        if read is not _PUNCTUATION:
            kind, value, at, lower = read
            if kind is Kind.OTHER and value in signs:
                apart = True
            append(_new(Token, (kind, value, offset + chunk.start() + at, lower)))
    return _without_signs_apart(tokens, signs) if apart else tokens


_NUMBER_KINDS = frozenset({Kind.INTEGER, Kind.DECIMAL, Kind.UNCLEAR})


def _without_signs_apart(tokens: list[Token], signs: frozenset[str]) -> list[Token]:
    """The tokens less each currency sign written apart from its number: a sign with a
    number right after it ("€ 25,00", "R$ 25,00") or right before it ("25,00 €") is part
    of that number, as "€25,00" is. A sign with no number beside it stays a token (a
    value no argument takes, so its clause is not read)."""
    kept: list[Token] = []
    last = len(tokens) - 1
    for index, token in enumerate(tokens):
        if (
            token.kind is Kind.OTHER
            and token.text in signs
            and (
                (index < last and tokens[index + 1].kind in _NUMBER_KINDS)
                or (index > 0 and tokens[index - 1].kind in _NUMBER_KINDS)
            )
        ):
            continue
        kept.append(token)
    return kept


def forget_chunks() -> None:
    """Drop every chunk read so far (a benchmark's cold reading; nothing needs it)."""
    _chunk_reads.clear()


def _reads_of(grammar: Grammar) -> dict[str, _Read]:
    """The grammar's chunks read so far (by identity: hashing a grammar hashes its
    patterns, which costs more than reading a short clause)."""
    kept = _chunk_reads.get(id(grammar))
    if kept is not None and kept[0] is grammar:
        return kept[1]
    if len(_chunk_reads) >= 16:
        _chunk_reads.clear()
    reads: dict[str, _Read] = {}
    _chunk_reads[id(grammar)] = (grammar, reads)
    return reads


def _read_chunk(text: str, grammar: Grammar) -> _Read:
    """What one chunk is: punctuation around it is not part of it, nor a number mark
    before a number."""
    stripped = text.lstrip(_LEADING)
    start = len(text) - len(stripped)
    stripped = stripped.rstrip(_TRAILING)
    if not stripped:
        return _PUNCTUATION
    if _WORD.fullmatch(stripped):
        # Letters only: no number (a grammar writes its numbers with digits).
        return (Kind.WORD, stripped, start, stripped.lower())
    unmarked = stripped
    for prefix in grammar.number_prefixes:  # "R$25,00"
        if unmarked.startswith(prefix) and unmarked[len(prefix) : len(prefix) + 1].isdigit():
            unmarked = unmarked[len(prefix) :]
            break
    unmarked = unmarked.lstrip(grammar.number_marks)
    at = start + len(stripped) - len(unmarked)
    ambiguous, malformed = grammar.ambiguous_number, grammar.malformed_number
    if ambiguous is not None and ambiguous.fullmatch(unmarked):
        return (Kind.UNCLEAR, unmarked, at, unmarked.lower())  # two amounts: neither
    if grammar.decimal.fullmatch(unmarked):
        limits.check_number(unmarked)  # before Decimal() or int() ever sees it
        return (Kind.DECIMAL, unmarked, at, unmarked.lower())
    if grammar.integer.fullmatch(unmarked):
        limits.check_number(unmarked)
        return (Kind.INTEGER, unmarked, at, unmarked.lower())
    if malformed is not None and malformed.fullmatch(unmarked):
        return (Kind.UNCLEAR, unmarked, at, unmarked.lower())  # digits, but no number
    return (Kind.OTHER, stripped, start, stripped.lower())


def has_quote(text: str) -> bool:
    """Whether `QUOTED` could match anywhere in `text`: only where a quote mark is."""
    return '"' in text or "'" in text


def word_parts(text: str) -> list[str]:
    """The runs of letters in a text, lower-cased: "check-in" gives ["check", "in"]."""
    return _WORD_PARTS.findall(text.lower())

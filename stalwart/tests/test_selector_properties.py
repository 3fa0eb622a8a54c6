"""Properties of the selector, over the shop and three unrelated tool sets.

1. It never binds a value that is not in the turn: a string is a span of the turn, a
   number is a number written in it, a yes/no a word of it -- for any turn, well formed
   or not.
2. A turn written the way the grammar says (tool words, then each argument by name, in
   either order, with stop words between) is read as exactly the calls it was written
   from.
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from selector_toolsets import home, hotel, library, shop_specs, specs

from stalwart.selector import Reading, read_turn
from stalwart.selector.english import GRAMMAR
from stalwart.tools import Param, ToolSpec

pytestmark = pytest.mark.unit

TOOL_SETS: dict[str, list[ToolSpec]] = {
    "shop": shop_specs(),
    "hotel": specs(hotel),
    "home": specs(home),
    "library": specs(library),
}

# A number as the turn writes it: its thousands may be separated by commas ("1,250.00").
_NUMBER = re.compile(r"[+-]?\d{1,3}(?:,\d{3})+(?:\.\d+)?|[+-]?\d+(?:\.\d+)?")
_WORD = re.compile(r"[^\W\d_]+")

PROPERTY_SETTINGS = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


def assert_every_value_is_in_the_turn(reading: Reading, turn: str) -> None:
    numbers = [n.replace(",", "") for n in _NUMBER.findall(turn)]
    words = {w.lower() for w in _WORD.findall(turn)}
    for step in reading.steps:
        assert step.clause and step.clause in turn
        for name, value in step.args.items():
            where = f"{step.tool}.{name}={value!r} from {turn!r}"
            if isinstance(value, bool):
                assert value_word(value) & words, where
            elif isinstance(value, str):
                assert value in turn, where
            elif isinstance(value, Decimal):
                assert any(Decimal(n) == value for n in numbers), where
            elif isinstance(value, int):
                assert any("." not in n and int(n) == value for n in numbers), where
            elif isinstance(value, float):
                assert any(float(n) == value for n in numbers), where
            else:
                raise AssertionError(f"unexpected type: {where}")


def value_word(value: bool) -> set[str]:
    return set(GRAMMAR.true_words if value else GRAMMAR.false_words)


def assert_well_formed(reading: Reading) -> None:
    if reading.read:
        assert reading.steps and reading.unread_clause is None
    else:
        assert reading.steps == () and reading.unread_clause is not None and reading.reason


# --- 1. provenance, over turns made of the tools' own words, values and noise ---


def _vocabulary() -> list[str]:
    words: set[str] = set(GRAMMAR.stop_words | GRAMMAR.true_words | GRAMMAR.false_words)
    for tools in TOOL_SETS.values():
        for spec in tools:
            words.update(spec.name.split("_"))
            words.update(_WORD.findall(spec.summary.lower()))
            for param in spec.params:
                words.add(param.name)
                words.update(param.name.split("_"))
    words.update({"then", ",", ";", "and", "o", "depois", "para", "café", "#", "$"})
    return sorted(words)


_quoted_text = st.text(alphabet=string.ascii_letters + string.digits + " -;,.", max_size=12)
_token = st.one_of(
    st.sampled_from(_vocabulary()),
    st.integers(-99999, 99999).map(str),
    st.decimals(min_value=-9999, max_value=9999, places=2, allow_nan=False).map(str),
    _quoted_text.map(lambda text: f'"{text}"'),
    _quoted_text.map(lambda text: f"'{text}'"),
    st.sampled_from(
        ["B-12", "2026-12-01", "$40.00", "#4411", "40,00", "e-mail", "it's", "1,250.00"]
        + ["1,250", "1.250", "1,000,000", "$1,250.50", "1.250,00"]
    ),
)
_separator = st.sampled_from([" ", " ", " ", ", ", ",", "; ", "  "])


@st.composite
def noisy_turns(draw: st.DrawFn) -> str:
    tokens = draw(st.lists(_token, max_size=14))
    return "".join(token + draw(_separator) for token in tokens)


@PROPERTY_SETTINGS
@given(tool_set=st.sampled_from(sorted(TOOL_SETS)), turn=noisy_turns())
def test_no_value_is_bound_that_the_turn_does_not_say(tool_set: str, turn: str) -> None:
    reading = read_turn(turn, TOOL_SETS[tool_set])
    assert_well_formed(reading)
    assert_every_value_is_in_the_turn(reading, turn)


@PROPERTY_SETTINGS
@given(tool_set=st.sampled_from(sorted(TOOL_SETS)), turn=st.text(max_size=80))
def test_any_text_is_read_or_refused_without_error(tool_set: str, turn: str) -> None:
    reading = read_turn(turn, TOOL_SETS[tool_set])
    assert_well_formed(reading)
    assert_every_value_is_in_the_turn(reading, turn)


# --- 2. turns written as the grammar says are read as the calls they came from ---


@dataclass(frozen=True)
class Call:
    tool: str
    args: dict[str, Any]
    clause: str


_NOISE = st.sampled_from(["", "", "the ", "for ", "please ", "of ", "to ", "at "])
_plain_value = st.text(alphabet=string.ascii_lowercase, min_size=1, max_size=6).map(
    lambda tail: "Zq" + tail
)
_marked_value = st.integers(0, 999).map(lambda n: f"Zq-{n}")


@st.composite
def written_value(draw: st.DrawFn, param: Param) -> tuple[str, Any, bool]:
    """The value as written, the value it means, and whether it may stand before its name."""
    kind = param.base_type
    if kind is bool:
        word = draw(st.sampled_from(["yes", "true", "no", "false", "off"]))
        return word, word in GRAMMAR.true_words, True
    if kind is int:
        number = draw(st.integers(0, 99999))
        return str(number), number, True
    if kind in (float, Decimal):
        text = draw(
            st.one_of(
                st.integers(0, 9999).map(str),
                st.decimals(min_value=0, max_value=9999, places=2).map(str),
            )
        )
        return text, (float(text) if kind is float else Decimal(text)), True
    if draw(st.booleans()):
        text = draw(st.text(alphabet=string.ascii_letters + " -", max_size=14))
        quote = draw(st.sampled_from(["'", '"']))
        return f"{quote}{text}{quote}", text, True
    text = draw(st.one_of(_plain_value, _marked_value))
    return text, text, False


@st.composite
def written_call(draw: st.DrawFn, spec: ToolSpec) -> Call:
    name_words = spec.name.split("_")
    if len(name_words) > 1 and draw(st.booleans()):
        name_words = [*name_words[:-1], "the", name_words[-1]]
    # A tool word that is also a parameter's name ("renew loan") would take a value
    # written right after it, so the first argument then starts with its name.
    tool_word_names = {name_words[-1]} & {p.name for p in spec.params}
    given = [p for p in spec.params if p.required or draw(st.booleans())]
    order = draw(st.permutations(given))
    parts: list[str] = []
    args: dict[str, Any] = {}
    for index, param in enumerate(order):
        written, meant, may_lead = draw(written_value(param))
        if index == 0 and tool_word_names and param.name not in tool_word_names:
            may_lead = False
        said_name = " ".join(param.name.split("_")) if draw(st.booleans()) else param.name
        if may_lead and draw(st.booleans()):
            phrase = f"{written} {said_name}"
        else:
            between = draw(_NOISE) if written[0] in "'\"" or param.base_type is not str else ""
            phrase = f"{said_name} {between}{written}"
        parts.append(draw(_NOISE) + phrase)
        args[param.name] = meant
    clause = " ".join([draw(st.sampled_from(["", "please "])) + " ".join(name_words), *parts])
    return Call(spec.name, {p.name: args[p.name] for p in spec.params if p.name in args}, clause)


@st.composite
def written_turns(draw: st.DrawFn) -> tuple[str, list[ToolSpec], list[Call]]:
    tools = TOOL_SETS[draw(st.sampled_from(sorted(TOOL_SETS)))]
    chosen = draw(st.lists(st.sampled_from(tools), min_size=1, max_size=3))
    calls = [draw(written_call(spec)) for spec in chosen]
    turn = calls[0].clause
    for call in calls[1:]:
        separator = draw(st.sampled_from([", then ", " then ", "; ", " and then ", ", and then "]))
        turn += separator + call.clause
    return turn, tools, calls


@PROPERTY_SETTINGS
@given(written=written_turns())
def test_a_turn_written_in_the_grammar_reads_as_its_calls(
    written: tuple[str, list[ToolSpec], list[Call]],
) -> None:
    turn, tools, calls = written
    reading = read_turn(turn, tools)
    assert reading.read, f"{turn!r}: {reading.reason} ({reading.unread_clause!r})"
    assert [(s.tool, s.args, s.clause) for s in reading.steps] == [
        (c.tool, c.args, c.clause) for c in calls
    ]
    assert_every_value_is_in_the_turn(reading, turn)

"""Arbitrary Unicode turns (issue 11): the selector, the run and the confirmation text raise
nothing but stalwart's own refusals, a refusal leaves the record as it was, and no shown
confirmation carries a character that does not show as itself."""

from __future__ import annotations

import contextlib
import itertools
import unicodedata
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import Project, write_project
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stalwart import Agent, FakeClock, StalwartError, selector, texts

TOOLS = """
from decimal import Decimal
from stalwart import tool

CALLS = []


@tool
def look_up(order: int) -> dict:
    return {"order": order}


@tool(writes=True, irreversible=True)
def send_note(to: str, order: int) -> dict:
    CALLS.append(("send_note", to, order))
    return {"to": to}


@tool(writes=True, irreversible=True)
def charge_card(order: int, amount: Decimal) -> dict:
    CALLS.append(("charge_card", order, str(amount)))
    return {"charged": str(amount)}
"""

HIDDEN = frozenset({"Cf", "Cc", "Zl", "Zp", "Co", "Cs", "Cn"})

# Every code point, surrogates and unassigned ones too.
ANY_CHAR = st.characters(codec=None, categories=None, exclude_categories=())
WORDS = st.sampled_from(
    ["look up order", "send the note to", "charge order", "for order", "then", ",", "and",
     '"', "'", "4411", "40.00", "１２", "\u202e", "\u200b", "#", "$", "\x00", "9" * 40]
)  # fmt: skip
TURNS = st.one_of(
    st.text(ANY_CHAR, max_size=80),
    st.lists(st.one_of(WORDS, st.text(ANY_CHAR, max_size=6)), max_size=14).map(" ".join),
)


@pytest.fixture(scope="module")
def fuzzed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Project, Agent]]:
    folder = tmp_path_factory.mktemp("fuzz")
    project = write_project(folder, tools_source=TOOLS,
                            tool_names=["look_up", "send_note", "charge_card"])  # fmt: skip
    with project.agent(clock=FakeClock()) as agent:
        yield project, agent


_USERS = itertools.count(1)


def _shows_only_visible(text: str) -> bool:
    return all(char == "\n" or unicodedata.category(char) not in HIDDEN for char in text)


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(turn=TURNS)
def test_any_turn_is_read_run_or_refused_and_a_refusal_changes_nothing(
    fuzzed: tuple[Project, Agent], turn: str
) -> None:
    _, agent = fuzzed
    tools = list(agent.tools.values())
    with contextlib.suppress(StalwartError):  # stalwart's own refusals, and only those
        selector.read_turn(turn, tools)
    user = f"u{next(_USERS)}"
    sid = agent.session_id(user)
    before = agent.store.load(sid)
    try:
        reply = agent.chat(turn, user=user)
    except StalwartError:
        assert agent.store.load(sid) == before
        return
    while reply.waiting:
        waiting = reply.waiting[0]
        assert _shows_only_visible(waiting.text), waiting.text
        assert _shows_only_visible(reply.text), reply.text
        reply = agent.answer(user, waiting.answers[-1], question=waiting)
    assert _shows_only_visible(reply.text), reply.text


VALUES = st.recursive(
    st.one_of(st.text(ANY_CHAR, max_size=12), st.integers(), st.booleans(), st.none()),
    lambda inner: st.one_of(st.lists(inner, max_size=3),
                            st.dictionaries(st.text(ANY_CHAR, max_size=4), inner, max_size=3)),
    max_leaves=8,
)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(args=st.dictionaries(st.text(ANY_CHAR, min_size=1, max_size=6), VALUES, max_size=4))
def test_a_confirmation_of_any_arguments_shows_only_visible_characters(
    args: dict[str, object],
) -> None:
    shown = texts.confirm_question("send_note", args, irreversible=True, in_atomic_run=True)
    assert _shows_only_visible(shown), shown
    assert _shows_only_visible(texts.brief(args)), texts.brief(args)


def test_the_fuzzed_agent_is_the_real_one(fuzzed: tuple[Project, Agent]) -> None:
    project, agent = fuzzed
    reply = agent.chat('send the note to "a\u202eb" for order 3', user="check")
    assert reply.waiting[0].args == {"to": "a\u202eb", "order": 3}
    agent.confirm("check", "approve", question=reply.waiting[0])
    assert project.module is not None
    assert ("send_note", "a\u202eb", 3) in project.module.CALLS
    assert Path(agent.config.record).exists()

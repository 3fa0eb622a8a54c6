"""What a person is shown is what runs (issue 11, point 4).

On the main this was written against, a right-to-left override or a zero-width space
inside a quoted value was shown raw in the confirmation, the reply and the web page (an
argument could be made to look like another), and a fullwidth "４４１１" was read as the
number 4411 the person never wrote as one.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import write_project

from stalwart import Agent, FakeClock, texts

NOTES = """
from stalwart import tool

CALLS = []


@tool(writes=True, irreversible=True)
def send_note(to: str) -> dict:
    CALLS.append(("send_note", {"to": to}))
    return {"sent_to": to}


@tool(writes=True, irreversible=True)
def paint_fence(order: int) -> dict:
    CALLS.append(("paint_fence", {"order": order}))
    return {"order": order}
"""

RLO, ZWSP, LRI, BOM = "\u202e", "\u200b", "\u2066", "\ufeff"
HIDDEN = (RLO, ZWSP, LRI, BOM, "\u200f", "\u2028", "\x85", "\U000e0041")


@pytest.fixture
def agent(tmp_path: Path) -> Iterator[Agent]:
    project = write_project(tmp_path, tools_source=NOTES, tool_names=["send_note", "paint_fence"])
    with project.agent(clock=FakeClock()) as opened:
        yield opened


def test_bidi_and_zero_width_characters_are_shown_escaped(agent: Agent) -> None:
    value = f"alice{RLO}fdp.exe{ZWSP}"
    reply = agent.chat(f'send the note to "{value}"', user="u")
    [waiting] = reply.waiting
    assert waiting.args == {"to": value}  # what runs is the value as written
    assert waiting.text.splitlines()[0] == 'Run send_note(to="alice\\u202efdp.exe\\u200b")?'
    assert not any(char in waiting.text for char in HIDDEN)
    done = agent.confirm("u", "approve", question=waiting)
    assert done.text == 'Done: send_note returned {"sent_to":"alice\\u202efdp.exe\\u200b"}.'
    assert agent.record("u")[0].args == {"to": value}


def test_every_hidden_character_is_escaped_and_a_backslash_stays_apart() -> None:
    for char in HIDDEN:
        shown = texts.call_text("send_note", {"to": f"a{char}b"})
        assert char not in shown
        assert f"\\u{ord(char):04x}" in shown or f"\\U{ord(char):08x}" in shown
    # The text "\u202e" typed as six characters is shown with its backslash doubled.
    assert texts.call_text("send_note", {"to": "\\u202e"}) == 'send_note(to="\\\\u202e")'
    assert texts.shown_value(f"x{LRI}y") == '"x\\u2066y"'
    assert texts.brief({"a": f"{RLO}b"}) == '{"a":"\\u202eb"}'
    # Letters of any script show as themselves: only what does not show is escaped.
    assert (
        texts.call_text("send_note", {"to": "José ４４ 東京"}) == 'send_note(to="José ４４ 東京")'
    )


def test_non_ascii_digits_are_not_read_as_numbers(agent: Agent) -> None:
    for digits in ("４４１１", "٤٤١١", "४४११"):  # fullwidth, Arabic-Indic, Devanagari
        reply = agent.chat(f"paint the fence for order {digits}", user=f"u{len(digits)}{digits}")
        assert reply.waiting == [] and reply.state == "unread", reply.text
        assert "nothing ran" in reply.text
    assert agent.chat("paint the fence for order 4411", user="v").waiting[0].args == {"order": 4411}
    # In a text argument they stay what they are, shown as written.
    reply = agent.chat('send the note to "order ４４１１"', user="w")
    assert reply.waiting[0].args == {"to": "order ４４１１"}
    assert reply.waiting[0].text.startswith('Run send_note(to="order ４４１１")?')
